"""Daemon: supervisor start/restart/stop, sd_notify from a real `edge-agent run`, and the health endpoints."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from itertools import pairwise
from pathlib import Path

import pytest
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY
from structlog.testing import capture_logs

from edge_agent.audit import AuditEntry
from edge_agent.audit.verify import verify_log
from edge_agent.base.types import Record, idempotency_key
from edge_agent.config import DaemonConfig, HealthConfig, load_config
from edge_agent.daemon.component import HearsStop
from edge_agent.daemon.health import HealthServer
from edge_agent.daemon.sdnotify import SdNotifier
from edge_agent.daemon.storage import RecordWriterComponent
from edge_agent.daemon.supervisor import Supervisor, SupervisorError
from edge_agent.store import RecordWriter, Store
from tests.fixtures.broker import Broker, free_port
from tests.fixtures.notify import NotifySocket

REPO = Path(__file__).resolve().parent.parent

# Short delays keep the suite fast; the ratios between them are what the tests check.
FAST = DaemonConfig(
    shutdown_grace_s=5.0, restart_backoff_initial_s=0.05, restart_backoff_max_s=0.15, ready_timeout_s=5.0
)


class Probe:
    """A test component: becomes ready when `gate` is set, journals its life, and flushes (awaits) when cancelled."""

    def __init__(self, name: str, journal: list[str], gate: asyncio.Event | None = None, flush_s: float = 0.05):
        self.name = name
        self.journal = journal
        self.gate = gate
        self.flush_s = flush_s

    async def run(self, ready: asyncio.Event) -> None:
        self.journal.append(f"start {self.name}")
        if self.gate is not None:
            await self.gate.wait()
        ready.set()
        self.journal.append(f"ready {self.name}")
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            await asyncio.sleep(self.flush_s)  # in-flight work finishing: the supervisor must wait for it
            self.journal.append(f"flushed {self.name}")
            raise


class Crasher:
    """Raises on each of its first `crashes` runs (after being ready), then stays up; records when each run began."""

    def __init__(self, name: str, crashes: int, exc: Exception | None = None):
        self.name = name
        self.crashes = crashes
        self.exc = exc or RuntimeError("sensor bus fell over")
        self.starts: list[float] = []

    async def run(self, ready: asyncio.Event) -> None:
        self.starts.append(time.monotonic())
        ready.set()
        if len(self.starts) <= self.crashes:
            raise self.exc
        await asyncio.Event().wait()


def supervisor(*components: object, notifier: SdNotifier | None = None, config: DaemonConfig = FAST) -> Supervisor:
    sup = Supervisor(config, notifier, handle_signals=False)
    for component in components:
        sup.add(component)  # type: ignore[arg-type]
    return sup


async def wait_until(predicate: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError("condition not met")
        await asyncio.sleep(0.01)


class TestSupervisorStart:
    async def test_components_start_in_order_each_after_the_previous_is_ready(self) -> None:
        """The next component starts only once the previous one reported ready."""
        journal: list[str] = []
        sup = supervisor(Probe("a", journal), Probe("b", journal), Probe("c", journal))
        run = asyncio.create_task(sup.run())
        await wait_until(lambda: sup.ready)
        sup.request_stop("test")
        assert await run == 0
        assert journal[:6] == ["start a", "ready a", "start b", "ready b", "start c", "ready c"]

    async def test_ready_is_sent_only_after_every_component_is_ready(self, path_socket: NotifySocket) -> None:
        """READY=1 reaches the notify socket after the last component is up, never before."""
        journal: list[str] = []
        gate = asyncio.Event()
        notifier = SdNotifier(path_socket.address)
        sup = supervisor(Probe("store", journal), Probe("mqtt", journal, gate), notifier=notifier)
        run = asyncio.create_task(sup.run())
        await wait_until(lambda: "start mqtt" in journal)
        await asyncio.sleep(0.2)
        before_gate = [lines for lines in path_socket.drain()]
        gate.set()
        _, ready = await path_socket.next()
        sup.request_stop("test")
        await run
        assert [m for m in before_gate if "READY=1" in m] == []
        assert ready == ["READY=1", "STATUS=running: 2 components ready"]

    async def test_background_component_does_not_hold_up_the_next_but_ready_waits_for_it(
        self, path_socket: NotifySocket
    ) -> None:
        """A component marked start_in_background (the engine) lets intake start at once; READY=1 still waits."""
        journal: list[str] = []
        gate = asyncio.Event()
        engine = Probe("engine", journal, gate)
        engine.start_in_background = True  # type: ignore[attr-defined]
        notifier = SdNotifier(path_socket.address)
        sup = supervisor(Probe("store", journal), engine, Probe("mqtt", journal), notifier=notifier)
        run = asyncio.create_task(sup.run())
        await wait_until(lambda: "ready mqtt" in journal)
        await asyncio.sleep(0.1)
        early = [lines for lines in path_socket.drain() if "READY=1" in lines]
        gate.set()
        await wait_until(lambda: sup.ready)
        _, ready = await path_socket.next()
        sup.request_stop("test")
        await run
        assert journal[:5] == ["start store", "ready store", "start engine", "start mqtt", "ready mqtt"]
        assert (early, ready[0]) == ([], "READY=1")

    async def test_start_fails_with_exit_1_when_a_component_is_not_ready_in_time(self) -> None:
        """A component not ready within daemon.ready_timeout_s fails the start; those already up are stopped."""
        journal: list[str] = []
        config = FAST.model_copy(update={"ready_timeout_s": 0.2})
        sup = supervisor(Probe("store", journal), Probe("opcua", journal, asyncio.Event()), config=config)
        with capture_logs() as logs:
            assert await sup.run() == 1
        assert [e["component"] for e in logs if e["event"] == "component_ready_timeout"] == ["opcua"]
        assert "flushed store" in journal

    async def test_a_component_timeout_of_its_own_overrides_the_default(self) -> None:
        """A component's `ready_timeout_s` attribute (the engine's load time) replaces daemon.ready_timeout_s."""
        journal: list[str] = []
        slow = Probe("engine", journal, asyncio.Event())
        slow.ready_timeout_s = 0.1  # type: ignore[attr-defined]
        began = time.monotonic()
        assert await supervisor(slow).run() == 1
        assert time.monotonic() - began < FAST.ready_timeout_s

    def test_two_components_with_one_name_are_refused(self) -> None:
        """Names identify components in logs, metrics and /readyz, so they must be unique."""
        sup = supervisor(Probe("store", []))
        with pytest.raises(SupervisorError, match="'store'"):
            sup.add(Probe("store", []))  # type: ignore[arg-type]


class TestSupervisorRestart:
    async def test_crashed_component_is_restarted_with_exponential_backoff(self) -> None:
        """Each crash waits initial × 2^n before the restart, capped at restart_backoff_max_s."""
        crasher = Crasher("mqtt", crashes=3)
        sup = supervisor(crasher)
        run = asyncio.create_task(sup.run())
        with capture_logs() as logs:
            await wait_until(lambda: len(crasher.starts) == 4 and sup.ready)
        sup.request_stop("test")
        await run
        delays = [e["delay_s"] for e in logs if e["event"] == "component_restart_scheduled"]
        gaps = [b - a for a, b in pairwise(crasher.starts)]
        assert delays == [0.05, 0.1, 0.15]
        assert all(gap >= delay * 0.9 for gap, delay in zip(gaps, delays, strict=True)), gaps

    async def test_every_crash_is_logged_with_its_exception(self) -> None:
        """A crash is an error log line naming the component and carrying the exception, never silent."""
        error = ValueError("bad frame")
        crasher = Crasher("opcua-1", crashes=1, exc=error)
        sup = supervisor(crasher)
        run = asyncio.create_task(sup.run())
        with capture_logs() as logs:
            await wait_until(lambda: len(crasher.starts) == 2)
        sup.request_stop("test")
        await run
        crashes = [e for e in logs if e["event"] == "component_crashed"]
        assert [(e["component"], e["log_level"], e["error"], e["exc_info"]) for e in crashes] == [
            ("opcua-1", "error", "ValueError: bad frame", error)
        ]

    async def test_restarts_are_counted_in_a_prometheus_metric(self) -> None:
        """edge_agent_component_restarts_total{component=...} grows by one per restart."""
        labels = {"component": "restart-metric"}
        before = REGISTRY.get_sample_value("edge_agent_component_restarts_total", labels) or 0.0
        crasher = Crasher("restart-metric", crashes=2)
        sup = supervisor(crasher)
        run = asyncio.create_task(sup.run())
        await wait_until(lambda: sup.ready and len(crasher.starts) == 3)
        sup.request_stop("test")
        await run
        assert REGISTRY.get_sample_value("edge_agent_component_restarts_total", labels) == before + 2

    async def test_restarting_component_makes_the_agent_not_ready(self) -> None:
        """While a component waits out its backoff, /readyz's status says restarting and not ready."""
        config = FAST.model_copy(update={"restart_backoff_initial_s": 0.5, "restart_backoff_max_s": 0.5})
        crasher = Crasher("mqtt", crashes=1)
        sup = supervisor(Probe("store", []), crasher, config=config)
        run = asyncio.create_task(sup.run())
        await wait_until(lambda: any(c.state == "restarting" for c in sup.status().components))
        status = sup.status()
        sup.request_stop("test")
        await run
        assert (status.ready, [(c.name, c.state, c.last_error) for c in status.components]) == (
            False,
            [("store", "ready", None), ("mqtt", "restarting", "RuntimeError: sensor bus fell over")],
        )

    async def test_component_that_returns_on_its_own_is_restarted(self) -> None:
        """Returning without being cancelled is a failure too: logged as component_exited and restarted."""

        class Quitter:
            name = "quitter"
            runs = 0

            async def run(self, ready: asyncio.Event) -> None:
                Quitter.runs += 1
                ready.set()
                if Quitter.runs == 1:
                    return
                await asyncio.Event().wait()

        sup = supervisor(Quitter())
        run = asyncio.create_task(sup.run())
        with capture_logs() as logs:
            await wait_until(lambda: Quitter.runs == 2)
        sup.request_stop("test")
        await run
        lifecycle = {"component_exited", "component_restart_scheduled", "component_restarting"}
        assert [e["event"] for e in logs if e["event"] in lifecycle] == [
            "component_exited",
            "component_restart_scheduled",
            "component_restarting",
        ]

    async def test_component_that_clears_ready_is_reported_degraded(self) -> None:
        """A component may clear its ready event (connection lost): state degraded, agent not ready."""
        events: list[asyncio.Event] = []

        class Flaky:
            name = "mqtt"

            async def run(self, ready: asyncio.Event) -> None:
                events.append(ready)
                ready.set()
                await asyncio.Event().wait()

        sup = supervisor(Flaky())
        run = asyncio.create_task(sup.run())
        await wait_until(lambda: sup.ready)
        events[0].clear()
        status = sup.status()
        sup.request_stop("test")
        await run
        assert (status.ready, status.components[0].state) == (False, "degraded")


