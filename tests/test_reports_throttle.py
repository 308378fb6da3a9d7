"""The per-user throttle on invalid requests and refused sign-offs (`reports.throttle_invalid_max` per
`reports.throttle_window_s`): the window arithmetic under Hypothesis, the config bounds through `config check`, and
the service on the real broker."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import REGISTRY

from edge_agent.config import AgentConfig
from edge_agent.reports.service.throttle import MAX_TRACKED_USERS, Throttle, Verdict
from harness.reports_service import (
    REQUEST_TOPIC,
    SIGNOFF_TOPIC,
    agent_config,
    mosquitto_pub,
    mosquitto_rr,
    running_service,
)
from tests.fixtures.broker import Broker
from tests.test_daemon import wait_until


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


# (user, seconds since the previous event, strike?) — strike: an invalid message was handled; else a message arrives.
EVENTS = st.lists(
    st.tuples(st.sampled_from(["alice", "bob", "anonymous"]), st.floats(0, 40), st.booleans()), max_size=120
)


class TestThrottleProperty:
    @settings(max_examples=300, deadline=None)
    @given(EVENTS, st.integers(1, 5), st.floats(1, 100))
    def test_each_window_handles_at_most_limit_strikes_and_reports_one_drop(
        self, events: list[tuple[str, float, bool]], limit: int, window_s: float
    ) -> None:
        """Whatever the interleaving: a user's window opens at its first strike; messages are handled until `limit`
        strikes, then dropped until the window ends, the first drop of each window (only) being FIRST_DROP; and one
        user's verdicts are exactly those it would get alone (other users unaffected)."""
        clock = Clock()
        shared = Throttle(limit, window_s, clock)
        alone: dict[str, Throttle] = defaultdict(lambda: Throttle(limit, window_s, clock))
        opened: dict[str, float] = {}
        strikes: dict[str, int] = defaultdict(int)
        first_drops: dict[tuple[str, float], int] = defaultdict(int)
        for user, step, is_strike in events:
            clock.now += step
            if user in opened and clock.now - opened[user] >= window_s:
                del opened[user]
                strikes[user] = 0
            verdict = shared.check(user)
            assert verdict == alone[user].check(user)
            expected_drop = user in opened and strikes[user] >= limit
            assert (verdict is not Verdict.HANDLE) == expected_drop
            if verdict is Verdict.FIRST_DROP:
                first_drops[(user, opened[user])] += 1
            if is_strike and verdict is Verdict.HANDLE:
                shared.strike(user)
                alone[user].strike(user)
                opened.setdefault(user, clock.now)
                strikes[user] += 1
                assert strikes[user] <= limit
        assert all(n == 1 for n in first_drops.values())

    def test_a_window_ends_and_the_user_is_handled_again(self) -> None:
        clock = Clock()
        throttle = Throttle(2, 60, clock)
        throttle.strike("alice")
        throttle.strike("alice")
        assert [throttle.check("alice") for _ in range(3)] == [Verdict.FIRST_DROP, Verdict.DROP, Verdict.DROP]
        assert throttle.check("bob") is Verdict.HANDLE
        clock.now += 59.9
        assert throttle.check("alice") is Verdict.DROP
        clock.now += 0.1
        assert throttle.check("alice") is Verdict.HANDLE and throttle.until("alice") is None

    def test_invented_user_names_cannot_grow_memory_without_bound(self) -> None:
        """A broker that does not vouch for users lets a client invent a name per message: at most
        MAX_TRACKED_USERS windows are kept, the oldest going first."""
        throttle = Throttle(1, 600, Clock())
        for i in range(MAX_TRACKED_USERS + 50):
            throttle.strike(f"u{i}")
        assert len(throttle) == MAX_TRACKED_USERS
        assert throttle.check(f"u{MAX_TRACKED_USERS + 49}") is Verdict.FIRST_DROP
        assert throttle.check("u0") is Verdict.HANDLE

    @pytest.mark.parametrize(("limit", "window_s"), [(0, 60.0), (1, 0.0), (1, -1.0)])
    def test_nonsense_bounds_are_refused(self, limit: int, window_s: float) -> None:
        with pytest.raises(ValueError, match="throttle needs"):
            Throttle(limit, window_s)


