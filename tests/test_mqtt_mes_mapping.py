"""MES event mappings (`[mqtt.routes.events]`): a plant MES's own event names and field paths become our
`mes_event` vocabulary; what cannot be mapped is quarantined with its reason, never guessed; a bad mapping is a
config error naming its key path; and end to end on a real Mosquitto, a plant's stops become downtime facts."""

from __future__ import annotations

import asyncio
import json
import textwrap
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from prometheus_client import REGISTRY

from edge_agent.base.mes_vocabulary import MES_EVENT_TYPES, MES_FIELDS, REQUIRED_FIELDS
from edge_agent.base.types import idempotency_key
from edge_agent.config import ConfigError, load_config
from edge_agent.config.mqtt import MesEventsConfig, MqttConfig, RouteConfig
from edge_agent.connectors.mqtt import MqttClient
from edge_agent.connectors.mqtt.ingest import MqttIngest
from edge_agent.connectors.mqtt.parsers import ParseError, QuarantineReason, lookup
from edge_agent.connectors.mqtt.routes import RouteTable
from edge_agent.reports.facts import compute_facts
from edge_agent.reports.request import ResolvedRequest, ResolvedWindow, Scope
from edge_agent.sim.records import plant_records
from edge_agent.store import RecordWriter, Store
from tests.fixtures.broker import Broker

RECEIVED = datetime(2026, 11, 29, 7, 0, tzinfo=UTC)
TOPIC = "planta/s1/mes/eventos"
# A plant whose MES speaks Spanish, English and numeric codes, and nests everything under `evento` and `equipo`.
PLANT_EVENTS = MesEventsConfig(
    type_path="evento.tipo",
    types={
        "PARO": "downtime_start",
        "STOP": "downtime_start",
        "Machine Down": "downtime_start",
        "MARCHA": "downtime_end",
        "CONTEO": "production_count",
        "17": "quality_check",
    },
    fields={
        "id": "msg_id",
        "ts": "evento.fecha",
        "asset": "equipo.tag",
        "line": "equipo.linea",
        "downtime_id": "evento.id",
        "reason": "evento.causa",
        "count": "evento.cantidad",
        "unit": "evento.unidad",
        "result": "evento.resultado",
        "text": "evento.texto",
    },
)
PLANT_ROUTE = RouteConfig(topic="planta/+/mes/#", kind="mes_event", events=PLANT_EVENTS)
# Our own simulator's route, without a mapping, beside it: it must behave exactly as before.
OWN_ROUTE = RouteConfig(topic="plant/+/mes/#", kind="mes_event", required=["ts", "type"])
TABLE = RouteTable.from_config([PLANT_ROUTE, OWN_ROUTE], max_payload_bytes=256 * 1024)


def plant_event(tipo: object, msg_id: str = "m-1", fecha: str = "2026-11-29T06:15:00Z", **evento: object) -> bytes:
    document = {
        "msg_id": msg_id,
        "equipo": {"tag": "P-101", "linea": "L1", "marca": "KSB"},
        "evento": {"tipo": tipo, "fecha": fecha, **evento},
    }
    return json.dumps(document, ensure_ascii=False).encode()


def refusal(payload: bytes, topic: str = TOPIC) -> ParseError:
    with pytest.raises(ParseError) as info:
        TABLE.parse(topic, payload, RECEIVED)
    return info.value


class TestVocabulary:
    def test_required_fields_are_fields_of_known_types(self) -> None:
        """Every type with required fields is one of ours, and every required field is one of ours."""
        assert set(REQUIRED_FIELDS) <= set(MES_EVENT_TYPES)
        assert {f for fs in REQUIRED_FIELDS.values() for f in fs} <= set(MES_FIELDS)

    def test_the_simulators_event_types_are_the_vocabulary(self) -> None:
        """A simulated day of the demo plant publishes every known type and no other (the facts read these)."""
        records = plant_records(seed=7, start=RECEIVED, hours=24, tick_s=30, tag_every=1000)
        seen = {r.value["type"] for r in records if r.kind == "mes_event"}
        assert seen == set(MES_EVENT_TYPES)