class TestSupervisorStop:
    async def test_components_stop_in_reverse_order_each_finishing_first(self) -> None:
        """Intake (started last) stops first, and each component's flush completes before the next is cancelled."""
        journal: list[str] = []
        sup = supervisor(Probe("store", journal), Probe("reports", journal), Probe("mqtt", journal))
        run = asyncio.create_task(sup.run())
        await wait_until(lambda: sup.ready)
        sup.request_stop("test")
        assert await run == 0
        assert [line for line in journal if line.startswith("flushed")] == [
            "flushed mqtt",
            "flushed reports",
            "flushed store",
        ]

    async def test_component_failing_during_its_stop_is_logged_and_not_restarted(self) -> None:
        """An error raised while flushing after the cancel is logged; the component is not started again."""

        class FailsOnStop:
            name = "outbox"
            runs = 0

            async def run(self, ready: asyncio.Event) -> None:
                FailsOnStop.runs += 1
                ready.set()
                try:
                    await asyncio.Event().wait()
                except asyncio.CancelledError:
                    raise OSError("disk full")  # noqa: B904  (the failure a flush can meet)

        sup = supervisor(FailsOnStop())
        run = asyncio.create_task(sup.run())
        await wait_until(lambda: sup.ready)
        with capture_logs() as logs:
            sup.request_stop("test")
            assert await run == 0
        assert FailsOnStop.runs == 1
        assert [(e["component"], e["error"]) for e in logs if e["event"] == "component_crashed"] == [
            ("outbox", "OSError: disk full")
        ]

    async def test_a_component_that_hears_stop_is_told_before_its_cancel(self) -> None:
        """HearsStop: `stop_requested` comes first, so a component whose library turns the cancellation into another
        error (a connection lost as the stop arrives) still knows it is stopping instead of reconnecting."""

        class Reconnector:
            name = "opcua:plc"

            def __init__(self) -> None:
                self.told = False
                self.reconnects = 0

            def stop_requested(self) -> None:
                self.told = True

            async def run(self, ready: asyncio.Event) -> None:
                ready.set()
                while True:
                    try:
                        await asyncio.Event().wait()
                    except asyncio.CancelledError:
                        if self.told:
                            raise
                        self.reconnects += 1  # what a swallowed cancel looks like: another round

        component = Reconnector()
        assert isinstance(component, HearsStop)
        sup = supervisor(component)
        run = asyncio.create_task(sup.run())
        await wait_until(lambda: sup.ready)
        sup.request_stop("SIGTERM")
        assert await asyncio.wait_for(run, 5) == 0
        assert (component.told, component.reconnects) == (True, 0)

    async def test_stopping_is_sent_before_components_are_cancelled(self, abstract_socket: NotifySocket) -> None:
        """STOPPING=1 reaches systemd as soon as the stop begins."""
        sup = supervisor(Probe("store", [], flush_s=0.3), notifier=SdNotifier(abstract_socket.address))
        run = asyncio.create_task(sup.run())
        await wait_until(lambda: sup.ready)
        abstract_socket.drain()
        sup.request_stop("SIGTERM")
        _, lines = await abstract_socket.next()
        assert not run.done()
        await run
        assert lines == ["STOPPING=1", "STATUS=stopping (SIGTERM)"]

    async def test_records_queued_when_the_stop_begins_are_committed(self, tmp_path: Path) -> None:
        """The store writer, stopped after its producers, commits everything still queued."""
        with Store(tmp_path / "store.sqlite3") as store:
            # A long batch delay: without the flush on stop these rows would still be waiting.
            writer = RecordWriter(store, max_rows=1000, max_delay_s=30.0)
            sup = supervisor(RecordWriterComponent(writer))
            run = asyncio.create_task(sup.run())
            await wait_until(lambda: sup.ready)
            records = [
                Record(
                    source="mqtt",
                    kind="log_line",
                    key="line-1",
                    source_time=datetime(2026, 11, 29, tzinfo=UTC),
                    value=f"line {i}",
                    idempotency_key=idempotency_key("stop-flush", str(i)),
                )
                for i in range(50)
            ]
            write = asyncio.create_task(writer.write(records))
            await asyncio.sleep(0.05)
            sup.request_stop("test")
            assert (await run, (await write).count, store.record_count("mqtt")) == (0, 50, 50)

    async def test_a_component_overrunning_the_grace_is_named_and_ends_the_process(self) -> None:
        """A component that ignores its cancel past the grace period is logged and the stuck hook exits 1."""
        exits: list[int] = []

        class Stubborn:
            name = "engine"

            async def run(self, ready: asyncio.Event) -> None:
                ready.set()
                try:
                    await asyncio.Event().wait()
                except asyncio.CancelledError:
                    await asyncio.sleep(1.0)  # ignores the first cancel for longer than the grace

        config = FAST.model_copy(update={"shutdown_grace_s": 0.3})
        sup = Supervisor(config, handle_signals=False, on_stuck=exits.append)
        sup.add(Stubborn())
        run = asyncio.create_task(sup.run())
        await wait_until(lambda: sup.ready)
        with capture_logs() as logs:
            sup.request_stop("test")
            await run
        assert exits[:1] == [1]
        assert [e["components"] for e in logs if e["event"] == "shutdown_incomplete"] == [["engine"]]


