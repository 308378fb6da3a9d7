"""The ask service over a real Mosquitto broker with the ACL docs/ask.md prescribes: `edge-agent ask` end to end and
its exit codes, direct tool calls, the audit entries, the per-user throttle, malformed payloads (a refused reply and
a count, never a crash) and the reply-topic rule; Hypothesis over the payload bytes at the service's boundary."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from edge_agent.ask.client import ask_agent
from edge_agent.ask.metrics import REQUESTS
from edge_agent.ask.pipeline import answer_question
from edge_agent.ask.service import AskService
from edge_agent.ask.tools import ToolContext
from edge_agent.ask.topics import reply_namespace, request_topic
from edge_agent.audit import AuditLog
from edge_agent.base.types import Record, utcnow
from edge_agent.config import AgentConfig
from edge_agent.store import Store
from harness.shift import SHIFT_START, TZ, shift_records
from tests.fixtures.broker import Broker

pytestmark = pytest.mark.broker

REPO = Path(__file__).resolve().parents[1]
# docs/ask.md, "Broker set-up": the agent reads and writes everything; a user publishes questions only on the topic
# ending in its own name and reads only its own reply namespace.
ASK_ACL = """user agent
topic readwrite #

pattern write edge/+/ask/request/%u
pattern readwrite edge/+/ask/reply/%u/#
"""
USERS = {"agent": "agent-pw", "supervisor": "supervisor-pw", "operator": "operator-pw"}
QUESTION = "¿Cuántas paradas tuvo la P-101 ayer en el turno A?"


@pytest.fixture
def ask_broker(tmp_path: Path) -> Iterator[Broker]:
    b = Broker(tmp_path / "broker", allow_anonymous=False, users=dict(USERS), acl=ASK_ACL)
    (tmp_path / "broker").mkdir()
    b.start()
    yield b
    b.stop()


def yesterdays_shift() -> list[Record]:
    """harness.shift moved to yesterday's shift A in the site's timezone, so "ayer en el turno A" finds it."""
    tz = ZoneInfo(TZ)
    day = utcnow().astimezone(tz).date() - timedelta(days=1)
    start = datetime(day.year, day.month, day.day, 6, 0, tzinfo=tz)
    shift = start - SHIFT_START
    return [
        r.model_copy(update={"source_time": r.source_time + shift, "received_time": r.received_time + shift})
        for r in shift_records()
    ]


def agent_config(tmp_path: Path, broker: Broker, user: str = "agent", **ask: Any) -> AgentConfig:
    return AgentConfig.model_validate(
        {
            "site": {"id": "demo", "timezone": TZ},
            "paths": {"state_dir": str(tmp_path / "state")},
            "mqtt": {
                "host": broker.host,
                "port": broker.port,
                "client_id": f"{user}-client",
                "username": user,
                "password": USERS[user],
            },
            "reports": {"shifts": [{"name": "A", "start": "06:00", "end": "14:00"}]},
            "ask": ask,
        }
    )


def write_cli_config(tmp_path: Path, broker: Broker, user: str) -> Path:
    path = tmp_path / f"{user}.toml"
    path.write_text(
        f"""[site]
