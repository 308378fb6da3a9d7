"""`edge-agent opcua browse`: the walk against real asyncua servers (the plant simulator and a second server with
nested folders, units, an event notifier and non-ASCII names), its table/JSON/TOML output, and the CLI's errors.

Both servers run for the whole module in an event loop of their own thread, so each test runs the command as a user
does: `edge_agent.cli.main([...])`, which starts its own `asyncio.run`.
"""

from __future__ import annotations

import asyncio
import json
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from asyncua import Server, ua
from hypothesis import given
from hypothesis import strategies as st

from edge_agent.cli import main
from edge_agent.config import NodeConfig, OpcuaSourceConfig, load_config
from edge_agent.connectors.opcua.browse import (
    DEFAULT_DEPTH,
    MAX_NODES,
    AddressSpace,
    EventNotifier,
    NodeProblem,
    Variable,
    browse,
    format_table,
    format_toml,
    nodes_from_toml,
    suggest_naming,
    toml_string,
)
from edge_agent.connectors.opcua.ids import node_id
from edge_agent.connectors.opcua.security import sha256_thumbprint
from edge_agent.sim.plant import tag_names
from tests.fixtures.broker import free_port
from tests.fixtures.opcua import Background, OpcuaServer

pytestmark = pytest.mark.opcua

_T = TypeVar("_T")
NS = 2  # the namespace each test server registers after OPC UA's 0 and asyncua's 1


async def start_custom_server(endpoint: str) -> Server:
    """Objects/Site/Área 1/{Bomba-7 (event notifier) with Presión [bar], Estado, Caudal (no DataType), Nivel
    (a unit that is no EUInformation); Line.2/speed; M-1.temp} and Site/D1/.../D5/deep (depth 7), with a cycle
    D2 → Site."""
    server = Server()
    await server.init()
    server.set_endpoint(endpoint)
    server.set_security_policy([ua.SecurityPolicyType.NoSecurity])
    idx = await server.register_namespace("urn:edge-agent:test:browse")
    assert idx == NS

    def nid(name: str) -> ua.NodeId:
        return node_id(name, idx)

    def qn(name: str) -> ua.QualifiedName:
        return ua.QualifiedName(name, idx)

    site = await server.nodes.objects.add_folder(nid("Site"), qn("Site"))
    area = await site.add_folder(nid("Area1"), qn("Área 1"))
    pump = await area.add_object(nid("Bomba7"), qn("Bomba-7"))
    await pump.set_event_notifier([ua.EventNotifier.SubscribeToEvents])
    pressure = await pump.add_variable(nid("Bomba7.Presion"), qn("Presión"), 0.0)
    bar = ua.EUInformation(
        NamespaceUri="http://www.opcfoundation.org/UA/units/un/cefact",
        UnitId=4342098,  # UNECE "BAR"
        DisplayName=ua.LocalizedText("bar"),
        Description=ua.LocalizedText("bar"),
    )
    eu_type = node_id(ua.ObjectIds.EUInformation)
    await pressure.add_property(
        nid("Bomba7.Presion.EU"), ua.QualifiedName("EngineeringUnits", 0), bar, datatype=eu_type
    )
    await pump.add_variable(nid("Bomba7.Estado"), qn("Estado"), 0, ua.VariantType.Int32)
    flow = await pump.add_variable(nid("Bomba7.Caudal"), qn("Caudal"), 0.0)
    # A server that omits an attribute answers BadAttributeIdInvalid for it: the walk must say so and go on.
    del server.iserver.aspace[flow.nodeid].attributes[ua.AttributeIds.DataType]
    level = await pump.add_variable(nid("Bomba7.Nivel"), qn("Nivel"), 0.0)
    await level.add_property(nid("Bomba7.Nivel.EU"), ua.QualifiedName("EngineeringUnits", 0), "percent")
    line = await area.add_object(nid("Line.2"), qn("Line.2"))
    await line.add_variable(nid("Line2.speed"), qn("speed"), 0.0, ua.VariantType.Float)
    await area.add_variable(nid("M1.temp"), qn("M-1.temp"), 0.0)
    folder = site
    for i in range(1, 6):
        folder = await folder.add_folder(nid(f"D{i}"), qn(f"D{i}"))
        if i == 2:
            await folder.add_reference(site.nodeid, ua.ObjectIds.Organizes)  # a cycle: D2 organizes Site
    await folder.add_variable(nid("deep"), qn("deep"), 0.0)
    await server.start()
    return server


