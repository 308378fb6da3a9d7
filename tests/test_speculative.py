"""EAGLE-3 / 3.1 draft head: shapes, the two 3.1 switches, vocabulary maps, acceptance arithmetic, the training-time
test unroll, one training step, and the exported checkpoint format."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from safetensors import safe_open

from training.draft.acceptance import accepted_length, from_counts, from_rounds, verify_mask
from training.draft.export import export_draft, load_exported
from training.draft.model import DraftConfig, Eagle3Draft
from training.draft.train import TrainConfig, Trainer, restricted_loss, step_weights, ttt_mask
from training.draft.vocab import select_vocab

# A tiny target shape: 8 layers → captured layers (2, 4, 5), 128-token vocabulary.
TINY = {
    "hidden_size": 32,
    "intermediate_size": 64,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "vocab_size": 128,
    "draft_vocab_size": 16,
    "target_hidden_size": 32,
    "target_num_layers": 8,
    "aux_layer_ids": (2, 4, 5),
    "max_position_embeddings": 256,
}


def tiny_head(fc_norm: bool = True, norm_output: bool = True, seed: int = 0) -> Eagle3Draft:
    torch.manual_seed(seed)
    head = Eagle3Draft(DraftConfig(**TINY, fc_norm=fc_norm, norm_output=norm_output))
    with torch.no_grad():
        for p in head.parameters():
            p.normal_(0, 0.5)  # also randomise norm weights, so a skipped norm cannot hide
    head.set_vocab(torch.arange(0, 128, 8))
    return head


class TestEagle3Draft:
    def test_step_shapes(self) -> None:
        """combine maps [b, s, 3H] to [b, s, H]; a step returns [b, s, H] states and [b, s, draft_vocab] logits."""
        head = tiny_head()
        aux = torch.randn(2, 5, 3 * 32)
        hidden = head.combine(aux)
        out, nxt, (k, v) = head.step(torch.randint(0, 128, (2, 5)), hidden, torch.arange(5).expand(2, 5))
        assert hidden.shape == (2, 5, 32)
        assert out.shape == nxt.shape == (2, 5, 32)
        assert k.shape == v.shape == (2, 2, 5, 8)
        assert head.logits(out).shape == (2, 5, 16)

    def test_fc_norm_makes_fusion_scale_invariant_per_state(self) -> None:
        """With fc_norm, scaling one captured state by 50 leaves the fused state unchanged; without it, it does not."""
        aux = torch.randn(1, 4, 96)
        scaled = aux.clone()
        scaled[..., 64:] *= 50.0  # the deepest captured layer, whose norm is the large one in a real target
        on, off = tiny_head(fc_norm=True), tiny_head(fc_norm=False)
        assert torch.allclose(on.combine(aux), on.combine(scaled), atol=1e-4)
        assert not torch.allclose(off.combine(aux), off.combine(scaled), atol=1e-2)

    def test_fc_norm_adds_exactly_one_norm_per_captured_state(self) -> None:
        """fc_norm adds the parameters fc_norm.0/1/2.weight and nothing else."""
        on = set(tiny_head(fc_norm=True).state_dict())
        off = set(tiny_head(fc_norm=False).state_dict())
        assert on - off == {"fc_norm.0.weight", "fc_norm.1.weight", "fc_norm.2.weight"}
        assert off - on == set()

    def test_norm_output_changes_only_the_state_fed_forward(self) -> None:
        """Same weights: logits' input is identical either way; the next state is post-norm with 3.1, pre-norm
        with 3."""
        a, b = tiny_head(norm_output=True), tiny_head(norm_output=False)
        ids, hidden, pos = torch.randint(0, 128, (1, 6)), torch.randn(1, 6, 32), torch.arange(6)[None]
        out_a, next_a, _ = a.step(ids, hidden, pos)
        out_b, next_b, _ = b.step(ids, hidden, pos)
        assert torch.equal(out_a, out_b)
        assert torch.equal(next_a, out_a)
        assert not torch.allclose(next_b, out_b)
        assert torch.allclose(b.norm(next_b), out_b, atol=1e-6)

    def test_vocab_maps_hand_worked(self) -> None:
        """Draft ids [0, 1, 2] for target ids [0, 2, 5]: d2t holds offsets [0, 1, 3], t2d marks 0, 2, 5."""
        head = Eagle3Draft(DraftConfig(**(TINY | {"draft_vocab_size": 3})))
        head.set_vocab(torch.tensor([0, 2, 5]))
        assert head.d2t.tolist() == [0, 1, 3]  # vLLM: target = arange(draft_vocab) + d2t
        assert head.draft_ids.tolist() == [0, 2, 5]
        assert head.t2d.nonzero().flatten().tolist() == [0, 2, 5]

    def test_vocab_rejects_unsorted_ids(self) -> None:
        """A draft vocabulary must be strictly ascending, or d2t offsets would not map back."""
        head = Eagle3Draft(DraftConfig(**(TINY | {"draft_vocab_size": 3})))
        with pytest.raises(ValueError, match="ascending"):
            head.set_vocab(torch.tensor([0, 5, 2]))

    def test_config_for_target_uses_vllm_aux_layers(self) -> None:
        """A 30-layer target captures layers (2, 15, 27), vLLM's (2, N//2, N-3)."""
        from transformers import LlamaConfig

        target = LlamaConfig(
            hidden_size=576,
            intermediate_size=1536,
            num_attention_heads=9,
            num_key_value_heads=3,
            num_hidden_layers=30,
            vocab_size=49152,
        )
        assert DraftConfig.for_target(target).aux_layer_ids == (2, 15, 27)