# --- the real daemon as a subprocess ----------------------------------------------------------------------------


NO_MQTT = """
[mqtt]
enabled = false
"""


def write_config(tmp_path: Path, health_port: int, grace_s: float = 5.0, mqtt: str = NO_MQTT) -> Path:
    """A minimal config: store, audit and health (no OPC UA, no engine; no broker unless `mqtt` names one)."""
    path = tmp_path / "agent.toml"
    path.write_text(
        mqtt
        + textwrap.dedent(
            f"""
            [site]
            id = "test-site"
            [paths]
            state_dir = "{tmp_path / "state"}"
            [logging]
            format = "json"
            [daemon]
            shutdown_grace_s = {grace_s}
            [health]
            port = {health_port}
            [reports]
            enabled = false
            [llm]
            enabled = false
            """
        )
    )
    return path


class Agent:
    """`edge-agent run` as a real process, with NOTIFY_SOCKET pointing at our socket."""

    def __init__(self, config: Path, notify: NotifySocket, extra_env: dict[str, str] | None = None):
        env = {**os.environ, "NOTIFY_SOCKET": notify.address, **(extra_env or {})}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "edge_agent", "run", "--config", str(config)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=REPO,
        )

    def logs(self) -> list[dict[str, object]]:
        out, _ = self.proc.communicate(timeout=30)
        return [json.loads(line) for line in out.decode().splitlines() if line.startswith("{")]


