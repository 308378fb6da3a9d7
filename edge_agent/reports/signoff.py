"""Human sign-off: a report stays `draft` until a named approver approves or rejects it.

Over MQTT the approver is the AUTHENTICATED broker user, never a name in the payload: MQTT does not tell a subscriber
who published a message, so the broker enforces it. With the ACL line `pattern write edge/+/reports/signoff/%u`,
a client can publish only to the sign-off topic ending in its own user name, so the last topic level IS the
authenticated user. A payload `by` that disagrees with it is refused. Locally, `edge-agent report approve ID --by
NAME` does the same for someone with access to the agent's state directory.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from edge_agent.config.mqtt import MqttConfig
from edge_agent.reports.document import with_signoff
from edge_agent.reports.errors import ReportNotFound, RequestError, SignoffError
from edge_agent.reports.repository import ReportRepository
from edge_agent.reports.request import MAX_REQUEST_BYTES, MAX_TOPIC_BYTES, field_name, iso, json_object
from edge_agent.types import utcnow

Decision = Literal["approve", "reject"]


class SignoffRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    report_id: str = Field(min_length=1, max_length=128)
    decision: Decision
    comment: str = Field("", max_length=2000)
    by: str | None = Field(None, max_length=256, description="optional; must equal the authenticated user when given")
    reply_to: str | None = Field(None, max_length=MAX_TOPIC_BYTES)
    correlation_id: str | None = Field(None, max_length=MAX_TOPIC_BYTES)


def parse_signoff(payload: bytes) -> SignoffRequest:
    """Bytes → a validated sign-off, or `RequestError` naming the first bad field (same JSON rules as requests)."""
    if len(payload) > MAX_REQUEST_BYTES:
        raise RequestError("<payload>", f"{len(payload)} bytes, more than {MAX_REQUEST_BYTES}")
    data = json_object(payload)
    try:
        return SignoffRequest.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise RequestError(field_name(err["loc"]), err["msg"]) from exc


def mqtt_signoff_refusal(mqtt: MqttConfig) -> str | None:
    """Why MQTT sign-off cannot be trusted with this broker connection, or None. An agent that connects anonymously
    is on a broker that admits anonymous clients, which can publish on any `<signoff topic>/<user>`: the topic level
    then proves nothing."""
    if mqtt.username is not None or (mqtt.tls is not None and mqtt.tls.cert_file is not None):
        return None
    return (
        "MQTT sign-off is disabled: the agent's broker connection is anonymous (no mqtt.username, no TLS client"
        " certificate), so the broker cannot vouch for the user in a sign-off topic; sign off on the agent's host"
        " with `edge-agent report approve|reject`, or give the agent broker credentials (docs/reports.md)"
    )


def authorise(user: str | None, claimed: str | None, approvers: list[str]) -> str:
    """The approver's name, or SignoffError. `user` is the authenticated identity (topic level set by the ACL)."""
    if not user:
        raise SignoffError("sign-off needs an authenticated user: publish to <signoff topic>/<your user name>")
    if claimed is not None and claimed != user:
        raise SignoffError(f"payload names {claimed!r} but the authenticated user is {user!r}")
    if user not in approvers:
        raise SignoffError(f"user {user!r} is not an approver")
    return user


def decide(
    repo: ReportRepository,
    audit: Any,
    *,
    report_id: str,
    decision: Decision,
    by: str,
    via: str,
    comment: str = "",
    four_eyes: bool = False,
) -> dict[str, Any]:
    """Record the decision on a draft: audit entry first (report.signed_off / report.rejected), then the document.
    With `four_eyes` (reports.four_eyes), whoever requested a report may not approve it (rejecting stays allowed:
    it withdraws the draft and approves nothing)."""
    try:
        document = repo.get(report_id)
    except ReportNotFound as exc:
        raise SignoffError(f"no report {report_id!r}") from exc
    if document["status"] != "draft":
        raise SignoffError(f"report {report_id} is already {document['status']}")
    if four_eyes and decision == "approve" and document.get("requested_by") == by:
        raise SignoffError(
            f"four-eyes rule (reports.four_eyes): {by!r} requested report {report_id} and may not"
            " approve it; another approver must"
        )
    signoff = {"decision": decision, "by": by, "via": via, "at": iso(utcnow()), "comment": comment}
    # Rendered before its entry, so the entry logs the renderings' hashes (audit bundles bind them to the log).
    updated = with_signoff(document, signoff, None)
    if audit is not None:
        event = "report.signed_off" if decision == "approve" else "report.rejected"
        entry = audit.append(
            event,
            f"operator:{by}",
            {
                "report_id": report_id,
                "body_sha256": document["body_sha256"],
                "via": via,
                "comment": comment,
                "renderings_sha256": updated["renderings_sha256"],
            },
        )
        updated["audit"]["signoff"] = entry.seq
    repo.update(updated)
    return updated