class TestTranslation:
    @pytest.mark.parametrize("tipo", ["PARO", "STOP", "Machine Down"])
    def test_the_plants_stop_names_are_downtime_start(self, tipo: str) -> None:
        """ "PARO", "STOP" and "Machine Down" each become our downtime_start."""
        record = TABLE.parse(TOPIC, plant_event(tipo, id="D-1", causa="sello"), RECEIVED)
        assert record.value["type"] == "downtime_start"

    def test_nested_paths_become_our_field_names(self) -> None:
        """Fields come from their nested paths under our names; key, time and idempotency key follow them; the raw
        bytes are the plant's payload."""
        payload = plant_event("MARCHA", msg_id="m-42", fecha="2026-11-29T07:15:00+01:00", id="D-9", causa="sello")
        record = TABLE.parse(TOPIC, payload, RECEIVED)
        assert record.value == {
            "type": "downtime_end",
            "id": "m-42",
            "ts": "2026-11-29T07:15:00+01:00",
            "asset": "P-101",
            "line": "L1",
            "downtime_id": "D-9",
            "reason": "sello",
        }
        assert (record.kind, record.key) == ("mes_event", "P-101")
        assert record.source_time == datetime(2026, 11, 29, 6, 15, tzinfo=UTC)
        assert record.idempotency_key == idempotency_key("mes_event", TOPIC, "m-42")
        assert record.raw == payload

    def test_the_plants_other_fields_are_left_out(self) -> None:
        """Only mapped fields are kept: `equipo.marca` and an unmapped `evento.turno` are not in the record."""
        record = TABLE.parse(TOPIC, plant_event("PARO", id="D-1", turno="A"), RECEIVED)
        assert set(record.value) == {"type", "id", "ts", "asset", "line", "downtime_id"}

    def test_an_integer_type_code_matches_its_decimal_text(self) -> None:
        """A numeric code 17 matches the TOML key "17" (TOML keys are strings)."""
        record = TABLE.parse(TOPIC, plant_event(17, resultado="pass"), RECEIVED)
        assert record.value["type"] == "quality_check"

    def test_an_unmapped_type_is_quarantined_with_its_value(self) -> None:
        """A type the mapping does not list is `unmapped_event_type`, the detail naming the path and the value."""
        error = refusal(plant_event("ARRANQUE", id="D-1"))
        assert error.reason is QuarantineReason.UNMAPPED_EVENT_TYPE
        assert error.detail == "evento.tipo: 'ARRANQUE' is not in events.types"

    @pytest.mark.parametrize("tipo", ["paro", "PARO ", "Machine  Down", "17.0"])
    def test_matching_is_exact(self, tipo: str) -> None:
        """Near misses (case, spaces, a float code) are not guessed into a type: they are unmapped."""
        assert refusal(plant_event(tipo, id="D-1")).reason is QuarantineReason.UNMAPPED_EVENT_TYPE

    @pytest.mark.parametrize(
        ("tipo", "detail"),
        [
            (None, "evento.tipo: event type must be a string or integer, got NoneType"),
            (True, "evento.tipo: event type must be a string or integer, got bool"),
            (["PARO"], "evento.tipo: event type must be a string or integer, got list"),
            (17.0, "evento.tipo: event type must be a string or integer, got float"),
        ],
    )
    def test_a_type_that_is_no_name_is_schema_mismatch(self, tipo: object, detail: str) -> None:
        """A type value that is not a string or integer is a schema mismatch naming the path and what it was."""
        error = refusal(plant_event(tipo, id="D-1"))
        assert (error.reason, error.detail) == (QuarantineReason.SCHEMA_MISMATCH, detail)

    def test_a_missing_type_is_schema_mismatch(self) -> None:
        """No value at type_path: the message has no event type at all."""
        error = refusal(b'{"evento": {"id": "D-1"}}')
        assert (error.reason, error.detail) == (QuarantineReason.SCHEMA_MISMATCH, "evento.tipo: no event type")

    @pytest.mark.parametrize("downtime_id", [None, ""])
    def test_a_required_field_null_or_empty_is_schema_mismatch(self, downtime_id: object) -> None:
        """A downtime_end whose evento.id is null or "" cannot close its stop: refused naming field and path."""
        error = refusal(plant_event("MARCHA", id=downtime_id))
        assert error.reason is QuarantineReason.SCHEMA_MISMATCH
        assert error.detail == "downtime_id (from evento.id): required for downtime_end, missing, null or empty"

    def test_a_required_field_missing_is_schema_mismatch(self) -> None:
        """A production count without its evento.cantidad is refused naming `count`."""
        error = refusal(plant_event("CONTEO", unidad="m3"))
        assert error.reason is QuarantineReason.SCHEMA_MISMATCH
        assert error.detail.startswith("count (from evento.cantidad): required for production_count")

    def test_an_optional_field_may_be_missing(self) -> None:
        """A stop without a cause is still a stop: `reason` is optional."""
        record = TABLE.parse(TOPIC, plant_event("STOP", id="D-2"), RECEIVED)
        assert "reason" not in record.value

    def test_the_mapped_time_is_held_to_the_time_domain(self) -> None:
        """The translated `ts` passes the same plausibility check as any MES time."""
        error = refusal(plant_event("PARO", id="D-1", fecha="1999-12-31T23:59:59Z"))
        assert error.reason is QuarantineReason.SCHEMA_MISMATCH
        assert error.detail.startswith("ts: ")

    def test_route_required_paths_are_the_plants(self) -> None:
        """A route's `required` names paths in the plant's payload, checked before the mapping."""
        table = RouteTable.from_config(
            [PLANT_ROUTE.model_copy(update={"required": ["evento.fecha"]})], max_payload_bytes=1024
        )
        with pytest.raises(ParseError) as info:
            table.parse(TOPIC, b'{"evento": {"tipo": "PARO", "id": "D-1"}}', RECEIVED)
        assert info.value.detail == "missing required field(s) ['evento.fecha']"

    def test_a_route_without_a_mapping_stores_the_payload_as_it_comes(self) -> None:
        """Our own simulator's route keeps the whole object, plant-shaped or not, as before."""
        payload = b'{"id": "mes-1", "ts": "2026-11-29T06:15:00Z", "type": "PARO", "asset": "P-101"}'
        record = TABLE.parse("plant/s1/mes/downtime", payload, RECEIVED)
        assert record.value == json.loads(payload)

    def test_bad_bytes_on_a_mapped_route_keep_their_reasons(self) -> None:
        """Decoding and domain checks come before the mapping: their reasons are unchanged."""
        assert refusal(b"\xff").reason is QuarantineReason.INVALID_UTF8
        assert refusal(b'{"evento": ').reason is QuarantineReason.INVALID_JSON
        assert refusal(b"[1]").reason is QuarantineReason.SCHEMA_MISMATCH


