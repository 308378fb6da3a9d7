"""Where the runbook (`docs/troubleshooting.md`, installed beside the agent in `/opt/edge-agent/docs/`) explains a
check: one entry per kind of check, headed `### doctor: <id>`, its anchor the heading's as GitHub and Python-Markdown
make it. The table prints the link under every finding that is not ok.
"""

from __future__ import annotations

import re

RUNBOOK = "docs/troubleshooting.md"
# Ids whose second part names something configured (`opcua.<source name>`): one entry covers every one of them.
PER_INSTANCE = ("opcua",)
# A security code earned again by a later OPC UA source gets `.2`, `.3`, ... (doctor/config.py): the same entry.
_REPEAT = re.compile(r"\.\d+$")


def entry(check_id: str) -> str:
    """The runbook entry's name for a check id: `opcua.plc1` -> `opcua`, `security.mqtt_anonymous.2` ->
    `security.mqtt_anonymous`, any other id itself."""
    family = check_id.split(".", 1)[0]
    if family in PER_INSTANCE:
        return family
    return _REPEAT.sub("", check_id) if "." in check_id else check_id


def slug(heading: str) -> str:
    """A heading's anchor as GitHub renders it: lower case, punctuation but `-` and `_` dropped, spaces to `-`
    (`doctor: clock.ntp` -> `doctor-clockntp`)."""
    kept = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return kept.replace(" ", "-")


def anchor(check_id: str) -> str:
    return slug(f"doctor: {entry(check_id)}")


def link(check_id: str) -> str:
    """What the table prints: `docs/troubleshooting.md#doctor-mqtt`."""
    return f"{RUNBOOK}#{anchor(check_id)}"
