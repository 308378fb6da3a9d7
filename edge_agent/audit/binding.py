"""Report files bound to the log: a bundle's `reports/<id>.json` must say what the bundle's entries say it said.

Rules, for a report document and the entries that name its `report_id`:

* the entries it cites (`audit.requested`, `audit.generated`, `audit.signoff`) are the ones in the bundle;
* its body hashes (`edge_agent.base.canonical.canonical_json` + SHA-256) to its `body_sha256`, and to the
  `body_sha256` of its last `report.generated` entry (a crash between the entry and the file can log a regeneration)
  and of its decision entry;
* `draft`: no `report.signed_off` / `report.rejected` entry names it, and it has no sign-off block;
* `approved` / `rejected`: exactly one decision entry, of the matching event, for this body; its actor is
  `operator:<signoff.by>`, its `via` and `comment` are the block's, the document cites that entry's seq, and the
  block's `at` (taken just before the entry was appended) is at most `SIGNOFF_SLACK` before the entry's time;
* its renderings hash to its `renderings_sha256`, which equals the one logged by the entry that set its status
  (`report.generated` for a draft, the decision otherwise) when that entry logs one;
* at least one entry in the bundle records its body hash.

The exporter includes only report files that bind, and lists the others (and the ones it has no file for) in the
manifest with the reason; the verifier fails on any file that does not bind, on any file no entry names, and on
any named report the bundle lacks without the signed manifest saying why.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from edge_agent.audit import bundle
from edge_agent.audit.entry import TIME_FORMAT
from edge_agent.audit.manifest import BundleManifest
from edge_agent.base.canonical import CanonicalJsonError, canonical_json, sha256_hex

# decide() stamps `at` (whole seconds) then appends; the append waits for an fsync and, at worst, a checkpoint.
SIGNOFF_SLACK = timedelta(seconds=60)
DECISIONS = {"report.signed_off": "approved", "report.rejected": "rejected"}
_REPORT_ID = b'"report_id"'


@dataclass(frozen=True)
class TrailEntry:
    seq: int
    time: datetime
    actor: str
    event: str
    payload: dict[str, Any]


@dataclass
class ReportTrail:
    """The entries naming one report, in log order."""

    named_by: list[int] = field(default_factory=list)
    requested: list[TrailEntry] = field(default_factory=list)
    generated: list[TrailEntry] = field(default_factory=list)
    decisions: list[TrailEntry] = field(default_factory=list)


class _AuditRefs(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)

    requested: int | None = None
    generated: int | None = None
    signoff: int | None = None


class _Signoff(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    decision: Literal["approve", "reject"]
    by: str
    via: str
    at: str
    comment: str = ""


class _Document(BaseModel):
    """The members of a report document (reports/document.py) that the log vouches for."""

    model_config = ConfigDict(extra="allow", strict=True)

    report_id: str
    request_id: str
    body: Any
    body_sha256: str
    renderings: dict[str, str] = {}
    renderings_sha256: dict[str, str] = {}
    audit: _AuditRefs
    status: Literal["draft", "approved", "rejected"]
    signoff: _Signoff | None = None


def report_trails(lines: Iterable[bytes]) -> dict[str, ReportTrail]:
    """The entries naming each report_id, from verified entry lines."""
    trails: dict[str, ReportTrail] = {}
    for line in lines:
        if _REPORT_ID not in line:
            continue
        data = json.loads(line)
        payload = data["payload"]
        if not isinstance(payload.get("report_id"), str):
            continue
        entry = TrailEntry(
            data["seq"],
            datetime.strptime(data["time"], TIME_FORMAT).replace(tzinfo=UTC),
            data["actor"],
            data["event"],
            payload,
        )
        trail = trails.setdefault(payload["report_id"], ReportTrail())
        trail.named_by.append(entry.seq)
        if entry.event == "report.requested":
            trail.requested.append(entry)
        elif entry.event == "report.generated":
            trail.generated.append(entry)
        elif entry.event in DECISIONS:
            trail.decisions.append(entry)
    return trails


def bind_document(report_id: str, data: Any, trail: ReportTrail | None) -> str | None:
    """Why the parsed report document `data` does not agree with its trail of entries, or None. Pure."""
    try:
        document = _Document.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        return f"not a report document: {'.'.join(str(p) for p in err['loc']) or '<document>'}: {err['msg']}"
    if document.report_id != report_id:
        return f"the file holds report_id {document.report_id!r}"
    if trail is None:
        return "no entry in this bundle names it"
    try:
        body_sha256 = sha256_hex(canonical_json(document.body))
    except CanonicalJsonError as exc:  # NaN, an infinity or a lone surrogate: no agent hashes such a body
        return f"its body has no canonical JSON form: {exc}"
    if document.body_sha256 != body_sha256:
        return f"its body hashes to {body_sha256}, not to the body_sha256 {document.body_sha256} it states"
    if trail.requested and document.audit.requested != trail.requested[-1].seq:
        seq = trail.requested[-1].seq
        return f"it cites entry {document.audit.requested} as its report.requested, the log has entry {seq}"
    generated = trail.generated[-1] if trail.generated else None
    if generated is not None:
        problem = _bind_generated(document, body_sha256, generated)
        if problem is not None:
            return problem
    if document.status == "draft":
        if trail.decisions:
            d = trail.decisions[0]
            return f"it is a draft, but entry {d.seq} ({d.event}) decided it"
        if document.signoff is not None:
            return "it is a draft with a sign-off block"
        if generated is None:
            return "it is a draft and no report.generated entry in this bundle records its body"
        status_entry = generated
    else:
        problem_or_entry = _bind_decision(document, body_sha256, trail)
        if isinstance(problem_or_entry, str):
            return problem_or_entry
        status_entry = problem_or_entry
    return _bind_renderings(document, status_entry)


def _bind_generated(document: _Document, body_sha256: str, entry: TrailEntry) -> str | None:
    logged = entry.payload.get("body_sha256")
    if logged != body_sha256:
        return f"its body hashes to {body_sha256}, entry {entry.seq} (report.generated) logged {logged}"
    if "request_id" in entry.payload and entry.payload["request_id"] != document.request_id:
        return f"request_id {document.request_id!r}, entry {entry.seq} logged {entry.payload['request_id']!r}"
    if document.audit.generated != entry.seq:
        return f"it cites entry {document.audit.generated} as its report.generated, the log has entry {entry.seq}"
    return None


def _bind_decision(document: _Document, body_sha256: str, trail: ReportTrail) -> str | TrailEntry:
    """The decision entry that makes the document approved/rejected, or why there is none that agrees."""
    event = next(e for e, status in DECISIONS.items() if status == document.status)
    if not trail.decisions:
        cited = document.audit.signoff
        where = f" (it cites entry {cited}, which is not in this bundle)" if cited is not None else ""
        return f"it is {document.status}, but no {event} entry in this bundle records that{where}"
    if len(trail.decisions) > 1:
        return f"the log decides it more than once (entries {', '.join(str(d.seq) for d in trail.decisions)})"
    entry = trail.decisions[0]
    if entry.event != event:
        return f"it is {document.status}, but entry {entry.seq} is {entry.event}"
    logged = entry.payload.get("body_sha256")
    if logged != body_sha256:
        return f"its body hashes to {body_sha256}, entry {entry.seq} ({event}) decided on {logged}"
    signoff = document.signoff
    if signoff is None:
        return f"it is {document.status} without a sign-off block"
    expected = "approve" if document.status == "approved" else "reject"
    if signoff.decision != expected:
        return f"it is {document.status}, but its sign-off block says {signoff.decision!r}"
    if entry.actor != f"operator:{signoff.by}":
        return f"its sign-off block names {signoff.by!r}, entry {entry.seq} was made by {entry.actor!r}"
    for key in ("via", "comment"):
        if getattr(signoff, key) != entry.payload.get(key):
            return f"its sign-off {key} {getattr(signoff, key)!r} != {entry.payload.get(key)!r} in entry {entry.seq}"
    if document.audit.signoff != entry.seq:
        return f"it cites entry {document.audit.signoff} as its sign-off, the log has entry {entry.seq}"
    try:
        at = datetime.fromisoformat(signoff.at)
    except ValueError:
        return f"its sign-off time {signoff.at!r} is not an ISO 8601 time"
    if at.tzinfo is None or not timedelta(0) <= entry.time - at <= SIGNOFF_SLACK:
        return f"its sign-off time {signoff.at} does not match entry {entry.seq}'s time {entry.time:{TIME_FORMAT}}"
    return entry


def _bind_renderings(document: _Document, entry: TrailEntry) -> str | None:
    if document.renderings.keys() != document.renderings_sha256.keys():
        return f"renderings {sorted(document.renderings)} but renderings_sha256 {sorted(document.renderings_sha256)}"
    for fmt, text in sorted(document.renderings.items()):
        if sha256_hex(text) != document.renderings_sha256[fmt]:
            return f"its {fmt} rendering does not hash to its renderings_sha256"
    logged = entry.payload.get("renderings_sha256")
    if logged is not None and logged != document.renderings_sha256:
        return f"its renderings_sha256 {document.renderings_sha256} != {logged} logged by entry {entry.seq}"
    return None


def rendering_name(report_id: str, fmt: str) -> str | None:
    """The bundle path of a report's rendering, or None for a format the bundle does not export."""
    suffix = bundle.RENDERING_SUFFIXES.get(fmt)
    return f"{bundle.REPORTS}/{report_id}{suffix}" if suffix else None


