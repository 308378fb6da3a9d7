"""The narrator's LoRA adapter: config boundary, attach, merge, files, resumable training, and `model prepare`
merging it. Everything on a tiny random Llama (hidden 64, 2 layers) with a character tokenizer and the default
model's ChatML template; no GGUF conversion is run."""

from __future__ import annotations

import argparse
import json
import math
import string
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError
from safetensors.torch import load_file, save_file

import edge_agent.llm.prepare as prepare_mod
from edge_agent.llm.adapter import (
    CONFIG_NAME,
    WEIGHTS_NAME,
    AdapterError,
    LoraConfig,
    expected_names,
    load_adapter,
    merge_into,
)
from edge_agent.llm.manifest import manifest_sha256, read_manifest, sha256_file, write_manifest
from training.narrator.lora import adapter_state, attach, lora_parameters, save_adapter
from training.narrator.train import (
    END_OF_TURN,
    Encoded,
    NarratorRecipe,
    NarratorTrainer,
    TrainError,
    batch_plan,
    collate,
    encode,
)
from training.trainer import cosine_lr

# The default model's chat template (models/default/chat_template.jinja), so prompts render as served.
CHATML = (
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\n"
    "You are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}{% endif %}"
    "{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
ALL_TARGETS = ("q", "k", "v", "o", "gate", "up", "down")


@dataclass(frozen=True)
class Sample:
    messages: list[dict[str, str]]
    target: str


SAMPLES = [
    Sample(
        [{"role": "system", "content": "Write one sentence."}, {"role": "user", "content": f"pump P-{i} ran {i} h"}],
        f"Pump P-{i} ran for {i} hours." + " It stopped once." * (i % 3),
    )
    for i in range(1, 9)
]


def tiny_model_dir(root: Path) -> Path:
    """A character-level tokenizer with ChatML's special tokens, and a random 2-layer Llama over its vocabulary."""
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    vocab = {t: i for i, t in enumerate(SPECIAL + sorted(set(string.printable)))}
    backend = Tokenizer(models.WordLevel(vocab, unk_token="<|endoftext|>"))
    backend.pre_tokenizer = pre_tokenizers.Split(Regex("[\\s\\S]"), behavior="isolated")
    backend.add_special_tokens(SPECIAL)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend,
        bos_token="<|im_start|>",
        eos_token="<|im_end|>",
        pad_token="<|im_end|>",
        unk_token="<|endoftext|>",
    )
    tokenizer.chat_template = CHATML
    torch.manual_seed(0)
    config = LlamaConfig(
        hidden_size=64,
        intermediate_size=128,
        num_attention_heads=4,
        num_key_value_heads=2,
        num_hidden_layers=2,
        vocab_size=len(vocab),
        max_position_embeddings=512,
        tie_word_embeddings=True,
        pad_token_id=2,
        bos_token_id=1,
        eos_token_id=2,
    )
    root.mkdir(parents=True, exist_ok=True)
    LlamaForCausalLM(config).save_pretrained(root)
    tokenizer.save_pretrained(root)
    return root


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_model_dir(tmp_path_factory.mktemp("narrator") / "model")


def load_tiny(model_dir: Path) -> Any:
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(str(model_dir), dtype=torch.float32).eval()


def recipe(model_dir: Path, work: Path, **train: Any) -> NarratorRecipe:
    values: dict[str, Any] = {
        "work_dir": work,
        "lr": 5e-3,
        "batch_size": 4,
        "steps": 6,
        "checkpoint_every": 2,
        "device": "cpu",
        "max_seq_len": 512,
    }
    return NarratorRecipe.model_validate(
        {
            "model_dir": model_dir,
            "lora": {"rank": 4, "alpha": 8, "layers": "all"},
            "train": values | train,
            "export": {"dir": work / "adapter", "name": "tiny-narrator", "dtype": "float32"},
        }
    )