def write_config(tmp_path: Path, routes: str) -> Path:
    path = tmp_path / "edge-agent.toml"
    path.write_text('[site]\nid = "planta-1"\n\n' + textwrap.dedent(routes))
    return path


def problems(tmp_path: Path, routes: str) -> list[tuple[str, str]]:
    with pytest.raises(ConfigError) as info:
        load_config(write_config(tmp_path, routes), environ={})
    return info.value.problems


PLANT_ROUTE_TOML = """
    [[mqtt.routes]]
    topic = "planta/+/mes/#"
    kind = "mes_event"

    [mqtt.routes.events]
    type_path = "evento.tipo"
    types = {{ "PARO" = "downtime_start", "Machine Down" = "downtime_start", "MARCHA" = "{end}" }}
    fields = {{ downtime_id = "evento.id", reason = "{reason_path}", asset = "equipo.tag", ts = "evento.fecha" }}
"""


class TestConfig:
    def test_the_guides_example_loads_and_translates_as_shown(self, tmp_path: Path) -> None:
        """The worked example of docs/connect.md loads, and turns the guide's plant message into the guide's record."""
        config = load_config(write_config(tmp_path, CONNECT_EXAMPLE), environ={})
        table = RouteTable.from_config(config.mqtt.routes, config.mqtt.max_payload_bytes)
        payload = (
            '{"msg_id": "7f3a", "equipo": {"tag": "P-101", "linea": "L1"}, "evento": {"tipo": "PARO", "id": "D-88", '
            '"causa": "sello mecánico", "fecha": "2026-11-29T06:00:00-06:00"}}'
        ).encode()
        record = table.parse("planta/norte/mes/eventos", payload, RECEIVED + timedelta(hours=6))
        assert record.value == {
            "type": "downtime_start",
            "id": "7f3a",
            "ts": "2026-11-29T06:00:00-06:00",
            "asset": "P-101",
            "line": "L1",
            "downtime_id": "D-88",
            "reason": "sello mecánico",
        }
        assert (record.key, record.source_time) == ("P-101", datetime(2026, 11, 29, 12, 0, tzinfo=UTC))

    def test_an_unknown_target_type_names_its_key_path(self, tmp_path: Path) -> None:
        """`MARCHA = "downtime_begin"` is refused at mqtt.routes[0].events.types.MARCHA, listing the known types."""
        toml = PLANT_ROUTE_TOML.format(end="downtime_begin", reason_path="evento.causa")
        assert problems(tmp_path, toml) == [
            (
                "mqtt.routes[0].events.types.MARCHA",
                "unknown event type 'downtime_begin'; known: " + ", ".join(MES_EVENT_TYPES),
            )
        ]

    def test_an_unknown_target_field_names_its_key_path(self, tmp_path: Path) -> None:
        """`causa = ...` (the plant's name, not ours) is refused at its key under events.fields."""
        toml = PLANT_ROUTE_TOML.format(end="downtime_end", reason_path="evento.causa").replace("reason =", "causa =")
        assert problems(tmp_path, toml) == [
            ("mqtt.routes[0].events.fields.causa.[key]", "unknown field 'causa'; known: " + ", ".join(MES_FIELDS))
        ]

    def test_a_bad_path_names_its_key_path(self, tmp_path: Path) -> None:
        """A path with an empty level (`evento..causa`) is refused at the field it maps."""
        toml = PLANT_ROUTE_TOML.format(end="downtime_end", reason_path="evento..causa")
        assert problems(tmp_path, toml) == [
            ("mqtt.routes[0].events.fields.reason", "'evento..causa' is no dotted path (e.g. 'evento.tipo')")
        ]

    def test_a_required_field_left_unmapped_is_refused(self, tmp_path: Path) -> None:
        """Mapping to downtime_end without saying where downtime_id is would refuse every stop's end: a config error."""
        toml = PLANT_ROUTE_TOML.format(end="downtime_end", reason_path="evento.causa").replace(
            'downtime_id = "evento.id", ', ""
        )
        assert problems(tmp_path, toml) == [
            (
                "mqtt.routes[0].events",
                "fields: downtime_start needs downtime_id; downtime_end needs downtime_id mapped to a path",
            )
        ]

    @pytest.mark.parametrize(
        ("extra", "path", "message"),
        [
            ('parser = "text"', "mqtt.routes[0]", "events: needs parser = 'json' and kind = 'mes_event'"),
            ('mapping = { key = "equipo.tag" }', "mqtt.routes[0]", "events: excludes mapping"),
        ],
    )
    def test_events_only_on_plain_mes_json_routes(self, tmp_path: Path, extra: str, message: str, path: str) -> None:
        """A mapping on a text route, or beside a `mapping` table, is refused at the route."""
        toml = PLANT_ROUTE_TOML.format(end="downtime_end", reason_path="evento.causa")
        toml = toml.replace('kind = "mes_event"', f'kind = "mes_event"\n    {extra}')
        ((where, reason),) = problems(tmp_path, toml)
        assert where == path and message in reason

    def test_unknown_keys_and_empty_types_are_refused(self, tmp_path: Path) -> None:
        """A misspelt key in the events table is an error at its path, as everywhere; an empty `types` too."""
        toml = """
            [[mqtt.routes]]
            topic = "planta/+/mes/#"
            kind = "mes_event"
            events = { type_path = "evento.tipo", types = {}, typo = 1 }
        """
        assert [path for path, _ in problems(tmp_path, toml)] == [
            "mqtt.routes[0].events.types",
            "mqtt.routes[0].events.typo",
        ]

    def test_config_check_reports_the_key_path(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """`edge-agent config check` exits 2 naming the bad entry."""
        from edge_agent.cli import main

        path = write_config(tmp_path, PLANT_ROUTE_TOML.format(end="downtime_begin", reason_path="evento.causa"))
        with pytest.raises(SystemExit) as info:
            main(["config", "check", str(path)])
        assert info.value.code == 2
        assert "mqtt.routes[0].events.types.MARCHA: unknown event type 'downtime_begin'" in capsys.readouterr().err


# The worked example of docs/connect.md, kept equal to it by test_the_connect_guide_shows_this_example.
CONNECT_EXAMPLE = """
    [[mqtt.routes]]
    topic = "planta/+/mes/#"
    parser = "json"
    kind = "mes_event"

    [mqtt.routes.events]
    type_path = "evento.tipo"
    types = { "PARO" = "downtime_start", "STOP" = "downtime_start", "Machine Down" = "downtime_start", "MARCHA" = "downtime_end" }
    fields = { id = "msg_id", ts = "evento.fecha", asset = "equipo.tag", line = "equipo.linea", downtime_id = "evento.id", reason = "evento.causa", text = "evento.texto" }
"""  # noqa: E501


def test_the_connect_guide_shows_this_example() -> None:
    """docs/connect.md's worked example is the one this file loads."""
    guide = (Path(__file__).resolve().parents[1] / "docs" / "connect.md").read_text(encoding="utf-8")
    assert textwrap.dedent(CONNECT_EXAMPLE).strip() in guide


# --- end to end: the real broker, the real store, the real facts ------------------------------------------------


def mqtt_config(broker: Broker, **overrides: Any) -> MqttConfig:
    base: dict[str, Any] = {
        "host": broker.host,
        "port": broker.port,
        "client_id": "agent",
        "routes": [PLANT_ROUTE, OWN_ROUTE],
        "reconnect_min_s": 0.05,
        "reconnect_max_s": 0.5,
    }
    return MqttConfig(**{**base, **overrides})


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "store.sqlite3") as s:
        yield s