def check_reports(root: Path, lines: Iterable[bytes], manifest: BundleManifest) -> tuple[str | None, list[str]]:
    """Every report file in the bundle at `root` bound to the entries `lines`: (the first problem, notes)."""
    trails = report_trails(lines)
    notes: list[str] = []
    directory = root / bundle.REPORTS
    files = sorted(p.name for p in directory.iterdir()) if directory.is_dir() else []
    expected: set[str] = set()
    for name in files:
        if not name.endswith(".json"):
            continue
        report_id = name.removesuffix(".json")
        expected.add(name)
        try:
            data = json.loads((directory / name).read_bytes())
        except (ValueError, RecursionError) as exc:
            return f"report {report_id} ({bundle.REPORTS}/{name}): not JSON: {exc}", notes
        problem = bind_document(report_id, data, trails.get(report_id))
        if problem is not None:
            return f"report {report_id} ({bundle.REPORTS}/{name}): {problem}", notes
        for fmt, text in sorted(data.get("renderings", {}).items()):
            rel = rendering_name(report_id, fmt)
            if rel is None:
                return f"report {report_id}: rendering format {fmt!r} has no file in a bundle", notes
            path = root / rel
            if not path.is_file() or path.read_bytes() != text.encode("utf-8"):
                return f"report {report_id}: {rel} is not its {fmt} rendering (missing or changed)", notes
            expected.add(Path(rel).name)
    stray = [name for name in files if name not in expected]
    if stray:
        return f"{bundle.REPORTS}/{stray[0]}: not a report or rendering this bundle's documents name", notes
    accounted = _accounted_for(manifest)
    for report_id, trail in trails.items():
        if f"{report_id}.json" in expected:
            continue
        if report_id not in accounted:
            return (
                f"entry {trail.named_by[0]} names report {report_id}, which is not in this bundle, and the manifest"
                " does not say why"
            ), notes
        notes.append(f"report {report_id} is not in this bundle: {accounted[report_id]}")
    return None, notes


def _accounted_for(manifest: BundleManifest) -> dict[str, str]:
    """Reports the manifest says the exporter left out, with why."""
    reasons = {rid: "the plant had no file for it at export" for rid in manifest.missing_reports}
    reasons.update({rid: f"its file does not bind: {why}" for rid, why in manifest.unbound_reports.items()})
    return reasons
