"""A bundle's evidence: the records its reports' facts were computed from, tied to the facts by their record ids.

Two files, both listed in the signed manifest like every other:

records.jsonl   one record per line, ascending by id, in canonical JSON (`record_line`): every stored field
                {"historical", "id", "key", "kind", "quality", "raw" (base64), "received_time", "source",
                 "source_time" (both YYYY-MM-DDTHH:MM:SS.ffffffZ), "value"}, and "idempotency_key" on the kinds
                of KEYED_KINDS only; a value the store holds that canonical JSON cannot write (NaN, an infinity, a
                lone surrogate) is written as Python's `json` writes it with `ensure_ascii` (`NaN`, `\\ud800`), which
                `json.loads` reads back
evidence.json   {"format", "code_version" (edge_agent.__version__ of the exporter), "facts_version" (its fact rules),
                 "reports": {report_id: {"body_sha256", "settings", "records", "facts": {fact_id: ids}}},
                 "without_evidence": {report_id: why},
                 "ask_version" (its ask code), "answers": {seq: {"question_id", "settings", "records"}},
                 "answers_without_evidence": {seq: why}}

`records` is what the report's facts are recomputed from (every record behind any of its facts); `facts` gives,
per fact, every record id behind it, whose `ids_sha256` must be the fact's `record_ids_sha256` and whose count its
`record_count`. Id sets are written as ascending runs, `"1-4,9,12-13"` for {1, 2, 3, 4, 9, 12, 13}. `settings` are
the fact settings the exporter had (`list_max`, `notes_max`, `kpi`): a report body does not record them.

An answer's `records` (an `ask.answered` entry of the window, by seq) are every record the ask read to compute it,
and its `settings` the config it was computed under; `--recompute` answers its question again from them alone and
compares what the entry records (the ask's code, injected from above like the reports').

Format 1 (bundles exported before 2) carries "idempotency_key" on every record; format 2 (before 3) carries no
answers; all three are read.

What the log vouches for is each fact's record ids (through its `record_ids_sha256`, inside the body hash the
`report.generated` entry records); the records' contents are vouched for by the signed manifest (the plant's key at
export time) and, field by field where a fact reads them, by recomputing the facts from them (`--recompute`, which
runs the reports' own fact code, so it is injected from above: the audit layer does not import the reports).
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from pydantic import ValidationError

import edge_agent
from edge_agent.audit.entry import AuditEntry
from edge_agent.base.canonical import CanonicalJsonError, ascii_json, canonical_json
from edge_agent.base.types import StoredRecord, ids_sha256

RECORDS = "records.jsonl"
EVIDENCE = "evidence.json"
FORMAT = "edge-agent-evidence/3"  # 2: idempotency_key only on KEYED_KINDS; 3: answers
# What verify-bundle reads: bundles an auditor already holds verify.
FORMATS = ("edge-agent-evidence/1", "edge-agent-evidence/2", FORMAT)
# The kinds whose idempotency_key a fact reads: the downtime pairing (reports/facts.py `_downtime`,
# reports/kpi/intervals.py `read_stops`) falls back to it for a stop with neither downtime_id nor id. No other fact
# reads it, and its 64 hex digits per record were 81 % of a day's bundle as .tar.gz (6.1 MB; docs/audit.md "Size").
KEYED_KINDS = frozenset({"mes_event"})
TIME_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"
# The entries whose answers a bundle carries evidence for (edge_agent/ask/trail.py writes them).
ANSWERED_EVENT = "ask.answered"
# Differences printed before "and N more": enough to see a pattern, short enough to read.
SHOWN_DIFFERENCES = 10


class EvidenceError(ValueError):
    """Evidence that cannot be read: a malformed line, id set or member, naming it."""


@dataclass(frozen=True)
class ReportEvidence:
    """What one report's facts were computed from: the records, per fact the ids behind it, the fact settings."""

    records: Sequence[StoredRecord]
    facts: Mapping[str, frozenset[int]]
    settings: Mapping[str, Any]