id = "demo"
timezone = "{TZ}"
[paths]
state_dir = "{tmp_path / user}"
[mqtt]
host = "{broker.host}"
port = {broker.port}
username = "{user}"
password = "{USERS[user]}"
"""
    )
    return path


@dataclass
class Running:
    config: AgentConfig
    store: Store
    audit: AuditLog
    service: AskService

    def entries(self, event: str) -> list[dict[str, Any]]:
        lines = (self.config.paths.audit_dir / "entries.jsonl").read_text(encoding="utf-8").splitlines()
        return [e for e in map(json.loads, lines) if e["event"] == event]


@asynccontextmanager
async def running_service(config: AgentConfig) -> AsyncIterator[Running]:
    """AskService and OutboxPublisher on the config's broker, the store holding yesterday's shift A."""
    from edge_agent.connectors.mqtt import MqttClient
    from edge_agent.publish.outbox import OutboxPublisher

    store = Store(config.paths.store_path)
    store.insert_records(yesterdays_shift())
    audit = AuditLog.open(config.paths.audit_dir, origin="edge-agent/demo")
    outbox = OutboxPublisher(config.mqtt, store, client_id="agent-outbox", poll_s=0.2)
    service = AskService(config, store, audit, outbox_wake=outbox.wake, mqtt_client=MqttClient)
    ready_service, ready_outbox = asyncio.Event(), asyncio.Event()
    tasks = [
        asyncio.create_task(service.run(ready_service), name="ask"),
        asyncio.create_task(outbox.run(ready_outbox), name="outbox"),
    ]
    try:
        async with asyncio.timeout(30):
            await asyncio.gather(ready_service.wait(), ready_outbox.wait())
        yield Running(config, store, audit, service)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        audit.close()
        store.close()


async def cli(config_path: Path, *args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "edge_agent.cli",
        "ask",
        "--config",
        str(config_path),
        "--timeout",
        "30",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    out, err = await proc.communicate()
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


class TestAskCommand:
    @pytest.mark.parametrize("compute", ["processes", "threads"])
    async def test_answered_question_prints_json_and_is_audited(
        self, ask_broker: Broker, tmp_path: Path, compute: str
    ) -> None:
        """`edge-agent ask --json` exits 0 with the answer the pipeline gives at the accepted time, and the audit log
        holds its `ask.answered` entry (question, user, status, facts hash) at the seq the answer cites; computed in
        the workers' processes or in the ask's threads (ask.compute), byte for byte the same."""
        async with running_service(agent_config(tmp_path, ask_broker, compute=compute)) as running:
            code, out, err = await cli(write_cli_config(tmp_path, ask_broker, "supervisor"), "--json", QUESTION)
            assert code == 0, err
            reply = json.loads(out)
            assert reply["status"] == "answered"
            assert reply["answer"].startswith("La bomba P-101 tuvo 1 parada en el turno A del ")
            assert reply["answer"].endswith(
                ": empezó a las 06:20 y duró 85 min. Su causa fue una fuga en el sello mecánico."
            )
            asked_at = datetime.fromisoformat(reply["asked_at"])
            ctx = ToolContext(store=running.store, config=running.config, now=asked_at)
            again = answer_question(
                ctx, QUESTION, user="supervisor", lang=None, aliases={}, shifts=running.config.reports.shifts
            )
            assert again.model_dump(mode="json") | {"audit_seq": reply["audit_seq"]} == reply
            (entry,) = running.entries("ask.answered")
            assert entry["seq"] == reply["audit_seq"]
            assert (entry["actor"], entry["payload"]["user"], entry["payload"]["status"]) == (
                "ask",
                "supervisor",
                "answered",
            )
            assert entry["payload"]["question"] == QUESTION
            assert entry["payload"]["answer"] == reply["answer"]

    @pytest.mark.parametrize(
        ("question", "code", "status"),
        [
            ("arranca la bomba P-101", 4, "refused (write_request)"),
            ("¿Cuál fue la vibración de la P-999 ayer?", 3, "needs_clarification"),
        ],
    )
    async def test_exit_codes(self, ask_broker: Broker, tmp_path: Path, question: str, code: int, status: str) -> None:
        """Refused exits 4 and needs_clarification 3, the status (and reason code) on stderr."""
        async with running_service(agent_config(tmp_path, ask_broker)) as running:
            got, out, err = await cli(write_cli_config(tmp_path, ask_broker, "operator"), question)
            assert got == code, err
            assert status in err and out.strip()
            (entry,) = running.entries("ask.answered")
            assert entry["payload"]["status"] == status.split()[0]

    async def test_no_agent_is_exit_1(self, ask_broker: Broker, tmp_path: Path) -> None:
        """Nobody answers: exit 1 after the timeout, saying so."""
        config = write_cli_config(tmp_path, ask_broker, "operator")
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "edge_agent.cli", "ask", "--config", str(config), "--timeout", "2", QUESTION,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(REPO)},
        )  # fmt: skip
        _, err = await proc.communicate()
        assert proc.returncode == 1
        assert "no answer within 2s" in err.decode()


class TestToolCalls:
    async def test_a_tool_call_is_answered_and_audited(self, ask_broker: Broker, tmp_path: Path) -> None:
        """{"tool", "args"} runs one tool at the accepted time: its result and one `ask.tool_called` entry."""
        async with running_service(agent_config(tmp_path, ask_broker)) as running:
            start = yesterdays_shift()[0].source_time
            window = {"start": start.isoformat(), "end": (start + timedelta(hours=8)).isoformat()}
            client = agent_config(tmp_path, ask_broker, "supervisor")
            reply = await ask_agent(client, {"tool": "stops", "args": {"asset": "P-101", "window": window}})
            assert reply["status"] == "answered" and reply["tool"] == "stops"
            assert (reply["result"]["count"], reply["result"]["total_s"]) == (1, 5100)
            (entry,) = running.entries("ask.tool_called")
            assert entry["seq"] == reply["audit_seq"]
            assert entry["payload"]["user"] == "supervisor" and entry["payload"]["tool"] == "stops"
            assert entry["payload"]["arguments"] == {"asset": "P-101", "window": window}

    async def test_an_unknown_tool_is_refused_with_its_code(self, ask_broker: Broker, tmp_path: Path) -> None:
        async with running_service(agent_config(tmp_path, ask_broker)) as running:
            client = agent_config(tmp_path, ask_broker, "supervisor")
            reply = await ask_agent(client, {"tool": "set_setpoint", "args": {"value": 50}})
            assert (reply["status"], reply["reason"]) == ("refused", "unknown_tool")
            (entry,) = running.entries("ask.tool_called")
            assert (entry["payload"]["status"], entry["payload"]["reason"]) == ("refused", "unknown_tool")


class TestAdmission:
    async def test_a_user_over_the_throttle_is_refused(self, ask_broker: Broker, tmp_path: Path) -> None:
        """ask.throttle = 2: the third question within a minute is refused `throttled`; another user is not."""
        async with running_service(agent_config(tmp_path, ask_broker, throttle=2)):
            operator = agent_config(tmp_path, ask_broker, "operator")
            replies = [await ask_agent(operator, {"question": "arranca la bomba P-101"}) for _ in range(3)]
            assert [r["reason"] for r in replies] == ["write_request", "write_request", "throttled"]
            other = await ask_agent(agent_config(tmp_path, ask_broker, "supervisor"), {"question": QUESTION})
            assert other["status"] == "answered"

    async def test_a_malformed_payload_is_refused_and_counted(self, ask_broker: Broker, tmp_path: Path) -> None:
        """Bytes that are not a question: a `bad_request` reply naming the field, counted `invalid`, and the
        service answers the next question."""
        before = REQUESTS.labels("invalid")._value.get()
        async with running_service(agent_config(tmp_path, ask_broker)):
            operator = agent_config(tmp_path, ask_broker, "operator")
            reply = await ask_agent(operator, {"question": "", "lang": "fr"})
            assert (reply["status"], reply["reason"]) == ("refused", "bad_request")
            assert reply["detail"].startswith("question: ")
            reply = await ask_agent(operator, {"question": QUESTION, "extra": 1})
            assert reply["detail"].startswith("extra: ")
            assert REQUESTS.labels("invalid")._value.get() == before + 2
            assert (await ask_agent(operator, {"question": QUESTION}))["status"] == "answered"

    async def test_an_answer_past_its_deadline_is_refused_and_audited(self, ask_broker: Broker, tmp_path: Path) -> None:
        """ask.deadline_s = 0.001: the answer is refused `deadline`, and that refusal is what the audit log holds."""
        async with running_service(agent_config(tmp_path, ask_broker, deadline_s=0.001)) as running:
            reply = await ask_agent(agent_config(tmp_path, ask_broker, "supervisor"), {"question": QUESTION})
            assert (reply["status"], reply["reason"]) == ("refused", "deadline")
            assert reply["answer"] == "La respuesta tardó demasiado; acote el periodo o la pregunta."
            (entry,) = running.entries("ask.answered")
            assert (entry["seq"], entry["payload"]["reason"]) == (reply["audit_seq"], "deadline")

    async def test_no_reply_outside_the_users_namespace(self, ask_broker: Broker, tmp_path: Path) -> None:
        """A response topic in another user's reply namespace gets nothing: no reply is written at all."""
        config = agent_config(tmp_path, ask_broker)
        async with running_service(config) as running:
            message = Message(
                f"{request_topic(config)}/operator",
                b'{"question": "hola"}',
                f"{reply_namespace(config, 'supervisor')}/x",
            )
            await running.service.handle(message)
            assert running.store.outbox_pending() == []


