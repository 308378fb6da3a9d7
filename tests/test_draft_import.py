"""`edge-agent draft import`: published EAGLE-3 heads in the llama_eagle3 and speculators layouts, 3.1 switches
on and off, checked against the target before vLLM starts; served by the real engine with unchanged greedy output."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from safetensors.torch import load_file, save_file

from edge_agent.cli import main
from edge_agent.llm.head_import import (
    HeadImportError,
    HeadMismatch,
    HeadSpec,
    Switches,
    TargetShape,
    check_target,
    import_head,
    parse_head_config,
)
from edge_agent.llm.importer import PickleRefused, import_model
from edge_agent.llm.manifest import manifest_sha256, verify
from edge_agent.llm.types import ChatMessage, GenerationParams, ModelVerificationError
from tests.fixtures.engine import EngineHandle, engine_config
from tests.fixtures.tiny_model import (
    TINY_AUX_LAYERS,
    TINY_DRAFT_VOCAB,
    write_random_head,
    write_tiny_source,
)

VARIANTS = [("llama_eagle3", True), ("llama_eagle3", False), ("speculators", True), ("speculators", False)]


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny random Llama, imported with `model import` (read-only to tests)."""
    root = tmp_path_factory.mktemp("tiny")
    return import_model(write_tiny_source(root / "src"), root / "model", show_progress=False).directory


@pytest.fixture(scope="module")
def heads(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, bool], Path]:
    """One published head per layout and switch setting, as a publisher ships them (no manifest)."""
    root = tmp_path_factory.mktemp("heads")
    return {
        (layout, on): write_random_head(root / f"{layout}-{'on' if on else 'off'}", layout=layout, eagle31=on)  # type: ignore[arg-type]
        for layout, on in VARIANTS
    }


def copy_head(heads: dict[tuple[str, bool], Path], variant: tuple[str, bool], tmp_path: Path) -> Path:
    return Path(shutil.copytree(heads[variant], tmp_path / "head"))


def edit_config(head: Path, **changes: Any) -> None:
    config = json.loads((head / "config.json").read_text())
    for key, value in changes.items():
        if value is None:
            config.pop(key, None)
        else:
            config[key] = value
    (head / "config.json").write_text(json.dumps(config))


def edit_weights(head: Path, **changes: Any) -> None:
    tensors = load_file(str(head / "model.safetensors"))
    for key, value in changes.items():
        if value is None:
            tensors.pop(key)
        else:
            tensors[key] = value
    save_file(tensors, str(head / "model.safetensors"))


class TestImport:
    @pytest.mark.parametrize(
        "variant", VARIANTS, ids=[f"{layout}-3.1-{'on' if on else 'off'}" for layout, on in VARIANTS]
    )
    def test_each_layout_and_switch_setting_imports_verified(
        self, tiny_model: Path, heads: dict, variant: tuple[str, bool], tmp_path: Path
    ) -> None:
        """Every published variant imports into a draft directory that passes the engine's manifest check."""
        result = import_head(heads[variant], tiny_model, tmp_path / "draft", show_progress=False)
        assert verify(tmp_path / "draft") == result.manifest
        assert result.manifest.kind == "draft"

    @pytest.mark.parametrize(
        "variant", VARIANTS, ids=[f"{layout}-3.1-{'on' if on else 'off'}" for layout, on in VARIANTS]
    )
    def test_manifest_records_layout_variant_and_switches(
        self, tiny_model: Path, heads: dict, variant: tuple[str, bool], tmp_path: Path
    ) -> None:
        """The manifest names the layout, the variant, every switch as vLLM reads it, the aux layers and the target."""
        layout, on = variant
        source = import_head(heads[variant], tiny_model, tmp_path / "draft", show_progress=False).manifest.source
        assert source == {
            "origin": "imported",
            "layout": layout,
            "variant": "eagle3.1" if on else "eagle3",
            "switches": {
                "fc_norm": on,
                "norm_output": on,
                "norm_before_residual": layout == "speculators",  # each layout's default
                "norm_before_fc": False,
            },
            "aux_layer_ids": list(TINY_AUX_LAYERS),
            "draft_vocab_size": TINY_DRAFT_VOCAB,
            "target": "manifest-sha256:" + manifest_sha256(tiny_model),
            "verifier": "tiny-llama" if layout == "speculators" else None,
        }

    def test_files_are_copied_byte_for_byte(self, tiny_model: Path, heads: dict, tmp_path: Path) -> None:
        """The published files keep their bytes, so their published hashes stay valid."""
        head = heads[("speculators", True)]
        import_head(head, tiny_model, tmp_path / "draft", show_progress=False)
        for path in head.iterdir():
            assert (tmp_path / "draft" / path.name).read_bytes() == path.read_bytes()


