"""Checking a bundle's evidence without recomputing: every fact's and answer's record ids against the records the
bundle holds (the format is in evidence.py)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from edge_agent.audit.entry import AuditEntry
from edge_agent.audit.evidence import EVIDENCE
from edge_agent.audit.evidence_records import FORMAT, FORMATS, RECORDS, EvidenceError, decode_ids, parse_record
from edge_agent.base.types import StoredRecord, ids_sha256


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