@asynccontextmanager
async def ingesting(broker: Broker, store: Store) -> AsyncIterator[None]:
    writer = RecordWriter(store, max_delay_s=0.01)
    writer_task = asyncio.create_task(writer.run())
    ready = asyncio.Event()
    task = asyncio.create_task(MqttIngest(mqtt_config(broker), store, writer).run(ready))
    try:
        async with asyncio.timeout(10):
            await ready.wait()
        yield
    finally:
        for t in (task, writer_task):  # intake first, then the writer
            t.cancel()
            await asyncio.gather(t, return_exceptions=True)


async def until(predicate: Any, timeout: float = 20.0) -> None:
    async with asyncio.timeout(timeout):
        while not await asyncio.to_thread(predicate):
            await asyncio.sleep(0.05)


def quarantined(reason: str) -> float:
    return REGISTRY.get_sample_value("edge_agent_mqtt_quarantined_total", {"reason": reason}) or 0.0


@pytest.mark.broker
class TestPlantVocabularyEndToEnd:
    async def test_plant_stops_are_stored_in_our_vocabulary_and_become_downtime_facts(
        self, broker: Broker, store: Store
    ) -> None:
        """A plant publishing PARO/MARCHA and Machine Down/MARCHA gets two closed stops in the downtime facts; an
        unmapped ARRANQUE and a MARCHA without its id are quarantined with their reasons and bytes."""
        stream = [
            plant_event("PARO", "m-1", "2026-11-29T06:00:00Z", id="D-1", causa="sello mecánico"),
            plant_event("ARRANQUE", "m-2", "2026-11-29T06:05:00Z"),
            plant_event("MARCHA", "m-3", "2026-11-29T06:20:00Z", id="D-1"),
            plant_event("Machine Down", "m-4", "2026-11-29T06:30:00Z", id="D-2", causa="cavitación"),
            plant_event("MARCHA", "m-5", "2026-11-29T06:35:00Z"),
            plant_event("MARCHA", "m-6", "2026-11-29T06:40:00Z", id="D-2"),
        ]
        before = {r: quarantined(r) for r in ("unmapped_event_type", "schema_mismatch")}
        async with ingesting(broker, store):
            async with MqttClient(mqtt_config(broker, client_id="plant", routes=[])) as pub:
                for payload in stream:  # one by one: the stops arrive in order
                    await pub.publish(TOPIC, payload, qos=1, timeout=5)
            await until(lambda: store.record_count() == 4 and len(store.quarantined()) == 2)

        records = sorted(store.records(), key=lambda r: r.source_time)
        assert [(r.value["type"], r.value["downtime_id"], r.key) for r in records] == [
            ("downtime_start", "D-1", "P-101"),
            ("downtime_end", "D-1", "P-101"),
            ("downtime_start", "D-2", "P-101"),
            ("downtime_end", "D-2", "P-101"),
        ]
        assert [r.raw for r in records] == [stream[0], stream[2], stream[3], stream[5]]
        assert sorted((q.reason, q.raw) for q in store.quarantined()) == [
            ("schema_mismatch", stream[4]),
            ("unmapped_event_type", stream[1]),
        ]
        assert store.stats()["quarantined"]["by_reason"] == {"schema_mismatch": 1, "unmapped_event_type": 1}
        assert quarantined("unmapped_event_type") - before["unmapped_event_type"] == 1
        assert quarantined("schema_mismatch") - before["schema_mismatch"] == 1

        start = datetime(2026, 11, 29, 6, 0, tzinfo=UTC)
        window = ResolvedWindow(start=start, end=start + timedelta(hours=1), timezone="UTC")
        request = ResolvedRequest(type="downtime_analysis", language="es", window=window, scope=Scope())
        facts = compute_facts(records, request)
        (total,) = [f for f in facts if f.kind == "downtime_total"]
        assert total.values == {"count": 2, "duration_s": 20 * 60 + 10 * 60}
        stops = [
            (f.subject, f.values["reason"], f.values["duration_s"], f.values["open"])
            for f in facts
            if f.kind == "downtime"
        ]
        assert stops == [("P-101", "sello mecánico", 1200, False), ("P-101", "cavitación", 600, False)]
        assert not [f for f in facts if f.kind in ("skipped_records", "completeness")]


