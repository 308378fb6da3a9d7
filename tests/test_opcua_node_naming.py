"""An OPC UA node's name: `tag` ("ASSET.measurement"), or `asset` + `measurement`, which make that tag. Reports take
the asset from the part of the tag before the first ".", so every accepted naming must split back to its asset."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from pydantic import ValidationError

from edge_agent.config import ConfigError, NodeConfig, load_config
from tests.fixtures.opcua import OpcuaServer, running_source, source_config, wait_until

NODE = "ns=2;s=P-101.vibration_mm_s"
T0 = datetime(2020, 3, 2, 6, 0, tzinfo=UTC)


def node(**naming: Any) -> NodeConfig:
    return NodeConfig(node_id=NODE, **naming)


def problems(tmp_path: Path, naming: str) -> list[tuple[str, str]]:
    path = tmp_path / "agent.toml"
    path.write_text(
        '[site]\nid = "plant-7"\n[[opcua.sources]]\nname = "plc"\nendpoint = "opc.tcp://plc:4840"\n'
        f'[[opcua.sources.nodes]]\nnode_id = "{NODE}"\n{naming}\n',
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as info:
        load_config(path, environ={})
    return info.value.problems


class TestNaming:
    def test_tag_is_kept(self) -> None:
        """The existing rule: a tag reading ASSET.measurement is stored as written."""
        got = node(tag="P-101.vibration_mm_s")
        assert (got.tag, got.asset, got.measurement) == ("P-101.vibration_mm_s", None, None)

    def test_asset_and_measurement_make_the_tag(self) -> None:
        got = node(asset="Bomba-7", measurement="presión.media")
        assert got.tag == "Bomba-7.presión.media"
        assert got.tag.split(".", 1)[0] == "Bomba-7"

    def test_effective_config_validates_again(self) -> None:
        """What `config check` prints for a node named by asset + measurement (tag included) loads as the same node."""
        got = node(asset="Bomba-7", measurement="presion")
        assert NodeConfig.model_validate(got.model_dump()) == got

    def test_asset_with_a_dot_names_the_key(self, tmp_path: Path) -> None:
        assert problems(tmp_path, 'asset = "Line.2"\nmeasurement = "speed"') == [
            (
                "opcua.sources[0].nodes[0].asset",
                "Value error, asset 'Line.2' contains \".\": reports would read the asset as 'Line' (the part of the"
                ' tag before the first "."); use another character, e.g. "_" or "-"',
            )
        ]

    def test_tag_without_a_dot_names_the_key(self, tmp_path: Path) -> None:
        [(path, reason)] = problems(tmp_path, 'tag = "vibration"')
        assert path == "opcua.sources[0].nodes[0].tag"
        assert reason.startswith("Value error, tag 'vibration' must read ASSET.measurement")

    @pytest.mark.parametrize("tag", [".vibration", "P-101.", "."])
    def test_tag_with_an_empty_side_is_refused(self, tag: str) -> None:
        with pytest.raises(ValidationError, match="must read ASSET.measurement"):
            node(tag=tag)

    def test_both_namings_at_odds_are_refused(self, tmp_path: Path) -> None:
        [(path, reason)] = problems(tmp_path, 'tag = "P-101.vib"\nasset = "P-102"\nmeasurement = "vib"')
        assert path == "opcua.sources[0].nodes[0]"
        assert "by tag or by asset + measurement, not both" in reason and "'P-102.vib'" in reason

    def test_asset_alone_is_refused(self, tmp_path: Path) -> None:
        [(path, reason)] = problems(tmp_path, 'asset = "P-101"')
        assert path == "opcua.sources[0].nodes[0]"
        assert "asset and measurement go together" in reason

    def test_no_naming_is_refused(self, tmp_path: Path) -> None:
        assert problems(tmp_path, "") == [("opcua.sources[0].nodes[0].tag", "Field required")]


names = st.one_of(st.none(), st.text(max_size=12), st.text(alphabet="ab.-Á\x00 ", max_size=6))


class TestNamingProperty:
    @given(asset=names, measurement=names, tag=names)
    @example(asset="a.b", measurement="c", tag=None)
    @example(asset="a", measurement="", tag=None)
    @example(asset="a", measurement="b", tag="a.b")
    @example(asset=None, measurement=None, tag="a")
    def test_any_naming_is_a_node_that_splits_back_or_a_validation_error(
        self, asset: str | None, measurement: str | None, tag: str | None
    ) -> None:
        """Any strings (or none) for asset, measurement and tag give a NodeConfig whose tag splits back to its asset
        and a non-empty measurement, or a pydantic ValidationError; never another exception."""
        given_naming = {
            k: v for k, v in (("asset", asset), ("measurement", measurement), ("tag", tag)) if v is not None
        }
        try:
            got = NodeConfig(node_id=NODE, **given_naming)
        except ValidationError:
            return
        head, _dot, rest = got.tag.partition(".")
        assert head and rest
        if asset is not None or measurement is not None:
            assert (head, rest) == (asset, measurement)
        else:
            assert got.tag == tag
        assert NodeConfig.model_validate(got.model_dump()) == got


@pytest.mark.opcua
class TestConnectorUsesTheTag:
    async def test_values_are_stored_under_asset_dot_measurement(
        self, opcua_server: OpcuaServer, tmp_path: Path
    ) -> None:
        """A node named by asset + measurement stores its values under the tag they make."""
        named = NodeConfig.model_validate(
            {
                "node_id": opcua_server.node_id("P-101.vibration_mm_s"),
                "asset": "Bomba-101",
                "measurement": "vibración",
                "sampling_interval_ms": 0,
            }
        )
        config = source_config(opcua_server.endpoint, [], nodes=[named])
        async with running_source(config, tmp_path / "agent") as agent:
            await opcua_server.write({"P-101.vibration_mm_s": 4.5}, T0)
            await wait_until(
                lambda: any(r.value == 4.5 for r in agent.tag_values("Bomba-101.vibración")), what="4.5 under the tag"
            )
            assert {r.key for r in agent.store.records(kinds=["tag_value"])} == {"Bomba-101.vibración"}
