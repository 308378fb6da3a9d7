"""The ask's side of a bundle's evidence (audit/evidence.py holds its format): which records an answer was computed
from, for `audit export`, and the answer recomputed from them, for `audit verify-bundle --recompute`.

An answer's evidence is every record the pipeline read to compute it (the namespace, the plan's resolution and the
tools' reads), taken by answering its question again at `asked_at` over the store (`replay.replay_answer`): a fact
cites at most 50 records, fewer than a statistic or a stop count reads. Recomputing answers the question once more
over a store holding only those records, ids kept, under the settings the exporter had (`answer_settings`), and
compares every member replay compares.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from edge_agent.ask.pipeline import ASK_VERSION
from edge_agent.ask.replay import replay_answer
from edge_agent.audit import AuditEntry
from edge_agent.audit.evidence import AnswerEvidence
from edge_agent.base.types import StoredRecord
from edge_agent.config import AgentConfig
from edge_agent.store import Store, StoredRow

# Tools that read the report repository, which a bundle carries as reports, not as records.
REPORT_TOOLS = frozenset({"reports_list", "report_get"})


class ReadingStore(Store):
    """The store, keeping every record its reads return (`read`, by id): what an answer was computed from."""

    def __init__(self, path: Path | str) -> None:
        super().__init__(path)
        self.read: dict[int, StoredRecord] = {}

    def _kept(self, records: list[StoredRecord]) -> list[StoredRecord]:
        self.read.update((r.id, r) for r in records)
        return records

    def records(
        self,
        start: datetime | None = None,
        end: datetime | None = None,
        *,
        keys: Sequence[str] | None = None,
        kinds: Sequence[str] | None = None,
        sources: Sequence[str] | None = None,
        limit: int | None = None,
        newest_first: bool = False,
    ) -> list[StoredRecord]:
        found = super().records(
            start, end, keys=keys, kinds=kinds, sources=sources, limit=limit, newest_first=newest_first
        )
        return self._kept(found)

    def value_texts(
        self,
        start: datetime | None = None,
        end: datetime | None = None,
        *,
        keys: Sequence[str] | None = None,
        kinds: Sequence[str] | None = None,
        limit: int | None = None,
    ) -> list[tuple[str, str | None]]:
        # The namespace reads the week's MES events this way: the records behind the texts are evidence too.
        self._kept(super().records(start, end, keys=keys, kinds=kinds, limit=limit))
        return super().value_texts(start, end, keys=keys, kinds=kinds, limit=limit)

    def record_rows(
        self,
        start: datetime | None = None,
        end: datetime | None = None,
        *,
        keys: Sequence[str] | None = None,
        kinds: Sequence[str] | None = None,
        limit: int | None = None,
    ) -> list[StoredRow]:
        # The tag statistics read their samples this way: the records behind the rows are evidence too.
        self._kept(super().records(start, end, keys=keys, kinds=kinds, limit=limit))
        return super().record_rows(start, end, keys=keys, kinds=kinds, limit=limit)

    def records_by_id(self, ids: Sequence[int]) -> list[StoredRecord]:
        return self._kept(super().records_by_id(ids))

    def recent_keys(self, since: datetime, limit: int) -> list[StoredRecord]:
        return self._kept(super().recent_keys(since, limit))


def answer_settings(config: AgentConfig) -> dict[str, Any]:
    """The config an answer depends on besides its question and records: the site, the shifts and KPI settings,
    `[ask]` (aliases, budget). A partial AgentConfig, read back with `AgentConfig.model_validate`."""
    return {
        "site": {"id": config.site.id, "timezone": config.site.timezone},
        "reports": {
            "shifts": [s.model_dump(mode="json") for s in config.reports.shifts],
            "kpi": config.reports.kpi.model_dump(mode="json"),
        },
        "ask": config.ask.model_dump(mode="json"),
    }


class StoreAnswerEvidence:
    """Each exported answer's evidence read from the store at `store_path`, under the plant's current config.

    An answer gets none, with the reason, when it has no facts (refused or needing clarification), when its plan
    reads stored reports, when the store's records give another answer now (records removed by retention or arrived
    late, settings changed), or when the records it read give another answer alone."""

    ask_version = ASK_VERSION

    def __init__(self, store_path: Path, config: AgentConfig) -> None:
        self.store_path = store_path
        self.config = config
        self.settings = answer_settings(config)

    def evidence(self, entry: AuditEntry) -> AnswerEvidence | str:
        payload = entry.payload
        if payload.get("status") != "answered":
            return f"it has no facts (status {payload.get('status')})"
        calls = (payload.get("plan") or {}).get("calls") or []
        if any(c.get("tool") in REPORT_TOOLS for c in calls if isinstance(c, dict)):
            return "its facts read stored reports, which a bundle carries as reports, not as records"
        reading = ReadingStore(self.store_path)
        with reading:
            replayed = replay_answer(self.config, reading, entry)
        read = sorted(reading.read.values(), key=lambda r: r.id)
        if not replayed.identical:
            why = replayed.refused or replayed.differences[0]
            return f"the store's records give another answer now ({why})"
        differences = recompute_answer(entry, read, self.settings)
        if differences:
            return f"the records it read give another answer alone ({differences[0]})"
        return AnswerEvidence(records=read, settings=self.settings)


def recompute_answer(entry: AuditEntry, records: Sequence[StoredRecord], settings: Mapping[str, Any]) -> list[str]:
    """The entry's question answered again from `records` alone under `settings`; the differences from what the
    entry records (none: the same answer, facts and hashes), or why it cannot be answered again."""
    try:
        config = AgentConfig.model_validate(settings)
    except ValueError as exc:
        return [f"its settings cannot be read: {exc}"]
    with tempfile.TemporaryDirectory(prefix="edge-agent-recompute-") as tmp, Store(Path(tmp) / "store.db") as store:
        store.insert_stored_records(records)
        try:
            replayed = replay_answer(config, store, entry)
        except (KeyError, TypeError, ValueError) as exc:  # an entry without its question, user, lang or time
            return [f"its entry cannot be answered again: {type(exc).__name__}: {exc}"]
    if replayed.refused is not None:
        return [f"refused: {replayed.refused}"]
    return replayed.differences


__all__ = ["ReadingStore", "StoreAnswerEvidence", "answer_settings", "recompute_answer"]