def randomise_b(model: torch.nn.Module, seed: int = 1) -> None:
    """Non-zero B everywhere, so the adapter changes the outputs."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith(".lora_B"):
                p.copy_(torch.randn(p.shape, generator=generator) * 0.05)


def tokens(n: int = 12) -> torch.Tensor:
    return torch.arange(3, 3 + n)[None]  # [1, n]


class TestLoraConfig:
    def test_defaults_are_the_recipe(self) -> None:
        """Rank 16, alpha 32 (scale 2), every projection of every layer."""
        cfg = LoraConfig()
        assert (cfg.rank, cfg.alpha, cfg.scale, cfg.targets, cfg.layers) == (16, 32.0, 2.0, ALL_TARGETS, "all")
        assert cfg.layer_ids(3) == [0, 1, 2]

    def test_module_names_follow_transformers_paths(self) -> None:
        cfg = LoraConfig(targets=("q", "down"), layers=(1,))
        assert cfg.module_names(2) == ["model.layers.1.self_attn.q_proj", "model.layers.1.mlp.down_proj"]
        assert expected_names(cfg, 2) == [
            "model.layers.1.self_attn.q_proj.lora_A",
            "model.layers.1.self_attn.q_proj.lora_B",
            "model.layers.1.mlp.down_proj.lora_A",
            "model.layers.1.mlp.down_proj.lora_B",
        ]

    def test_layer_beyond_the_model_is_named(self) -> None:
        with pytest.raises(AdapterError, match=r"layers \[30\] are beyond the model's 30 layers"):
            LoraConfig(layers=(29, 30)).layer_ids(30)

    @given(
        rank=st.integers(-3, 1100),
        alpha=st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-5, 100)),
        targets=st.lists(st.sampled_from([*ALL_TARGETS, "lm_head", "Q"]), max_size=9),
        layers=st.one_of(st.just("all"), st.just("some"), st.lists(st.integers(-3, 40), max_size=6)),
    )
    def test_config_boundary(self, rank: int, alpha: float, targets: list[str], layers: Any) -> None:
        """Accepted exactly when rank is 1..1024, alpha positive and finite, targets a non-empty set of known
        projections, layers "all" or a non-empty set of non-negative indices (kept sorted)."""
        valid = (
            1 <= rank <= 1024
            and math.isfinite(alpha)
            and alpha > 0
            and bool(targets)
            and set(targets) <= set(ALL_TARGETS)
            and len(set(targets)) == len(targets)
            and (
                layers == "all"
                or (isinstance(layers, list) and bool(layers) and min(layers) >= 0 and len(set(layers)) == len(layers))
            )
        )
        raw = {"rank": rank, "alpha": alpha, "targets": targets, "layers": layers}
        if valid:
            cfg = LoraConfig.model_validate(raw)
            assert cfg.scale == alpha / rank
            assert cfg.layers == "all" or list(cfg.layers) == sorted(layers)
        else:
            with pytest.raises(ValidationError):
                LoraConfig.model_validate(raw)


class TestAttach:
    def test_attach_changes_nothing_at_init(self, tiny: Path) -> None:
        """B starts at zero: the attached model's logits are the base model's, bit for bit."""
        base, adapted = load_tiny(tiny), load_tiny(tiny)
        names = attach(adapted, LoraConfig(rank=4, alpha=8))
        assert len(names) == 2 * 7
        with torch.no_grad():
            assert torch.equal(adapted(tokens()).logits, base(tokens()).logits)

    def test_only_lora_tensors_train(self, tiny: Path) -> None:
        model = load_tiny(tiny)
        attach(model, LoraConfig(rank=4, alpha=8, targets=("q", "v"), layers=(1,)))
        trainable = [n for n, p in model.named_parameters() if p.requires_grad]
        assert trainable == [
            "model.layers.1.self_attn.q_proj.lora_A",
            "model.layers.1.self_attn.q_proj.lora_B",
            "model.layers.1.self_attn.v_proj.lora_A",
            "model.layers.1.self_attn.v_proj.lora_B",
        ]
        assert [p.shape for p in lora_parameters(model)] == [(4, 64), (64, 4), (4, 64), (32, 4)]

    def test_same_seed_same_start(self, tiny: Path) -> None:
        """A is drawn from the seed alone, whatever the global RNG did before."""
        a, b = load_tiny(tiny), load_tiny(tiny)
        attach(a, LoraConfig(rank=4, alpha=8), seed=3)
        torch.manual_seed(12345)
        attach(b, LoraConfig(rank=4, alpha=8), seed=3)
        for (name, x), y in zip(adapter_state(a).items(), adapter_state(b).values(), strict=True):
            assert torch.equal(x, y), name

    def test_attaching_twice_is_refused(self, tiny: Path) -> None:
        model = load_tiny(tiny)
        attach(model, LoraConfig(rank=2, alpha=2))
        with pytest.raises(AdapterError, match="not an nn.Linear"):
            attach(model, LoraConfig(rank=2, alpha=2))


class TestMerge:
    def test_hand_worked_rank_one(self) -> None:
        """W = 0, A = [[1, 2]], B = [[1], [3]], alpha/rank = 2 → 2·B@A = [[2, 4], [6, 12]]."""
        key = "model.layers.0.self_attn.q_proj"
        state = {f"{key}.weight": torch.zeros(2, 2)}
        adapter = {f"{key}.lora_A": torch.tensor([[1.0, 2.0]]), f"{key}.lora_B": torch.tensor([[1.0], [3.0]])}
        merged = merge_into(state, adapter, LoraConfig(rank=1, alpha=2, targets=("q",)))
        assert merged[f"{key}.weight"].tolist() == [[2.0, 4.0], [6.0, 12.0]]
        assert state[f"{key}.weight"].tolist() == [[0.0, 0.0], [0.0, 0.0]]  # the input is not modified

    def test_merged_model_equals_attached_model(self, tiny: Path) -> None:
        """Base weights + merged adapter give the attached model's logits within 1e-5."""
        cfg = LoraConfig(rank=4, alpha=8)
        adapted = load_tiny(tiny)
        attach(adapted, cfg)
        randomise_b(adapted)
        plain = load_tiny(tiny)
        merged = merge_into(plain.state_dict(), adapter_state(adapted), cfg)
        plain.load_state_dict(merged)
        with torch.no_grad():
            want, got = adapted(tokens()).logits, plain(tokens()).logits
        assert not torch.allclose(want, load_tiny(tiny)(tokens()).logits.detach(), atol=1e-3)  # it did change
        assert torch.allclose(got, want, atol=1e-5)

    def test_merge_is_deterministic(self, tiny: Path, tmp_path: Path) -> None:
        """The same inputs give the same file bytes, whatever the thread count."""
        cfg = LoraConfig(rank=4, alpha=8)
        adapted = load_tiny(tiny)
        attach(adapted, cfg)
        randomise_b(adapted)
        base = {k: v for k, v in load_tiny(tiny).state_dict().items() if k != "lm_head.weight"}  # tied: not saved
        threads = torch.get_num_threads()
        digests = []
        for n in (1, 2, 1):
            torch.set_num_threads(n)
            path = tmp_path / f"merged{len(digests)}.safetensors"
            save_file(merge_into(base, adapter_state(adapted), cfg), str(path))
            digests.append(sha256_file(path))
        torch.set_num_threads(threads)
        assert len(set(digests)) == 1

    def test_shape_mismatch_is_named(self) -> None:
        key = "model.layers.0.self_attn.q_proj"
        state = {f"{key}.weight": torch.zeros(3, 2)}
        adapter = {f"{key}.lora_A": torch.ones(1, 2), f"{key}.lora_B": torch.ones(2, 1)}
        with pytest.raises(AdapterError, match=r"adapter is \[2, 2\], the weight \[3, 2\]"):
            merge_into(state, adapter, LoraConfig(rank=1, alpha=1, targets=("q",)))


