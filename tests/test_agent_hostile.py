"""A running agent fed a hostile stream by a broker user: nothing it sends stops a component (issue #12).

The whole agent as a plant runs it (`edge-agent run`: real Mosquitto, MQTT routes, report service, the default
engine), the stream of `edge_agent.sim.hostile` on every route and on the request and sign-off topics, then one
valid report request. `bench.hostile` runs the same thing larger and writes the BENCHMARKS.md table.
"""

from __future__ import annotations

import json

import pytest

from bench.hostile import HostileRun, hostile_run

pytestmark = [pytest.mark.broker, pytest.mark.engine, pytest.mark.slow]


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> HostileRun:
    return hostile_run(tmp_path_factory.mktemp("hostile"), rounds=3, seed=7)


class TestHostileStream:
    def test_every_good_message_is_stored_exactly_once(self, hostile: HostileRun) -> None:
        """Numbered MES events and log lines sent among the garbage are each in the store once."""
        outcome = hostile.outcome
        good = [c for c in outcome.classes if c.cls == "good"]
        assert [(c.channel, c.tried, c.handled, c.lost) for c in good] == [("log", 3, 3, 0), ("mes", 3, 3, 0)]

    def test_every_bad_input_is_quarantined_or_answered_with_a_refusal(self, hostile: HostileRun) -> None:
        """Per class: every bad MQTT message is a quarantine row, every bad request or sign-off gets one refusal."""
        outcome = hostile.outcome
        unhandled = [
            (c.channel, c.cls, c.tried, c.handled, c.unanswered) for c in outcome.classes if c.handled != c.tried
        ]
        assert unhandled == []
        assert outcome.stray_publishes == 0

    def test_no_component_restarted_and_none_crashed(self, hostile: HostileRun) -> None:
        """Zero restarts per /readyz, no `component_crashed` in the agent's log, and SIGTERM still exits 0."""
        assert hostile.restarts and all(n == 0 for n in hostile.restarts.values()), hostile.restarts
        log = (hostile.workdir / "agent.log").read_text().splitlines()
        events = [json.loads(line).get("event") for line in log if line.startswith("{")]
        assert "component_crashed" not in events
        assert hostile.exit_code == 0

    def test_a_valid_report_request_is_still_answered_after_the_stream(self, hostile: HostileRun) -> None:
        """The report service answers a valid request from another user with the report."""
        assert hostile.reply["status"] == "done"
        assert hostile.reply["report"]["request_id"] == "final-s7"