@dataclass(frozen=True)
class AnswerEvidence:
    """What one answer was computed from: every record the ask read, and the config it answered under."""

    records: Sequence[StoredRecord]
    settings: Mapping[str, Any]


class AnswerSource(Protocol):
    """Where the exporter gets each answer's evidence (the ask implements it over the store)."""

    @property
    def ask_version(self) -> str: ...

    def evidence(self, entry: AuditEntry) -> AnswerEvidence | str:
        """The answer's evidence, or why there is none (said in the bundle's `answers_without_evidence`)."""
        ...


class EvidenceSource(Protocol):
    """Where the exporter gets each report's evidence (the reports layer implements it over the store)."""

    @property
    def facts_version(self) -> str: ...

    def evidence(self, report_id: str, document: Mapping[str, Any]) -> ReportEvidence | str:
        """The report's evidence, or why there is none (said in the bundle's `without_evidence`)."""
        ...


@dataclass(frozen=True)
class FactDifference:
    """A fact recomputed from the bundle's records that is not the one the report holds."""

    report_id: str
    fact_id: str
    member: str  # the fact's member that differs (`values.max`, `record_ids_sha256`), or `fact` when one is missing
    expected: Any  # what the report says
    found: Any  # what the records give

    def __str__(self) -> str:
        where = f"report {self.report_id}: fact {self.fact_id}: {self.member}"
        return f"{where}: expected {self.expected!r}, found {self.found!r}"


# The reports' recomputation (reports/evidence.py): (report id, document, its records, its settings) → differences.
Recompute = Callable[[str, Mapping[str, Any], Sequence[StoredRecord], Mapping[str, Any]], list[FactDifference]]
# The ask's recomputation (ask/evidence.py): (the `ask.answered` entry, its records, its settings) → differences.
RecomputeAnswer = Callable[[AuditEntry, Sequence[StoredRecord], Mapping[str, Any]], list[str]]


# -- records and id sets ----------------------------------------------------------------------------------------


def record_json(record: StoredRecord) -> dict[str, Any]:
    keyed = {"idempotency_key": record.idempotency_key} if record.kind in KEYED_KINDS else {}
    return {
        "historical": record.historical,
        "id": record.id,
        **keyed,
        "key": record.key,
        "kind": record.kind,
        "quality": record.quality,
        "raw": base64.b64encode(record.raw).decode(),
        "received_time": record.received_time.astimezone(UTC).strftime(TIME_FORMAT),
        "source": record.source,
        "source_time": record.source_time.astimezone(UTC).strftime(TIME_FORMAT),
        "value": record.value,
    }


def record_line(record: StoredRecord) -> bytes:
    """One line of records.jsonl (without its newline)."""
    data = record_json(record)
    try:
        return canonical_json(data)
    except CanonicalJsonError:
        return ascii_json(data)  # NaN, an infinity or a lone surrogate, as the store holds them


def parse_record(line: bytes, number: int, version: str = FORMAT) -> StoredRecord:
    """A records.jsonl line of evidence format `version` back to the record; EvidenceError names the line and what
    is wrong. A record of format 2 without its idempotency_key (no fact reads it) gets `absent_key(id)` instead."""
    where = f"{RECORDS} line {number}"
    try:
        data = json.loads(line)
    except (ValueError, RecursionError) as exc:
        raise EvidenceError(f"{where}: not JSON: {exc}") from exc
    expected = _FIELDS if version == FORMATS[0] or _keyed(data) else _UNKEYED_FIELDS
    if not isinstance(data, dict) or set(data) != set(expected):
        found = sorted(data) if isinstance(data, dict) else type(data).__name__
        raise EvidenceError(f"{where}: the members are {found}, expected {list(expected)}")
    try:
        fields = {
            "idempotency_key": absent_key(data["id"]),
            **data,
            "raw": base64.b64decode(data["raw"], validate=True),
            "source_time": _time(data["source_time"]),
            "received_time": _time(data["received_time"]),
        }
        return StoredRecord.model_validate(fields, strict=False)
    except (TypeError, ValueError, binascii.Error, ValidationError) as exc:
        raise EvidenceError(f"{where}: {exc}") from exc