def saved_adapter(tiny: Path, out: Path, *, dtype: str = "float32", seed: int = 1) -> tuple[LoraConfig, dict]:
    cfg = LoraConfig(rank=4, alpha=8, targets=("q", "k", "v", "o", "gate", "up", "down"))
    model = load_tiny(tiny)
    attach(model, cfg)
    randomise_b(model, seed)
    state = adapter_state(model)
    save_adapter(out, state, cfg, {"num_layers": 2, "note": "test"}, dtype=dtype, name="tiny-narrator")
    return cfg, state


class TestAdapterFiles:
    def test_round_trip(self, tiny: Path, tmp_path: Path) -> None:
        """Saved and loaded: same config, same float32 tensors, hashes of both files from the manifest."""
        cfg, state = saved_adapter(tiny, tmp_path / "a")
        adapter = load_adapter(tmp_path / "a")
        assert adapter.config == cfg and adapter.num_layers == 2 and adapter.meta["note"] == "test"
        assert adapter.tensors.keys() == state.keys()
        assert all(torch.equal(adapter.tensors[k], state[k]) for k in state)
        assert adapter.info() == {
            "name": "tiny-narrator",
            "version": 1,
            "sha256": {
                CONFIG_NAME: sha256_file(tmp_path / "a" / CONFIG_NAME),
                WEIGHTS_NAME: sha256_file(tmp_path / "a" / WEIGHTS_NAME),
            },
        }
        assert read_manifest(tmp_path / "a").kind == "adapter"

    def test_bfloat16_export_stores_rounded_tensors(self, tiny: Path, tmp_path: Path) -> None:
        _, state = saved_adapter(tiny, tmp_path / "b", dtype="bfloat16")
        adapter = load_adapter(tmp_path / "b")
        assert all(torch.equal(adapter.tensors[k], state[k].to(torch.bfloat16)) for k in state)

    def test_same_adapter_same_bytes(self, tiny: Path, tmp_path: Path) -> None:
        saved_adapter(tiny, tmp_path / "x")
        saved_adapter(tiny, tmp_path / "y")
        for name in (WEIGHTS_NAME, CONFIG_NAME, "manifest.json"):
            assert (tmp_path / "x" / name).read_bytes() == (tmp_path / "y" / name).read_bytes()

    def test_tampered_file_is_refused(self, tiny: Path, tmp_path: Path) -> None:
        saved_adapter(tiny, tmp_path / "t")
        path = tmp_path / "t" / WEIGHTS_NAME
        raw = bytearray(path.read_bytes())
        raw[-1] ^= 1
        path.write_bytes(bytes(raw))
        with pytest.raises(AdapterError, match=r"adapter_model\.safetensors: sha256"):
            load_adapter(tmp_path / "t")

    def test_missing_directory_is_refused(self, tmp_path: Path) -> None:
        with pytest.raises(AdapterError, match="not a directory"):
            load_adapter(tmp_path / "nope")

    @given(
        mutation=st.sampled_from(
            ["drop", "extra", "shape", "nan", "int", "rank", "targets", "layers", "format", "json", "weights"]
        ),
        garbage=st.binary(max_size=64),
    )
    def test_malformed_adapter_is_refused_by_name(self, tiny: Path, mutation: str, garbage: bytes) -> None:
        """Whatever is wrong inside (manifest rewritten to match, so the content checks are reached), loading
        raises AdapterError naming the file, never anything else."""
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "a"
            cfg = LoraConfig(rank=2, alpha=4, targets=("q", "v"), layers=(0,))
            names = expected_names(cfg, 2)
            state = {
                n: torch.ones((2, 64) if n.endswith("lora_A") else (64 if "q_proj" in n else 32, 2)) for n in names
            }
            save_adapter(out, state, cfg, {"num_layers": 2})
            tensors = load_file(str(out / WEIGHTS_NAME))
            config = json.loads((out / CONFIG_NAME).read_text())
            if mutation == "drop":
                del tensors[names[0]]
            elif mutation == "extra":
                tensors["model.layers.0.mlp.up_proj.lora_A"] = torch.ones(2, 64)
            elif mutation == "shape":
                tensors[names[0]] = torch.ones(3, 64)
            elif mutation == "nan":
                tensors[names[1]] = torch.full_like(tensors[names[1]], float("nan"))
            elif mutation == "int":
                tensors[names[1]] = torch.ones(tensors[names[1]].shape, dtype=torch.int32)
            elif mutation == "rank":
                config["lora"]["rank"] = 0
            elif mutation == "targets":
                config["lora"]["targets"] = ["q", "v", "k"]
            elif mutation == "layers":
                config["meta"]["num_layers"] = 0
            elif mutation == "format":
                config["format"] = 2
            if mutation == "json":
                (out / CONFIG_NAME).write_bytes(b"{" + garbage)
            elif mutation == "weights":
                (out / WEIGHTS_NAME).write_bytes(garbage)
            else:
                save_file(tensors, str(out / WEIGHTS_NAME))
                (out / CONFIG_NAME).write_text(json.dumps(config))
            (out / "manifest.json").unlink()
            write_manifest(out, kind="adapter", name="a", source={}, converter={})
            with pytest.raises(AdapterError, match=r"adapter_(config\.json|model\.safetensors)"):
                load_adapter(out)


