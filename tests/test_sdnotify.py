"""sd_notify: datagrams on a real AF_UNIX socket (path and abstract), the watchdog period, and the no-op case."""

from __future__ import annotations

import asyncio
import os
import time
from itertools import pairwise
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from edge_agent.daemon.sdnotify import SdNotifier, SdNotifyError, watchdog_interval, watchdog_loop
from tests.fixtures.notify import NotifySocket


class TestSdNotifier:
    def test_path_socket_receives_ready_with_status_in_one_datagram(self, path_socket: NotifySocket) -> None:
        """READY=1 and its STATUS line travel together to a filesystem socket."""
        notifier = SdNotifier(path_socket.address)
        assert notifier.ready("running: 3 components ready") is True
        assert path_socket.receive()[1] == ["READY=1", "STATUS=running: 3 components ready"]

    def test_abstract_socket_receives_messages_in_order(self, abstract_socket: NotifySocket) -> None:
        """An '@' address reaches the abstract namespace, and messages arrive in the order sent."""
        notifier = SdNotifier(abstract_socket.address)
        notifier.status("starting store")
        notifier.watchdog()
        notifier.stopping("stopping (SIGTERM)")
        assert [abstract_socket.receive()[1] for _ in range(3)] == [
            ["STATUS=starting store"],
            ["WATCHDOG=1"],
            ["STOPPING=1", "STATUS=stopping (SIGTERM)"],
        ]

    def test_status_text_is_folded_to_one_line(self, path_socket: NotifySocket) -> None:
        """A multi-line status (e.g. an exception message) cannot inject another assignment."""
        SdNotifier(path_socket.address).status("crashed:\nREADY=1")
        assert path_socket.receive()[1] == ["STATUS=crashed: READY=1"]

    def test_extend_timeout_is_sent_in_microseconds(self, path_socket: NotifySocket) -> None:
        """EXTEND_TIMEOUT_USEC carries whole microseconds."""
        SdNotifier(path_socket.address).extend_timeout(130.5)
        assert path_socket.receive()[1] == ["EXTEND_TIMEOUT_USEC=130500000"]

    def test_without_notify_socket_every_call_is_a_no_op(self) -> None:
        """Outside systemd the notifier is disabled and reports nothing sent."""
        notifier = SdNotifier.from_environ({})
        assert (notifier.enabled, notifier.ready(), notifier.watchdog(), notifier.stopping()) == (
            False,
            False,
            False,
            False,
        )

    def test_from_environ_can_unset_the_variable(self, path_socket: NotifySocket) -> None:
        """unset=True keeps child processes from inheriting NOTIFY_SOCKET, and the notifier still works."""
        env = {"NOTIFY_SOCKET": path_socket.address, "OTHER": "x"}
        notifier = SdNotifier.from_environ(env, unset=True)
        notifier.status("hello")
        assert (env, path_socket.receive()[1]) == ({"OTHER": "x"}, ["STATUS=hello"])

    def test_relative_address_is_rejected(self) -> None:
        """A NOTIFY_SOCKET that is neither absolute nor abstract is a clear error, not a silent no-op."""
        with pytest.raises(SdNotifyError, match="notify.sock"):
            SdNotifier("notify.sock")

    def test_assignment_without_equals_is_rejected(self, path_socket: NotifySocket) -> None:
        """notify() takes KEY=VALUE lines only."""
        with pytest.raises(ValueError, match="KEY=VALUE"):
            SdNotifier(path_socket.address).notify("READY")

    def test_unreachable_socket_is_logged_not_raised(self, tmp_path: Path) -> None:
        """A send that fails (no listener) returns False and logs sd_notify_failed; the agent keeps running."""
        notifier = SdNotifier(str(tmp_path / "nobody-listens"))
        with capture_logs() as logs:
            assert notifier.watchdog() is False
        assert [(e["event"], e["message"]) for e in logs] == [("sd_notify_failed", ["WATCHDOG=1"])]


class TestWatchdogInterval:
    def test_half_of_watchdog_usec(self) -> None:
        """sd_watchdog_enabled(3): ping at half the configured timeout."""
        assert watchdog_interval({"WATCHDOG_USEC": "30000000"}) == 15.0

    def test_off_without_watchdog_usec(self) -> None:
        """No WATCHDOG_USEC, no pings."""
        assert watchdog_interval({}) is None

    def test_off_when_watchdog_pid_names_another_process(self) -> None:
        """WATCHDOG_PID of another process means the watchdog is not ours to feed."""
        assert watchdog_interval({"WATCHDOG_USEC": "1000000", "WATCHDOG_PID": "1"}, pid=4242) is None

    def test_on_when_watchdog_pid_is_ours(self) -> None:
        """WATCHDOG_PID equal to our pid enables the pings."""
        env = {"WATCHDOG_USEC": "1000000", "WATCHDOG_PID": str(os.getpid())}
        assert watchdog_interval(env) == 0.5

    @pytest.mark.parametrize(
        "env", [{"WATCHDOG_USEC": "soon"}, {"WATCHDOG_USEC": "0"}, {"WATCHDOG_USEC": "1", "WATCHDOG_PID": "me"}]
    )
    def test_malformed_values_are_errors(self, env: dict[str, str]) -> None:
        """Garbage in the watchdog variables is named in the error."""
        with pytest.raises(SdNotifyError, match="WATCHDOG_"):
            watchdog_interval(env)


class TestWatchdogLoop:
    async def test_pings_arrive_at_the_interval(self, path_socket: NotifySocket) -> None:
        """WATCHDOG=1 datagrams arrive every `interval` seconds, measured on the receiving socket."""
        interval = 0.1
        task = asyncio.create_task(watchdog_loop(SdNotifier(path_socket.address), interval))
        try:
            arrivals = [await path_socket.next() for _ in range(6)]
        finally:
            task.cancel()
        assert {tuple(lines) for _, lines in arrivals} == {("WATCHDOG=1",)}
        gaps = [b[0] - a[0] for a, b in pairwise(arrivals)]
        # The mean period over the run: one late arrival shortens the next gap, so single gaps are noise on a busy box.
        assert interval * 0.95 <= (arrivals[-1][0] - arrivals[0][0]) / len(gaps) <= interval * 1.5, gaps

    async def test_pings_stop_while_the_event_loop_is_blocked(self, path_socket: NotifySocket) -> None:
        """The pings come from the loop itself: none arrive while it is blocked, so systemd notices a stall."""
        interval = 0.2
        task = asyncio.create_task(watchdog_loop(SdNotifier(path_socket.address), interval))
        try:
            before, _ = await path_socket.next()
            time.sleep(3 * interval)  # the stall: nothing on the loop runs
            during = path_socket.drain()
            after, _ = await path_socket.next()
        finally:
            task.cancel()
        assert (during, after - before >= 3 * interval) == ([], True)
