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

This module writes both files; evidence_records.py reads and writes records.jsonl's lines and the id runs, and
evidence_check.py checks a bundle's evidence against its reports and answers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import edge_agent
from edge_agent.audit.entry import AuditEntry
from edge_agent.audit.evidence_records import FORMAT, RECORDS, encode_ids, record_line
from edge_agent.base.canonical import canonical_json
from edge_agent.base.types import StoredRecord

EVIDENCE = "evidence.json"
# The entries whose answers a bundle carries evidence for (edge_agent/ask/trail.py writes them).
ANSWERED_EVENT = "ask.answered"
# Differences printed before "and N more": enough to see a pattern, short enough to read.
SHOWN_DIFFERENCES = 10


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


def describe(differences: Sequence[FactDifference]) -> str:
    shown = "; ".join(str(d) for d in differences[:SHOWN_DIFFERENCES])
    more = len(differences) - SHOWN_DIFFERENCES
    return f"recomputed facts differ: {shown}" + (f"; and {more} more" if more > 0 else "")


__all__ = [
    "ANSWERED_EVENT",
    "EVIDENCE",
    "AnswerEvidence",
    "AnswerSource",
    "EvidenceSource",
    "FactDifference",
    "Recompute",
    "RecomputeAnswer",
    "ReportEvidence",
    "answered_entries",
    "describe",
    "write_evidence",
]