class TestAcceptance:
    def test_accepted_length_stops_at_first_mismatch(self) -> None:
        """[5, 7, 9, 4] against [5, 7, 1, 4]: 2 accepted; the later match at position 3 does not count."""
        assert accepted_length([5, 7, 9, 4], [5, 7, 1, 4]) == 2
        assert verify_mask([5, 7, 9, 4], [5, 7, 1, 4]) == [5, 7, -1, -1]  # 2 accepted, 2 rejected

    def test_nothing_accepted(self) -> None:
        """A wrong first token rejects the whole draft."""
        assert verify_mask([3, 7, 9], [4, 7, 9]) == [-1, -1, -1]

    def test_from_rounds_per_position_and_tau(self) -> None:
        """Rounds accepting 2, 0, 3 of 3 tokens: per position [2/3, 2/3, 1/3], τ = 1 + 5/3."""
        stats = from_rounds([([1, 2, 3], [1, 2, 0]), ([1, 2, 3], [0, 2, 3]), ([1, 2, 3], [1, 2, 3])], k=3)
        assert stats.per_position == pytest.approx([2 / 3, 2 / 3, 1 / 3])
        assert stats.tau == pytest.approx(1 + 5 / 3)
        assert stats.tau_at(1) == pytest.approx(1 + 2 / 3)

    def test_from_vllm_counts(self) -> None:
        """10 drafts with [8, 5, 2] accepted per position: τ = 2.5."""
        stats = from_counts(10, [8, 5, 2])
        assert stats.per_position == [0.8, 0.5, 0.2]
        assert stats.tau == pytest.approx(2.5)

    def test_counts_increasing_with_position_are_rejected(self) -> None:
        """Position i+1 cannot be accepted more often than position i."""
        with pytest.raises(ValueError, match="increase"):
            from_counts(10, [3, 5])


class TestVocab:
    def test_most_frequent_then_lowest_ids(self) -> None:
        """Counts {5: 3, 2: 3, 9: 1}, size 4: ids 2, 5, 9 by count, then filler 0; returned ascending."""
        ids, stats = select_vocab(Counter({5: 3, 2: 3, 9: 1}), 4, 10)
        assert ids.tolist() == [0, 2, 5, 9]
        assert stats.coverage == 1.0
        assert stats.distinct_output_tokens == 3

    def test_preferred_ids_fill_before_the_fallback(self) -> None:
        """Answers {5, 2}, preferred {7, 8, 1} ranked by the fallback's counts (8 before 1 before 7), then the
        fallback's own: size 5 takes 2, 5, 8, 1, 7; size 4 drops the least frequent preferred id, 7."""
        answers, prompts = Counter({5: 3, 2: 1}), Counter({8: 9, 1: 2, 3: 50})
        assert select_vocab(answers, 5, 10, fallback=prompts, prefer=[7, 8, 1])[0].tolist() == [1, 2, 5, 7, 8]
        assert select_vocab(answers, 4, 10, fallback=prompts, prefer=[7, 8, 1])[0].tolist() == [1, 2, 5, 8]
        assert select_vocab(answers, 6, 10, fallback=prompts, prefer=[7, 8, 1])[0].tolist() == [1, 2, 3, 5, 7, 8]

    def test_coverage_counts_repeats(self) -> None:
        """Size 1 over counts {1: 3, 2: 1}: token 1 covers 3 of 4 output tokens."""
        ids, stats = select_vocab(Counter({1: 3, 2: 1}), 1, 10)
        assert ids.tolist() == [1]
        assert stats.coverage == 0.75


class TestTrainingTimeTest:
    def test_mask_hand_worked(self) -> None:
        """Step 1 over 3 indices: causal over step-0 keys, then only its own index among step-1 keys."""
        assert ttt_mask(3, 1).int().tolist() == [
            [1, 0, 0, 1, 0, 0],
            [1, 1, 0, 0, 1, 0],
            [1, 1, 1, 0, 0, 1],
        ]

    def test_mask_with_offset(self) -> None:
        """Offset 1: queries are indices 1 and 2; step-0 keys stay full length, later keys are per query."""
        assert ttt_mask(3, 2, offset=1).int().tolist() == [
            [1, 1, 0, 1, 0, 1, 0],
            [1, 1, 1, 0, 1, 0, 1],
        ]

    def test_step_weights_decay(self) -> None:
        """Weights 1, 0.5, 0.25 for three steps at decay 0.5."""
        assert step_weights(3, 0.5) == [1.0, 0.5, 0.25]

    def test_unroll_equals_sequential_drafting(self) -> None:
        """Step 2 of the unroll at index t equals drafting position t as vLLM does: a cache of step-0 keys ≤ t, then
        its own two draft steps."""
        head = tiny_head(seed=1)
        n, t = 6, 3
        ids = torch.randint(0, 128, (1, n + 3))
        hidden0 = torch.randn(1, n, 32)
        # unrolled (training)
        past, hidden = [], hidden0
        for j in range(3):
            mask = None if j == 0 else ttt_mask(n, j)
            out, hidden, kv = head.step(ids[:, 1 + j : 1 + j + n], hidden, (torch.arange(n) + j)[None], past, mask)
            past.append(kv)
        unrolled = out[0, t]
        # sequential (inference) for position t only
        out0, h, (k0, v0) = head.step(ids[:, 1 : 1 + n], hidden0, torch.arange(n)[None])
        cache = [(k0[:, :, : t + 1], v0[:, :, : t + 1])]
        h = h[:, t : t + 1]
        for j in (1, 2):
            full = torch.ones(1, t + 1 + j, dtype=torch.bool)
            out_j, h, kv = head.step(ids[:, t + 1 + j : t + 2 + j], h, torch.tensor([[t + j]]), cache, full)
            cache.append(kv)
        assert torch.allclose(unrolled, out_j[0, 0], atol=1e-5)

    def test_restricted_loss_ignores_targets_outside_draft_vocab(self) -> None:
        """A position whose target argmax is not draftable adds no loss and no count, but can never be a hit."""
        draft_ids = torch.tensor([0, 2])
        t2d = torch.tensor([True, False, True, False])
        target = torch.tensor([[0.0, 9.0, 1.0, 0.0], [0.0, 0.0, 5.0, 0.0]])  # argmax 1 (not draftable), 2
        draft = torch.tensor([[0.0, 3.0], [0.0, 3.0]])  # both pick draft id 1 → target 2
        ce, n_in, hits = restricted_loss(
            draft, torch.softmax(target[:, draft_ids], -1), target.argmax(-1), draft_ids, t2d
        )
        assert int(n_in) == 1 and int(hits) == 1
        p = torch.softmax(torch.tensor([0.0, 5.0]), -1)
        assert float(ce) == pytest.approx(float(-(p * torch.log_softmax(torch.tensor([0.0, 3.0]), -1)).sum()), rel=1e-5)