class TestRefused:
    def test_hidden_size_mismatch_names_both_values(self, tiny_model: Path, heads: dict, tmp_path: Path) -> None:
        """A head for a wider target is refused naming its target_hidden_size and the target's hidden_size."""
        head = copy_head(heads, ("llama_eagle3", True), tmp_path)
        edit_config(head, target_hidden_size=4096)
        with pytest.raises(HeadMismatch, match="the head's target_hidden_size is 4096, the target's hidden_size is 64"):
            import_head(head, tiny_model, tmp_path / "draft", show_progress=False)
        assert not (tmp_path / "draft").exists()

    def test_vocab_mismatch_names_both_values(self, tiny_model: Path, heads: dict, tmp_path: Path) -> None:
        """A head for another tokenizer is refused naming both vocabulary sizes."""
        head = copy_head(heads, ("speculators", True), tmp_path)
        config = json.loads((head / "config.json").read_text())
        edit_config(head, transformer_layer_config=config["transformer_layer_config"] | {"vocab_size": 128256})
        with pytest.raises(HeadMismatch, match="the head's vocab_size is 128256, the target's is 49152"):
            import_head(head, tiny_model, tmp_path / "draft", show_progress=False)

    def test_d2t_size_mismatch_names_both_values(self, tiny_model: Path, heads: dict, tmp_path: Path) -> None:
        """A d2t longer than draft_vocab_size is refused with both sizes."""
        import torch

        head = copy_head(heads, ("llama_eagle3", True), tmp_path)
        edit_weights(head, d2t=torch.zeros(TINY_DRAFT_VOCAB + 1, dtype=torch.long))
        with pytest.raises(HeadMismatch, match=r"d2t: shape \[1025\], draft_vocab_size 1024 gives \[1024\]"):
            import_head(head, tiny_model, tmp_path / "draft", show_progress=False)

    def test_t2d_size_mismatch_names_both_values(self, tiny_model: Path, heads: dict, tmp_path: Path) -> None:
        """A t2d over another vocabulary is refused with both sizes."""
        import torch

        head = copy_head(heads, ("speculators", False), tmp_path)
        edit_weights(head, t2d=torch.zeros(32000, dtype=torch.bool))
        with pytest.raises(HeadMismatch, match=r"t2d: shape \[32000\], vocab_size 49152 gives \[49152\]"):
            import_head(head, tiny_model, tmp_path / "draft", show_progress=False)

    def test_d2t_pointing_outside_the_vocabulary_is_refused(
        self, tiny_model: Path, heads: dict, tmp_path: Path
    ) -> None:
        """A d2t that maps a draft id beyond the target vocabulary names the bad target id."""
        import torch

        head = copy_head(heads, ("llama_eagle3", False), tmp_path)
        d2t = load_file(str(head / "model.safetensors"))["d2t"].clone()
        d2t[-1] = 10**6
        edit_weights(head, d2t=d2t)
        with pytest.raises(HeadMismatch, match=r"d2t: maps draft ids to target ids \[\d+\] outside 0..49151"):
            import_head(head, tiny_model, tmp_path / "draft", show_progress=False)
        assert torch.is_tensor(d2t)

    def test_aux_layer_beyond_the_target_is_refused(self, tiny_model: Path, heads: dict, tmp_path: Path) -> None:
        """Captured layers of a deeper target are refused naming the ids and the target's layer range."""
        head = copy_head(heads, ("speculators", True), tmp_path)
        edit_config(head, eagle_aux_hidden_state_layer_ids=[2, 16, 29])
        with pytest.raises(HeadMismatch, match=r"layer ids \[16, 29\] are outside the target's layers 0..4"):
            import_head(head, tiny_model, tmp_path / "draft", show_progress=False)

    def test_default_aux_layers_that_repeat_are_refused(self, tiny_model: Path, heads: dict, tmp_path: Path) -> None:
        """Without ids vLLM's default for 4 layers is (2, 2, 1), which captures only two states: refused."""
        head = copy_head(heads, ("llama_eagle3", True), tmp_path)
        edit_config(head, eagle_config={"use_aux_hidden_state": True})
        with pytest.raises(HeadMismatch, match=r"vLLM's default layer ids \[2, 2, 1\] repeat a layer"):
            import_head(head, tiny_model, tmp_path / "draft", show_progress=False)

    def test_switch_on_without_its_weights_is_refused(self, tiny_model: Path, heads: dict, tmp_path: Path) -> None:
        """fc_norm switched on for a head trained without it names the missing norm weights."""
        head = copy_head(heads, ("speculators", False), tmp_path)
        edit_config(head, fc_norm=True)
        with pytest.raises(HeadMismatch, match=r"fc_norm.0.weight: missing \(fc_norm on, target_hidden_size 64\)"):
            import_head(head, tiny_model, tmp_path / "draft", show_progress=False)

    def test_weights_of_a_switch_that_is_off_are_refused(self, tiny_model: Path, heads: dict, tmp_path: Path) -> None:
        """A 3.1 head whose config lost its switches is refused: its fc_norm weights would be ignored."""
        head = copy_head(heads, ("llama_eagle3", True), tmp_path)
        edit_config(head, fc_norm=None, norm_output=None)
        with pytest.raises(HeadMismatch, match=r"fc_norm: the config has it off but the weights hold \['fc_norm.0"):
            import_head(head, tiny_model, tmp_path / "draft", show_progress=False)

    def test_pickled_head_is_refused(self, tiny_model: Path, heads: dict, tmp_path: Path) -> None:
        """A head shipping pytorch_model.bin is refused like a model."""
        head = copy_head(heads, ("llama_eagle3", True), tmp_path)
        (head / "pytorch_model.bin").write_bytes(b"\x80\x04")
        with pytest.raises(PickleRefused, match=r"pickled weights are refused \(pytorch_model.bin\)"):
            import_head(head, tiny_model, tmp_path / "draft", show_progress=False)

    def test_tampered_target_is_refused(self, tiny_model: Path, heads: dict, tmp_path: Path) -> None:
        """A head is never checked against a target that does not match its own manifest."""
        target = Path(shutil.copytree(tiny_model, tmp_path / "model"))
        (target / "config.json").write_text((target / "config.json").read_text() + " ")
        with pytest.raises(ModelVerificationError, match="config.json: size"):
            import_head(heads[("llama_eagle3", True)], target, tmp_path / "draft", show_progress=False)

    def test_unknown_architecture_is_refused(self, tiny_model: Path, heads: dict, tmp_path: Path) -> None:
        """A plain Llama config is not taken for a head."""
        head = copy_head(heads, ("llama_eagle3", True), tmp_path)
        edit_config(head, architectures=["LlamaForCausalLM"])
        with pytest.raises(HeadImportError, match=r"not an EAGLE-3 head: architectures \['LlamaForCausalLM'\]"):
            import_head(head, tiny_model, tmp_path / "draft", show_progress=False)

    def test_tampered_import_fails_verification(self, tiny_model: Path, heads: dict, tmp_path: Path) -> None:
        """A byte changed in the imported head is named by the engine's manifest check."""
        import_head(heads[("speculators", True)], tiny_model, tmp_path / "draft", show_progress=False)
        config = tmp_path / "draft" / "config.json"
        config.write_text(config.read_text().replace('"fc_norm": true', '"fc_norm": 1'))
        with pytest.raises(ModelVerificationError, match=r"config.json: size 1280 != manifest 1283"):
            verify(tmp_path / "draft")