class Servers:
    def __init__(self, background: Background, plant: OpcuaServer, custom: Server, custom_endpoint: str) -> None:
        self.background = background
        self.plant = plant
        self.custom = custom
        self.custom_endpoint = custom_endpoint


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    """The plant simulator (security None, Basic256Sha256 Sign and SignAndEncrypt) and the custom server."""
    background = Background()
    plant = OpcuaServer(
        tmp_path_factory.mktemp("plant"), security=("None", "Basic256Sha256_Sign", "Basic256Sha256_SignAndEncrypt")
    )
    custom_endpoint = f"opc.tcp://127.0.0.1:{free_port()}/custom"
    background.run(plant.start())
    try:
        custom = background.run(start_custom_server(custom_endpoint))
        try:
            yield Servers(background, plant, custom, custom_endpoint)
        finally:
            background.run(custom.stop())
    finally:
        background.run(plant.stop())
        background.close()


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """`edge-agent ARGV` as a user runs it: exit code, stdout, stderr."""
    try:
        code = main(argv)
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def walk(servers: Servers, endpoint: str, **kwargs: Any) -> AddressSpace:
    config = OpcuaSourceConfig(name="browse", endpoint=endpoint)
    return asyncio.run(browse(config, Path("."), **kwargs))


def agent_config(tmp_path: Path, source: str, nodes_toml: str = "") -> Path:
    path = tmp_path / "agent.toml"
    path.write_text(
        f'[site]\nid = "plant-7"\n[paths]\nstate_dir = "{tmp_path / "state"}"\n'
        f"[[opcua.sources]]\n{source}\n{nodes_toml}",
        encoding="utf-8",
    )
    return path


PLANT_PATHS = {tag: ("Objects", "Plant", "L1", *tag.split(".", 1)) for tag in tag_names()}

CUSTOM_VARIABLES = [
    Variable("ns=2;s=Bomba7.Caudal", ("Objects", "Site", "Área 1", "Bomba-7", "Caudal"), None, None),
    Variable("ns=2;s=Bomba7.Estado", ("Objects", "Site", "Área 1", "Bomba-7", "Estado"), "Int32", None),
    Variable("ns=2;s=Bomba7.Nivel", ("Objects", "Site", "Área 1", "Bomba-7", "Nivel"), "Double", None),
    Variable("ns=2;s=Bomba7.Presion", ("Objects", "Site", "Área 1", "Bomba-7", "Presión"), "Double", "bar"),
    Variable("ns=2;s=Line2.speed", ("Objects", "Site", "Área 1", "Line.2", "speed"), "Float", None),
    Variable("ns=2;s=M1.temp", ("Objects", "Site", "Área 1", "M-1.temp"), "Double", None),
]
CUSTOM_PROBLEMS = [
    NodeProblem(
        "ns=2;s=Bomba7.Caudal",
        ("Objects", "Site", "Área 1", "Bomba-7", "Caudal"),
        "DataType unreadable: BadAttributeIdInvalid",
    ),
    NodeProblem(
        "ns=2;s=Bomba7.Nivel",
        ("Objects", "Site", "Área 1", "Bomba-7", "Nivel"),
        "EngineeringUnits is not an EUInformation (str)",
    ),
]