class TestTrainingPieces:
    def test_encode_renders_like_the_engine(self, tiny: Path) -> None:
        """Prompt: the chat template with the generation prompt, no added special tokens; then target + <|im_end|>."""
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(str(tiny))
        sample = SAMPLES[0]
        encoded = encode(tok, sample)
        text = tok.apply_chat_template(sample.messages, tokenize=False, add_generation_prompt=True)
        prompt = tok.encode(text, add_special_tokens=False)
        assert encoded.ids[: encoded.prompt_len] == prompt
        assert text.endswith("<|im_start|>assistant\n")
        answer = tok.convert_ids_to_tokens(encoded.ids[encoded.prompt_len :])  # one token per character here
        assert "".join(answer) == sample.target + END_OF_TURN
        assert encoded.ids[-1] == tok.convert_tokens_to_ids(END_OF_TURN)

    def test_collate_masks_prompt_and_padding(self) -> None:
        """[5 6 | 7 8] and [5 | 9]: positions predicting a target token are 1..2 and 0; padding with id 0."""
        ids, predicts = collate([Encoded([5, 6, 7, 8], 2), Encoded([5, 9], 1)], pad_id=0)
        assert ids.tolist() == [[5, 6, 7, 8], [5, 9, 0, 0]]
        assert predicts.tolist() == [[False, True, True, False], [True, False, False, False]]
        assert ids[:, 1:][predicts[:, :-1]].tolist() == [7, 8, 9]  # the labels

    def test_batch_plan_is_seeded_and_covers_each_epoch(self) -> None:
        lengths = [10, 50, 20, 40, 30, 60, 70]
        plan = batch_plan(lengths, batch_size=2, steps=8, seed=0)
        assert plan == batch_plan(lengths, batch_size=2, steps=8, seed=0)
        assert plan != batch_plan(lengths, batch_size=2, steps=8, seed=1)
        assert sorted(i for b in plan[:4] for i in b) == list(range(7))  # epoch 0: 3 pairs and a single
        assert all(lengths[b[0]] <= lengths[b[-1]] for b in plan)  # sorted within a pool
        assert len(plan) == 8

    def test_cosine_lr_hand_worked(self) -> None:
        """100 steps, 10 % warm-up: 0.1, 0.2 … 1.0 of lr, then cosine to 0.1 of lr."""
        assert cosine_lr(0, 1.0, 0.1, 100) == pytest.approx(0.1)
        assert cosine_lr(9, 1.0, 0.1, 100) == pytest.approx(1.0)
        assert cosine_lr(10, 1.0, 0.1, 100) == pytest.approx(1.0)
        assert cosine_lr(55, 1.0, 0.1, 100) == pytest.approx(0.55)
        assert cosine_lr(100, 1.0, 0.1, 100) == pytest.approx(0.1)


