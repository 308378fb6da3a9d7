"""The bundle's summary.html: what a person reads first. Self-contained (no scripts, no external files)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import Any

from edge_agent.audit import bundle
from edge_agent.audit.manifest import BundleManifest, file_sha256
from edge_agent.audit.verify import VerifyResult

_REPORT_EVENTS = ("report.requested", "report.generated", "report.signed_off", "report.rejected")
_FINGERPRINT_EVENTS = ("config.loaded", "model.loaded", "draft.loaded", "report.generated")
_STYLE = (
    "body{font-family:sans-serif;margin:2em;max-width:80em}table{border-collapse:collapse;width:100%}"
    "td,th{border:1px solid #ccc;padding:.3em;text-align:left;vertical-align:top;font-size:90%}"
    ".ok{color:#070}.bad{color:#b00}code{font-size:85%;word-break:break-all}"
)


def _cell(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)
    return f"<td>{escape(text)}</td>"


def _short(payload: dict[str, Any], limit: int = 240) -> str:
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _fingerprints(payload: dict[str, Any]) -> dict[str, Any]:
    """Payload members that identify a configuration, model, draft head or engine build."""
    keys = ("fingerprint", "sha256", "hash", "manifest", "version", "engine", "model", "draft")
    return {k: v for k, v in payload.items() if any(word in k for word in keys)}


def _absence(manifest: BundleManifest, report_id: str) -> str:
    if report_id in manifest.unbound_reports:
        return f"not in bundle: its file does not bind to these entries: {manifest.unbound_reports[report_id]}"
    return "not in bundle: the plant had no file for it"


def render_summary(manifest: BundleManifest, lines: Sequence[bytes], root: Path, verification: VerifyResult) -> str:
    """The page for the bundle at `root` (its report files already in place)."""
    entries = [json.loads(line) for line in lines]
    status_class = "ok" if verification.ok else "bad"
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>Audit export {escape(manifest.origin)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>Audit export: {escape(manifest.origin)}</h1>",
        f"<p>Entries {manifest.first_seq}–{manifest.last_seq} ({len(entries)}) from "
        f"{escape(manifest.start or 'the start')} to {escape(manifest.end or 'the end')}; "
        f"signed checkpoint of size {manifest.checkpoint_size}; exported {escape(manifest.created)}.</p>",
        "<h2>Verification</h2>",
        f"<p class='{status_class}'><b>{escape(verification.summary())}</b></p>",
    ]
    parts += [f"<p>{escape(note)}</p>" for note in verification.notes]
    parts.append(
        "<p>Check it yourself, offline: <code>edge-agent audit verify-bundle THIS_DIR --pubkey KEY</code> "
        "with the public key you obtained from the plant independently (docs/audit.md shows how with "
        "sha256sum and Python alone).</p>"
    )

    parts.append("<h2>Reports</h2>")
    reports: dict[str, dict[str, Any]] = {}
    for e in entries:
        rid = e["payload"].get("report_id")
        if e["event"] in _REPORT_EVENTS and isinstance(rid, str):
            reports.setdefault(rid, {})[e["event"]] = e
    if reports:
        parts.append(
            "<table><tr><th>report</th><th>state</th><th>generated</th><th>signed off / rejected by</th>"
            "<th>file SHA-256</th></tr>"
        )
        for rid, events in reports.items():
            state = (
                "signed off"
                if "report.signed_off" in events
                else "rejected"
                if "report.rejected" in events
                else "generated, awaiting sign-off"
                if "report.generated" in events
                else "requested"
            )
            decision = events.get("report.signed_off") or events.get("report.rejected")
            who = f"{decision['actor']} at {decision['time']}" if decision else ""
            gen = events.get("report.generated")
            path = root / bundle.REPORTS / f"{rid}.json"
            digest = file_sha256(path) if path.is_file() else _absence(manifest, rid)
            parts.append(
                f"<tr>{_cell(rid)}{_cell(state)}{_cell(gen['time'] if gen else '')}{_cell(who)}"
                f"<td><code>{escape(digest)}</code></td></tr>"
            )
        parts.append("</table>")
    else:
        parts.append("<p>No report events in this range.</p>")

    parts.append("<h2>Configuration, model and engine fingerprints</h2>")
    prints = [(e, _fingerprints(e["payload"])) for e in entries if e["event"] in _FINGERPRINT_EVENTS]
    prints = [(e, fp) for e, fp in prints if fp]
    if prints:
        parts.append("<table><tr><th>seq</th><th>time</th><th>event</th><th>fingerprints</th></tr>")
        for e, fp in prints:
            parts.append(
                f"<tr>{_cell(str(e['seq']))}{_cell(e['time'])}{_cell(e['event'])}"
                f"<td><code>{escape(_short(fp, 600))}</code></td></tr>"
            )
        parts.append("</table>")
    else:
        parts.append("<p>No configuration, model or engine events in this range.</p>")

    parts.append(
        "<h2>Timeline</h2><table><tr><th>seq</th><th>time (UTC)</th><th>actor</th><th>event</th><th>payload</th></tr>"
    )
    for e in entries:
        parts.append(
            f"<tr>{_cell(str(e['seq']))}{_cell(e['time'])}{_cell(e['actor'])}{_cell(e['event'])}"
            f"<td><code>{escape(_short(e['payload']))}</code></td></tr>"
        )
    parts.append("</table></body></html>\n")
    return "\n".join(parts)