@pytest.fixture(scope="module")
def tiny_target(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A random 8-layer Llama saved like the prepared model, plus 8 answered samples."""
    from transformers import LlamaConfig, LlamaForCausalLM

    root = tmp_path_factory.mktemp("tiny")
    torch.manual_seed(0)
    config = LlamaConfig(
        hidden_size=32,
        intermediate_size=64,
        num_attention_heads=4,
        num_key_value_heads=2,
        num_hidden_layers=8,
        vocab_size=128,
        max_position_embeddings=256,
        tie_word_embeddings=True,
    )
    LlamaForCausalLM(config).save_pretrained(root / "target")
    rng = random.Random(0)
    with open(root / "data.jsonl", "w") as fh:
        for i in range(8):
            fh.write(
                json.dumps(
                    {
                        "id": str(i),
                        "slice": "train",
                        "kind": "report",
                        "lang": "en",
                        "prompt_ids": [rng.randrange(128) for _ in range(8)],
                        "output_ids": [rng.randrange(64) for _ in range(16)],
                    }
                )
                + "\n"
            )
    return root


def _trainer(root: Path, work: str, **overrides: object) -> Trainer:
    values: dict[str, object] = {
        "data": root / "data.jsonl",
        "work_dir": root / work,
        "draft_vocab_size": 16,
        "ttt_steps": 3,
        "steps": 4,
        "samples_per_step": 4,
        "dtype": "float32",
        "lr": 3e-3,
        "checkpoint_every": 1,
    }
    config = TrainConfig(**(values | overrides))
    return Trainer(config, root / "target")


def _batch_loss(trainer: Trainer) -> float:
    with torch.no_grad():
        return sum(float(trainer.sample_loss(s)[0]) for s in trainer.samples[:4])


class TestTrainer:
    def test_one_step_reduces_loss_deterministically(self, tiny_target: Path) -> None:
        """Two seeded runs give bit-identical losses, and one optimizer step lowers the loss on its batch."""
        a, b = _trainer(tiny_target, "a"), _trainer(tiny_target, "b")
        a.samples = b.samples = a.samples[:4]  # the first step trains exactly on these
        before = _batch_loss(a)
        assert before == _batch_loss(b)
        a.config.steps = b.config.steps = 1
        a.train(progress=False)
        b.train(progress=False)
        after = _batch_loss(a)
        assert after == _batch_loss(b)
        assert after < before

    def test_resume_continues_from_the_checkpoint(self, tiny_target: Path) -> None:
        """A new trainer over the same work dir starts at the saved step with the saved weights."""
        first = _trainer(tiny_target, "resume", steps=2)
        first.train(progress=False)
        second = _trainer(tiny_target, "resume", steps=2)
        assert second.maybe_resume()
        assert second.step == 2
        assert torch.equal(second.head.fc.weight, first.head.fc.weight)

    def test_feature_cache_changes_nothing_but_time(self, tiny_target: Path) -> None:
        """Two epochs with the target's states cached after the first pass train bit-identical weights to
        recomputing them every time; a zero budget caches nothing."""
        cached = _trainer(tiny_target, "cached", steps=4)  # 16 sample passes over 8 samples: the cache is reused
        fresh = _trainer(tiny_target, "fresh", steps=4, feature_cache_mb=0)
        cached.train(progress=False)
        fresh.train(progress=False)
        assert len(cached._cache) == len(cached.samples) == 8 and not fresh._cache
        for (name, a), (_, b) in zip(cached.head.state_dict().items(), fresh.head.state_dict().items(), strict=True):
            assert torch.equal(a, b), name

    def test_batched_capture_equals_one_at_a_time(self, tiny_target: Path) -> None:
        """Samples of 24, 19 and 12 tokens captured in one padded pass (plus a lone fourth) get each the ids,
        prompt length, states and greedy tokens of their own pass, within float32 summation order."""
        trainer = _trainer(tiny_target, "batched-capture", target_batch=3)
        s = trainer.samples
        trainer.samples = [
            s[0],  # 8 + 16 tokens
            s[1].model_copy(update={"prompt_ids": s[1].prompt_ids[:3]}),  # 3 + 16: padded by 5
            s[2].model_copy(update={"prompt_ids": s[2].prompt_ids[:4], "output_ids": s[2].output_ids[:8]}),  # 4 + 8
            s[3],
        ]
        batched = trainer.step_features([0, 1, 2, 3])  # [0, 1, 2] in one pass, then 3 alone
        for sample, got in zip(trainer.samples, batched, strict=True):
            alone = trainer.features(sample)
            assert torch.equal(got.ids, alone.ids) and got.p_len == alone.p_len
            assert got.aux.shape == alone.aux.shape and got.last.shape == alone.last.shape
            assert torch.allclose(got.aux, alone.aux, atol=1e-5)
            assert torch.allclose(got.last, alone.last, atol=1e-5)
            assert torch.equal(got.top, alone.top)
        assert [f.aux.shape[1] for f in batched] == [24, 19, 12, 24]
        assert batched[2].aux.untyped_storage().nbytes() == batched[2].aux.nbytes  # its own copy, not the batch's
        assert sorted(trainer._cache) == [0, 1, 2, 3]

    def test_batched_training_checkpoints_and_resumes(self, tiny_target: Path) -> None:
        """With target_batch=2 a run trains, checkpoints and resumes like the one-at-a-time default."""
        first = _trainer(tiny_target, "resume-batched", steps=2, target_batch=2)
        first.train(progress=False)
        assert (tiny_target / "resume-batched" / "checkpoint.pt").exists()
        second = _trainer(tiny_target, "resume-batched", steps=2, target_batch=2)
        assert second.maybe_resume()
        assert second.step == 2
        assert torch.equal(second.head.fc.weight, first.head.fc.weight)


class TestTrainingTogether:
    def test_heads_share_init_samples_and_steps(self, tiny_target: Path) -> None:
        """A 3.1 and a plain 3 head trained together start from the same weights and end at the same step."""
        common = {
            "data": tiny_target / "data.jsonl",
            "draft_vocab_size": 16,
            "ttt_steps": 2,
            "steps": 2,
            "samples_per_step": 2,
            "dtype": "float32",
            "checkpoint_every": 1,
        }
        trainer = Trainer(
            [
                TrainConfig(work_dir=tiny_target / "t31", **common),
                TrainConfig(work_dir=tiny_target / "t3", fc_norm=False, norm_output=False, **common),
            ],
            tiny_target / "target",
        )
        a, b = trainer.runs[0].head, trainer.runs[1].head
        assert torch.equal(a.fc.weight, b.fc.weight)
        assert torch.equal(a.lm_head.weight, b.lm_head.weight)
        trainer.train(progress=False)
        assert [r.step for r in trainer.runs] == [2, 2]
        assert not torch.equal(a.fc.weight, b.fc.weight)

    def test_heads_with_different_settings_are_refused(self, tiny_target: Path) -> None:
        """Heads trained together may differ only in the 3.1 switches and their work dirs."""
        from training.draft.train import TrainError

        common = {"data": tiny_target / "data.jsonl", "draft_vocab_size": 16, "dtype": "float32"}
        with pytest.raises(TrainError, match="share every setting"):
            Trainer(
                [
                    TrainConfig(work_dir=tiny_target / "x", **common),
                    TrainConfig(work_dir=tiny_target / "y", lr=1.0, **common),
                ],
                tiny_target / "target",
            )


def _source_head(target_dir: Path, out: Path, *, fc_norm: bool = True, norm_output: bool = True) -> Path:
    """An exported head for the tiny target with a vocabulary the data would never select: every 8th id."""
    from transformers import AutoConfig

    config = DraftConfig.for_target(
        AutoConfig.from_pretrained(target_dir), draft_vocab_size=16, fc_norm=fc_norm, norm_output=norm_output
    )
    torch.manual_seed(7)
    head = Eagle3Draft(config)
    with torch.no_grad():
        for param in head.parameters():
            param.normal_(0, 0.1)
    head.set_vocab(torch.arange(0, 128, 8))
    return export_draft(head, out, name=out.name)  # bfloat16, as the shipped head


@pytest.fixture(scope="module")
def tiny_source(tiny_target: Path) -> Path:
    return _source_head(tiny_target / "target", tiny_target / "source-head")


class TestInitFrom:
    """`init_from`: fine-tune an exported head, keeping its weights, vocabulary and shape, with its lineage."""

    def test_starts_from_the_heads_weights_and_vocabulary(self, tiny_target: Path, tiny_source: Path) -> None:
        """Every tensor of the new head is the exported head's (embeddings: the target's); the vocabulary is the
        source's every-8th-id one, not the data's most frequent answer tokens."""
        trainer = _trainer(tiny_target, "init", init_from=tiny_source)
        source = load_exported(tiny_source, trainer.target.get_input_embeddings().weight)
        for (name, got), (_, want) in zip(trainer.head.state_dict().items(), source.state_dict().items(), strict=True):
            assert torch.equal(got, want), name
        assert trainer.head.draft_ids.tolist() == list(range(0, 128, 8))
        selected, _ = select_vocab(Counter(t for s in trainer.samples for t in s.output_ids), 16, 128)
        assert selected.tolist() != list(range(0, 128, 8))
        lm_head = trainer.target.get_output_embeddings().weight
        assert torch.equal(trainer.draft_lm_head, lm_head[torch.arange(0, 128, 8)])

    def test_vocab_stats_are_the_fixed_vocabularys_coverage(self, tiny_target: Path, tiny_source: Path) -> None:
        """Coverage is counted for the source's ids over this data's answers: answers use ids 0..63, the
        vocabulary holds 0, 8, ..., 56 of them."""
        trainer = _trainer(tiny_target, "init-stats", init_from=tiny_source)
        counts = Counter(t for s in trainer.samples for t in s.output_ids)
        in_vocab = sum(n for t, n in counts.items() if t % 8 == 0)
        assert trainer.vocab_stats.size == 16
        assert trainer.vocab_stats.distinct_output_tokens == len(counts)
        assert trainer.vocab_stats.coverage == in_vocab / sum(counts.values())

    def test_reselect_vocab_takes_the_datas_vocabulary_and_keeps_the_rows_it_shares(
        self, tiny_target: Path, tiny_source: Path
    ) -> None:
        """reselect_vocab: the vocabulary a fresh head would count from this data; lm_head rows of tokens the source
        could draft are its rows, new tokens' rows the target's output rows; every other weight is the source's."""
        trainer = _trainer(tiny_target, "revocab", init_from=tiny_source, reselect_vocab=True)
        embed = trainer.target.get_input_embeddings().weight
        source = load_exported(tiny_source, embed)
        counts = Counter(t for s in trainer.samples for t in s.output_ids)
        prompts = Counter(t for s in trainer.samples for t in s.prompt_ids)
        selected, stats = select_vocab(counts, 16, 128, fallback=prompts, prefer=source.draft_ids.tolist())
        assert trainer.head.draft_ids.tolist() == selected.tolist() != source.draft_ids.tolist()
        assert trainer.vocab_stats == stats
        assert torch.equal(trainer.draft_lm_head, trainer.target.get_output_embeddings().weight[selected])
        target_rows = trainer.target.get_output_embeddings().weight.float()
        old = source.draft_ids.tolist()
        for row, token in enumerate(selected.tolist()):
            want = source.lm_head.weight[old.index(token)] if token in old else target_rows[token]
            assert torch.equal(trainer.head.lm_head.weight[row], want), token
        assert 0 < sum(t in old for t in selected.tolist()) < 16  # both kinds of row are there
        for name, value in trainer.head.state_dict().items():
            if name not in ("lm_head.weight", "d2t", "t2d"):
                assert torch.equal(value, source.state_dict()[name]), name

    def test_first_step_loss_is_the_loaded_heads_loss(self, tiny_target: Path, tiny_source: Path) -> None:
        """The first step's recorded loss is the exported head's own loss on that step's samples."""
        trainer = _trainer(tiny_target, "init-loss", init_from=tiny_source, steps=1)
        loaded = load_exported(tiny_source, trainer.target.get_input_embeddings().weight)
        first = [trainer.features(trainer.samples[i]) for i in trainer._order()[:4]]
        with torch.no_grad():
            expected = sum(float(trainer.head_loss(loaded, f, f.targets(trainer.draft_lm_head))[0]) for f in first)
        trainer.train(progress=False)
        assert trainer.history[0]["loss"] == expected / 4
        assert not torch.equal(trainer.head.fc.weight, loaded.fc.weight)  # and the step did train it

    def test_resume_after_init_from_continues_from_the_checkpoint(self, tiny_target: Path, tiny_source: Path) -> None:
        """A checkpoint wins over init_from: the new trainer takes the trained weights, step, vocabulary and
        lineage, and runs only the steps left."""
        first = _trainer(tiny_target, "init-resume", init_from=tiny_source, steps=2)
        first.train(progress=False)
        second = _trainer(tiny_target, "init-resume", init_from=tiny_source, steps=3)
        assert not torch.equal(second.head.fc.weight, first.head.fc.weight)  # before resuming: the source
        assert second.maybe_resume()
        assert second.step == 2
        assert torch.equal(second.head.fc.weight, first.head.fc.weight)
        assert torch.equal(second.head.draft_ids, first.head.draft_ids)
        assert second.runs[0].init_from == first.runs[0].init_from
        second.train(progress=False)
        assert [r["step"] for r in second.history] == [1, 2, 3]

    def test_a_scratch_checkpoint_wins_over_init_from(self, tiny_target: Path, tiny_source: Path) -> None:
        """init_from added after a from-scratch run began: the checkpoint's weights, vocabulary (and the target rows
        the loss uses) and its empty lineage are kept."""
        scratch = _trainer(tiny_target, "adopt", steps=1)
        scratch.train(progress=False)
        later = _trainer(tiny_target, "adopt", init_from=tiny_source, steps=2)
        assert later.maybe_resume()
        assert torch.equal(later.head.draft_ids, scratch.head.draft_ids)
        assert torch.equal(later.draft_lm_head, scratch.draft_lm_head)
        assert later.vocab_stats == scratch.vocab_stats
        assert later.runs[0].init_from is None

    def test_export_records_the_lineage(self, tiny_target: Path, tiny_source: Path) -> None:
        """The fine-tuned head's manifest names the source's path and manifest sha256; its config has the
        source's shape and its d2t the source's vocabulary."""
        from edge_agent.llm.manifest import manifest_sha256

        trainer = _trainer(tiny_target, "init-export", init_from=tiny_source, steps=1)
        trainer.train(progress=False)
        out = trainer.export(0, tiny_target / "init-exported", name="init-exported")
        manifest = json.loads((out / "manifest.json").read_text())
        assert manifest["source"]["extra"]["init_from"] == {
            "path": str(tiny_source),
            "manifest_sha256": manifest_sha256(tiny_source),
        }
        assert manifest["source"]["extra"]["train"]["init_from"] == str(tiny_source)
        assert json.loads((out / "config.json").read_text()) == json.loads((tiny_source / "config.json").read_text())
        with (
            safe_open(str(out / "model.safetensors"), "pt") as new,
            safe_open(str(tiny_source / "model.safetensors"), "pt") as old,
        ):
            assert torch.equal(new.get_tensor("d2t"), old.get_tensor("d2t"))

    def test_from_scratch_records_no_lineage(self, tiny_target: Path) -> None:
        """Without init_from the manifest says so: init_from is null."""
        trainer = _trainer(tiny_target, "scratch-export", steps=1)
        trainer.train(progress=False)
        out = trainer.export(0, tiny_target / "scratch-exported", name="scratch-exported")
        assert json.loads((out / "manifest.json").read_text())["source"]["extra"]["init_from"] is None

    def test_head_without_manifest_is_named_by_its_weights(self, tiny_target: Path, tmp_path: Path) -> None:
        """A head with no manifest is recorded by the sha256 of its weights file."""
        from edge_agent.llm.manifest import sha256_file

        src = _source_head(tiny_target / "target", tmp_path / "bare")
        (src / "manifest.json").unlink()
        trainer = _trainer(tiny_target, "bare", init_from=src)
        assert trainer.runs[0].init_from == {"path": str(src), "weights_sha256": sha256_file(src / "model.safetensors")}

    def test_another_shape_is_refused_by_name(self, tiny_target: Path, tmp_path: Path) -> None:
        """A plain EAGLE-3 source for a 3.1 run, or a 16-id head for a 32-id run, is refused naming the field."""
        from training.draft.train import TrainError

        plain = _source_head(tiny_target / "target", tmp_path / "plain", fc_norm=False, norm_output=False)
        with pytest.raises(TrainError, match="fc_norm") as refused:
            _trainer(tiny_target, "refused", init_from=plain)
        assert "norm_output" in str(refused.value)
        with pytest.raises(TrainError, match="draft_vocab_size"):
            _trainer(
                tiny_target,
                "refused",
                init_from=_source_head(tiny_target / "target", tmp_path / "v"),
                draft_vocab_size=32,
            )

    def test_missing_or_tampered_source_is_refused(self, tiny_target: Path, tmp_path: Path) -> None:
        """No exported head at the path, or weights that no longer match the source's manifest: TrainError."""
        from training.draft.train import TrainError

        with pytest.raises(TrainError, match="no exported head"):
            _trainer(tiny_target, "missing", init_from=tmp_path / "nowhere")
        src = _source_head(tiny_target / "target", tmp_path / "tampered")
        with open(src / "model.safetensors", "r+b") as fh:
            fh.seek(-1, 2)
            last = fh.read(1)
            fh.seek(-1, 2)
            fh.write(bytes([last[0] ^ 1]))
        with pytest.raises(TrainError, match="model.safetensors: sha256"):
            _trainer(tiny_target, "tampered", init_from=src)