class TestParse:
    def test_speculators_norm_before_residual_defaults_on(self) -> None:
        """The speculators layout reads norm_before_residual as true when absent, as vLLM does."""
        raw = {
            "speculators_model_type": "eagle3",
            "speculators_config": {"proposal_methods": [{"speculative_tokens": 3}], "verifier": {"name_or_path": "x"}},
            "transformer_layer_config": {"hidden_size": 64, "vocab_size": 100},
        }
        spec = parse_head_config(raw)
        assert spec.switches == Switches(
            fc_norm=False, norm_output=False, norm_before_residual=True, norm_before_fc=False
        )
        assert (spec.num_aux, spec.aux_layer_ids, spec.draft_vocab_size) == (3, None, 100)

    def test_llama_eagle3_counts_aux_states_from_its_ids(self) -> None:
        """eagle_config's ids set both the captured layers and how many states fc takes."""
        raw = {
            "architectures": ["LlamaForCausalLMEagle3"],
            "hidden_size": 64,
            "vocab_size": 100,
            "eagle_config": {"eagle_aux_hidden_state_layer_ids": [1, 3], "norm_before_fc": True},
        }
        spec = parse_head_config(raw)
        assert (spec.num_aux, spec.aux_layer_ids, spec.switches.norm_before_fc) == (2, (1, 3), True)

    def test_other_speculators_algorithms_are_refused(self) -> None:
        """A DFlash speculator is named and refused."""
        raw = {"speculators_model_type": "dflash", "speculators_config": {}}
        with pytest.raises(HeadImportError, match="speculators_model_type 'dflash': only eagle3 heads"):
            parse_head_config(raw)

    @given(
        raw=st.dictionaries(
            st.sampled_from(
                [
                    "architectures",
                    "hidden_size",
                    "vocab_size",
                    "draft_vocab_size",
                    "target_hidden_size",
                    "eagle_config",
                    "fc_norm",
                    "norm_output",
                    "speculators_config",
                    "speculators_model_type",
                    "transformer_layer_config",
                    "eagle_aux_hidden_state_layer_ids",
                    "intermediate_size",
                ]
            ),
            st.recursive(
                st.none()
                | st.booleans()
                | st.integers(-5, 10**6)
                | st.text(max_size=30)
                | st.just("LlamaForCausalLMEagle3")
                | st.just("eagle3"),
                lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
                max_leaves=12,
            ),
        )
    )
    def test_any_config_gives_a_spec_or_a_clear_error(self, raw: dict) -> None:
        """Any JSON object as a head's config resolves to a HeadSpec or raises HeadImportError, nothing else."""
        try:
            parse_head_config(raw)
        except HeadImportError:
            pass