class TestThrottleConfig:
    def test_defaults(self) -> None:
        reports = AgentConfig.model_validate({"site": {"id": "s"}}).reports
        assert (reports.throttle_invalid_max, reports.throttle_window_s) == (10, 600.0)

    @pytest.mark.parametrize(
        ("line", "key"),
        [
            ("throttle_invalid_max = 0", "reports.throttle_invalid_max"),
            ("throttle_window_s = 0", "reports.throttle_window_s"),
            ("throttle_window_s = 1e9", "reports.throttle_window_s"),
        ],
    )
    def test_config_check_names_a_bad_throttle_key(self, tmp_path: Path, line: str, key: str) -> None:
        path = tmp_path / "agent.toml"
        path.write_text(f'[site]\nid = "s"\n[reports]\n{line}\n')
        result = subprocess.run(
            [sys.executable, "-m", "edge_agent.cli", "config", "check", str(path)], capture_output=True, text=True
        )
        assert result.returncode == 2
        assert key in result.stderr


def throttled(kind: str) -> float:
    return REGISTRY.get_sample_value("edge_agent_report_throttled_total", {"kind": kind}) or 0.0


def audit_events(config: AgentConfig, event: str) -> list[dict[str, Any]]:
    lines = (config.paths.audit_dir / "entries.jsonl").read_text().splitlines()
    return [e for e in map(json.loads, lines) if e["event"] == event]


INVALID = {"request_id": "bad", "type": "no_such_report", "window": {"shift": "A", "date": "2026-11-29"}}
VALID = {"request_id": "ok-1", "type": "shift_summary", "window": {"shift": "A", "date": "2026-11-29"}}


@pytest.mark.broker
class TestThrottleOnBroker:
    async def test_a_flooding_user_is_dropped_after_the_limit_with_one_audit_entry_and_others_are_served(
        self, broker: Broker, tmp_path: Path
    ) -> None:
        """throttle_invalid_max 3: alice's three invalid requests are answered with their errors; then her invalid
        requests, her valid one and her sign-off are dropped unread (no reply, counted), with exactly one
        `report.requester_throttled` entry and one throttled `report.signoff_refused` for the window; bob's valid
        request is accepted meanwhile; once the window ends alice is served again."""
        config = agent_config(tmp_path, broker, throttle_invalid_max=3, throttle_window_s=600)
        async with running_service(config, engine=None) as running:
            service = running.service
            clock = Clock()
            service.throttle = Throttle(3, 600, clock)
            release = asyncio.Event()

            async def held(job: Any) -> None:
                await release.wait()

            service._generate = held  # type: ignore[method-assign]  # accepted requests stay queued
            alice = f"{REQUEST_TOPIC}/alice"
            alice_reply = "edge/demo/reports/reply/alice/rr"
            try:
                for i in range(3):
                    reply = await mosquitto_rr(
                        broker, INVALID | {"request_id": f"bad-{i}"}, topic=alice, reply=alice_reply
                    )
                    assert (reply["status"], reply["field"]) == ("error", "type")
                requests_before, signoffs_before = throttled("request"), throttled("signoff")
                for i in range(5):
                    await mosquitto_pub(broker, alice, INVALID | {"request_id": f"flood-{i}", "reply_to": alice_reply})
                await mosquitto_pub(broker, alice, VALID | {"reply_to": alice_reply})
                await mosquitto_pub(
                    broker,
                    f"{SIGNOFF_TOPIC}/alice",
                    {"report_id": "rpt-x", "decision": "approve", "reply_to": alice_reply},
                )
                await wait_until(lambda: throttled("request") == requests_before + 6, timeout=20)
                await wait_until(lambda: throttled("signoff") == signoffs_before + 1, timeout=20)
                bob = await mosquitto_rr(
                    broker,
                    VALID | {"request_id": "b-1", "progress": True},
                    topic=f"{REQUEST_TOPIC}/bob",
                    reply="edge/demo/reports/reply/bob/rr",
                    timeout=30,
                )
                assert bob["status"] == "accepted"
                assert ("alice", "ok-1") not in service._in_flight  # her valid request was dropped too
                entries = audit_events(config, "report.requester_throttled")
                assert [e["payload"]["broker_user"] for e in entries] == ["alice"]
                assert entries[0]["payload"]["limit"] == 3
                # the flood's sign-off was dropped unread: one report.signoff_refused (throttled) stands for the window
                refused = audit_events(config, "report.signoff_refused")
                assert [(e["payload"]["code"], e["payload"]["broker_user"]) for e in refused] == [
                    ("throttled", "alice")
                ]

                clock.now += 600
                again = await mosquitto_rr(
                    broker, VALID | {"request_id": "a-2", "progress": True}, topic=alice, reply=alice_reply, timeout=30
                )
                assert again["status"] == "accepted"
                assert len(audit_events(config, "report.requester_throttled")) == 1
            finally:
                release.set()
