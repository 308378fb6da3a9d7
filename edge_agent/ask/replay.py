"""Replay: an `ask.answered` entry's question answered again with its recorded user, language and time over the
store's records, and whether the answer comes out byte for byte (canonical JSON of the members the pipeline
computes: `trail.answered`) as recorded.

Refuses (nothing answered, `refused` says why) when the answer cannot come out the same for reasons other than the
records: another ask version (`pipeline.ASK_VERSION`), an engine member that holds no model output, or a refusal the
service made at its deadline (no answer was computed). When the model read the question (`engine` in the entry), its
recorded output is read again by the same code (`model_planner.reading_of`): what the agent resolved and computed
from it is reproduced; that the model gives that output again is a property of the engine's fingerprint (same
fingerprint and prompt, same tokens), recorded beside it. The config's `[ask]` aliases and budget and
`[[reports.shifts]]` are today's: a change there shows as a difference, like a record changed or removed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from edge_agent.ask.model_planner import reading_of
from edge_agent.ask.pipeline import ASK_VERSION, answer_at
from edge_agent.ask.trail import ANSWERED_MEMBERS, answered
from edge_agent.audit import AuditEntry, EntryFormatError
from edge_agent.audit.view import ArchivedError
from edge_agent.base.canonical import canonical_json, sha256_hex
from edge_agent.config import AgentConfig
from edge_agent.store import Store

EVENT = "ask.answered"
QUESTION_ID_LEN = 16  # pipeline.question_id's hex digits
# What a difference shows of a recorded or replayed value: enough to see which figure moved, short enough to read.
SHOWN_CHARS = 200
# The members compared, in the order the first difference is looked for.
COMPARED = ("question_id", *ANSWERED_MEMBERS)


class ReplayError(LookupError):
    """No `ask.answered` entry by that seq or question id, naming what was looked for."""


@dataclass(frozen=True)
class AskReplay:
    question_id: str
    seq: int
    identical: bool
    recorded_sha256: str
    replayed_sha256: str | None = None
    refused: str | None = None
    differences: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "question_id": self.question_id,
            "seq": self.seq,
            "identical": self.identical,
            "recorded_sha256": self.recorded_sha256,
            "replayed_sha256": self.replayed_sha256,
            "refused": self.refused,
            "differences": self.differences,
        }


def find_answer(lines: Sequence[bytes], key: str) -> AuditEntry:
    """The `ask.answered` entry `key` names: its question id (16 hex digits, which may all be decimal: a log of 10**15
    entries is not met) or its audit seq (fewer digits)."""
    if key.isdecimal() and len(key) != QUESTION_ID_LEN:
        seq = int(key)
        if seq >= len(lines):
            raise ReplayError(f"the audit log has no entry {seq} (it ends at {len(lines) - 1})")
        try:
            line = lines[seq]
        except ArchivedError as exc:
            raise ReplayError(f"audit {exc}; replay it from that bundle's entries") from exc
        entry = _entry(line)
        if entry.event != EVENT:
            raise ReplayError(f"audit entry {seq} is a {entry.event} entry, not {EVENT}")
        return entry
    needle = canonical_json({"question_id": key})[1:-1]
    for line in lines:
        if needle in line:
            entry = _entry(line)
            if entry.event == EVENT and entry.payload.get("question_id") == key:
                return entry
    raise ReplayError(f"the audit log has no {EVENT} entry with question_id {key}")


def replay_answer(config: AgentConfig, store: Store, entry: AuditEntry) -> AskReplay:
    """The entry's question answered again at its `asked_at` over `store`, compared member by member."""
    payload = entry.payload
    recorded = {k: payload.get(k) for k in COMPARED}
    question_id, recorded_sha256 = str(payload.get("question_id")), _sha256(recorded)
    refusal = _refusal(payload)
    if refusal is not None:
        return AskReplay(question_id, entry.seq, False, recorded_sha256, refused=refusal)
    engine = payload.get("engine")
    reading = reading_of(engine["output"], payload["question"])[0] if isinstance(engine, Mapping) else None
    answer = answer_at(
        config,
        store,
        payload["question"],
        user=payload["user"],
        lang=payload["lang"],
        now=datetime.fromisoformat(payload["asked_at"]),
        reading=reading,
    )
    replayed = {"question_id": answer.question_id, **answered(answer)}
    differences = differ(recorded, replayed)
    identical = canonical_json(recorded) == canonical_json(replayed)
    return AskReplay(question_id, entry.seq, identical, recorded_sha256, _sha256(replayed), differences=differences)


def differ(recorded: Mapping[str, Any], replayed: Mapping[str, Any]) -> list[str]:
    """Each compared member that differs, in `COMPARED` order; `cited` fact by fact, naming the fact."""
    out: list[str] = []
    for member in COMPARED:
        was, now = recorded.get(member), replayed.get(member)
        if _same(was, now):
            continue
        if member == "cited" and isinstance(was, list) and isinstance(now, list):
            out.extend(_cited(was, now))
        else:
            out.append(f"{member}: recorded {_shown(was)}, replayed {_shown(now)}")
    return out


def _cited(was: list[Any], now: list[Any]) -> list[str]:
    recorded = {str(f.get("id")): f for f in was if isinstance(f, dict)}
    replayed = {str(f.get("id")): f for f in now if isinstance(f, dict)}
    out: list[str] = []
    for fact_id in sorted(recorded.keys() | replayed.keys()):
        a, b = recorded.get(fact_id), replayed.get(fact_id)
        if a is None or b is None:
            out.append(f"cited {fact_id}: recorded {_label(a)}, replayed {_label(b)}")
        elif not _same(a, b):
            members = [k for k in ("kind", "subject", "ids", "sha256") if not _same(a.get(k), b.get(k))]
            out.append(f"cited {fact_id} ({_label(a)}): {', '.join(members)} differ")
    return out


def _refusal(payload: Mapping[str, Any]) -> str | None:
    version = payload.get("ask_version")
    if version != ASK_VERSION:
        return f"the answer was computed by ask code version {version}; this agent's is {ASK_VERSION}"
    engine = payload.get("engine")
    if engine is not None and not (isinstance(engine, Mapping) and isinstance(engine.get("output"), str)):
        return "the entry's engine member holds no model output to read the question again from"
    if payload.get("reason") == "deadline":
        return "the service refused it at its deadline (ask.deadline_s): no answer was computed to reproduce"
    return None


def _entry(line: bytes) -> AuditEntry:
    try:
        return AuditEntry.from_line(line)
    except EntryFormatError as exc:
        raise ReplayError(f"an audit entry cannot be read: {exc}") from exc


def _same(a: Any, b: Any) -> bool:
    return canonical_json(a) == canonical_json(b)


def _label(fact: Mapping[str, Any] | None) -> str:
    return "nothing" if fact is None else f"{fact.get('kind')} {fact.get('subject')}"


def _shown(value: Any) -> str:
    text = canonical_json(value).decode()
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"


def _sha256(value: Any) -> str:
    return sha256_hex(canonical_json(value))


__all__ = ["AskReplay", "ReplayError", "differ", "find_answer", "replay_answer"]
