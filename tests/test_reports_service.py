"""The report service over a real Mosquitto broker: validation, authorisation and sign-off (no generation)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from harness.reports_service import (
    REQUEST_TOPIC,
    SIGNOFF_TOPIC,
    agent_config,
    mosquitto_pub,
    mosquitto_rr,
    running_service,
    seed_report,
    write_config,
)
from tests.fixtures.broker import Broker

pytestmark = pytest.mark.broker

VALID = {
    "request_id": "r-1",
    "type": "shift_summary",
    "window": {"shift": "A", "date": "2026-11-29"},
    "progress": False,
}


class TestInvalidRequests:
    async def test_error_reply_names_the_field(self, broker: Broker, tmp_path: Path) -> None:
        """An unknown report type gets one error reply naming `type`, on the MQTT 5 response topic."""
        async with running_service(agent_config(tmp_path, broker), engine=None):
            reply = await mosquitto_rr(broker, {**VALID, "type": "weekly"}, timeout=20)
        assert reply["status"] == "error"
        assert (reply["request_id"], reply["field"]) == ("r-1", "type")

    async def test_mqtt311_client_gets_reply_on_reply_to(self, broker: Broker, tmp_path: Path) -> None:
        """An MQTT 3.1.1 request carries reply_to and correlation_id in the payload; the reply payload echoes both
        ids."""
        reply_topic = "edge/demo/reports/reply/anonymous/legacy"
        async with running_service(agent_config(tmp_path, broker), engine=None):
            sub = await asyncio.create_subprocess_exec(
                "mosquitto_sub",
                "-h",
                broker.host,
                "-p",
                str(broker.port),
                "-V",
                "mqttv311",
                "-q",
                "1",
                "-t",
                reply_topic,
                "-C",
                "1",
                "-W",
                "20",
                stdout=asyncio.subprocess.PIPE,
            )
            await asyncio.sleep(0.5)  # let the subscription land before the request
            bad = {**VALID, "language": "fr", "reply_to": reply_topic, "correlation_id": "c-42"}
            await mosquitto_pub(broker, REQUEST_TOPIC, bad, version="mqttv311")
            out, _ = await sub.communicate()
        reply = json.loads(out)
        assert (reply["status"], reply["field"]) == ("error", "language")
        assert (reply["request_id"], reply["correlation_id"]) == ("r-1", "c-42")

    async def test_unauthenticated_requester_refused_when_requesters_are_listed(
        self, broker: Broker, tmp_path: Path
    ) -> None:
        """With reports.requesters set, a request on the bare topic (no user level) is refused with a reason."""
        config = agent_config(tmp_path, broker, requesters=["operator"])
        async with running_service(config, engine=None):
            reply = await mosquitto_rr(broker, VALID, timeout=20)
        assert reply == {"status": "refused", "request_id": "r-1", "reason": "requests need an authenticated user"}


class TestSignoff:
    async def test_only_an_authenticated_approver_signs_off(self, secure_broker: Broker, tmp_path: Path) -> None:
        """Unsigned sign-off allowed: operator (not an approver) is refused; supervisor naming someone else is
        refused; supervisor approves."""
        config = agent_config(tmp_path, secure_broker, secure=True, allow_unsigned_signoff=True)
        report_id = seed_report(config.paths.state_dir, "demo", "r-9")
        async with running_service(config, engine=None) as running:
            refused = await mosquitto_rr(
                secure_broker,
                {"report_id": report_id, "decision": "approve"},
                topic=f"{SIGNOFF_TOPIC}/operator",
                user="operator",
                timeout=20,
            )
            impostor = await mosquitto_rr(
                secure_broker,
                {"report_id": report_id, "decision": "approve", "by": "jefe"},
                topic=f"{SIGNOFF_TOPIC}/supervisor",
                user="supervisor",
                timeout=20,
            )
            assert running.service.repo.get(report_id)["status"] == "draft"
            approved = await mosquitto_rr(
                secure_broker,
                {"report_id": report_id, "decision": "approve"},
                topic=f"{SIGNOFF_TOPIC}/supervisor",
                user="supervisor",
                timeout=20,
            )
            document = running.service.repo.get(report_id)
        assert refused == {"status": "refused", "reason": "user 'operator' is not an approver"}
        assert impostor == {
            "status": "refused",
            "reason": "payload names 'jefe' but the authenticated user is 'supervisor'",
        }
        assert (approved["status"], approved["by"]) == ("approved", "supervisor")
        assert document["status"] == "approved"
        assert (document["signoff"]["by"], document["signoff"]["via"]) == ("supervisor", "mqtt")
        on_disk = json.loads((config.paths.state_dir / "reports" / f"{report_id}.json").read_text())
        assert on_disk["status"] == "approved" and on_disk["audit"]["signoff"] == approved["audit_seq"]

    async def test_broker_stops_signing_off_in_another_users_name(self, secure_broker: Broker, tmp_path: Path) -> None:
        """operator publishing on supervisor's sign-off topic is dropped by the broker ACL: the report stays a draft."""
        config = agent_config(tmp_path, secure_broker, secure=True, allow_unsigned_signoff=True)
        report_id = seed_report(config.paths.state_dir, "demo", "r-10")
        async with running_service(config, engine=None) as running:
            await mosquitto_pub(
                secure_broker,
                f"{SIGNOFF_TOPIC}/supervisor",
                {"report_id": report_id, "decision": "approve"},
                user="operator",
            )
            # A marker the service does answer, published after: once its reply is back, the first was not acted on.
            marker = await mosquitto_rr(
                secure_broker,
                {"report_id": "nope", "decision": "approve"},
                topic=f"{SIGNOFF_TOPIC}/supervisor",
                user="supervisor",
                timeout=20,
            )
            assert marker == {"status": "refused", "reason": "no report 'nope'"}
            assert running.service.repo.get(report_id)["status"] == "draft"