# --- the boundary property -------------------------------------------------------------------------------------

# Few names, so generated documents hit the generated paths often.
NAMES = st.sampled_from(["a", "b", "tipo", "id", "x y", "ñ"])
PATHS = st.lists(NAMES, min_size=1, max_size=3).map(".".join)
PLANT_TYPES = st.one_of(st.sampled_from(["PARO", "STOP", "Machine Down", "MARCHA", "17", ""]), st.text(max_size=8))
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    PLANT_TYPES,
    st.sampled_from(["2026-11-29T06:15:00Z", "2026-11-29T06:15:00+01:00", "mañana"]),
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(NAMES, inner, max_size=4)),
    max_leaves=12,
)


@st.composite
def mappings(draw: st.DrawFn) -> MesEventsConfig:
    types = draw(st.dictionaries(PLANT_TYPES, st.sampled_from(MES_EVENT_TYPES), min_size=1, max_size=5))
    fields = draw(st.dictionaries(st.sampled_from(list(MES_FIELDS)), PATHS, max_size=6))
    for target in set(types.values()):  # what the config requires, else it would refuse the mapping
        for name in REQUIRED_FIELDS.get(target, ()):
            fields.setdefault(name, draw(PATHS))
    return MesEventsConfig(type_path=draw(PATHS), types=types, fields=fields)