class TestVocabCoverage:
    @settings(max_examples=200)
    @given(
        counts=st.dictionaries(st.integers(0, 63), st.integers(1, 50), max_size=40),
        size=st.integers(1, 64),
    )
    def test_equals_select_vocabs_own_figure(self, counts: dict[int, int], size: int) -> None:
        """For the vocabulary select_vocab picks, the fixed-vocabulary coverage is select_vocab's own figures."""
        from training.draft.train import vocab_coverage

        ids, stats = select_vocab(Counter(counts), size, 64)
        assert vocab_coverage(Counter(counts), ids) == stats

    @settings(max_examples=200)
    @given(
        counts=st.dictionaries(st.integers(0, 63), st.integers(1, 50), max_size=40),
        fallback=st.dictionaries(st.integers(0, 63), st.integers(1, 50), max_size=40),
        prefer=st.lists(st.integers(-5, 80), max_size=40),
        size=st.integers(1, 64),
    )
    def test_answers_then_preferred_then_the_rest(
        self, counts: dict[int, int], fallback: dict[int, int], prefer: list[int], size: int
    ) -> None:
        """Any answers, fallback and preferred ids (repeats and ids outside the vocabulary too): `size` distinct ids
        in range, ascending; no preferred id left out while a non-answer, non-preferred id is in; no answer token
        left out while a non-answer id is in."""
        ids = select_vocab(Counter(counts), size, 64, fallback=Counter(fallback), prefer=prefer)[0].tolist()
        assert ids == sorted(set(ids)) and len(ids) == size and all(0 <= t < 64 for t in ids)
        chosen, wanted = set(ids), {t for t in prefer if 0 <= t < 64}
        if chosen - set(counts):  # a slot beyond the answers was filled
            assert set(counts) <= chosen
        if chosen - set(counts) - wanted:  # a slot beyond answers and preferred ids was filled
            assert wanted <= chosen

    def test_hand_worked(self) -> None:
        """Ids {1, 3} over counts {1: 3, 2: 1, 3: 4}: 7 of 8 answer tokens covered, 3 distinct."""
        from training.draft.train import vocab_coverage

        stats = vocab_coverage(Counter({1: 3, 2: 1, 3: 4}), torch.tensor([1, 3]))
        assert (stats.size, stats.distinct_output_tokens, stats.coverage) == (2, 3, 7 / 8)


