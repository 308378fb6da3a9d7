"""`edge-agent audit replay` of an ask: the `ask.answered` entry's question answered again at its recorded time over
the store's records, identical byte for byte or naming the first difference; found by seq or question id; refused
when the answer cannot come out the same for reasons other than the records."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from edge_agent.ask.pipeline import ASK_VERSION, answer_at
from edge_agent.ask.replay import AskReplay, ReplayError, find_answer, replay_answer
from edge_agent.ask.trail import record_answer
from edge_agent.audit import AuditLog
from edge_agent.audit.rollback import read_lines
from edge_agent.config import AgentConfig, load_config
from edge_agent.store import Store
from harness.shift import SHIFT_START, TZ, shift_records

REPO = Path(__file__).resolve().parent.parent
# 14:30 in Mexico City on 2026-11-29: shift A (06:00-14:00) is over.
NOW = SHIFT_START + timedelta(hours=8, minutes=30)
QUESTION = "¿Cuál fue la vibración máxima de la P-101 en el turno A?"


@dataclass(frozen=True)
class Plant:
    config_path: Path
    config: AgentConfig
    seq: int
    question_id: str


def write_config(tmp_path: Path) -> Path:
    path = tmp_path / "agent.toml"
    path.write_text(
        f"""[site]
id = "demo"
timezone = "{TZ}"
[paths]
state_dir = "{tmp_path / "state"}"
[[reports.shifts]]
name = "A"
start = "06:00"
end = "14:00"
"""
    )
    return path


@pytest.fixture
def plant(tmp_path: Path) -> Iterator[Plant]:
    """A store holding shift A and an audit log holding the answer to QUESTION asked at NOW by `supervisor`."""
    path = write_config(tmp_path)
    config = load_config(path)
    config.paths.state_dir.mkdir()
    with Store(config.paths.store_path) as store, AuditLog.open(config.paths.audit_dir, "edge-agent/demo") as log:
        store.insert_records(shift_records())
        answer = answer_at(config, store, QUESTION, user="supervisor", lang=None, now=NOW)
        assert answer.status == "answered"
        seq = record_answer(log, answer, QUESTION, "supervisor")
    yield Plant(path, config, seq, answer.question_id)


def audit_replay(plant: Plant, key: str) -> tuple[int, dict[str, Any], str]:
    proc = subprocess.run(
        [sys.executable, "-m", "edge_agent.cli", "audit", "replay", "--config", str(plant.config_path), key],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    return proc.returncode, json.loads(proc.stdout) if proc.stdout.strip() else {}, proc.stderr


def change_record(plant: Plant, key: str, old: float, new: float) -> None:
    """Rewrite a stored tag value in place, as a tampered or corrected store would hold it."""
    with sqlite3.connect(plant.config.paths.store_path) as conn:
        changed = conn.execute(
            "UPDATE records SET value = ? WHERE key = ? AND value = ?", (json.dumps(new), key, json.dumps(old))
        ).rowcount
    assert changed == 1


def replay(plant: Plant, key: str) -> AskReplay:
    with Store(plant.config.paths.store_path) as store:
        return replay_answer(plant.config, store, find_answer(read_lines(plant.config.paths.audit_dir), key))


class TestAuditReplay:
    def test_an_unchanged_store_replays_identical(self, plant: Plant) -> None:
        """By audit seq: exit 0, identical, the replayed canonical JSON hashing as the recorded one."""
        code, out, err = audit_replay(plant, str(plant.seq))
        assert code == 0, err
        assert out["identical"] is True and out["refused"] is None and out["differences"] == []
        assert out["replayed_sha256"] == out["recorded_sha256"]
        assert (out["seq"], out["question_id"]) == (plant.seq, plant.question_id)

    def test_a_changed_record_names_the_difference(self, plant: Plant) -> None:
        """The maximum sample 7.86 → 9.5: exit 1, the first difference is the tag_stats fact (A02, after the window
        A01) whose hash moved; the answer's text and the facts hash differ too."""
        change_record(plant, "P-101.vibration_mm_s", 7.86, 9.5)
        code, out, err = audit_replay(plant, plant.question_id)
        assert code == 1
        assert err.strip() == "audit replay: answer differs: cited A02 (tag_stats P-101.vibration_mm_s): sha256 differ"
        assert out["identical"] is False
        assert [d.split(":")[0] for d in out["differences"]] == [
            "cited A02 (tag_stats P-101.vibration_mm_s)",
            "facts_sha256",
            "answer",
        ]
        assert "7.86" in out["differences"][2] and "9.5" in out["differences"][2]


class TestFindAnswer:
    def test_by_seq_and_by_question_id_the_same_entry(self, plant: Plant) -> None:
        lines = read_lines(plant.config.paths.audit_dir)
        assert find_answer(lines, str(plant.seq)) == find_answer(lines, plant.question_id)

    def test_a_seq_of_another_event_is_named(self, plant: Plant) -> None:
        """Entry 0 opens the log (not an answer): said with its event."""
        lines = read_lines(plant.config.paths.audit_dir)
        event = json.loads(lines[0])["event"]
        with pytest.raises(ReplayError, match=f"audit entry 0 is a {event} entry, not ask.answered"):
            find_answer(lines, "0")

    def test_unknown_ids_are_said(self, plant: Plant) -> None:
        lines = read_lines(plant.config.paths.audit_dir)
        with pytest.raises(ReplayError, match=f"the audit log has no entry 99 \\(it ends at {len(lines) - 1}\\)"):
            find_answer(lines, "99")
        with pytest.raises(ReplayError, match="no ask.answered entry with question_id 0123456789abcdef"):
            find_answer(lines, "0123456789abcdef")
        with pytest.raises(ReplayError, match="no ask.answered entry with question_id 0123456789012345"):
            find_answer(lines, "0123456789012345")  # 16 decimal digits: a question id, not a seq

    # The plant is only read here, so one per test is enough for every generated key.
    @settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(key=st.one_of(st.text(max_size=40), st.from_regex(r"[0-9]{1,3}|[0-9a-f]{16}", fullmatch=True)))
    def test_any_key_finds_an_answer_or_says_why(self, plant: Plant, key: str) -> None:
        """Whatever the argument, the lookup returns an `ask.answered` entry or raises ReplayError."""
        lines = read_lines(plant.config.paths.audit_dir)
        try:
            entry = find_answer(lines, key)
        except ReplayError:
            return
        assert entry.event == "ask.answered"


class TestRefusals:
    @pytest.mark.parametrize(
        ("member", "value", "refused"),
        [
            ("ask_version", "0", f"the answer was computed by ask code version 0; this agent's is {ASK_VERSION}"),
            ("engine", {"model_sha256": "ab"}, "the entry's engine member holds no model output"),
            ("reason", "deadline", "the service refused it at its deadline"),
        ],
    )
    def test_an_answer_that_cannot_come_out_the_same_is_refused(
        self, plant: Plant, member: str, value: object, refused: str
    ) -> None:
        """Another ask version, an engine member without the model's output, a deadline refusal: refused with why,
        nothing answered."""
        lines = read_lines(plant.config.paths.audit_dir)
        payload = {**find_answer(lines, str(plant.seq)).payload, member: value}
        with AuditLog.open(plant.config.paths.audit_dir, "edge-agent/demo") as log:
            seq = log.append("ask.answered", "ask", payload).seq
        result = replay(plant, str(seq))
        assert result.refused is not None and result.refused.startswith(refused)
        assert result.identical is False and result.replayed_sha256 is None