class TestWalk:
    def test_plant_simulator_variables_and_the_server_notifier(self, servers: Servers) -> None:
        """Every simulator tag is found with its node id, browse path and data type; the Server object notifies."""
        space = walk(servers, servers.plant.endpoint)
        got = {v.node_id: (v.browse_path, v.data_type, v.unit) for v in space.variables}
        expected = {
            f"ns=2;s={tag}": (path, "Boolean" if tag.endswith(".running") else "Double", None)
            for tag, path in PLANT_PATHS.items()
        }
        assert got == expected
        assert space.notifiers == [EventNotifier("i=2253", ("Objects", "Server"))]
        assert (space.problems, space.truncated) == ([], False)

    def test_custom_server_units_notifiers_problems_and_non_ascii_names(self, servers: Servers) -> None:
        """Units come from EngineeringUnits; an object with SubscribeToEvents is a notifier; a missing attribute
        and a unit of the wrong type are problems on their node, and the walk goes on past them."""
        space = walk(servers, servers.custom_endpoint)
        assert space.variables == CUSTOM_VARIABLES  # deep (depth 7) is beyond the default depth 6
        assert space.notifiers == [
            EventNotifier("i=2253", ("Objects", "Server")),
            EventNotifier("ns=2;s=Bomba7", ("Objects", "Site", "Área 1", "Bomba-7")),
        ]
        assert space.problems == CUSTOM_PROBLEMS

    def test_depth_and_start_node(self, servers: Servers) -> None:
        """--depth 7 reaches the deep variable through the cycle without looping; --from starts below Objects."""
        deep = walk(servers, servers.custom_endpoint, depth=7)
        paths = [v.browse_path for v in deep.variables]
        assert ("Objects", "Site", "D1", "D2", "D3", "D4", "D5", "deep") in paths
        assert len(paths) == len(set(paths)) == len(CUSTOM_VARIABLES) + 1
        pump = walk(servers, servers.custom_endpoint, start="ns=2;s=Bomba7", depth=1)
        assert [v.browse_path for v in pump.variables] == [
            ("Bomba-7", "Caudal"),
            ("Bomba-7", "Estado"),
            ("Bomba-7", "Nivel"),
            ("Bomba-7", "Presión"),
        ]
        assert pump.notifiers == [EventNotifier("ns=2;s=Bomba7", ("Bomba-7",))]

    def test_walk_stops_at_max_nodes(self, servers: Servers) -> None:
        """The node bound holds (start node included) and the result says it stopped."""
        space = walk(servers, servers.plant.endpoint, max_nodes=5)
        assert (space.nodes, space.truncated) == (5, True)
        assert "stopped at 5 nodes" in format_table(space)

    def test_cli_help_states_the_walks_defaults(self, capsys: pytest.CaptureFixture[str]) -> None:
        """The CLI's help states the walk's defaults (it does not import them, to keep `edge-agent` start fast)."""
        code, out, _err = run_cli(["opcua", "browse", "--help"], capsys)
        assert code == 0
        assert f"(default {DEFAULT_DEPTH})" in out
        assert f"{MAX_NODES:,}".replace(",", " ") + " nodes" in " ".join(out.split())


