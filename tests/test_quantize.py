"""`llm.dtype = "int8"`: the int8 copy of a prepared model (edge_agent.llm.quantize), without an engine."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from safetensors import safe_open
from safetensors.torch import save_file

from edge_agent.llm.manifest import manifest_sha256, read_manifest, verify, write_manifest
from edge_agent.llm.quantize import QUANTIZATION_CONFIG, SCHEME, QuantizeError, ensure_int8, quantize_rows
from edge_agent.llm.types import ModelVerificationError
from tests.fixtures.tiny_model import write_tiny_source

PROJECTIONS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    source = write_tiny_source(tmp_path_factory.mktemp("tiny") / "tiny")
    write_manifest(source, kind="model", name="tiny", source={"test": "tiny"}, converter={})
    return source


def tensors(path: Path) -> dict[str, torch.Tensor]:
    out: dict[str, torch.Tensor] = {}
    for file in sorted(path.glob("*.safetensors")):
        with safe_open(file, framework="pt") as fh:
            out.update({key: fh.get_tensor(key) for key in fh.keys()})  # noqa: SIM118
    return out


class TestQuantizeRows:
    def test_each_row_uses_the_full_int8_range_and_dequantizes_within_half_a_step(self) -> None:
        weight = torch.tensor([[0.5, -1.0, 0.25], [3.0, 0.0, -1.5]])
        q, scale = quantize_rows(weight)
        assert q.dtype == torch.int8 and scale.shape == (2, 1) and scale.dtype == torch.float32
        assert q.tolist() == [[64, -127, 32], [127, 0, -64]]
        assert torch.allclose(scale.squeeze(1), torch.tensor([1.0 / 127, 3.0 / 127]))

    def test_a_row_of_zeros_or_denormals_gets_a_normal_scale_and_zeros(self) -> None:
        q, scale = quantize_rows(torch.tensor([[0.0, 0.0], [5.6e-44, -1e-45]]))
        assert q.abs().sum() == 0 and bool((scale == torch.finfo(torch.float32).tiny).all())

    @settings(max_examples=200, deadline=None)
    @given(
        arrays(
            "float32",
            st.tuples(st.integers(1, 8), st.integers(1, 16)),
            elements=st.floats(-1e4, 1e4, width=32, allow_nan=False),
        )
    )
    def test_property_any_finite_weight_round_trips_within_half_a_step(self, values) -> None:
        weight = torch.from_numpy(values)
        q, scale = quantize_rows(weight)
        assert int(q.abs().max()) <= 127
        error = (q.float() * scale - weight).abs()
        assert bool((error <= scale / 2 * (1 + 1e-5) + 1e-30).all())
        # The row's largest magnitude maps to ±127 exactly (unless the row is zeros or denormals).
        normal = weight.abs().amax(dim=1) >= torch.finfo(torch.float32).tiny * 127
        assert bool((q.abs().amax(dim=1)[normal] == 127).all())


class TestInt8Copy:
    def test_the_copy_holds_int8_projections_with_scales_and_everything_else_unchanged(
        self, tiny: Path, tmp_path: Path
    ) -> None:
        manifest = ensure_int8(tiny, tmp_path / "tiny-int8")
        assert manifest.source == {"model_manifest_sha256": manifest_sha256(tiny), "model": "tiny", "scheme": SCHEME}
        assert verify(tmp_path / "tiny-int8") == manifest
        before, after = tensors(tiny), tensors(tmp_path / "tiny-int8")
        projections = {k for k in before if any(f".{p}." in k for p in PROJECTIONS)}
        assert len(projections) == 7 * 4  # seven per layer, four layers
        for key, tensor in before.items():
            if key in projections:
                assert after[key].dtype == torch.int8
                scale = after[key.removesuffix("weight") + "weight_scale"]
                assert scale.shape == (tensor.shape[0], 1)
                assert torch.allclose(after[key].float() * scale, tensor, atol=float(scale.max()) / 2 + 1e-7)
            else:
                assert torch.equal(after[key], tensor)
        assert set(after) == set(before) | {k.removesuffix("weight") + "weight_scale" for k in projections}
        config = json.loads((tmp_path / "tiny-int8" / "config.json").read_text())
        assert config["quantization_config"] == QUANTIZATION_CONFIG
        for name in ("tokenizer.json", "chat_template.jinja", "LICENSE"):
            assert (tmp_path / "tiny-int8" / name).read_bytes() == (tiny / name).read_bytes()

    def test_the_same_source_gives_the_same_bytes(self, tiny: Path, tmp_path: Path) -> None:
        one, two = ensure_int8(tiny, tmp_path / "a"), ensure_int8(tiny, tmp_path / "b")
        assert one.files == two.files

    def test_a_current_copy_is_kept_and_a_changed_one_made_again(self, tiny: Path, tmp_path: Path) -> None:
        out = tmp_path / "tiny-int8"
        ensure_int8(tiny, out)
        stamp = (out / "model.safetensors").stat().st_mtime_ns
        ensure_int8(tiny, out)
        assert (out / "model.safetensors").stat().st_mtime_ns == stamp
        (out / "tokenizer.json").write_text("{}")  # a file edited after the copy was made
        manifest = ensure_int8(tiny, out)
        assert verify(out) == manifest
        assert (out / "tokenizer.json").read_bytes() == (tiny / "tokenizer.json").read_bytes()

    def test_a_copy_of_another_source_is_replaced(self, tiny: Path, tmp_path: Path) -> None:
        other = write_tiny_source(tmp_path / "other", seed=1)
        write_manifest(other, kind="model", name="other", source={"test": "other"}, converter={})
        out = tmp_path / "copy"
        ensure_int8(other, out)
        assert read_manifest(out).source["model_manifest_sha256"] == manifest_sha256(other)
        ensure_int8(tiny, out)
        assert read_manifest(out).source["model_manifest_sha256"] == manifest_sha256(tiny)

    def test_sharded_weights_get_their_scales_in_the_index(self, tiny: Path, tmp_path: Path) -> None:
        source = tmp_path / "sharded"
        source.mkdir()
        whole = tensors(tiny)
        keys = sorted(whole)
        halves = {"model-00001-of-00002.safetensors": keys[::2], "model-00002-of-00002.safetensors": keys[1::2]}
        for name, part in halves.items():
            save_file({k: whole[k] for k in part}, source / name)
        index = {"metadata": {"total_size": 1}, "weight_map": {k: n for n, part in halves.items() for k in part}}
        (source / "model.safetensors.index.json").write_text(json.dumps(index))
        (source / "config.json").write_bytes((tiny / "config.json").read_bytes())
        write_manifest(source, kind="model", name="sharded", source={}, converter={})
        ensure_int8(source, tmp_path / "out")
        written = json.loads((tmp_path / "out" / "model.safetensors.index.json").read_text())
        quantized = tensors(tmp_path / "out")
        assert set(written["weight_map"]) == set(quantized)
        for key, name in written["weight_map"].items():
            with safe_open(tmp_path / "out" / name, framework="pt") as fh:
                assert key in fh.keys()  # noqa: SIM118

    def test_a_tampered_source_is_refused_and_no_copy_is_made(self, tiny: Path, tmp_path: Path) -> None:
        source = tmp_path / "src"
        source.mkdir()
        for path in tiny.iterdir():
            (source / path.name).write_bytes(path.read_bytes())
        (source / "config.json").write_text((tiny / "config.json").read_text().replace("64", "65", 1))
        with pytest.raises(ModelVerificationError, match="does not match its manifest"):
            ensure_int8(source, tmp_path / "out")
        assert not (tmp_path / "out").exists()

    @pytest.mark.parametrize(
        ("edit", "message"),
        [
            ({"architectures": ["GPT2LMHeadModel"]}, "covers LlamaForCausalLM"),
            ({"architectures": []}, "of no stated architecture"),
            ({"quantization_config": {"quant_method": "awq"}}, "already quantized"),
        ],
    )
    def test_a_model_it_cannot_copy_is_refused_with_what_to_do(
        self, tiny: Path, tmp_path: Path, edit: dict, message: str
    ) -> None:
        source = tmp_path / "src"
        source.mkdir()
        for path in tiny.iterdir():
            if path.name != "manifest.json":
                (source / path.name).write_bytes(path.read_bytes())
        config = json.loads((tiny / "config.json").read_text()) | edit
        (source / "config.json").write_text(json.dumps(config))
        write_manifest(source, kind="model", name="src", source={}, converter={})
        with pytest.raises(QuantizeError, match=message):
            ensure_int8(source, tmp_path / "out")
        assert not (tmp_path / "out").exists()


class TestChildProcess:
    async def test_the_engine_start_makes_the_copy_in_a_child_and_reports_its_refusal(
        self, tiny: Path, tmp_path: Path
    ) -> None:
        """The agent never imports torch for the copy; a refused model stops the start with the child's reason."""
        import os

        from edge_agent.llm.local import _ensure_int8
        from edge_agent.llm.types import EngineStartError

        await _ensure_int8(tiny, tmp_path / "copy", dict(os.environ))
        assert verify(tmp_path / "copy").source["scheme"] == SCHEME
        missing = tmp_path / "no-model"
        missing.mkdir()
        with pytest.raises(EngineStartError, match=r"cannot make the int8 copy of .*no-model.*no manifest\.json"):
            await _ensure_int8(missing, tmp_path / "other", dict(os.environ))
        assert not (tmp_path / "other").exists()