# vLLM's checkpoint names for a llama_eagle3 head with fc_norm (model_executor/models/llama_eagle3.py).
VLLM_NAMES = {
    "d2t",
    "t2d",
    "fc.weight",
    "fc_norm.0.weight",
    "fc_norm.1.weight",
    "fc_norm.2.weight",
    "norm.weight",
    "lm_head.weight",
    "midlayer.input_layernorm.weight",
    "midlayer.hidden_norm.weight",
    "midlayer.post_attention_layernorm.weight",
    "midlayer.self_attn.q_proj.weight",
    "midlayer.self_attn.k_proj.weight",
    "midlayer.self_attn.v_proj.weight",
    "midlayer.self_attn.o_proj.weight",
    "midlayer.mlp.gate_proj.weight",
    "midlayer.mlp.up_proj.weight",
    "midlayer.mlp.down_proj.weight",
}


class TestBenchGoals:
    """The goals table BENCHMARKS.md prints: speed only from engines timed side by side, met only at identical
    output."""

    @staticmethod
    def results(identical: int | None) -> dict:
        def run(taus: dict[str, float]) -> dict:
            return {
                "k": 6,
                "identical": {},
                "acceptance": {n: {"tau": t, "per_position": [t - 1]} for n, t in taus.items()},
            }

        results = {
            "config": {"prompts_per_slice": 4, "max_tokens": 64, "ks": [6]},
            "heads": {
                "eagle31": {"runs": [run({"test": 3.2, "perturbed": 3.0})]},
                "eagle3": {"runs": [run({"test": 2.5, "perturbed": 2.0})]},
            },
        }
        if identical is not None:
            results["speed_interleaved"] = {
                "prompts": 8,
                "tokens_per_s": {"none": 50.0, "k=2": 70.0, "k=3": 105.0},
                "speedup": {"k=2": 1.4, "k=3": 2.1},
                "speedup_by_slice": {"k=2": {"test": 1.5, "plant": 1.3}, "k=3": {"test": 2.3, "plant": 1.9}},
                "identical": {"none": 8, "k=2": 8, "k=3": identical},
            }
        return results

    def test_fastest_k_meets_the_speed_goal_only_with_identical_output(self) -> None:
        from training.draft.bench import markdown

        met = markdown(self.results(identical=8), "Recipe: r.")
        assert (
            "| speedup ≥ 2.0× at identical output | 2.10× (k=3, test+plant, interleaved, identical=yes; "
            "test 2.30×; plant 1.90×) | yes |"
        ) in met
        assert "| k=3 | 105.0 | 2.10× | 2.30× | 1.90× | 8/8 |" in met
        assert "| τ(3.1)/τ(3) ≥ 1.2 on perturbed templates | 1.50 | yes |" in met
        differs = markdown(self.results(identical=7), "Recipe: r.")
        assert "identical=NO; test 2.30×; plant 1.90×) | no |" in differs

    def test_decode_rate_is_a_goal_row_of_its_own_beside_end_to_end(self) -> None:
        """With first tokens timed apart, the table and the goal are stated both ways, each judged on its own."""
        from training.draft.bench import markdown

        results = self.results(identical=8)
        results["speed_interleaved"] |= {
            "eager": True,
            "first_token_s": {"none": 0.4, "k=2": 0.45, "k=3": 0.46},
            "decode_tokens_per_s": {"none": 45.0, "k=2": 80.0, "k=3": 99.0},
            "decode_speedup": {"k=2": 1.78, "k=3": 2.2},
            "decode_speedup_by_slice": {"k=2": {"test": 1.8, "plant": 1.76}, "k=3": {"test": 2.4, "plant": 2.0}},
        }
        results["speed_interleaved"]["speedup"] = {"k=2": 1.4, "k=3": 1.9}
        text = markdown(results, "Recipe: r.")
        assert "single stream, eager;" in text  # eager is no longer the agent's default
        results["speed_interleaved"]["eager"] = False
        assert "single stream, compiled (the agent's default);" in markdown(results, "Recipe: r.")
        assert (
            "| speedup ≥ 2.0× at identical output, end to end | 1.90× (k=3, test+plant, interleaved, identical=yes; "
            "test 2.30×; plant 1.90×) | no |"
        ) in text
        assert (
            "| speedup ≥ 2.0× at identical output, decode rate | 2.20× (k=3, test+plant, interleaved, "
            "identical=yes; test 2.40×; plant 2.00×) | yes |"
        ) in text
        assert "| k=3 | 99.0 | 2.20× | 2.40× | 2.00× | 8/8 |" in text
        assert "(first token, mean over all prompts: none 0.40 s, k=2 0.45 s, k=3 0.46 s)" in text
        assert "report-section prompts" not in text  # no report slice timed

    def test_the_report_section_goal_reads_the_report_slice_alone(self) -> None:
        """With the report slice timed, its own rows: the k fastest on it, met only at identical output, named for
        what it times (section prompts, answers cut at the bench's max_tokens), not whole reports."""
        from training.draft.bench import markdown

        results = self.results(identical=8)
        inter = results["speed_interleaved"]
        inter |= {
            "slices": ["test", "plant", "report"],
            "eager": True,
            "first_token_s": {"none": 0.4, "k=2": 0.45, "k=3": 0.46},
            "decode_tokens_per_s": {"none": 45.0, "k=2": 80.0, "k=3": 99.0},
            "decode_speedup": {"k=2": 1.78, "k=3": 2.2},
        }
        inter["speedup_by_slice"] = {
            "k=2": {"test": 1.5, "plant": 1.3, "report": 2.05},
            "k=3": {"test": 2.3, "plant": 1.9, "report": 1.95},
        }
        inter["decode_speedup_by_slice"] = {
            "k=2": {"test": 1.8, "plant": 1.7, "report": 2.9},
            "k=3": {"test": 2.4, "plant": 2.0, "report": 3.1},
        }
        text = markdown(results, "Recipe: r.")
        assert (
            "| speedup ≥ 2.0× on report-section prompts (answers cut at 64 tokens) at identical output, end to end "
            "| 2.05× (k=2, report slice, "
            "interleaved, identical=yes) | yes |"
        ) in text
        assert (
            "| speedup ≥ 2.0× on report-section prompts (answers cut at 64 tokens) at identical output, decode rate "
            "| 3.10× (k=3, report slice, "
            "interleaved, identical=yes) | yes |"
        ) in text
        inter["identical"]["k=2"] = 7
        assert "2.05× (k=2, report slice, interleaved, identical=NO) | no |" in markdown(results, "Recipe: r.")

    def test_no_speed_figure_without_the_side_by_side_run(self) -> None:
        from training.draft.bench import markdown

        text = markdown(self.results(identical=None), "Recipe: r.")
        assert "| speedup ≥ 2.0× at identical output | not measured (`speed_ks` empty) | — |" in text
        assert "tok/s" not in text

    def test_the_recipe_line_is_read_from_the_recipe(self) -> None:
        """The specialist's recipe says what it is (a fine-tune on report and general answers), not the base's."""
        from training.draft.bench import recipe_line
        from training.draft.recipe import load_recipe

        config = Path(__file__).resolve().parents[1] / "configs" / "draft-narrator.toml"
        line = recipe_line(load_recipe(config), Path("configs/draft-narrator.toml"))
        assert line == (
            "Recipe: `python -m training draft data|train|export --config configs/draft-narrator.toml` (on-policy "
            "answers of the target `models/default` to 1536 prompts of the corpus's train split and 768 report-section "
            "prompts of the narrator's training seeds; eagle31 (EAGLE-3.1) fine-tuned from "
            "assets/eagle31-narrator-smollm2-135m-h1, 800 steps × 4 samples, seed 0; exported in vLLM's llama_eagle3 "
            "format)."
        )


