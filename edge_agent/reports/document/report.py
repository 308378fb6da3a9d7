"""The report document: the deterministic body plus what surrounds it (ids, audit entries, renderings, status).

    {"schema", "report_id", "request_id", "requested_by", "requested_at", "body", "body_sha256",
     "renderings": {"markdown"?, "html"?}, "renderings_sha256", "generation_run", "audit": {"requested",
     "generated", "signoff"}, "status": "draft" | "approved" | "rejected", "signoff"}

`body` and its hash are identical for the same request over the same records and engine; `requested_at`,
`generation_run` (timings, speculative figures) and the audit entry numbers are not, by nature.
"""

from __future__ import annotations

from typing import Any

from edge_agent.base.canonical import sha256_hex
from edge_agent.reports.document.render import render_html, render_markdown
from edge_agent.reports.narrative import Draft

DOCUMENT_SCHEMA = "edge-agent.report/1"


def report_id_for(site_id: str, request_id: str, requester: str | None = None) -> str:
    """Derived from the requester and request id, so a retried request maps to the same report everywhere and two
    users' equal request ids to two reports. Without a requester it is the formula reports had before requesters
    scoped request ids, so their ids stay valid (a request id holds no NUL, so the two forms never collide)."""
    if not requester:
        return "rpt-" + sha256_hex(f"{site_id}\0{request_id}")[:24]
    return "rpt-" + sha256_hex(f"{site_id}\0{requester}\0{request_id}")[:24]


def renderings(body: dict[str, Any], formats: list[str], status: str, signoff: dict[str, Any] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    if "markdown" in formats:
        out["markdown"] = render_markdown(body, status, signoff)
    if "html" in formats:
        out["html"] = render_html(body, status, signoff)
    return out


def new_document(
    *,
    report_id: str,
    request_id: str,
    requested_by: str | None,
    requested_at: str,
    formats: list[str],
    draft: Draft,
    audit_requested: int | None,
    audit_generated: int | None,
) -> dict[str, Any]:
    rendered = renderings(draft.body, formats, "draft", None)
    return {
        "schema": DOCUMENT_SCHEMA,
        "report_id": report_id,
        "request_id": request_id,
        "requested_by": requested_by,
        "requested_at": requested_at,
        "formats": formats,
        "body": draft.body,
        "body_sha256": draft.body_sha256,
        "renderings": rendered,
        "renderings_sha256": {k: sha256_hex(v) for k, v in rendered.items()},
        "generation_run": draft.run,
        "audit": {"requested": audit_requested, "generated": audit_generated, "signoff": None},
        "status": "draft",
        "signoff": None,
    }


def with_signoff(document: dict[str, Any], signoff: dict[str, Any], audit_seq: int | None) -> dict[str, Any]:
    status = "approved" if signoff["decision"] == "approve" else "rejected"
    rendered = renderings(document["body"], document.get("formats", []), status, signoff)
    return {
        **document,
        "status": status,
        "signoff": signoff,
        "renderings": rendered,
        "renderings_sha256": {k: sha256_hex(v) for k, v in rendered.items()},
        "audit": {**document["audit"], "signoff": audit_seq},
    }
