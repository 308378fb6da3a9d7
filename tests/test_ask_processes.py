"""Answers computed in worker processes (`ask.compute = "processes"`, edge_agent.ask.processes): the same bytes as
in a thread, over a store the workers cannot write, and a worker's death costs the question it held, not the next
one."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from concurrent.futures.process import BrokenProcessPool
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from edge_agent.ask import processes
from edge_agent.ask.processes import AnswerPool, QuestionJob, ToolJob, compute
from edge_agent.config import AgentConfig
from edge_agent.store import Store, StoreError
from harness.shift import SHIFT_START, TZ, shift_records

REPO = Path(__file__).resolve().parents[1]
NOW = SHIFT_START + timedelta(hours=8, minutes=30)
WINDOW = {"start": SHIFT_START.isoformat(), "end": (SHIFT_START + timedelta(hours=8)).isoformat()}
JOBS: list[QuestionJob | ToolJob] = [
    QuestionJob("¿Cuántas paradas tuvo la P-101 en el turno A?", "supervisor", None, NOW, None),
    QuestionJob("What was the highest vibration of P-101 in shift A?", "engineer", "en", NOW, None),
    QuestionJob("liga a bomba P-101", "operator", None, NOW, None),
    QuestionJob("¿Cuál fue la vibración de la P-999 ayer?", None, None, NOW, None),
    ToolJob("stops", {"asset": "P-101", "window": WINDOW}, NOW),
    ToolJob("set_setpoint", {"value": 50}, NOW),
]


@pytest.fixture(scope="module")
def plant(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[AgentConfig, Store]]:
    tmp = tmp_path_factory.mktemp("processes")
    config = AgentConfig.model_validate(
        {
            "site": {"id": "demo", "timezone": TZ},
            "paths": {"state_dir": str(tmp)},
            "reports": {"shifts": [{"name": "A", "start": "06:00", "end": "14:00"}]},
            "ask": {"workers": 2},
        }
    )
    with Store(config.paths.store_path) as store:
        store.insert_records(shift_records())
        yield config, store


@pytest.fixture
async def pool(plant: tuple[AgentConfig, Store]) -> AsyncIterator[AnswerPool]:
    config, store = plant
    answer_pool = AnswerPool(config, store.path, config.ask.workers)
    await answer_pool.start()
    yield answer_pool
    answer_pool.shutdown()


def dumped(outcome: object) -> Any:
    return outcome.model_dump(mode="json") if hasattr(outcome, "model_dump") else outcome


async def test_a_worker_computes_the_bytes_a_thread_computes(
    plant: tuple[AgentConfig, Store], pool: AnswerPool
) -> None:
    """Questions answered, refused and asked back, and tool calls answered and refused: the same outcome."""
    config, store = plant
    here = [dumped(compute(config, store, job)) for job in JOBS]
    there = [dumped(await pool.compute(job)) for job in JOBS]
    assert there == here
    assert [h["status"] for h in here[:4]] == ["answered", "answered", "refused", "needs_clarification"]
    assert [h[1] for h in here[4:]] == [None, "unknown_tool"]


def _query_only() -> int:
    assert processes._worker is not None
    return int(processes._worker[1]._query("PRAGMA query_only")[0][0])


async def test_a_workers_store_refuses_writes(plant: tuple[AgentConfig, Store], pool: AnswerPool) -> None:
    """Each worker's connection is `query_only`: nothing computed in a worker can change what the agent stores."""
    assert pool._pool is not None
    assert {pool._pool.submit(_query_only).result(30) for _ in range(4)} == {1}


def test_a_store_that_refuses_writes_raises_on_insert(tmp_path: Path) -> None:
    with Store(tmp_path / "store.db") as store:
        store.refuse_writes()
        with pytest.raises((StoreError, sqlite3.OperationalError), match="readonly"):
            store.insert_records(shift_records()[:1])
        assert store.record_count() == 0


async def test_a_dead_worker_fails_its_question_and_the_next_is_answered(pool: AnswerPool) -> None:
    """Both workers killed (as the kernel's OOM killer would): the question in flight raises BrokenProcessPool
    (the service answers it `internal_error`), and the next question gets a fresh pool."""
    assert pool._pool is not None
    for pid in list(pool._pool._processes):
        os.kill(pid, signal.SIGKILL)
    with pytest.raises(BrokenProcessPool):
        await pool.compute(JOBS[0])
    answer = await pool.compute(JOBS[0])
    assert dumped(answer)["status"] == "answered"


KILLED_AGENT = """
import asyncio, os, sys
from edge_agent.ask.processes import AnswerPool
from edge_agent.config import AgentConfig

async def main() -> None:
    config = AgentConfig.model_validate({"site": {"id": "demo"}, "paths": {"state_dir": sys.argv[1]}})
    pool = AnswerPool(config, config.paths.store_path, 2)
    await pool.start()
    print(" ".join(str(pid) for pid in pool._pool._processes), flush=True)
    await asyncio.sleep(60)

if __name__ == "__main__":
    asyncio.run(main())
"""


def test_the_workers_end_when_the_agent_is_killed(tmp_path: Path) -> None:
    """SIGKILL to the agent (the OOM killer, `kill -9`): its workers, blocked waiting for questions, end too
    rather than linger."""
    script = tmp_path / "agent.py"
    script.write_text(KILLED_AGENT)
    Store(tmp_path / "store.sqlite3").close()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    agent = subprocess.Popen([sys.executable, str(script), str(tmp_path)], stdout=subprocess.PIPE, text=True, env=env)
    assert agent.stdout is not None
    pids = [int(pid) for pid in agent.stdout.readline().split()]
    assert len(pids) == 2 and all(alive(pid) for pid in pids)
    agent.kill()
    agent.wait(10)
    deadline = time.monotonic() + 10
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(alive(pid) for pid in pids)


def alive(pid: int) -> bool:
    """A process not yet ended (a zombie has ended: its parent, now init, reaps it)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except FileNotFoundError:
        return False