@dataclass
class Message:
    """A received message as the MQTT client hands it to the service (daemon.mqtt_transport.ServiceMessage)."""

    topic: str
    payload: bytes
    response_topic: str | None
    correlation_data: bytes | None = b"c"
    retain: bool = False

    async def ack(self) -> None:
        return None


@contextmanager
def idle(tmp_path: Path, **ask: Any) -> Iterator[AskService]:
    """The service without its run loop: what `handle` admits stays queued, what it refuses is in the outbox."""
    config = AgentConfig.model_validate(
        {"site": {"id": "demo", "timezone": TZ}, "paths": {"state_dir": str(tmp_path)}, "ask": ask}
    )
    with Store(config.paths.store_path) as store:
        yield AskService(config, store, None, mqtt_client=None)  # type: ignore[arg-type]


@pytest.fixture
def idle_service(tmp_path: Path) -> Iterator[AskService]:
    with idle(tmp_path, throttle=1_000_000) as service:
        yield service


def reasons(service: AskService) -> list[str | None]:
    return [json.loads(m.payload).get("reason") for m in service.store.outbox_pending()]


class TestQueue:
    def test_a_full_queue_refuses(self, tmp_path: Path) -> None:
        """ask.queue_max = 2, ask.per_user_max = 1: a user's second waiting question is refused `queue_share_full`,
        a third user's with two waiting `queue_full`."""
        with idle(tmp_path, queue_max=2, per_user_max=1) as service:
            for user in ("operator", "operator", "supervisor", "agent"):
                topic = f"edge/demo/ask/request/{user}"
                message = Message(topic, b'{"question": "hola"}', f"edge/demo/ask/reply/{user}/q")
                asyncio.run(service.handle(message))
            assert len(service._queue) == 2
            assert reasons(service) == ["queue_share_full", "queue_full"]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.one_of(
        st.binary(max_size=300),
        st.builds(
            lambda d: json.dumps(d).encode(),
            st.dictionaries(
                st.sampled_from(["question", "lang", "tool", "args", "x"]),
                st.one_of(
                    st.none(),
                    st.integers(),
                    st.text(max_size=30),
                    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
                ),
                max_size=4,
            ),
        ),
    )
)
def test_any_payload_is_answered_or_queued_never_raised(idle_service: AskService, payload: bytes) -> None:
    """Any bytes on the request topic: exactly one of a refused reply in the outbox (reason bad_request) or one job
    queued; `handle` never raises."""
    store = idle_service.store
    queued, sent = len(idle_service._queue), len(store.outbox_pending(limit=10_000))
    message = Message("edge/demo/ask/request/operator", payload, "edge/demo/ask/reply/operator/h")
    asyncio.run(idle_service.handle(message))
    replies = store.outbox_pending(limit=10_000)[sent:]
    grew = len(idle_service._queue) - queued
    if replies:
        (reply,) = replies
        assert grew == 0
        data = json.loads(reply.payload)
        assert (data["status"], data["reason"]) == ("refused", "bad_request")
    else:
        assert grew == 1
    idle_service._queue.clear()  # keep the queue under ask.queue_max and the user's share


