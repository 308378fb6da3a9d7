"""The findings as the terminal shows them: one row per check, the fix and the runbook entry under each that is not
ok, a summary line."""

from __future__ import annotations

from collections import Counter

from edge_agent.doctor.runbook import link
from edge_agent.doctor.types import Check

_GAP = "  "


def render(checks: list[Check]) -> str:
    """CHECK / STATUS / FOUND columns; a multi-line finding, its fix and `see docs/troubleshooting.md#doctor-<id>`
    continue under FOUND."""
    id_width = max([len("CHECK"), *(len(c.id) for c in checks)])
    status_width = len("STATUS")
    indent = " " * (id_width + status_width + 2 * len(_GAP))
    lines = [f"{'CHECK':<{id_width}}{_GAP}{'STATUS':<{status_width}}{_GAP}FOUND"]
    for check in checks:
        first, *rest = check.detail.splitlines() or [""]
        lines.append(f"{check.id:<{id_width}}{_GAP}{check.status:<{status_width}}{_GAP}{first}")
        lines.extend(f"{indent}{line}" for line in rest)
        if check.fix:
            lines.append(f"{indent}fix: {check.fix}")
            lines.append(f"{indent}see {link(check.id)}")
    counts = Counter(c.status for c in checks)
    lines.append(f"{counts['ok']} ok, {counts['warn']} warn, {counts['fail']} fail")
    return "\n".join(lines)