_FIELDS = (
    "historical",
    "id",
    "idempotency_key",
    "key",
    "kind",
    "quality",
    "raw",
    "received_time",
    "source",
    "source_time",
    "value",
)


_UNKEYED_FIELDS = tuple(f for f in _FIELDS if f != "idempotency_key")


def _keyed(data: Any) -> bool:
    return isinstance(data, dict) and isinstance(data.get("kind"), str) and data["kind"] in KEYED_KINDS


def absent_key(record_id: Any) -> str:
    """What stands for the idempotency_key a record of format 2 does not carry: unique to the record, as the key is,
    and naming itself."""
    return f"not in the bundle: record {record_id}"


def _time(text: Any) -> datetime:
    if not isinstance(text, str):
        raise ValueError(f"time {text!r} is not a string")
    return datetime.strptime(text, TIME_FORMAT).replace(tzinfo=UTC)


def encode_ids(ids: Iterable[int]) -> str:
    """Ascending runs: {1, 2, 3, 4, 9, 12, 13} → "1-4,9,12-13"; the empty set → ""."""
    runs: list[str] = []
    ordered = sorted(set(ids))
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        runs.append(str(ordered[i]) if i == j else f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return ",".join(runs)


def decode_ids(text: Any, where: str, limit: int) -> list[int]:
    """`encode_ids`'s form back to ascending ids; EvidenceError for anything else (overlaps, descending runs) and
    for more than `limit` ids (a run like `1-999999999999` in an untrusted file is refused, not expanded)."""
    if not isinstance(text, str):
        raise EvidenceError(f"{where}: record ids {text!r} are not a string of runs")
    ids: list[int] = []
    for run in text.split(",") if text else []:
        lo, sep, hi = run.partition("-")
        if not lo.isdecimal() or (sep and not hi.isdecimal()):
            raise EvidenceError(f"{where}: {run!r} is not a record id or a run of them (A or A-B)")
        first, last = int(lo), int(hi) if sep else int(lo)
        if last < first or (ids and first <= ids[-1]):
            raise EvidenceError(f"{where}: run {run!r} is not above the run before it")
        if len(ids) + last - first + 1 > limit:
            raise EvidenceError(f"{where}: more than {limit} record ids, more than the bundle holds")
        ids.extend(range(first, last + 1))
    return ids


# -- writing ----------------------------------------------------------------------------------------------------


def write_evidence(
    stage: Path,
    documents: Mapping[str, Mapping[str, Any]],
    source: EvidenceSource,
    answers: Sequence[AuditEntry] = (),
    answer_source: AnswerSource | None = None,
) -> dict[str, str]:
    """Write records.jsonl and evidence.json for the exported `documents` and `answers` (the window's `ask.answered`
    entries); returns the reports left without evidence, with the reason."""
    reports: dict[str, Any] = {}
    without: dict[str, str] = {}
    records: dict[int, StoredRecord] = {}
    for report_id, document in sorted(documents.items()):
        found = source.evidence(report_id, document)
        if isinstance(found, str):
            without[report_id] = found
            continue
        for r in found.records:
            records.setdefault(r.id, r)
        reports[report_id] = {
            "body_sha256": document["body_sha256"],
            "settings": dict(found.settings),
            "records": encode_ids(r.id for r in found.records),
            "facts": {fact_id: encode_ids(ids) for fact_id, ids in found.facts.items()},
        }
    carried, answers_without = _answer_evidence(answers, answer_source, records)
    with open(stage / RECORDS, "wb") as f:
        for record_id in sorted(records):
            f.write(record_line(records[record_id]) + b"\n")
    evidence = {
        "format": FORMAT,
        "code_version": edge_agent.__version__,
        "facts_version": source.facts_version,
        "reports": reports,
        "without_evidence": without,
        "ask_version": answer_source.ask_version if answer_source is not None else None,
        "answers": carried,
        "answers_without_evidence": answers_without,
    }
    (stage / EVIDENCE).write_bytes(canonical_json(evidence) + b"\n")
    return without


def answered_entries(lines: Iterable[bytes]) -> list[AuditEntry]:
    """The `ask.answered` entries among `lines` (stored audit lines), by seq."""
    needle = canonical_json({"event": ANSWERED_EVENT})[1:-1]
    return [e for e in (AuditEntry.from_line(x) for x in lines if needle in x) if e.event == ANSWERED_EVENT]


def _answer_evidence(
    answers: Sequence[AuditEntry], source: AnswerSource | None, records: dict[int, StoredRecord]
) -> tuple[dict[str, Any], dict[str, str]]:
    """Each answer's evidence entry by seq, its records added to `records`; and the answers without, with why."""
    carried: dict[str, Any] = {}
    without: dict[str, str] = {}
    for entry in answers:
        found = source.evidence(entry) if source is not None else "the exporter had no ask evidence source"
        if isinstance(found, str):
            without[str(entry.seq)] = found
            continue
        for r in found.records:
            records.setdefault(r.id, r)
        carried[str(entry.seq)] = {
            "question_id": entry.payload.get("question_id"),
            "settings": dict(found.settings),
            "records": encode_ids(r.id for r in found.records),
        }
    return carried, without


# -- checking ---------------------------------------------------------------------------------------------------


@dataclass
class EvidenceCheck:
    """What a bundle's evidence came to: the first problem, notes, and per report what recomputing needs."""

    problem: str | None = None
    notes: list[str] = field(default_factory=list)
    present: bool = False
    facts_version: str | None = None
    # report id → (its records, its settings), for every report with evidence
    inputs: dict[str, tuple[list[StoredRecord], dict[str, Any]]] = field(default_factory=dict)
    without: dict[str, str] = field(default_factory=dict)
    # answer seq → (its records, its settings), for every answer with evidence; the others with why
    answer_inputs: dict[int, tuple[list[StoredRecord], dict[str, Any]]] = field(default_factory=dict)
    answers_without: dict[int, str] = field(default_factory=dict)


def check_evidence(
    root: Path, documents: Mapping[str, Mapping[str, Any]], answers: Mapping[int, AuditEntry] | None = None
) -> EvidenceCheck:
    """The tie between a bundle's records and its reports' facts (`documents`: the bound report files by id) and its
    answers (`answers`: the bundle's `ask.answered` entries by seq), without recomputing: every fact's full id set
    hashes to its `record_ids_sha256`, holds its listed `record_ids`, and every id is a record the bundle holds;
    every answer has its records or why not; records.jsonl holds exactly the records some evidence lists."""
    check = EvidenceCheck()
    has_records, has_evidence = (root / RECORDS).is_file(), (root / EVIDENCE).is_file()
    if not has_records and not has_evidence:
        return check  # an exporter without evidence: nothing to tie; --recompute refuses such a bundle
    if has_records != has_evidence:
        missing, present = (EVIDENCE, RECORDS) if has_records else (RECORDS, EVIDENCE)
        check.problem = f"{missing} is missing beside {present}"
        return check
    check.present = True
    try:
        _check(root, documents, answers or {}, check)
    except EvidenceError as exc:
        check.problem = str(exc)
    return check


def _check(
    root: Path, documents: Mapping[str, Mapping[str, Any]], answers: Mapping[int, AuditEntry], check: EvidenceCheck
) -> None:
    try:
        evidence = json.loads((root / EVIDENCE).read_bytes())
    except (ValueError, RecursionError) as exc:
        raise EvidenceError(f"{EVIDENCE}: not JSON: {exc}") from exc
    if not isinstance(evidence, dict) or evidence.get("format") not in FORMATS:
        found = evidence.get("format") if isinstance(evidence, dict) else evidence
        raise EvidenceError(f"{EVIDENCE}: format {found!r} is not one of {list(FORMATS)}")
    reports, without = evidence.get("reports"), evidence.get("without_evidence")
    if not isinstance(reports, dict) or not isinstance(without, dict):
        raise EvidenceError(f"{EVIDENCE}: 'reports' and 'without_evidence' must be objects")
    check.facts_version = str(evidence.get("facts_version"))
    check.without = {str(k): str(v) for k, v in without.items()}
    records: dict[int, StoredRecord] = {}
    last = -1
    with open(root / RECORDS, "rb") as f:
        for number, line in enumerate(f, start=1):
            record = parse_record(line.rstrip(b"\n"), number, evidence["format"])
            if record.id <= last:
                raise EvidenceError(f"{RECORDS} line {number}: record {record.id} is not above the record before it")
            records[record.id] = record
            last = record.id
    listed = set(reports) | set(without)
    unlisted, absent = sorted(set(documents) - listed), sorted(listed - set(documents))
    if unlisted:
        raise EvidenceError(f"report {unlisted[0]}: {EVIDENCE} has neither its evidence nor why it has none")
    if absent:
        raise EvidenceError(f"{EVIDENCE} names report {absent[0]}, which the bundle does not hold")
    cited: set[int] = set()
    for report_id, entry in sorted(reports.items()):
        ids = _check_report(report_id, entry, documents[report_id], records)
        cited.update(ids)
        settings = entry["settings"]
        check.inputs[report_id] = ([records[i] for i in ids], settings)
    cited.update(_check_answers(evidence, answers, records, check))
    extra = sorted(records.keys() - cited)
    if extra:
        raise EvidenceError(
            f"{RECORDS} holds record {extra[0]}, which no report's evidence lists (added after export?)"
        )
    for report_id, why in sorted(check.without.items()):
        check.notes.append(f"report {report_id} carries no evidence: {why}")
    facts = sum(len(documents[r]["body"]["facts"]) for r in reports)
    check.notes.append(
        f"evidence: {len(records)} records behind {facts} facts of {len(reports)} report(s); every fact's record ids"
        " match its record_ids_sha256"
        f" (exported by edge-agent {evidence.get('code_version')}, fact rules {check.facts_version})"
    )
    if check.answer_inputs:
        check.notes.append(
            f"evidence: {len(check.answer_inputs)} answer(s) carry the records they were computed from"
            f" (ask code {evidence.get('ask_version')})"
        )
    for seq, why in sorted(check.answers_without.items()):
        check.notes.append(f"answer {seq} carries no evidence: {why}")


def _check_answers(
    evidence: Mapping[str, Any],
    answers: Mapping[int, AuditEntry],
    records: Mapping[int, StoredRecord],
    check: EvidenceCheck,
) -> set[int]:
    """Every answer of the bundle against the evidence's `answers`; returns the ids of their records."""
    if evidence["format"] != FORMAT:
        check.answers_without = {seq: f"exported as {evidence['format']}, which carries no answers" for seq in answers}
        return set()
    carried, without = evidence.get("answers"), evidence.get("answers_without_evidence")
    if not isinstance(carried, dict) or not isinstance(without, dict):
        raise EvidenceError(f"{EVIDENCE}: 'answers' and 'answers_without_evidence' must be objects")
    listed, named = set(carried) | set(without), {str(seq) for seq in answers}
    if named - listed:
        seq = min(named - listed, key=int)
        raise EvidenceError(f"answer {seq}: {EVIDENCE} has neither its evidence nor why it has none")
    if listed - named:
        raise EvidenceError(f"{EVIDENCE} names answer {sorted(listed - named)[0]}, which the bundle does not hold")
    cited: set[int] = set()
    for key, item in sorted(carried.items(), key=lambda kv: int(kv[0])):
        entry = answers[int(key)]
        where = f"answer {key}"
        if not isinstance(item, dict) or not isinstance(item.get("settings"), dict):
            raise EvidenceError(f"{where}: its evidence is not an object with 'question_id', 'records' and 'settings'")
        if item.get("question_id") != entry.payload.get("question_id"):
            raise EvidenceError(
                f"{where}: its evidence is for question {item.get('question_id')}, the entry's is"
                f" {entry.payload.get('question_id')}"
            )
        ids = decode_ids(item.get("records"), f"{where}: records", len(records))
        absent = [i for i in ids if i not in records]
        if absent:
            raise EvidenceError(
                f"{where}: its evidence lists record {absent[0]}, which {RECORDS} does not hold (removed after export?)"
            )
        check.answer_inputs[entry.seq] = ([records[i] for i in ids], item["settings"])
        cited.update(ids)
    check.answers_without = {int(seq): str(why) for seq, why in without.items()}
    return cited


_FACT_MEMBERS = frozenset({"id", "record_ids", "record_count", "record_ids_sha256"})


def _check_report(
    report_id: str, entry: Any, document: Mapping[str, Any], records: Mapping[int, StoredRecord]
) -> list[int]:
    """One report's evidence against its facts; returns the ids of its records."""
    where = f"report {report_id}"
    if (
        not isinstance(entry, dict)
        or not isinstance(entry.get("facts"), dict)
        or not isinstance(entry.get("settings"), dict)
    ):
        raise EvidenceError(f"{where}: its evidence is not an object with 'records', 'facts' and 'settings'")
    if entry.get("body_sha256") != document["body_sha256"]:
        raise EvidenceError(
            f"{where}: its evidence is for body {entry.get('body_sha256')}, the report's is {document['body_sha256']}"
        )
    ids = decode_ids(entry.get("records"), f"{where}: records", len(records))
    for record_id in ids:
        if record_id not in records:
            raise EvidenceError(
                f"{where}: its evidence lists record {record_id}, which {RECORDS} does not hold (removed after export?)"
            )
    own = set(ids)
    body = document.get("body")
    listed = body.get("facts") if isinstance(body, dict) else None
    if not isinstance(listed, list) or not all(isinstance(f, dict) and _FACT_MEMBERS <= f.keys() for f in listed):
        raise EvidenceError(f"{where}: its body holds no list of facts to tie the evidence to")
    facts = {str(f["id"]): f for f in listed}
    if set(entry["facts"]) != set(facts):
        missing = sorted(set(facts) ^ set(entry["facts"]))
        raise EvidenceError(f"{where}: its evidence and its facts differ in fact {missing[0]}")
    for fact_id, fact in sorted(facts.items()):
        behind = decode_ids(entry["facts"][fact_id], f"{where}: fact {fact_id}", len(own))
        if len(behind) != fact["record_count"] or ids_sha256(behind) != fact["record_ids_sha256"]:
            raise EvidenceError(
                f"{where}: fact {fact_id}: the {len(behind)} record ids its evidence lists hash to"
                f" {ids_sha256(behind)}, not to the fact's record_ids_sha256 {fact['record_ids_sha256']}"
                f" ({fact['record_count']} records)"
            )
        outside = sorted(set(fact["record_ids"]) - set(behind)) or sorted(set(behind) - own)
        if outside:
            raise EvidenceError(f"{where}: fact {fact_id}: record {outside[0]} is cited but not in its evidence")
    return ids


def describe(differences: Sequence[FactDifference]) -> str:
    shown = "; ".join(str(d) for d in differences[:SHOWN_DIFFERENCES])
    more = len(differences) - SHOWN_DIFFERENCES
    return f"recomputed facts differ: {shown}" + (f"; and {more} more" if more > 0 else "")


__all__ = [
    "ANSWERED_EVENT",
    "EVIDENCE",
    "RECORDS",
    "AnswerEvidence",
    "AnswerSource",
    "EvidenceCheck",
    "EvidenceError",
    "EvidenceSource",
    "FactDifference",
    "Recompute",
    "RecomputeAnswer",
    "ReportEvidence",
    "absent_key",
    "answered_entries",
    "check_evidence",
    "decode_ids",
    "describe",
    "encode_ids",
    "parse_record",
    "record_line",
    "write_evidence",
]