def receive_until(notify: NotifySocket, key: str, timeout: float = 60.0) -> list[tuple[float, list[str]]]:
    """Every datagram up to and including the first carrying `key`."""
    messages = []
    deadline = time.monotonic() + timeout
    while True:
        message = notify.receive(max(0.1, deadline - time.monotonic()))
        messages.append(message)
        if key in message[1]:
            return messages


def http_get(port: int, path: str) -> tuple[int, dict[str, str], bytes]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


@pytest.fixture
def agent_config(tmp_path: Path) -> tuple[Path, int]:
    port = free_port()
    return write_config(tmp_path, port), port


class TestRunCommand:
    @pytest.mark.parametrize("which", ["path", "abstract"])
    def test_notify_sequence_then_sigterm_exits_0_within_grace(
        self, which: str, agent_config: tuple[Path, int], request: pytest.FixtureRequest
    ) -> None:
        """A real agent sends STATUS…, READY=1, then STOPPING=1 on SIGTERM, and exits 0 within the grace period."""
        notify: NotifySocket = request.getfixturevalue(f"{which}_socket")
        agent = Agent(agent_config[0], notify)
        startup = receive_until(notify, "READY=1")
        agent.proc.send_signal(signal.SIGTERM)
        sent = time.monotonic()
        stopping = receive_until(notify, "STOPPING=1", timeout=10)
        code = agent.proc.wait(timeout=10)
        took = time.monotonic() - sent
        assert [m[1][0] for m in startup] == [
            "STATUS=starting health",
            "EXTEND_TIMEOUT_USEC=130000000",
            "STATUS=starting store",
            "EXTEND_TIMEOUT_USEC=130000000",
            "STATUS=starting retention",
            "EXTEND_TIMEOUT_USEC=130000000",
            "STATUS=starting audit",
            "EXTEND_TIMEOUT_USEC=130000000",
            "READY=1",
        ]
        assert stopping[-1][1] == ["STOPPING=1", "STATUS=stopping (SIGTERM)"]
        assert (code, took < 5.0) == (0, True)
        assert [e["exit_code"] for e in agent.logs() if e["event"] == "agent_stopped"] == [0]

    def test_start_and_stop_are_recorded_in_the_audit_log(
        self, agent_config: tuple[Path, int], path_socket: NotifySocket
    ) -> None:
        """config.loaded, config.security and agent.start (with the config fingerprint), then agent.stop."""
        config_path = agent_config[0]
        agent = Agent(config_path, path_socket)
        receive_until(path_socket, "READY=1")
        agent.proc.send_signal(signal.SIGTERM)
        assert agent.proc.wait(timeout=10) == 0
        audit_dir = config_path.parent / "state" / "audit"
        lines = (audit_dir / "entries.jsonl").read_bytes().splitlines()
        entries = [AuditEntry.from_line(line) for line in lines]
        fingerprint = load_config(config_path).fingerprint()
        # The audit log's own entries (key.rotated on first start) come first; these are the agent's.
        entries = [e for e in entries if e.actor == "agent"]
        assert [(e.event, e.actor) for e in entries] == [
            ("config.loaded", "agent"),
            ("config.security", "agent"),
            ("agent.start", "agent"),
            ("agent.stop", "agent"),
        ]
        # No MQTT, no OPC UA: nothing to warn about, and the entry says so rather than being left out.
        assert (entries[0].payload, entries[1].payload, entries[2].payload["config_sha256"]) == (
            {"sha256": fingerprint, "path": str(config_path), "identities": []},
            {"warnings": []},
            fingerprint,
        )
        assert entries[3].payload == {
            "exit_code": 0,
            "reason": "SIGTERM",
            "restarts": {"health": 0, "store": 0, "retention": 0, "audit": 0},
        }
        assert verify_log(audit_dir).ok

    def test_the_start_up_heap_is_left_out_of_garbage_collections(
        self, agent_config: tuple[Path, int], path_socket: NotifySocket
    ) -> None:
        """Before READY the agent freezes what start-up allocated (gc.freeze), so a full collection while a report
        loads its records scans those records, not every module and schema (tests/test_reports_hostile.py relies
        on it)."""
        agent = Agent(agent_config[0], path_socket)
        receive_until(path_socket, "READY=1")
        agent.proc.send_signal(signal.SIGTERM)
        assert agent.proc.wait(timeout=10) == 0
        frozen = [e["objects"] for e in agent.logs() if e["event"] == "startup_heap_frozen"]
        assert len(frozen) == 1 and isinstance(frozen[0], int) and frozen[0] > 10_000, frozen

    def test_sigint_stops_the_agent_like_sigterm(
        self, agent_config: tuple[Path, int], path_socket: NotifySocket
    ) -> None:
        """Ctrl-C in a terminal is an orderly stop with exit 0."""
        agent = Agent(agent_config[0], path_socket)
        receive_until(path_socket, "READY=1")
        agent.proc.send_signal(signal.SIGINT)
        assert agent.proc.wait(timeout=10) == 0

    def test_watchdog_pings_at_half_of_watchdog_usec(
        self, agent_config: tuple[Path, int], path_socket: NotifySocket
    ) -> None:
        """With WATCHDOG_USEC=400000 the agent sends WATCHDOG=1 every 0.2 s, measured at the socket."""
        agent = Agent(agent_config[0], path_socket, {"WATCHDOG_USEC": "400000"})
        try:
            receive_until(path_socket, "READY=1")
            pings = [path_socket.receive() for _ in range(8)]
        finally:
            agent.proc.send_signal(signal.SIGTERM)
            agent.proc.wait(timeout=10)
        pings = [p for p in pings if p[1] == ["WATCHDOG=1"]]
        gaps = [b[0] - a[0] for a, b in pairwise(pings)]
        assert len(pings) >= 6, pings
        # Mean period over the run (arrival jitter of one ping cancels out in the next gap), and never a gap that
        # would let systemd's 0.4 s watchdog fire.
        assert 0.18 <= (pings[-1][0] - pings[0][0]) / len(gaps) <= 0.3, gaps
        assert max(gaps) < 0.4, gaps

    def test_watchdog_pid_of_another_process_disables_pings(
        self, agent_config: tuple[Path, int], path_socket: NotifySocket
    ) -> None:
        """WATCHDOG_PID naming another process: the agent does not ping."""
        agent = Agent(agent_config[0], path_socket, {"WATCHDOG_USEC": "200000", "WATCHDOG_PID": "1"})
        try:
            receive_until(path_socket, "READY=1")
            time.sleep(0.5)
            later = path_socket.drain()
        finally:
            agent.proc.send_signal(signal.SIGTERM)
            agent.proc.wait(timeout=10)
        assert [m for m in later if "WATCHDOG=1" in m] == []

    def test_malformed_watchdog_environment_exits_2_before_opening_anything(
        self, agent_config: tuple[Path, int], path_socket: NotifySocket
    ) -> None:
        """WATCHDOG_USEC that is not a number is a usage error (exit 2) named on stderr; no state is created."""
        agent = Agent(agent_config[0], path_socket, {"WATCHDOG_USEC": "soon"})
        _, err = agent.proc.communicate(timeout=30)
        assert (agent.proc.returncode, err.decode().strip()) == (
            2,
            "edge-agent: WATCHDOG_USEC='soon' is not an integer",
        )
        assert not (agent_config[0].parent / "state").exists()

    def test_health_endpoints_answer_over_http(self, agent_config: tuple[Path, int], path_socket: NotifySocket) -> None:
        """Once READY=1 is sent, /healthz and /readyz answer 200 and /readyz names every component."""
        config, port = agent_config
        agent = Agent(config, path_socket)
        try:
            receive_until(path_socket, "READY=1")
            healthz = http_get(port, "/healthz")
            readyz = http_get(port, "/readyz")
        finally:
            agent.proc.send_signal(signal.SIGTERM)
            agent.proc.wait(timeout=10)
        body = json.loads(readyz[2])
        assert (healthz[0], json.loads(healthz[2])["status"]) == (200, "alive")
        assert (readyz[0], body["ready"], [(c["name"], c["state"]) for c in body["components"]]) == (
            200,
            True,
            [("health", "ready"), ("store", "ready"), ("retention", "ready"), ("audit", "ready")],
        )

    @pytest.mark.broker
    def test_with_a_broker_ready_means_connected_and_stored_messages_survive_sigterm(
        self, broker: Broker, tmp_path: Path, path_socket: NotifySocket
    ) -> None:
        """READY=1 comes once the ingest and outbox are connected; /readyz then turns 503 (degraded) when the broker
        goes away; a message acknowledged before SIGTERM is in the store after exit 0."""
        port = free_port()
        mqtt = textwrap.dedent(
            f"""
            [mqtt]
            host = "{broker.host}"
            port = {broker.port}
            client_id = "daemon-test"
            reconnect_max_s = 1.0
            [[mqtt.routes]]
            topic = "plant/test-site/log/#"
            parser = "text"
            kind = "log_line"
            """
        )
        agent = Agent(write_config(tmp_path, port, mqtt=mqtt), path_socket)
        try:
            receive_until(path_socket, "READY=1")
            states = {c["name"]: c["state"] for c in json.loads(http_get(port, "/readyz")[2])["components"]}
            subprocess.run(
                [
                    "mosquitto_pub",
                    "-h",
                    broker.host,
                    "-p",
                    str(broker.port),
                    "-q",
                    "1",
                    "-t",
                    "plant/test-site/log/boiler",
                    "-m",
                    "burner 2 flame lost",
                ],
                check=True,
                timeout=10,
            )
            broker.stop()
            deadline = time.monotonic() + 10
            while (readyz := http_get(port, "/readyz"))[0] == 200 and time.monotonic() < deadline:
                time.sleep(0.1)
            degraded = {c["name"]: c["state"] for c in json.loads(readyz[2])["components"]}
        finally:
            agent.proc.send_signal(signal.SIGTERM)
            code = agent.proc.wait(timeout=10)
        with Store(tmp_path / "state" / "store.sqlite3") as store:
            stored = [r.value for r in store.records(kinds=["log_line"])]
        assert (states["mqtt-ingest"], states["outbox"]) == ("ready", "ready")
        assert (readyz[0], degraded["mqtt-ingest"], degraded["outbox"]) == (503, "degraded", "degraded")
        # No author: the line names none, and the route vouches for none (author_from_topic_level unset).
        assert (code, stored) == (0, [{"text": "burner 2 flame lost", "author_from": None}])

    def test_stop_overrunning_the_grace_exits_1_in_time(self, tmp_path: Path) -> None:
        """A component that ignores SIGTERM's cancel cannot keep the process past the grace period."""
        script = textwrap.dedent(
            """
            import asyncio
            import sys
            from edge_agent.config import DaemonConfig
            from edge_agent.daemon import Supervisor

            class Stubborn:
                name = "stubborn"
                async def run(self, ready):
                    ready.set()
                    print("ready", file=sys.stderr, flush=True)
                    while True:
                        try:
                            await asyncio.sleep(3600)
                        except asyncio.CancelledError:
                            pass  # refuses to stop

            sup = Supervisor(DaemonConfig(shutdown_grace_s=1.0))
            sup.add(Stubborn())
            raise SystemExit(asyncio.run(sup.run()))
            """
        )
        proc = subprocess.Popen(
            [sys.executable, "-c", script], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=REPO
        )
        assert proc.stderr is not None
        assert proc.stderr.readline() == b"ready\n"
        proc.send_signal(signal.SIGTERM)
        sent = time.monotonic()
        code = proc.wait(timeout=10)
        assert (code, time.monotonic() - sent < 1.5) == (1, True)