@contextmanager
def store_held(store: Store) -> Iterator[None]:
    """The store's lock held by another thread, as a long write holds it: every read the answers make waits."""
    import threading

    taken, release = threading.Event(), threading.Event()

    def hold() -> None:
        with store._lock:
            taken.set()
            release.wait(60)

    holder = threading.Thread(target=hold, name="store-holder")
    holder.start()
    taken.wait(10)
    try:
        yield
    finally:
        release.set()
        holder.join(10)


async def until(check: Any, timeout_s: float = 10.0) -> None:
    """Wait (polling every 10 ms) until `check()` is true; AssertionError after `timeout_s`."""
    async with asyncio.timeout(timeout_s):
        while not check():
            await asyncio.sleep(0.01)


class TestWorkers:
    """The workers' queue, observed by holding the store's lock: it holds the reads of answers computed in the
    agent's own threads (`compute = "threads"`); a worker process reads through a connection of its own."""

    async def test_two_users_questions_run_side_by_side(self, ask_broker: Broker, tmp_path: Path) -> None:
        """ask.workers = 2: while the store is held, both users' questions are in progress at once; released, both
        are answered, each byte for byte as the pipeline answers it alone at its accepted time."""
        async with running_service(agent_config(tmp_path, ask_broker, compute="threads", workers=2)) as running:
            queue = running.service._queue
            with store_held(running.store):
                asks = [
                    asyncio.create_task(ask_agent(agent_config(tmp_path, ask_broker, user), {"question": QUESTION}))
                    for user in ("supervisor", "operator")
                ]
                await until(lambda: queue.in_progress() == {"supervisor", "operator"})
            replies = await asyncio.gather(*asks)
            assert [r["status"] for r in replies] == ["answered", "answered"]
            for reply, user in zip(replies, ("supervisor", "operator"), strict=True):
                ctx = ToolContext(
                    store=running.store, config=running.config, now=datetime.fromisoformat(reply["asked_at"])
                )
                alone = answer_question(
                    ctx, QUESTION, user=user, lang=None, aliases={}, shifts=running.config.reports.shifts
                )
                assert alone.model_dump(mode="json") | {"audit_seq": reply["audit_seq"]} == reply

    async def test_one_worker_answers_one_question_at_a_time(self, ask_broker: Broker, tmp_path: Path) -> None:
        """ask.workers = 1: while the store is held, one question is in progress and the other waits in the queue."""
        async with running_service(agent_config(tmp_path, ask_broker, compute="threads", workers=1)) as running:
            queue = running.service._queue
            with store_held(running.store):
                asks = [
                    asyncio.create_task(ask_agent(agent_config(tmp_path, ask_broker, user), {"question": QUESTION}))
                    for user in ("supervisor", "operator")
                ]
                await until(lambda: len(queue.in_progress()) == 1 and len(queue) == 1)
                await asyncio.sleep(0.3)  # a second worker, were there one, would have taken it by now
                assert (len(queue.in_progress()), len(queue)) == (1, 1)
            assert [r["status"] for r in await asyncio.gather(*asks)] == ["answered", "answered"]

    async def test_a_users_questions_are_answered_one_at_a_time_in_order(
        self, ask_broker: Broker, tmp_path: Path
    ) -> None:
        """ask.workers = 2, one user asking twice at once: one in progress, the other waiting although a worker is
        free; the answers' audit entries come in the order asked."""
        async with running_service(agent_config(tmp_path, ask_broker, compute="threads", workers=2)) as running:
            queue = running.service._queue
            supervisor = agent_config(tmp_path, ask_broker, "supervisor")
            with store_held(running.store):
                first = asyncio.create_task(ask_agent(supervisor, {"question": QUESTION}))
                await until(lambda: queue.in_progress() == {"supervisor"})
                second = asyncio.create_task(ask_agent(supervisor, {"question": "arranca la bomba P-101"}))
                await until(lambda: queue.waiting("supervisor") == 1)
                await asyncio.sleep(0.3)
                assert (queue.in_progress(), len(queue)) == ({"supervisor"}, 1)
            one, two = await first, await second
            assert (one["status"], two["reason"]) == ("answered", "write_request")
            assert one["audit_seq"] < two["audit_seq"]

    async def test_a_users_share_of_the_queue_with_workers(self, ask_broker: Broker, tmp_path: Path) -> None:
        """ask.per_user_max = 1, ask.workers = 2: a user's question in progress and one waiting fill their share (a
        third is refused `queue_share_full`), while another user's question is taken by the free worker."""
        config = agent_config(tmp_path, ask_broker, compute="threads", workers=2, per_user_max=1)
        async with running_service(config) as running:
            queue = running.service._queue
            operator = agent_config(tmp_path, ask_broker, "operator")
            supervisor = agent_config(tmp_path, ask_broker, "supervisor")
            with store_held(running.store):
                first = asyncio.create_task(ask_agent(operator, {"question": QUESTION}))
                await until(lambda: queue.in_progress() == {"operator"})
                second = asyncio.create_task(ask_agent(operator, {"question": QUESTION}))
                await until(lambda: queue.waiting("operator") == 1)
                other = asyncio.create_task(ask_agent(supervisor, {"question": QUESTION}))
                await until(lambda: queue.in_progress() == {"operator", "supervisor"})
                # Refused at admission; its reply is written once the store is free.
                third = asyncio.create_task(ask_agent(operator, {"question": QUESTION}))
                await asyncio.sleep(0.3)
                assert (queue.waiting("operator"), len(queue)) == (1, 1)
            replies = await asyncio.gather(first, second, other, third)
            assert [r["status"] for r in replies[:3]] == ["answered", "answered", "answered"]
            assert (replies[3]["status"], replies[3]["reason"]) == ("refused", "queue_share_full")

    async def test_questions_past_their_deadline_free_their_workers(self, ask_broker: Broker, tmp_path: Path) -> None:
        """ask.deadline_s = 0.5, ask.workers = 2: with the store held, both users' questions pass their deadline
        side by side (both refusals audited while it is held: one worker would decide the second only after writing
        the first's reply); once it is free, both replies say `deadline` and the next question is answered."""
        config = agent_config(tmp_path, ask_broker, compute="threads", workers=2, deadline_s=0.5)
        async with running_service(config) as running:
            with store_held(running.store):
                asks = [
                    asyncio.create_task(ask_agent(agent_config(tmp_path, ask_broker, user), {"question": QUESTION}))
                    for user in ("supervisor", "operator")
                ]
                await until(lambda: len(running.entries("ask.answered")) == 2)
                entries = running.entries("ask.answered")
                assert [e["payload"]["reason"] for e in entries] == ["deadline", "deadline"]
            replies = await asyncio.gather(*asks)
            assert [(r["status"], r["reason"]) for r in replies] == [("refused", "deadline")] * 2
            assert sorted(r["audit_seq"] for r in replies) == sorted(e["seq"] for e in entries)
            reply = await ask_agent(agent_config(tmp_path, ask_broker, "supervisor"), {"question": QUESTION})
            assert reply["status"] == "answered"
