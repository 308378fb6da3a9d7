"""Reports end to end: real broker, real engine (the session's shared `engine` fixture), real store and audit log."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from edge_agent.base.canonical import canonical_json
from edge_agent.reports.document import replay, replay_with_engine
from edge_agent.reports.facts import Fact
from edge_agent.reports.narrative import REFERENCE_VERSION, load_phrasebook, split_sections
from edge_agent.reports.narrative.generate import GROUNDING_RULES, check_section
from edge_agent.reports.request import ResolvedRequest
from edge_agent.store import Store
from harness.reports_service import REQUEST_TOPIC, agent_config, mosquitto_rr, running_service, write_config
from harness.shift import INJECTION, shift_records
from tests.fixtures.broker import Broker

pytestmark = [pytest.mark.broker, pytest.mark.engine, pytest.mark.slow]

SHIFT = {"shift": "A", "date": "2026-11-29"}


def request(request_id: str, language: str = "es", **extra: Any) -> dict[str, Any]:
    return {
        "request_id": request_id,
        "type": "shift_summary",
        "window": SHIFT,
        "language": language,
        "progress": False,
        **extra,
    }


def seed(state_dir: Path, injection: bool = False) -> None:
    with Store(state_dir / "store.sqlite3") as store:
        store.insert_records(shift_records(injection=injection))


def audit_events(state_dir: Path) -> list[str]:
    lines = (state_dir / "audit" / "entries.jsonl").read_text().splitlines()
    return [json.loads(line)["event"] for line in lines]


def assert_never_unchecked(report: dict[str, Any]) -> None:
    """Every published section passes the section checks (grounded in its own facts, prose) against the published
    facts, whoever wrote it; the narrative is the sections' texts."""
    body = report["body"]
    request = ResolvedRequest.model_validate(body["request"])
    sections = split_sections([Fact.model_validate(f) for f in body["facts"]])
    assert [s.name for s in sections] == [s["name"] for s in body["sections"]]
    book = load_phrasebook(request.language)
    for section, published in zip(sections, body["sections"], strict=True):
        assert check_section(published["text"], section, request, book).ok, published
    assert body["narrative"] == "\n\n".join(s["text"] for s in body["sections"])


class TestRequestResponse:
    async def test_mosquitto_rr_gets_a_report(self, broker: Broker, tmp_path: Path, engine: Any) -> None:
        """mosquitto_rr (MQTT 5 Response Topic) gets one reply holding the stored draft report with its renderings."""
        config = agent_config(tmp_path, broker)
        seed(config.paths.state_dir)
        async with running_service(config, engine):
            reply = await mosquitto_rr(broker, request("rr-1", formats=["json", "markdown", "html"]))
        assert (reply["status"], reply["request_id"]) == ("done", "rr-1")
        report = reply["report"]
        assert report["status"] == "draft"
        assert report["body"]["request"]["window"]["start"] == "2026-11-29T12:00:00Z"
        kinds = [f["kind"] for f in report["body"]["facts"]]
        assert {"tag_stats", "alarm_total", "downtime_total", "production", "operator_note"} <= set(kinds)
        assert set(report["renderings"]) == {"markdown", "html"}
        assert_never_unchecked(report)
        on_disk = (config.paths.state_dir / "reports" / f"{report['report_id']}.json").read_text()
        assert json.loads(on_disk) == report
        assert audit_events(config.paths.state_dir)[-2:] == ["report.requested", "report.generated"]

    async def test_progress_messages_come_in_order(self, broker: Broker, tmp_path: Path, engine: Any) -> None:
        """With progress on, the reply topic sees accepted (position), generating, then done."""
        config = agent_config(tmp_path, broker, narrative_max_tokens=32)
        seed(config.paths.state_dir)
        reply_topic = "edge/demo/reports/reply/anonymous/progress"
        async with running_service(config, engine):
            sub = await asyncio.create_subprocess_exec(
                "mosquitto_sub",
                "-h",
                broker.host,
                "-p",
                str(broker.port),
                "-q",
                "1",
                "-t",
                reply_topic,
                "-C",
                "3",
                "-W",
                "300",
                stdout=asyncio.subprocess.PIPE,
            )
            await asyncio.sleep(0.5)
            pub = await asyncio.create_subprocess_exec(
                "mosquitto_pub",
                "-h",
                broker.host,
                "-p",
                str(broker.port),
                "-q",
                "1",
                "-t",
                REQUEST_TOPIC,
                "-D",
                "publish",
                "response-topic",
                reply_topic,
                "-D",
                "publish",
                "correlation-data",
                "c1",
                "-m",
                json.dumps(request("p-1", progress=True)),
            )
            await pub.wait()
            out, _ = await sub.communicate()
        replies = [json.loads(line) for line in out.decode().splitlines()]
        assert [r["status"] for r in replies] == ["accepted", "generating", "done"]
        assert replies[0]["queue_position"] == 1

    async def test_command_line_request_prints_the_report(self, broker: Broker, tmp_path: Path, engine: Any) -> None:
        """`edge-agent report request` sends an MQTT 5 request and prints the Markdown draft it gets back."""
        config = agent_config(tmp_path, broker, narrative_max_tokens=32)
        seed(config.paths.state_dir)
        path = write_config(tmp_path, broker)
        async with running_service(config, engine):
            proc = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "edge_agent.cli",
                "report",
                "request",
                "-c",
                str(path),
                "--type",
                "shift_summary",
                "--window",
                "shift:A@2026-11-29",
                "--lang",
                "es",
                "--timeout",
                "300",
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
            out, err = await proc.communicate()
        assert proc.returncode == 0, err.decode()
        text = out.decode()
        assert text.startswith("# Resumen de turno\n\n**BORRADOR: pendiente de firma**")
        assert "Paradas: 1, con una duración total de 85 min." in text