def snapshot(trainer: NarratorTrainer) -> dict[str, torch.Tensor]:
    state = {f"lora/{k}": v for k, v in adapter_state(trainer.model).items()}
    for i, s in trainer.optimizer.state_dict()["state"].items():
        state |= {f"opt/{i}/{k}": v for k, v in s.items()}
    return state


class TestTrainer:
    def test_a_few_steps_lower_the_loss(self, tiny: Path, tmp_path: Path) -> None:
        """Six steps on one sample (batch of one) lower its loss."""
        trainer = NarratorTrainer(recipe(tiny, tmp_path, batch_size=1, steps=6, warmup_frac=0), SAMPLES[:1])
        with torch.no_grad():
            before = float(trainer.batch_loss([0])[0])
        trainer.train(progress=False)
        with torch.no_grad():
            after = float(trainer.batch_loss([0])[0])
        assert after < before - 0.1

    def test_kill_and_resume_equals_an_uninterrupted_run(
        self, tiny: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Killed in the middle of step 5 (last checkpoint at 4), resumed by a new trainer: after 6 steps the
        adapter and optimizer state are bit-identical to a run that was never interrupted."""
        whole = NarratorTrainer(recipe(tiny, tmp_path / "whole"), SAMPLES)
        whole.train(progress=False)

        killed = NarratorTrainer(recipe(tiny, tmp_path / "killed"), SAMPLES)
        calls = {"n": 0}
        real = killed.batch_loss

        def dies_on_the_fifth(indices: list[int]) -> tuple[torch.Tensor, int]:
            calls["n"] += 1
            if calls["n"] == 5:
                raise KeyboardInterrupt  # stands in for SIGKILL: nothing after this line runs
            return real(indices)

        monkeypatch.setattr(killed, "batch_loss", dies_on_the_fifth)
        with pytest.raises(KeyboardInterrupt):
            killed.train(progress=False)
        assert not (tmp_path / "killed" / "checkpoint.pt.tmp").exists()

        resumed = NarratorTrainer(recipe(tiny, tmp_path / "killed"), SAMPLES)
        assert resumed.maybe_resume() and resumed.step == 4
        resumed.train(progress=False)
        a, b = snapshot(whole), snapshot(resumed)
        assert a.keys() == b.keys()
        assert all(torch.equal(a[k], b[k]) for k in a)
        assert resumed.history == whole.history

    def test_right_padding_does_not_change_a_sample(self, tiny: Path, tmp_path: Path) -> None:
        """A sample's loss alone equals its loss padded in a batch with a longer one (causal attention, pads last)."""
        trainer = NarratorTrainer(recipe(tiny, tmp_path), SAMPLES)
        by_length = sorted(range(8), key=lambda j: len(trainer.samples[j].ids))
        short, long = by_length[0], by_length[-1]
        with torch.no_grad():
            alone, n = trainer.batch_loss([short])
            both, m = trainer.batch_loss([short, long])
            other, k = trainer.batch_loss([long])
        assert m == n + k
        assert float(both) == pytest.approx((float(alone) * n + float(other) * k) / m, rel=1e-5)

    def test_gradient_checkpointing_changes_memory_not_the_result(self, tiny: Path, tmp_path: Path) -> None:
        """Recomputed activations give bit-identical training: the switch may change between resumes."""
        plain = NarratorTrainer(recipe(tiny, tmp_path / "plain", steps=3), SAMPLES)
        recomputed = NarratorTrainer(recipe(tiny, tmp_path / "gc", steps=3, gradient_checkpointing=True), SAMPLES)
        plain.train(progress=False)
        recomputed.train(progress=False)
        a, b = snapshot(plain), snapshot(recomputed)
        assert all(torch.equal(a[k], b[k]) for k in a)

    def test_resume_on_other_data_is_refused(self, tiny: Path, tmp_path: Path) -> None:
        NarratorTrainer(recipe(tiny, tmp_path, steps=2), SAMPLES).train(progress=False)
        other = NarratorTrainer(recipe(tiny, tmp_path, steps=2), SAMPLES[:5])
        with pytest.raises(TrainError, match="another corpus or recipe"):
            other.maybe_resume()

    def test_too_long_samples_are_left_out(self, tiny: Path, tmp_path: Path) -> None:
        trainer = NarratorTrainer(recipe(tiny, tmp_path, max_seq_len=110), SAMPLES)
        assert 0 < len(trainer.samples) < len(SAMPLES) and all(len(e.ids) <= 110 for e in trainer.samples)
        with pytest.raises(TrainError, match="no sample fits max_seq_len 16"):
            NarratorTrainer(recipe(tiny, tmp_path, max_seq_len=16), SAMPLES)

    def test_init_from_continues_an_exported_adapter_and_names_it(self, tiny: Path, tmp_path: Path) -> None:
        """A second stage starts from the first stage's export exactly, and its own export says where it grew from;
        an adapter of another shape is refused by name."""
        first = NarratorTrainer(recipe(tiny, tmp_path / "one", steps=2), SAMPLES)
        first.train(progress=False)
        exported = first.export()
        second = NarratorTrainer(recipe(tiny, tmp_path / "two", steps=2, init_from=exported), SAMPLES[:5])
        a, b = adapter_state(first.model), adapter_state(second.model)
        assert all(torch.equal(a[k], b[k]) for k in a)
        second.train(progress=False)
        meta = load_adapter(second.export(tmp_path / "two" / "adapter")).meta
        assert meta["init_from"]["manifest_sha256"] == manifest_sha256(exported)
        assert meta["train"]["init_from_manifest_sha256"] == manifest_sha256(exported)
        other = recipe(tiny, tmp_path / "three", init_from=exported).model_copy(
            update={"lora": LoraConfig(rank=2, alpha=4, layers="all")}
        )
        with pytest.raises(TrainError, match="differs from the recipe"):
            NarratorTrainer(other, SAMPLES)

    def test_exported_adapter_merges_into_the_trained_model(self, tiny: Path, tmp_path: Path) -> None:
        """Export after training, load, merge into the base weights: the trained model's logits within 1e-5."""
        trainer = NarratorTrainer(recipe(tiny, tmp_path, steps=2), SAMPLES)
        trainer.train(progress=False)
        adapter = load_adapter(trainer.export())
        assert adapter.meta["steps"] == 2 and adapter.meta["corpus_sha256"] == trainer.corpus_sha256
        assert adapter.meta["base_weights_sha256"] is None  # the tiny model has no manifest
        plain = load_tiny(tiny)
        plain.load_state_dict(merge_into(plain.state_dict(), adapter.tensors, adapter.config))
        trainer.model.eval()
        with torch.no_grad():
            assert torch.allclose(plain(tokens()).logits, trainer.model(tokens()).logits, atol=1e-5)


def write_samples(corpus: Path, section_of: Callable[[int], str]) -> Path:
    """SAMPLES as a corpus file: the first six in the train split, the rest test; sections as `section_of(i)`."""
    from training.narrator.corpus import NarratorSample, write_corpus

    rows = [
        NarratorSample(
            id=str(i),
            split="train" if i < 6 else "test",
            seed=i,
            language="en",
            report_type="shift_summary",
            section=section_of(i),
            strict=False,
            messages=s.messages,
            target=s.target,
        )
        for i, s in enumerate(SAMPLES)
    ]
    write_corpus(corpus, rows)
    return corpus


class TestCli:
    def test_train_then_export(self, tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """`narrator train` on the corpus' train split (test samples ignored), then `narrator export`."""
        from training.cli import narrator_cmd

        corpus = write_samples(tmp_path / "corpus.jsonl", lambda i: "alarms")
        config = tmp_path / "narrator.toml"
        config.write_text(
            f'model_dir = "{tiny}"\n[lora]\nrank = 2\nalpha = 4\n'
            f'[train]\ncorpus = "{corpus}"\nwork_dir = "{tmp_path / "work"}"\nsteps = 2\ndevice = "cpu"\n'
            f'[export]\ndir = "{tmp_path / "out"}"\n'
        )
        parser = argparse.ArgumentParser()
        narrator_cmd.register(parser.add_subparsers(dest="command"))
        for argv in (
            ["narrator", "train", "--config", str(config), "--no-progress"],
            ["narrator", "export", "--config", str(config)],
        ):
            args = parser.parse_args(argv)
            assert args.func(args) == 0
        assert capsys.readouterr().out.splitlines()[-1] == str(tmp_path / "out")  # after the log lines
        adapter = load_adapter(tmp_path / "out")
        assert (
            adapter.meta["samples"] == 6
            and adapter.tensors[expected_names(adapter.config, 2)[0]].dtype == torch.bfloat16
        )

    def test_train_on_some_sections_only(self, tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """`sections = ["downtime"]` trains on that section's train samples alone; an unknown section is refused."""
        from edge_agent.cli.common import CliExit
        from training.cli import narrator_cmd

        corpus = write_samples(tmp_path / "corpus.jsonl", lambda i: "downtime" if i % 2 else "alarms")
        parser = argparse.ArgumentParser()
        narrator_cmd.register(parser.add_subparsers(dest="command"))
        config = tmp_path / "narrator.toml"
        for run, (sections, expected) in enumerate((('["downtime"]', 3), ('["downtime", "alarms"]', 6))):
            config.write_text(
                f'model_dir = "{tiny}"\n[lora]\nrank = 2\nalpha = 4\n'
                f'[train]\ncorpus = "{corpus}"\nwork_dir = "{tmp_path / str(run)}"\nsteps = 1\ndevice = "cpu"\n'
                f"sections = {sections}\n"
            )
            trainer = narrator_cmd._trainer(parser.parse_args(["narrator", "train", "--config", str(config)]))
            assert len(trainer.samples) == expected
        config.write_text(f'model_dir = "{tiny}"\n[train]\ncorpus = "{corpus}"\nsections = ["downtimes"]\n')
        with pytest.raises(CliExit) as refused:
            narrator_cmd._trainer(parser.parse_args(["narrator", "train", "--config", str(config)]))
        assert refused.value.code == 2
        assert "sections must be some of alarms, downtime, production_quality" in capsys.readouterr().err


class TestPrepare:
    @pytest.fixture
    def fake_convert(self, tiny: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """The GGUF conversion replaced by copying the tiny model's files (the real one takes a minute)."""
        import shutil

        def convert(gguf: Path, out: Path) -> None:
            for path in tiny.iterdir():
                shutil.copy2(path, out / path.name)

        monkeypatch.setattr(prepare_mod, "_convert", convert)

    def test_missing_adapter_is_an_error_naming_it(
        self, tiny: Path, tmp_path: Path, fake_convert: None, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """No adapter directory: an error naming it and --no-narrator, nothing written; `narrator=False` gives the
        base weights and a manifest without adapter or base_sha256 keys."""
        monkeypatch.setattr(prepare_mod, "NARRATOR_ADAPTER_DIR", tmp_path / "absent")
        with pytest.raises(prepare_mod.PrepareError, match=r"narrator adapter is missing \(.*absent\).*--no-narrator"):
            prepare_mod.prepare(tmp_path / "model", draft=False)
        assert not (tmp_path / "model").exists()
        result = prepare_mod.prepare(tmp_path / "model", narrator=False, draft=False)
        assert result.converted and result.manifest.adapter is None and result.manifest.base_sha256 is None
        raw = json.loads((tmp_path / "model" / "manifest.json").read_text())
        assert "adapter" not in raw and "base_sha256" not in raw
        assert sha256_file(tmp_path / "model" / WEIGHTS) == sha256_file(tiny / WEIGHTS)

    def test_adapter_is_merged_and_recorded(
        self, tiny: Path, tmp_path: Path, fake_convert: None, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """With an adapter: merged weights, the adapter's name/version/hashes and the unmerged weights' sha256 in
        the manifest; a second prepare is a no-op; another adapter re-merges; `narrator=False` gives the base."""
        saved_adapter(tiny, tmp_path / "adapter")
        monkeypatch.setattr(prepare_mod, "NARRATOR_ADAPTER_DIR", tmp_path / "adapter")
        adapter = load_adapter(tmp_path / "adapter")
        out = tmp_path / "model"

        first = prepare_mod.prepare(out, draft=False)
        assert first.converted
        assert first.manifest.adapter is not None and first.manifest.adapter.model_dump() == adapter.info()
        assert first.manifest.base_sha256 == sha256_file(tiny / WEIGHTS)
        want = merge_into(load_file(str(tiny / WEIGHTS)), adapter.tensors, adapter.config)
        got = load_file(str(out / WEIGHTS))
        assert got.keys() == want.keys() and all(torch.equal(got[k], want[k]) for k in want)
        merged_bytes = (out / WEIGHTS).read_bytes()

        assert prepare_mod.prepare(out, draft=False).converted is False

        again = prepare_mod.prepare(tmp_path / "model2", draft=False)  # a second merge from scratch: the same bytes
        assert (tmp_path / "model2" / WEIGHTS).read_bytes() == merged_bytes
        assert again.manifest == first.manifest

        saved_adapter(tiny, tmp_path / "adapter", seed=2)
        second = prepare_mod.prepare(out, draft=False)
        assert second.converted and second.manifest.adapter != first.manifest.adapter
        assert second.manifest.base_sha256 == first.manifest.base_sha256

        plain = prepare_mod.prepare(out, narrator=False, draft=False)
        assert plain.converted and plain.manifest.adapter is None
        assert sha256_file(out / WEIGHTS) == sha256_file(tiny / WEIGHTS)

    def test_adapter_for_other_base_weights_is_refused(
        self, tiny: Path, tmp_path: Path, fake_convert: None, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """An adapter records the weights it was trained on; prepare will not merge it into others."""
        cfg, state = saved_adapter(tiny, tmp_path / "adapter")
        save_adapter(tmp_path / "adapter", state, cfg, {"num_layers": 2, "base_weights_sha256": "0" * 64})
        monkeypatch.setattr(prepare_mod, "NARRATOR_ADAPTER_DIR", tmp_path / "adapter")
        with pytest.raises(prepare_mod.PrepareError, match="was trained on weights 0{64}, these are [0-9a-f]{64}"):
            prepare_mod.prepare(tmp_path / "model", draft=False)

    def test_training_on_a_merged_model_is_refused(
        self, tiny: Path, tmp_path: Path, fake_convert: None, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The adapter trains on the plain base: a model directory with one merged in is refused by name."""
        saved_adapter(tiny, tmp_path / "adapter")
        monkeypatch.setattr(prepare_mod, "NARRATOR_ADAPTER_DIR", tmp_path / "adapter")
        prepare_mod.prepare(tmp_path / "model", draft=False)
        with pytest.raises(TrainError, match="tiny-narrator merged in; train on a plain base"):
            NarratorTrainer(recipe(tmp_path / "model", tmp_path / "work"), SAMPLES)
        plain = prepare_mod.prepare(tmp_path / "plain", narrator=False, draft=False)
        trainer = NarratorTrainer(recipe(tmp_path / "plain", tmp_path / "work"), SAMPLES)
        assert trainer.base_weights_sha256 == plain.manifest.files[WEIGHTS].sha256

    def test_broken_adapter_stops_prepare(
        self, tiny: Path, tmp_path: Path, fake_convert: None, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """An adapter directory that does not verify is an error, not a silent plain model."""
        saved_adapter(tiny, tmp_path / "adapter")
        (tmp_path / "adapter" / CONFIG_NAME).write_text("{}")
        monkeypatch.setattr(prepare_mod, "NARRATOR_ADAPTER_DIR", tmp_path / "adapter")
        with pytest.raises(prepare_mod.PrepareError, match=r"(?s)narrator adapter: .*adapter_config\.json: size"):
            prepare_mod.prepare(tmp_path / "model", draft=False)
        assert not (tmp_path / "model").exists()


WEIGHTS = "model.safetensors"