def naive_problem_count(spec: HeadSpec, target: TargetShape) -> int:
    """Reference for check_target, written from the rules in the module docstring."""
    ids = spec.aux_layer_ids or (2, target.num_hidden_layers // 2, target.num_hidden_layers - 3)
    return sum(
        [
            spec.target_hidden_size != target.hidden_size,
            spec.vocab_size != target.vocab_size,
            spec.draft_vocab_size > spec.vocab_size,
            len(ids) != spec.num_aux,
            len(set(ids)) != len(ids),
            any(i < 0 or i > target.num_hidden_layers for i in ids),
        ]
    )


class TestCheckTarget:
    @given(
        hidden=st.sampled_from([64, 576, 4096]),
        vocab=st.sampled_from([49152, 128256]),
        draft_vocab=st.sampled_from([1024, 49152, 200000]),
        num_aux=st.integers(1, 4),
        ids=st.none() | st.lists(st.integers(-1, 40), min_size=1, max_size=4).map(tuple),
        target_hidden=st.sampled_from([64, 4096]),
        target_vocab=st.sampled_from([49152, 128256]),
        layers=st.integers(1, 40),
    )
    def test_problems_match_the_naive_rules(
        self,
        hidden: int,
        vocab: int,
        draft_vocab: int,
        num_aux: int,
        ids: tuple[int, ...] | None,
        target_hidden: int,
        target_vocab: int,
        layers: int,
    ) -> None:
        """check_target reports one problem per broken rule of the naive reference."""
        spec = HeadSpec(
            layout="llama_eagle3",
            hidden_size=hidden,
            intermediate_size=None,
            target_hidden_size=hidden,
            vocab_size=vocab,
            draft_vocab_size=draft_vocab,
            num_aux=num_aux,
            aux_layer_ids=ids,
            switches=Switches(fc_norm=True, norm_output=True, norm_before_residual=False, norm_before_fc=False),
        )
        target = TargetShape(
            hidden_size=target_hidden, vocab_size=target_vocab, num_hidden_layers=layers, manifest_sha256="0" * 64
        )
        assert len(check_target(spec, target)) == naive_problem_count(spec, target)


class TestCli:
    def test_draft_import_prints_layout_and_variant(
        self, tiny_model: Path, heads: dict, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """`draft import SRC --for MODEL_DIR --out DIR` exits 0 and prints the manifest's source."""
        args = ["draft", "import", str(heads[("speculators", True)]), "--for", str(tiny_model)]
        assert main([*args, "--out", str(tmp_path / "draft"), "--no-progress"]) == 0
        out = capsys.readouterr().out
        printed = json.loads(out[out.index("{\n") :])  # after the structured log line
        assert (printed["source"]["layout"], printed["source"]["variant"]) == ("speculators", "eagle3.1")

    def test_mismatch_exits_1_naming_both_values(
        self, tiny_model: Path, heads: dict, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A mismatched head makes the command exit 1 with both values on stderr."""
        head = copy_head(heads, ("llama_eagle3", True), tmp_path)
        edit_config(head, target_hidden_size=576)
        with pytest.raises(SystemExit) as exit_info:
            main(
                ["draft", "import", str(head), "--for", str(tiny_model), "--out", str(tmp_path / "d"), "--no-progress"]
            )
        assert exit_info.value.code == 1
        assert "the head's target_hidden_size is 576, the target's hidden_size is 64" in capsys.readouterr().err


# --- the real engine: one plain engine and one with an imported speculators-layout EAGLE-3.1 head ----------------

PROMPTS = ["Summarise: pump P-101 tripped twice on high vibration.", "Name two checks after a level sensor fault."]
PARAMS = GenerationParams(max_tokens=32)


@pytest.fixture(scope="module")
def plain_engine(tiny_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[EngineHandle]:
    handle = EngineHandle(engine_config(tmp_path_factory.mktemp("plain-state"), model_dir=str(tiny_model)))
    yield handle
    handle.close()


@pytest.fixture(scope="module")
def imported_head(tiny_model: Path, heads: dict, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("imported-head") / "draft"
    return import_head(heads[("speculators", True)], tiny_model, out, show_progress=False).directory


@pytest.fixture(scope="module")
def head_engine(
    tiny_model: Path, imported_head: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[EngineHandle]:
    state = tmp_path_factory.mktemp("head-state")
    handle = EngineHandle(engine_config(state, model_dir=str(tiny_model), draft=imported_head, k=3))
    yield handle
    handle.close()


@pytest.mark.engine
@pytest.mark.slow
class TestServed:
    async def test_greedy_output_with_the_imported_head_equals_without(
        self, plain_engine: EngineHandle, head_engine: EngineHandle
    ) -> None:
        """The imported model with the imported head emits exactly the tokens it emits alone."""
        for prompt in PROMPTS:
            messages = [ChatMessage(role="user", content=prompt)]
            plain = await plain_engine.generate(messages, PARAMS)
            drafted = await head_engine.generate(messages, PARAMS)
            assert drafted.token_ids == plain.token_ids
            assert drafted.spec is not None and drafted.spec.drafts > 0

    async def test_fingerprint_names_the_imported_model_and_switches(
        self, head_engine: EngineHandle, tiny_model: Path, imported_head: Path
    ) -> None:
        """The fingerprint carries both manifests' hashes and the 3.1 switches vLLM built."""
        completion = await head_engine.generate([ChatMessage(role="user", content=PROMPTS[0])], PARAMS)
        assert completion.fingerprint["model"]["manifest_sha256"] == manifest_sha256(tiny_model)
        draft = completion.fingerprint["draft"]
        assert (draft["manifest_sha256"], draft["variant"]) == (manifest_sha256(imported_head), "eagle3.1")
        assert (draft["fc_norm"], draft["norm_output"]) == (True, True)
        assert head_engine.engine.info["draft"]["modules"] == {"fc_norm": True, "norm_output": True}

    @pytest.mark.parametrize(
        ("layout", "on"),
        [v for v in VARIANTS if v != ("speculators", True)],
        ids=lambda v: str(v) if isinstance(v, str) else ("3.1" if v else "3"),
    )
    async def test_every_other_layout_and_switch_setting_is_served_with_identical_output(
        self,
        layout: str,
        on: bool,
        tiny_model: Path,
        heads: dict[tuple[str, bool], Path],
        plain_engine: EngineHandle,
        tmp_path: Path,
    ) -> None:
        """Each imported variant (one engine at a time) emits the plain tokens and builds the switches it declares."""
        head = import_head(heads[(layout, on)], tiny_model, tmp_path / "draft", show_progress=False).directory
        handle = EngineHandle(engine_config(tmp_path / "state", model_dir=str(tiny_model), draft=head, k=3))
        try:
            for prompt in PROMPTS:
                messages = [ChatMessage(role="user", content=prompt)]
                drafted = await handle.generate(messages, PARAMS)
                assert drafted.token_ids == (await plain_engine.generate(messages, PARAMS)).token_ids
                assert drafted.spec is not None and drafted.spec.drafts > 0
            draft = drafted.fingerprint["draft"]
            assert (draft["variant"], draft["fc_norm"], draft["norm_output"]) == (
                "eagle3.1" if on else "eagle3",
                on,
                on,
            )
            assert handle.engine.info["draft"]["modules"] == {"fc_norm": on, "norm_output": on}
        finally:
            handle.close()


# --- the training device path (item 3): the same code on CPU that a GPU plant runs with --device cuda -----------


@pytest.fixture(scope="module")
def tiny_samples(tiny_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four prompt + answer samples of token ids (the trainer needs only ids; the answers need not be on-policy)."""
    from training.draft.data import Sample

    path = tmp_path_factory.mktemp("draft-data") / "train.jsonl"
    lines = [
        Sample(
            id=f"s{i}",
            slice="train",
            kind="shift_summary",
            lang="en",
            prompt_ids=[1, *range(100 + i, 140 + i)],
            output_ids=list(range(900 + 7 * i, 930 + 7 * i)),
        ).model_dump_json()
        for i in range(4)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def tiny_train_config(data: Path, work_dir: Path, **overrides: Any):
    from training.draft.train import TrainConfig

    return TrainConfig(
        data=data,
        work_dir=work_dir,
        draft_vocab_size=256,
        ttt_steps=2,
        steps=2,
        samples_per_step=2,
        max_seq_len=96,
        checkpoint_every=1,
        feature_cache_mb=0,
        **overrides,
    )


class TestTrainDevice:
    @pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
    def test_cpu_device_trains_checkpoints_and_exports(
        self, tiny_model: Path, tiny_samples: Path, tmp_path: Path, dtype: str
    ) -> None:
        """device=cpu trains on the tiny target in either dtype, checkpoints every step and exports a verified head."""
        from training.draft.train import Trainer

        trainer = Trainer(tiny_train_config(tiny_samples, tmp_path / "work", device="cpu", dtype=dtype), tiny_model)
        trainer.train(progress=False)
        assert (trainer.device.type, trainer.step) == ("cpu", 2)
        assert (tmp_path / "work" / "checkpoint.pt").exists()
        exported = trainer.export(0, tmp_path / "head", name="tiny-head", dtype="float32")
        assert verify(exported).source["target"] == "manifest-sha256:" + manifest_sha256(tiny_model)

    def test_cuda_without_a_gpu_is_a_clear_error(self, tiny_model: Path, tiny_samples: Path, tmp_path: Path) -> None:
        """Asking for CUDA where torch sees none fails before the target is loaded."""
        import torch

        from training.draft.train import Trainer, TrainError

        if torch.cuda.is_available():
            pytest.skip("this host has a GPU: device cuda is valid here")
        with pytest.raises(TrainError, match="device cuda requested but torch sees no CUDA device"):
            Trainer(tiny_train_config(tiny_samples, tmp_path / "work", device="cuda"), tiny_model)

    def test_training_commands_are_not_the_agents(self) -> None:
        """The installed `edge-agent` offers `draft import` only; data, train, export, bench and the narrator's
        commands are `python -m training`'s."""
        from edge_agent.cli import build_parser as agent_parser
        from training.cli import build_parser as training_parser

        for argv in (
            ["draft", "train"],
            ["draft", "data"],
            ["draft", "export"],
            ["draft", "bench"],
            ["narrator", "data"],
        ):
            with pytest.raises(SystemExit) as refused:
                agent_parser().parse_args(argv)
            assert refused.value.code == 2
            assert training_parser().parse_args(argv).func.__module__.startswith("training.cli.")
        assert agent_parser().parse_args(["draft", "import", "h", "--for", "m"]).func.__module__ == (
            "edge_agent.cli.draft_cmd"
        )

    def test_cli_device_overrides_the_recipe(self, tmp_path: Path) -> None:
        """`python -m training draft train --device … --dtype …` replace the recipe's [train] values."""
        from training.cli import build_parser
        from training.cli.draft_cmd import _recipe

        recipe_file = tmp_path / "draft.toml"
        recipe_file.write_text(
            '[train]\ndevice = "cpu"\ndtype = "bfloat16"\n\n[[heads]]\nname = "a"\nfc_norm = true\nnorm_output = true\n'
            'work_dir = "w"\nexport_dir = "e"\n'
        )
        args = build_parser().parse_args(
            ["draft", "train", "--config", str(recipe_file), "--device", "cuda", "--dtype", "float32"]
        )
        train = _recipe(args).train
        assert (train.device, train.dtype) == ("cuda", "float32")