class TestCli:
    def test_table(self, servers: Servers, capsys: pytest.CaptureFixture[str]) -> None:
        """The default output: a summary line, aligned columns, notifiers, then what could not be read."""
        code, out, err = run_cli(["opcua", "browse", servers.custom_endpoint, "--from", "ns=2;s=Bomba7"], capsys)
        assert code == 0, err
        assert out == (
            f"{servers.custom_endpoint} from ns=2;s=Bomba7, depth 6: 4 variables, 1 event notifier, 2 unreadable,"
            " 5 nodes visited\n"
            "\n"
            "NODE ID                BROWSE PATH      DATA TYPE  UNIT\n"
            "ns=2;s=Bomba7.Caudal   Bomba-7/Caudal   ?\n"
            "ns=2;s=Bomba7.Estado   Bomba-7/Estado   Int32\n"
            "ns=2;s=Bomba7.Nivel    Bomba-7/Nivel    Double\n"
            "ns=2;s=Bomba7.Presion  Bomba-7/Presión  Double     bar\n"
            "\n"
            "event notifiers (SubscribeToEvents):\n"
            "NODE ID        BROWSE PATH\n"
            "ns=2;s=Bomba7  Bomba-7\n"
            "\n"
            "not readable (the walk went on):\n"
            "NODE ID               BROWSE PATH     PROBLEM\n"
            "ns=2;s=Bomba7.Caudal  Bomba-7/Caudal  DataType unreadable: BadAttributeIdInvalid\n"
            "ns=2;s=Bomba7.Nivel   Bomba-7/Nivel   EngineeringUnits is not an EUInformation (str)\n"
        )

    def test_json(self, servers: Servers, capsys: pytest.CaptureFixture[str]) -> None:
        code, out, err = run_cli(["opcua", "browse", servers.custom_endpoint, "--json"], capsys)
        assert code == 0, err
        data = json.loads(out)
        presion = next(v for v in data["variables"] if v["node_id"] == "ns=2;s=Bomba7.Presion")
        assert presion == {
            "node_id": "ns=2;s=Bomba7.Presion",
            "browse_path": ["Objects", "Site", "Área 1", "Bomba-7", "Presión"],
            "data_type": "Double",
            "unit": "bar",
        }
        assert [n["node_id"] for n in data["event_notifiers"]] == ["i=2253", "ns=2;s=Bomba7"]
        assert [p["what"] for p in data["problems"]] == [p.what for p in CUSTOM_PROBLEMS]

    def test_toml_of_the_plant_pastes_into_a_valid_config(
        self, servers: Servers, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        """The simulator's TOML names every node as the demo config does (asset = parent, measurement = name), and
        pasted under a source it loads as a config."""
        code, out, err = run_cli(["opcua", "browse", servers.plant.endpoint, "--toml"], capsys)
        assert code == 0, err
        nodes = nodes_from_toml(tomllib.loads(out))
        assert {n.node_id: n.tag for n in nodes} == {f"ns=2;s={tag}": tag for tag in tag_names()}
        assert {n.sampling_interval_ms for n in nodes} == {1000.0}
        source = f'name = "plc"\nendpoint = "{servers.plant.endpoint}"'
        config = load_config(agent_config(tmp_path, source, out), environ={})
        assert [n.tag for n in config.opcua.sources[0].nodes] == [n.tag for n in nodes]

    def test_toml_of_the_custom_server(self, servers: Servers, capsys: pytest.CaptureFixture[str]) -> None:
        """A dotted browse name is kept as the tag; a dotted parent becomes an asset with "_"; non-ASCII survives."""
        code, out, err = run_cli(["opcua", "browse", servers.custom_endpoint, "--toml"], capsys)
        assert code == 0, err
        nodes = nodes_from_toml(tomllib.loads(out))
        assert [(n.node_id, n.tag, n.asset, n.measurement) for n in nodes] == [
            ("ns=2;s=Bomba7.Caudal", "Bomba-7.Caudal", "Bomba-7", "Caudal"),
            ("ns=2;s=Bomba7.Estado", "Bomba-7.Estado", "Bomba-7", "Estado"),
            ("ns=2;s=Bomba7.Nivel", "Bomba-7.Nivel", "Bomba-7", "Nivel"),
            ("ns=2;s=Bomba7.Presion", "Bomba-7.Presión", "Bomba-7", "Presión"),
            ("ns=2;s=Line2.speed", "Line_2.speed", "Line_2", "speed"),
            ("ns=2;s=M1.temp", "M-1.temp", None, None),
        ]
        assert "#   ns=2;s=Bomba7  Objects/Site/Área 1/Bomba-7" in out

    def test_configured_source_security_and_pin(
        self, servers: Servers, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        """--config/--source browse over SignAndEncrypt with the pin, the client certificate generated into
        <state_dir>/pki as the agent's own; ENDPOINT defaults to the source's."""
        der = servers.plant.certificate_der
        assert der is not None
        source = (
            f'name = "plc"\nendpoint = "{servers.plant.endpoint}"\nsecurity_policy = "Basic256Sha256"\n'
            f'security_mode = "SignAndEncrypt"\nserver_cert_sha256 = "{sha256_thumbprint(der)}"'
        )
        config = agent_config(tmp_path, source)
        code, out, err = run_cli(["opcua", "browse", "--config", str(config), "--source", "plc", "--json"], capsys)
        assert code == 0, err
        assert len(json.loads(out)["variables"]) == len(tag_names())
        assert (tmp_path / "state" / "pki" / "opcua-plc.der").is_file()
        # The value to pin, on stderr as docs/connect.md says (stdout stays the listing).
        assert "opcua_server_certificate" in err and sha256_thumbprint(der) in err

    def test_wrong_pin_is_one_line_and_exit_1(
        self, servers: Servers, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        source = (
            f'name = "plc"\nendpoint = "{servers.plant.endpoint}"\nsecurity_policy = "Basic256Sha256"\n'
            f'security_mode = "Sign"\nserver_cert_sha256 = "{"ab" * 32}"'
        )
        code, out, err = run_cli(
            ["opcua", "browse", "-c", str(agent_config(tmp_path, source)), "--source", "plc"], capsys
        )
        assert (code, out) == (1, "")
        assert "refusing to open a session" in err.strip().splitlines()[-1]

    def test_security_the_server_does_not_offer(
        self, servers: Servers, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        """The custom server offers None only: SignAndEncrypt is refused naming what it offers."""
        source = (
            'name = "plc"\nendpoint = "opc.tcp://127.0.0.1:1/unused"\nsecurity_policy = "Basic256Sha256"\n'
            'security_mode = "SignAndEncrypt"'
        )
        config = agent_config(tmp_path, source)
        code, out, err = run_cli(
            ["opcua", "browse", servers.custom_endpoint, "-c", str(config), "--source", "plc"], capsys
        )
        assert code == 1
        assert err.strip().splitlines()[-1] == (
            f"edge-agent: opcua browse: source plc: {servers.custom_endpoint} offers no Basic256Sha256/SignAndEncrypt"
            " endpoint (offered: None/None_)"
        )

    def test_unreachable_endpoint(self, capsys: pytest.CaptureFixture[str]) -> None:
        """Nothing listening: one line naming the endpoint, exit 1."""
        endpoint = f"opc.tcp://127.0.0.1:{free_port()}/nothing"
        code, out, err = run_cli(["opcua", "browse", endpoint], capsys)
        assert (code, out) == (1, "")
        assert err.count("\n") == 1
        assert err.startswith(f"edge-agent: opcua browse: cannot reach {endpoint}: ")

    def test_unknown_start_node(self, servers: Servers, capsys: pytest.CaptureFixture[str]) -> None:
        code, out, err = run_cli(["opcua", "browse", servers.custom_endpoint, "--from", "ns=2;s=NoSuch"], capsys)
        assert (code, out) == (1, "")
        endpoint = servers.custom_endpoint
        assert err == f"edge-agent: opcua browse: node ns=2;s=NoSuch cannot be read on {endpoint}: BadNodeIdUnknown\n"

    @pytest.mark.parametrize(
        ("argv", "message"),
        [
            (["http://plc:4840"], "'http://plc:4840' is not an opc.tcp:// endpoint"),
            (["opc.tcp://plc:4840", "--depth", "-1"], "--depth must be 0 or more"),
            (["opc.tcp://plc:4840", "--from", "ns=x;q=1"], "--from 'ns=x;q=1' is not a node id"),
            ([], "give ENDPOINT, or --config FILE --source NAME"),
            (["opc.tcp://plc:4840", "--source", "plc"], "--config and --source go together"),
        ],
    )
    def test_bad_usage_exits_2(self, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
        code, out, err = run_cli(["opcua", "browse", *argv], capsys)
        assert (code, out) == (2, "")
        assert message in err

    def test_unknown_source_exits_2_listing_the_names(self, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
        config = agent_config(tmp_path, 'name = "plc"\nendpoint = "opc.tcp://plc:4840"')
        code, _out, err = run_cli(["opcua", "browse", "-c", str(config), "--source", "scada"], capsys)
        assert code == 2
        assert "no [[opcua.sources]] named 'scada'" in err and "(plc)" in err

    def test_json_and_toml_exclude_each_other(self, capsys: pytest.CaptureFixture[str]) -> None:
        code, _out, _err = run_cli(["opcua", "browse", "opc.tcp://plc:4840", "--json", "--toml"], capsys)
        assert code == 2


class TestFormatting:
    @given(st.text().filter(lambda s: not any(0xD800 <= ord(c) <= 0xDFFF for c in s)))
    def test_toml_string_round_trips(self, text: str) -> None:
        """Any string a server can send (unpaired surrogates aside) reads back from TOML unchanged."""
        assert tomllib.loads(f"x = {toml_string(text)}")["x"] == text

    @given(path=st.lists(st.text(), max_size=4), fallback=st.text(min_size=1))
    def test_suggested_naming_always_validates(self, path: list[str], fallback: str) -> None:
        """Whatever the browse names, the suggested naming is one NodeConfig accepts."""
        NodeConfig(node_id="ns=2;s=x", **suggest_naming(path, fallback))

    def test_hostile_names_stay_one_comment_line(self) -> None:
        """A newline or a surrogate in a browse name cannot break the TOML; an unrepresentable node id is left out."""
        space = AddressSpace(
            endpoint="opc.tcp://plc:4840",
            start="i=85",
            depth=6,
            variables=[
                Variable("ns=2;s=a", ("Objects", "P-1", 'x\n[evil]\nk = "v'), "Double", "m\x1b[31m"),
                Variable("ns=2;s=\ud800", ("Objects", "P-1", "y"), None, None),
            ],
        )
        data = tomllib.loads(format_toml(space))
        assert data["opcua"]["sources"]["nodes"] == [
            {"node_id": "ns=2;s=a", "asset": "P-1", "measurement": 'x\n[evil]\nk = "v', "sampling_interval_ms": 1000.0}
        ]
        assert "\x1b" not in format_table(space)