REFUSALS = {
    QuarantineReason.INVALID_JSON,
    QuarantineReason.INVALID_UTF8,
    QuarantineReason.SCHEMA_MISMATCH,
    QuarantineReason.UNMAPPED_EVENT_TYPE,
}


class TestMappingProperty:
    @settings(max_examples=500)
    @given(events=mappings(), document=st.dictionaries(NAMES, JSON, max_size=5) | JSON, garble=st.booleans())
    def test_every_message_is_a_mapped_record_or_a_quarantine_reason(
        self, events: MesEventsConfig, document: Any, garble: bool
    ) -> None:
        """Any JSON message on any valid mapping gives a record in our vocabulary, holding the mapped type and
        only mapped fields, with the required ones present, or a ParseError with a quarantine reason: nothing else."""
        payload = json.dumps(document, ensure_ascii=False).encode()
        if garble:
            payload = payload[: len(payload) // 2]
        route = RouteConfig(topic="planta/#", kind="mes_event", events=events)
        table = RouteTable.from_config([route], max_payload_bytes=256 * 1024)
        try:
            record = table.parse("planta/s1/mes", payload, RECEIVED)
        except ParseError as error:
            assert error.reason in REFUSALS
            event(str(error.reason))
            return
        event("mapped")
        value = record.value
        assert value["type"] in events.types.values()
        assert set(value) - {"type"} <= set(events.fields)
        for name in REQUIRED_FIELDS.get(value["type"], ()):
            assert value[name] not in (None, "")
        assert events.types[str(lookup(json.loads(payload), events.type_path))] == value["type"]
        assert record.raw == payload