class TestExport:
    def test_weight_names_dtypes_and_shapes(self, tmp_path: Path) -> None:
        """Exactly vLLM's names (no embed_tokens: vLLM shares the target's), bf16 floats, int64 d2t, bool t2d."""
        out = export_draft(tiny_head(), tmp_path / "head")
        with safe_open(str(out / "model.safetensors"), "pt") as f:
            names = set(f.keys())
            tensors = {n: f.get_tensor(n) for n in names}
        assert names == VLLM_NAMES
        assert tensors["d2t"].dtype == torch.int64 and tensors["t2d"].dtype == torch.bool
        assert tensors["fc.weight"].dtype == torch.bfloat16
        assert tensors["fc.weight"].shape == (32, 96)
        assert tensors["midlayer.self_attn.q_proj.weight"].shape == (32, 64)  # 2H input
        assert tensors["lm_head.weight"].shape == (16, 32)

    def test_config_json_for_vllm(self, tmp_path: Path) -> None:
        """config.json names the architecture vLLM registers for llama_eagle3 and carries the 3.1 switches."""
        head = tiny_head(fc_norm=True, norm_output=False)
        cfg = json.loads((export_draft(head, tmp_path / "head") / "config.json").read_text())
        assert cfg["architectures"] == ["LlamaForCausalLMEagle3"]
        assert (cfg["fc_norm"], cfg["norm_output"]) == (True, False)
        assert cfg["draft_vocab_size"] == 16 and cfg["vocab_size"] == 128
        assert cfg["num_hidden_layers"] == 1
        assert cfg["eagle_config"]["eagle_aux_hidden_state_layer_ids"] == [2, 4, 5]

    def test_architecture_is_registered_in_vllm(self) -> None:
        """vLLM's model registry maps the exported architecture to its llama_eagle3 implementation."""
        from vllm.model_executor.models.registry import _SPECULATIVE_DECODING_MODELS

        assert _SPECULATIVE_DECODING_MODELS["LlamaForCausalLMEagle3"] == ("llama_eagle3", "Eagle3LlamaForCausalLM")

    def test_manifest_hashes_the_weights(self, tmp_path: Path) -> None:
        """The manifest lists the sha256 of the weights and the training record."""
        import hashlib

        out = export_draft(tiny_head(), tmp_path / "head")
        manifest = json.loads((out / "manifest.json").read_text())
        digest = hashlib.sha256((out / "model.safetensors").read_bytes()).hexdigest()
        assert manifest["kind"] == "draft"
        assert manifest["files"]["model.safetensors"]["sha256"] == digest
        assert set(manifest["source"]) >= {"data_sha256", "seed", "steps", "code_version"}

    def test_round_trip(self, tmp_path: Path) -> None:
        """An exported head loads back with the same drafts (bf16 rounding aside)."""
        head = tiny_head()
        emb = head.embed_tokens.weight.detach().clone()
        back = load_exported(export_draft(head, tmp_path / "head", dtype="float32"), emb)
        ids, hidden, pos = torch.randint(0, 128, (1, 5)), torch.randn(1, 5, 32), torch.arange(5)[None]
        assert torch.allclose(head.step(ids, hidden, pos)[0], back.step(ids, hidden, pos)[0], atol=1e-6)
        assert torch.equal(back.d2t, head.d2t)