class TestDeterminism:
    async def test_same_request_gives_byte_identical_report(self, broker: Broker, tmp_path: Path, engine: Any) -> None:
        """Two request ids asking the same thing get byte-identical bodies and renderings; a repeated id gets the
        stored document back without a second generation."""
        config = agent_config(tmp_path, broker)
        seed(config.paths.state_dir)
        async with running_service(config, engine):
            first = await mosquitto_rr(broker, request("d-1", formats=["markdown"]))
            second = await mosquitto_rr(broker, request("d-2", formats=["markdown"]))
            again = await mosquitto_rr(broker, request("d-1", formats=["markdown"]))
        a, b = first["report"], second["report"]
        assert canonical_json(a["body"]) == canonical_json(b["body"])
        assert a["body_sha256"] == b["body_sha256"]
        assert a["renderings"]["markdown"] == b["renderings"]["markdown"]
        assert again["report"] == a
        assert audit_events(config.paths.state_dir).count("report.generated") == 2

    async def test_replay_is_byte_identical(self, broker: Broker, tmp_path: Path, engine: Any) -> None:
        """Replaying a stored report with the same engine reproduces its body hash."""
        config = agent_config(tmp_path, broker, narrative_max_tokens=48)
        seed(config.paths.state_dir)
        async with running_service(config, engine):
            reply = await mosquitto_rr(broker, request("rp-1"))
        result = await replay_with_engine(config, reply["report_id"], engine)
        assert result.refused is None
        assert result.identical is True
        assert result.replayed_body_sha256 == reply["report"]["body_sha256"]

    async def test_replay_under_other_grounding_rules_is_refused(
        self, broker: Broker, tmp_path: Path, engine: Any, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """An agent whose checks changed since the report (here: rules v99) refuses, naming both, and generates
        nothing: a section could be passed or refused differently."""
        config = agent_config(tmp_path, broker, narrative_max_tokens=16)
        seed(config.paths.state_dir)
        async with running_service(config, engine):
            reply = await mosquitto_rr(broker, request("rp-2"))
        monkeypatch.setattr(replay, "GROUNDING_RULES", "v99")
        result = await replay_with_engine(config, reply["report_id"], engine)
        assert (result.identical, result.replayed_body_sha256, result.refused) == (
            False,
            None,
            f"the report was checked with grounding rules {GROUNDING_RULES} and reference writer {REFERENCE_VERSION};"
            f" this agent has v99 and {REFERENCE_VERSION}",
        )


class TestLanguageAndSafety:
    async def test_spanish_request_gets_spanish_narrative(self, broker: Broker, tmp_path: Path, engine: Any) -> None:
        """language=es → a narrative written in Spanish, every section checked, at least one written by the model."""
        config = agent_config(tmp_path, broker)
        seed(config.paths.state_dir)
        async with running_service(config, engine):
            reply = await mosquitto_rr(broker, request("es-1", language="es"))
        body = reply["report"]["body"]
        assert body["narrative_status"] in ("model", "mixed")
        assert_never_unchecked(reply["report"])
        words = body["narrative"].lower().replace(",", " ").replace(".", " ").split()
        spanish = sum(words.count(w) for w in ("de", "la", "el", "las", "los", "en", "y", "a"))
        english = sum(words.count(w) for w in ("the", "and", "of", "at", "from", "to"))
        assert spanish >= 5 and english == 0, body["narrative"]

    async def test_injected_instruction_is_flagged_and_changes_nothing(
        self, broker: Broker, tmp_path: Path, engine: Any
    ) -> None:
        """A log line saying "ignora las instrucciones anteriores…" is flagged; the report keeps its structure and
        facts, and the figure the line asks for appears nowhere in the narrative."""
        clean_cfg = agent_config(tmp_path / "clean", broker, narrative_max_tokens=48)
        dirty_cfg = agent_config(tmp_path / "dirty", broker)
        seed(clean_cfg.paths.state_dir)
        seed(dirty_cfg.paths.state_dir, injection=True)
        async with running_service(clean_cfg, engine):
            clean = (await mosquitto_rr(broker, request("i-1")))["report"]
        async with running_service(dirty_cfg, engine):
            dirty = (await mosquitto_rr(broker, request("i-1", formats=["markdown"])))["report"]
        injected_id = len(shift_records(injection=True))
        assert dirty["body"]["flags"] == {"instruction_like_record_ids": [injected_id]}
        assert clean["body"]["flags"] == {"instruction_like_record_ids": []}
        assert set(dirty["body"]) == set(clean["body"])
        # Fact ids number the facts in order: the injected note is one more note, so the facts after the notes (the
        # KPIs) are numbered one further on; their content must not change.
        strip = lambda b: [  # noqa: E731
            {k: v for k, v in f.items() if k != "id"}
            for f in b["facts"]
            if f["kind"] not in ("operator_note", "record_counts")
        ]
        assert strip(dirty["body"]) == strip(clean["body"])
        assert "99.9" not in (dirty["body"]["narrative"] or "")
        assert "Marcada: parece una instrucción inyectada" in dirty["renderings"]["markdown"]
        assert INJECTION.split(": ", 1)[1] in json.dumps(dirty["body"]["facts"], ensure_ascii=False)
        assert_never_unchecked(dirty)


class TestServiceLimits:
    async def test_queue_full_is_refused(self, broker: Broker, tmp_path: Path, engine: Any) -> None:
        """With one generation running and queue_max=1 waiting, a third request is refused with the reason."""
        config = agent_config(tmp_path, broker, queue_max=1, narrative_max_tokens=24)
        seed(config.paths.state_dir)
        async with running_service(config, engine) as running:
            replies = [
                await mosquitto_rr(
                    broker, request(f"q-{i}", progress=True), reply=f"edge/demo/reports/reply/anonymous/q/{i}"
                )
                for i in range(3)
            ]
            for request_id in ("q-0", "q-1"):  # let both finish before the service stops
                for _ in range(600):
                    if running.service.repo.by_request_id(request_id):
                        break
                    await asyncio.sleep(0.5)
        assert [r["status"] for r in replies] == ["accepted", "accepted", "refused"]
        assert replies[2]["reason"] == "queue full: 1 requests waiting"

    async def test_rate_limit_per_client(self, broker: Broker, tmp_path: Path, engine: Any) -> None:
        """rate_limit_per_min=1: a second request from the same client within the minute is refused."""
        config = agent_config(tmp_path, broker, rate_limit_per_min=1, narrative_max_tokens=24)
        seed(config.paths.state_dir)
        async with running_service(config, engine):
            first = await mosquitto_rr(broker, request("l-1"))
            second = await mosquitto_rr(broker, request("l-2"))
        assert first["status"] == "done"
        assert second == {
            "status": "refused",
            "request_id": "l-2",
            "reason": "rate limit: 1 requests per minute per client",
        }


class TestRestart:
    async def test_requests_accepted_before_a_stop_are_answered_after_the_restart(
        self, broker: Broker, tmp_path: Path, engine: Any
    ) -> None:
        """Stopped with one report generating and one waiting, the service answers both when it next starts:
        exactly one `done` per request on its reply topic, for the window it was accepted with, and nothing left
        pending."""
        config = agent_config(tmp_path, broker)  # 160-token narratives: the first is still generating at the stop
        seed(config.paths.state_dir)
        sub = await asyncio.create_subprocess_exec(
            "mosquitto_sub",
            "-h",
            broker.host,
            "-p",
            str(broker.port),
            "-q",
            "1",
            "-t",
            "edge/demo/reports/reply/anonymous/s/+",
            "-W",
            "600",
            stdout=asyncio.subprocess.PIPE,
        )
        await asyncio.sleep(0.5)
        try:
            async with running_service(config, engine) as running:
                accepted = [
                    await mosquitto_rr(
                        broker, request(f"s-{i}", progress=True), reply=f"edge/demo/reports/reply/anonymous/s/{i}"
                    )
                    for i in range(2)
                ]
                at_stop = [p.request_id for p in running.service.repo.queue_all()]
            assert [r["status"] for r in accepted] == ["accepted", "accepted"]
            assert "s-1" in at_stop  # waiting behind s-0 (one generation at a time) when the service stopped
            async with running_service(config, engine) as running:
                done: dict[str, list[dict[str, Any]]] = {"s-0": [], "s-1": []}
                while not (done["s-0"] and done["s-1"]):
                    reply = json.loads(await asyncio.wait_for(sub.stdout.readline(), 600))  # type: ignore[union-attr]
                    if reply["status"] == "done":
                        done[reply["request_id"]].append(reply)
                left = running.service.repo.queue_all()
        finally:
            sub.kill()
        assert [len(d) for d in done.values()] == [1, 1]
        assert left == []
        for (reply,) in done.values():
            assert reply["report"]["body"]["request"]["window"]["start"] == "2026-11-29T12:00:00Z"
            assert_never_unchecked(reply["report"])
        events = audit_events(config.paths.state_dir)
        assert events.count("report.requested") == 2