async def cli(*args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "edge_agent.cli", *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await proc.communicate()
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


class TestCommandLine:
    async def test_request_prints_the_error_naming_the_field(self, broker: Broker, tmp_path: Path) -> None:
        """`edge-agent report request` with an unknown shift exits 1 with the error reply naming window.shift."""
        path = write_config(tmp_path, broker)
        async with running_service(agent_config(tmp_path, broker), engine=None):
            code, _, err = await cli(
                "report",
                "request",
                "-c",
                str(path),
                "--type",
                "shift_summary",
                "--window",
                "shift:Z",
                "--timeout",
                "20",
            )
        assert code == 1
        reply = json.loads(err.split("edge-agent: ", 1)[1])
        assert (reply["status"], reply["field"]) == ("error", "window.shift")

    async def test_local_approve_needs_a_listed_approver(self, tmp_path: Path, broker: Broker) -> None:
        """Unsigned sign-off allowed: `report approve --by supervisor` approves and audits; `--by intruder` is
        refused and changes nothing."""
        path = write_config(tmp_path, broker, reports="allow_unsigned_signoff = true")
        report_id = seed_report(tmp_path / "state", "demo", "r-cli")
        code, _, err = await cli("report", "approve", report_id, "--by", "intruder", "-c", str(path))
        assert (code, err.strip()) == (1, "edge-agent: 'intruder' is not in reports.approvers")
        code, out, _ = await cli("report", "approve", report_id, "--by", "supervisor", "-c", str(path))
        assert code == 0
        assert json.loads(out)["status"] == "approved"
        code, out, _ = await cli("report", "show", report_id, "-c", str(path))
        shown = json.loads(out)
        assert (shown["status"], shown["signoff"]["by"], shown["signoff"]["via"]) == ("approved", "supervisor", "cli")
        entries = (tmp_path / "state" / "audit" / "entries.jsonl").read_text().splitlines()
        assert json.loads(entries[-1])["event"] == "report.signed_off"
        assert json.loads(entries[-1])["actor"] == "operator:supervisor"
