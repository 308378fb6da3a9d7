"""Readiness inputs: /readyz 503 naming the report service, the store or the audit log while its broker connection,
disk or signing fails, and 200 again once it works; each also as a gauge on /metrics."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import REGISTRY

from edge_agent.audit.component import AuditCheckpointer, open_audit_log
from edge_agent.config import AgentConfig, HealthConfig
from edge_agent.connectors.mqtt import MqttClient
from edge_agent.daemon.health import HealthServer
from edge_agent.daemon.storage import RecordWriterComponent
from edge_agent.daemon.supervisor import Supervisor
from edge_agent.reports.service import ReportService
from edge_agent.store import RecordWriter, Store, StoreFullError
from harness.reports_service import agent_config
from tests.fixtures.broker import Broker
from tests.test_daemon import FAST, get, wait_until
from tests.test_store_full import big_batch, fill


@asynccontextmanager
async def agent(*components: Any) -> AsyncIterator[int]:
    """A supervisor running the health server and `components`, all ready; yields the health port."""
    sup = Supervisor(FAST, handle_signals=False)
    server = HealthServer(HealthConfig(port=0), sup.status)
    sup.add(server)
    for component in components:
        sup.add(component)
    run = asyncio.create_task(sup.run())
    try:
        await wait_until(lambda: sup.ready, timeout=30)
        assert server.port is not None
        yield server.port
    finally:
        sup.request_stop("test")
        await run


async def readyz(port: int) -> tuple[int, dict[str, dict[str, Any]]]:
    """The /readyz status code and its components by name."""
    code, _, body = await get(port, "/readyz")
    return code, {c["name"]: c for c in json.loads(body)["components"]}


async def until_readyz(port: int, code: int, timeout: float = 30.0) -> dict[str, dict[str, Any]]:
    """Poll /readyz until it answers `code`; its components then."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        got, components = await readyz(port)
        if got == code:
            return components
        assert asyncio.get_running_loop().time() < deadline, f"/readyz stayed {got}: {components}"
        await asyncio.sleep(0.05)


def gauge(name: str, labels: dict[str, str] | None = None) -> float | None:
    return REGISTRY.get_sample_value(name, labels)


@pytest.mark.broker
class TestReportServiceBroker:
    async def test_a_stopped_broker_makes_the_report_service_not_ready_until_it_returns(
        self, broker: Broker, tmp_path: Path
    ) -> None:
        """Broker stopped: 503 with the reports component degraded, naming its lost connection; restarted: 200."""
        config = agent_config(tmp_path, broker)
        # Reconnect within half a second of the broker's return, not after the default backoff's 30 s.
        config = config.model_copy(update={"mqtt": config.mqtt.model_copy(update={"reconnect_max_s": 0.5})})
        with Store(config.paths.store_path) as store:
            service = ReportService(config, store, None, None, mqtt_client=MqttClient)  # type: ignore[arg-type]
            try:
                async with agent(service) as port:
                    assert gauge("edge_agent_reports_broker_connected") == 1.0
                    broker.stop()
                    reports = (await until_readyz(port, 503))["reports"]
                    assert reports["state"] == "degraded"
                    assert "lost its broker connection" in reports["last_error"]
                    assert gauge("edge_agent_reports_broker_connected") == 0.0
                    assert gauge("edge_agent_component_ready", {"component": "reports"}) == 0.0
                    broker.start()
                    assert (await until_readyz(port, 200))["reports"]["last_error"] is None
                    assert gauge("edge_agent_reports_broker_connected") == 1.0
            finally:
                service.repo.close()


class TestStoreWritable:
    async def test_a_full_store_makes_the_store_not_ready_until_a_commit_succeeds(self, tmp_path: Path) -> None:
        """A commit refused for a full disk: 503 naming the store and the error; space back and a commit: 200."""
        with Store(tmp_path / "store.sqlite3") as store:
            writer = RecordWriter(store, max_delay_s=0.01)
            async with agent(RecordWriterComponent(writer)) as port:
                assert gauge("edge_agent_store_writable") == 1.0
                fill(store)
                with pytest.raises(StoreFullError):
                    await writer.write(big_batch(0))
                code, components = await readyz(port)
                assert code == 503
                assert components["store"]["last_error"].startswith("store not writable: store ")
                assert "is full" in components["store"]["last_error"]
                assert gauge("edge_agent_store_writable") == 0.0
                store.set_max_pages(None)
                assert (await writer.write(big_batch(0))).count == 50
                assert (await until_readyz(port, 200))["store"]["last_error"] is None
                assert gauge("edge_agent_store_writable") == 1.0


def block_checkpoint(audit_dir: Path) -> None:
    """The audit dir refuses the checkpoint's write: read-only for a normal user; as root (whom file modes do not
    stop) a directory where the checkpoint's temporary file must go, the same failure at the same step."""
    if os.geteuid() == 0:
        (audit_dir / "checkpoint.tmp").mkdir()
    else:
        audit_dir.chmod(0o500)


def unblock_checkpoint(audit_dir: Path) -> None:
    if os.geteuid() == 0:
        shutil.rmtree(audit_dir / "checkpoint.tmp")
    else:
        audit_dir.chmod(0o700)


class TestAuditCanSign:
    async def test_a_checkpoint_that_cannot_be_stored_makes_audit_not_ready_until_one_is(self, tmp_path: Path) -> None:
        """The audit dir refuses the checkpoint: 503 naming the audit component and the error; allowed again: 200
        after the next tick signs."""
        config = AgentConfig.model_validate({"site": {"id": "s"}, "paths": {"state_dir": str(tmp_path)}})
        audit = open_audit_log(config)
        audit_dir = tmp_path / "audit"
        try:
            async with agent(AuditCheckpointer(audit, every_s=0.05)) as port:
                assert gauge("edge_agent_audit_writable") == 1.0
                size = audit.append("agent.start", "agent", {}).seq + 1
                block_checkpoint(audit_dir)
                try:
                    audit.append("agent.start", "agent", {})
                    error = (await until_readyz(port, 503))["audit"]["last_error"]
                    assert error.startswith(f"audit checkpoint {size + 1} not stored in {audit_dir}: ")
                    assert gauge("edge_agent_audit_writable") == 0.0
                finally:
                    unblock_checkpoint(audit_dir)
                assert (await until_readyz(port, 200))["audit"]["last_error"] is None
                assert gauge("edge_agent_audit_writable") == 1.0
                assert audit.last_checkpoint is not None and audit.last_checkpoint.size == size + 1
        finally:
            audit.close()