# --- health server in-process -------------------------------------------------------------------------------------


Health = tuple[int, Supervisor, asyncio.Event]


@pytest.fixture
async def health() -> AsyncIterator[Health]:
    """A supervisor running the health server and one component whose readiness the test controls."""
    gate = asyncio.Event()
    sup = supervisor()
    server = HealthServer(HealthConfig(port=0), sup.status)
    sup.add(server)
    sup.add(Probe("mqtt", [], gate))
    run = asyncio.create_task(sup.run())
    await wait_until(lambda: server.port is not None)
    assert server.port is not None
    yield server.port, sup, gate
    sup.request_stop("test")
    await run


async def get(port: int, path: str) -> tuple[int, dict[str, str], bytes]:
    return await asyncio.to_thread(http_get, port, path)


class TestHealthServer:
    async def test_healthz_answers_while_components_are_still_starting(self, health: Health) -> None:
        """/healthz is about the process, not readiness: 200 during the start, with the loop lag."""
        status, headers, body = await get(health[0], "/healthz")
        data = json.loads(body)
        assert (status, headers["Content-Type"], data["status"], data["loop_lag_ms"] >= 0) == (
            200,
            "application/json",
            "alive",
            True,
        )

    async def test_readyz_is_503_until_every_component_is_ready(self, health: Health) -> None:
        """/readyz says 503 and names the starting component, then 200 once it is up."""
        port, sup, gate = health
        before = await get(port, "/readyz")
        gate.set()
        await wait_until(lambda: sup.ready)
        after = await get(port, "/readyz")
        states = lambda body: {c["name"]: c["state"] for c in json.loads(body)["components"]}  # noqa: E731
        assert (before[0], states(before[2])) == (503, {"health": "ready", "mqtt": "starting"})
        assert (after[0], states(after[2])) == (200, {"health": "ready", "mqtt": "ready"})

    async def test_metrics_serve_the_default_registry(self, health: Health) -> None:
        """/metrics is Prometheus text with its content type, including the supervisor's metrics."""
        status, headers, body = await get(health[0], "/metrics")
        text = body.decode()
        assert (status, headers["Content-Type"]) == (200, CONTENT_TYPE_LATEST)
        assert 'edge_agent_component_ready{component="health"} 1.0' in text.splitlines()
        assert "# TYPE edge_agent_component_restarts_total counter" in text

    async def test_unknown_path_is_404(self, health: Health) -> None:
        """Anything but the three endpoints is 404 with a hint."""
        status, _, body = await get(health[0], "/admin")
        assert (status, body) == (404, b"/admin not found; try /healthz, /readyz or /metrics\n")

    async def test_post_is_405(self, health: Health) -> None:
        """The endpoints are read-only."""
        reader, writer = await asyncio.open_connection("127.0.0.1", health[0])
        writer.write(b"POST /readyz HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
        response = await reader.read()
        writer.close()
        assert response.split(b"\r\n", 1)[0] == b"HTTP/1.1 405 Method Not Allowed"

    async def test_oversized_request_is_431(self, health: Health) -> None:
        """A request head beyond 8 KiB is refused, not buffered."""
        reader, writer = await asyncio.open_connection("127.0.0.1", health[0])
        writer.write(b"GET /healthz HTTP/1.1\r\nX-Pad: " + b"a" * 10000 + b"\r\n\r\n")
        response = await reader.read()
        writer.close()
        assert response.split(b"\r\n", 1)[0] == b"HTTP/1.1 431 Request Header Fields Too Large"