MODEL_DIR = Path(__file__).resolve().parents[1] / "models" / "default"


@pytest.mark.engine
@pytest.mark.slow
@pytest.mark.skipif(not (MODEL_DIR / "manifest.json").exists(), reason="prepared model missing: make model")
def test_vllm_drafts_with_exported_random_head_and_keeps_greedy_output(tmp_path: Path) -> None:
    """vLLM loads an exported (random) head for the real target, drafts with it, and greedy output is unchanged."""
    from transformers import AutoConfig

    from training.draft import corpus
    from training.draft.data import generate, open_vllm

    torch.manual_seed(0)
    config = DraftConfig.for_target(AutoConfig.from_pretrained(MODEL_DIR), draft_vocab_size=1024)
    head = Eagle3Draft(config)
    head.set_vocab(torch.arange(1024))
    head_dir = export_draft(head, tmp_path / "head")
    prompts = corpus.build("test", 2)
    plain = open_vllm(MODEL_DIR, max_model_len=1024)
    reference = {p.id: out for p, _, out in generate(plain, prompts, 24)}
    del plain
    spec = open_vllm(
        MODEL_DIR,
        max_model_len=1024,
        speculative={"method": "eagle3", "model": str(head_dir), "num_speculative_tokens": 2},
    )
    drafted = {p.id: out for p, _, out in generate(spec, prompts, 24)}
    drafts = sum(m.value for m in spec.get_metrics() if m.name == "vllm:spec_decode_num_drafts")
    assert drafts > 0
    assert drafted == reference
