"""Train a draft head with the training-time test (EAGLE-3): unroll K draft steps on the head's own states.

Per sample (prompt + the target's own greedy answer, token ids `x[0..S-1]`):
- the target (transformers, frozen) gives the captured states `aux[t]` and its next-token logits `z[t]`;
- step 0, index t: input token x[t+1], state fc(aux[t]), position t → distribution of x[t+2], i.e. softmax(z[t+1]);
- step j, index t: input token x[t+1+j], state = the head's own output of step j-1 at t, position t+j → z[t+1+j].
  Attention at step j sees step-0 keys at indices ≤ t (what vLLM's first pass writes from target states) and the
  step-1..j keys at index t only (the head's own earlier drafts for that position) — the inference-time cache.
Loss at step j: cross-entropy of the head against softmax(z) restricted to the draft vocabulary, on answer positions
whose target token is in the draft vocabulary; steps weighted `decay**j`. Embeddings stay frozen (vLLM swaps in the
target's). Accuracy per step is counted over all answer positions: a target token outside the draft vocabulary is a
miss, as it is at inference.

`init_from` fine-tunes an exported head instead (e.g. the shipped head, for a target whose weights moved): its
weights and its draft vocabulary are kept, so the exported config keeps its shape; the checkpoint and the export
record where it came from (path and manifest sha256).

The settings are `train_config.TrainConfig`; the training-time test's mask, loss and per-step counts are in `ttt`, and
what an `init_from` head brings (its lineage, its vocabulary's coverage) in `init_from`.
"""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

import structlog
import torch

from training.draft.data import Sample, data_sha256, read_samples
from training.draft.export import ExportError, TrainingRecord, export_draft, load_exported
from training.draft.init_from import head_lineage, vocab_coverage
from training.draft.model import DraftConfig, Eagle3Draft
from training.draft.train_config import TrainConfig
from training.draft.ttt import NO_STATS, Features, StepStats, Targets, restricted_loss, step_weights, ttt_mask
from training.draft.vocab import count_tokens, select_vocab
from training.trainer import TrainError, cosine_lr, train_device

log = structlog.get_logger(__name__).bind(component="draft")

CHECKPOINT = "checkpoint.pt"


class HeadRun:
    """One head being trained: its config (switches, work dir), module, optimizer, step, history, and the exported
    head it started from (None: from scratch)."""

    def __init__(self, config: TrainConfig, head: Eagle3Draft, init_from: dict[str, str] | None = None) -> None:
        self.config, self.head, self.init_from = config, head, init_from
        self.optimizer = torch.optim.AdamW(head.trainable_parameters(), lr=config.lr, weight_decay=config.weight_decay)
        self.step = 0
        self.history: list[dict[str, float]] = []

    @property
    def name(self) -> str:
        return "3.1" if (self.config.fc_norm or self.config.norm_output) else "3"


_SHARED_EXCLUDE = {"fc_norm", "norm_output", "work_dir"}


class Trainer:
    """Owns the frozen target and one or more heads trained on exactly the same samples in the same order.

    Several heads (EAGLE-3.1 and plain EAGLE-3) share each target forward pass: the comparison is on identical
    data, steps and seed, and the target's cost is paid once.
    """

    def __init__(self, configs: TrainConfig | list[TrainConfig], model_dir: Path) -> None:
        from transformers import AutoModelForCausalLM

        configs = [configs] if isinstance(configs, TrainConfig) else list(configs)
        shared = configs[0].model_dump(exclude=_SHARED_EXCLUDE)
        for other in configs[1:]:
            if other.model_dump(exclude=_SHARED_EXCLUDE) != shared:
                raise TrainError("heads trained together must share every setting but fc_norm, norm_output, work_dir")
        config = self.config = configs[0]
        if config.threads:
            torch.set_num_threads(config.threads)
        self.dtype = torch.bfloat16 if config.dtype == "bfloat16" else torch.float32
        if not config.data.exists():
            raise TrainError(f"{config.data}: no training data; run `python -m training draft data` first")
        self.samples = [s for s in read_samples(config.data) if s.output_ids]
        if not self.samples:
            raise TrainError(f"{config.data}: no samples with an answer")
        self.data_sha256 = data_sha256(config.data)
        self.device = train_device(config.device)
        target = AutoModelForCausalLM.from_pretrained(str(model_dir), dtype=self.dtype)
        # Moved through nn.Module.to (in place; the same move for an unquantised model): transformers wraps
        # `PreTrainedModel.to` with functools.wraps over an unbound method, a signature mypy cannot check.
        torch.nn.Module.to(target, self.device)
        self.target = target.eval()
        self.target.requires_grad_(False)
        self.model_dir = model_dir
        self._answer_counts = count_tokens(s.output_ids for s in self.samples)
        source, lineage = self._load_source(config.init_from) if config.init_from else (None, None)
        if source is None or config.reselect_vocab:
            ids, self.vocab_stats = select_vocab(
                self._answer_counts,
                config.draft_vocab_size,
                int(self.target.config.vocab_size),
                fallback=count_tokens(s.prompt_ids for s in self.samples),
                prefer=source.draft_ids.tolist() if source is not None else (),
            )
        else:
            # The source's vocabulary, not one re-selected from this data: the head keeps its shape and meaning.
            ids, self.vocab_stats = source.draft_ids, vocab_coverage(self._answer_counts, source.draft_ids)
        log.info("draft.vocab", init_from=lineage, **self.vocab_stats.model_dump())
        self._set_draft_lm_head(ids)
        self._cache: dict[int, Features] = {}
        self._cache_bytes = 0
        self.runs: list[HeadRun] = []
        for c in configs:
            draft_cfg = DraftConfig.for_target(
                self.target.config, draft_vocab_size=c.draft_vocab_size, fc_norm=c.fc_norm, norm_output=c.norm_output
            )
            torch.manual_seed(c.seed)  # same seed → the heads start from the same weights where they overlap
            head = Eagle3Draft(draft_cfg)
            if source is None:
                self._init_head(head, ids)
            else:
                self._copy_source(head, source, c.init_from)
                if c.reselect_vocab:
                    self._move_vocab(head, ids)
            self.runs.append(HeadRun(c, head.to(self.device), lineage))

    @property
    def head(self) -> Eagle3Draft:
        return self.runs[0].head

    @property
    def step(self) -> int:
        return min(r.step for r in self.runs)

    @property
    def history(self) -> list[dict[str, float]]:
        return self.runs[0].history

    def _set_draft_lm_head(self, ids: torch.Tensor) -> None:
        """The target's output rows for the draft vocabulary: its logits restricted to what the heads can draft."""
        self.vocab_ids = ids.cpu()  # [draft_vocab] target ids, ascending
        self.draft_lm_head = self.target.get_output_embeddings().weight[ids.to(self.device)].detach()

    def _load_source(self, path: Path) -> tuple[Eagle3Draft, dict[str, str]]:
        """The exported head at `path` (float32, the target's embeddings) and its lineage."""
        if not (path / "config.json").exists():
            raise TrainError(f"init_from {path}: no exported head there (config.json missing)")
        lineage = head_lineage(path)
        embed = self.target.get_input_embeddings().weight.detach().cpu()
        try:
            source = load_exported(path, embed)
        except (ExportError, KeyError, OSError, RuntimeError) as exc:
            raise TrainError(f"init_from {path}: cannot load the head: {exc}") from exc
        return source, lineage

    @staticmethod
    def _copy_source(head: Eagle3Draft, source: Eagle3Draft, path: Path | None) -> None:
        """Start `head` as `source`, which must have exactly its shape (target, vocabularies, 3.1 switches)."""
        want, have = head.config.model_dump(), source.config.model_dump()
        differ = {k: {"init_from": have[k], "this run": want[k]} for k in want if have[k] != want[k]}
        if differ:
            raise TrainError(f"init_from {path}: the head's config differs from this run's: {differ}")
        head.load_state_dict(source.state_dict())

    def _move_vocab(self, head: Eagle3Draft, ids: torch.Tensor) -> None:
        """Give `head` (its source's copy) the vocabulary `ids`: the lm_head rows of tokens it could already draft are
        kept, the others start as the target's output rows for them."""
        old = head.draft_ids.cpu()
        kept = head.t2d.cpu()[ids]  # [draft_vocab] this id was in the old vocabulary
        rows = self.target.get_output_embeddings().weight.detach()[ids.to(self.device)].float().cpu()
        with torch.no_grad():
            source_rows = head.lm_head.weight.detach().cpu()
            rows[kept] = source_rows[torch.searchsorted(old, ids[kept])]
            head.lm_head.weight.copy_(rows)
        head.set_vocab(ids)

    def _init_head(self, head: Eagle3Draft, ids: torch.Tensor) -> None:
        """Vocabulary from the target's answers; lm_head and final norm start as the target's (restricted) ones."""
        head.set_vocab(ids)
        with torch.no_grad():
            for module in head.modules():
                if isinstance(module, torch.nn.Linear):
                    torch.nn.init.normal_(module.weight, std=0.02)  # Llama's initializer_range
            head.embed_tokens.weight.copy_(self.target.get_input_embeddings().weight.float())
            head.lm_head.weight.copy_(self.target.get_output_embeddings().weight[ids].float())
            head.norm.weight.copy_(self.target.model.norm.weight.float())

    # --- checkpoints -------------------------------------------------------------------------------------------
    def save_checkpoint(self) -> None:
        for run in self.runs:
            run.config.work_dir.mkdir(parents=True, exist_ok=True)
            state = {
                "step": run.step,
                "head": {k: v for k, v in run.head.state_dict().items() if not k.startswith("embed_tokens")},
                "optimizer": run.optimizer.state_dict(),
                "history": run.history,
                "data_sha256": self.data_sha256,
                "config": run.config.model_dump(mode="json"),
                "init_from": run.init_from,
            }
            tmp = run.config.work_dir / (CHECKPOINT + ".tmp")
            torch.save(state, tmp)
            tmp.replace(run.config.work_dir / CHECKPOINT)

    def maybe_resume(self) -> bool:
        """Load every head's checkpoint; all or none must exist, all at the same step."""
        paths = [r.config.work_dir / CHECKPOINT for r in self.runs]
        present = [p.exists() for p in paths]
        if not any(present):
            return False
        if not all(present):
            found = [str(p) for p, e in zip(paths, present, strict=True) if e]
            raise TrainError(f"checkpoints exist for only some heads: {found}")
        for run, path in zip(self.runs, paths, strict=True):
            state = torch.load(path, map_location=self.device, weights_only=False)
            if state["data_sha256"] != self.data_sha256:
                raise TrainError(f"{path} was trained on other data (sha256 {state['data_sha256'][:12]}…); remove it")
            run.head.load_state_dict(state["head"], strict=False)
            run.optimizer.load_state_dict(state["optimizer"])
            run.step, run.history = state["step"], state["history"]
            # The checkpoint wins over init_from: its lineage (None before init_from existed) and its vocabulary.
            if state.get("init_from") != run.init_from:
                log.warning("draft.train.resume_lineage", checkpoint=state.get("init_from"), configured=run.init_from)
            run.init_from = state.get("init_from")
        if len({r.step for r in self.runs}) != 1:
            raise TrainError(f"heads' checkpoints are at different steps {[r.step for r in self.runs]}")
        ids = self.head.draft_ids
        if any(not torch.equal(r.head.draft_ids, ids) for r in self.runs):
            raise TrainError("heads' checkpoints have different draft vocabularies")
        if not torch.equal(ids.cpu(), self.vocab_ids):
            self._set_draft_lm_head(ids)
            self.vocab_stats = vocab_coverage(self._answer_counts, ids)
        log.info("draft.train.resume", step=self.step, init_from=self.runs[0].init_from)
        return True

    # --- one sample --------------------------------------------------------------------------------------------
    def _order(self) -> list[int]:
        """Sample order for the whole run: seeded epochs of shuffled indices, so a resume continues exactly."""
        needed = self.config.steps * self.config.samples_per_step
        order: list[int] = []
        epoch = 0
        while len(order) < needed:
            idx = list(range(len(self.samples)))
            random.Random(self.config.seed * 1_000_003 + epoch).shuffle(idx)
            order += idx
            epoch += 1
        return order

    def _sequence(self, sample: Sample) -> tuple[torch.Tensor, int]:
        """Token ids of prompt + answer (the prompt cut from the left to fit max_seq_len) and the prompt's length."""
        cfg = self.config
        keep = cfg.max_seq_len - len(sample.output_ids)
        prompt = sample.prompt_ids[-keep:] if keep > 0 else sample.prompt_ids[:1]
        ids = torch.tensor(prompt + sample.output_ids, device=self.device)[: cfg.max_seq_len]
        return ids, len(prompt)

    def features(self, sample: Sample) -> Features:
        """Run the frozen target once over prompt + answer."""
        ids, p_len = self._sequence(sample)
        with torch.no_grad():
            out = self.target.model(ids[None], output_hidden_states=True)
            aux = torch.cat([out.hidden_states[i] for i in self.head.config.aux_layer_ids], dim=-1)  # [1, S, 3H]
            # only where a loss is taken: positions p_len-1 .. S-1 predict the answer tokens (and after)
            last = out.last_hidden_state[0, p_len - 1 :]
            top = self.target.lm_head(last).argmax(-1)
        return Features(ids, p_len, aux, last, top)

    def batch_features(self, samples: list[Sample]) -> list[Features]:
        """`features` of several samples from one target pass: ids right-padded, padding masked out of attention.

        Right padding keeps each sample's positions 0..S-1, so under the causal mask its states are those of its
        own pass (up to floating-point summation order); each is sliced back to its length and copied out of the
        batch, so a cached sample holds (and is charged for) its own states only.
        """
        seqs = [self._sequence(s) for s in samples]
        ids = torch.zeros(len(seqs), max(seq.numel() for seq, _ in seqs), dtype=torch.long, device=self.device)
        mask = torch.zeros_like(ids)  # [B, W]: 1 = a real token
        for row, (seq, _) in enumerate(seqs):
            ids[row, : seq.numel()], mask[row, : seq.numel()] = seq, 1
        feats = []
        with torch.no_grad():
            out = self.target.model(ids, attention_mask=mask, output_hidden_states=True)
            aux = torch.cat([out.hidden_states[i] for i in self.head.config.aux_layer_ids], dim=-1)  # [B, W, 3H]
            for row, (seq, p_len) in enumerate(seqs):
                last = out.last_hidden_state[row, p_len - 1 : seq.numel()].clone()
                top = self.target.lm_head(last).argmax(-1)
                feats.append(Features(seq, p_len, aux[row : row + 1, : seq.numel()].clone(), last, top))
        return feats

    def step_features(self, indices: list[int]) -> list[Features]:
        """Features of one step's samples: cached ones from memory, the others captured `target_batch` per target
        pass and kept while the cache is under `feature_cache_mb`."""
        batch = self.config.target_batch
        missing = [i for i in dict.fromkeys(indices) if i not in self._cache]
        fresh: dict[int, Features] = {}
        for lo in range(0, len(missing), batch):
            chunk = missing[lo : lo + batch]
            # a lone sample takes the unpadded pass: target_batch = 1 is exactly the one-at-a-time path
            captured = (
                [self.features(self.samples[chunk[0]])]
                if len(chunk) == 1
                else self.batch_features([self.samples[i] for i in chunk])
            )
            for index, feats in zip(chunk, captured, strict=True):
                fresh[index] = feats
                if self._cache_bytes + feats.nbytes() <= self.config.feature_cache_mb * 2**20:
                    self._cache[index] = feats
                    self._cache_bytes += feats.nbytes()
        return [fresh[i] if i in fresh else self._cache[i] for i in indices]

    def sample_loss(self, sample: Sample, index: int = 0) -> tuple[torch.Tensor, list[StepStats]]:
        feats = self.features(sample)
        return self.head_loss(self.runs[index].head, feats, feats.targets(self.draft_lm_head))

    def head_loss(self, head: Eagle3Draft, feats: Features, targets: Targets) -> tuple[torch.Tensor, list[StepStats]]:
        """Weighted TTT loss of one sample, and the figures of each unrolled step."""
        cfg = self.config
        ids, p_len, s = feats.ids, feats.p_len, feats.ids.numel()
        n = s - 1  # indices t = 0..S-2 have an input token x[t+1]
        # Steps ≥ 1 only matter where some step lands on an answer position: index ≥ p_len - 1 - K.
        offset = max(0, min(n - 1, p_len - 1 - cfg.ttt_steps))
        weights = step_weights(cfg.ttt_steps, cfg.step_decay)
        draft_ids = head.draft_ids
        total = torch.zeros((), device=self.device)
        stats: list[StepStats] = []
        past: list[tuple[torch.Tensor, torch.Tensor]] = []
        with torch.autocast(self.device.type, dtype=self.dtype, enabled=self.dtype != torch.float32):
            hidden = head.combine(feats.aux[:, :n])  # [1, n, H]
            for j in range(cfg.ttt_steps):
                lo = 0 if j == 0 else offset
                t = torch.arange(lo, n, device=self.device)  # query indices of this step
                src = t + 1 + j  # input token index == target-logits index
                valid = src <= s - 1
                tok = ids[src.clamp(max=s - 1)][None]  # [1, n_q]
                pos = (t + j)[None]
                mask = None if j == 0 else ttt_mask(n, j, offset, self.device)
                if j == 1:  # from step 1 on, queries start at `offset`; trim the step-0 state to match
                    hidden = hidden[:, offset:]
                out_h, hidden, kv = head.step(tok, hidden, pos, past, mask)
                past.append(kv)  # step-0 keys cover all n indices; later steps' keys only the queries from `offset`
                answer = valid & (src >= p_len - 1)
                if answer.any():
                    sel = answer.nonzero().squeeze(-1)
                    target_probs, target_top = targets.at(src[sel])
                    ce, n_in, hits = restricted_loss(
                        head.logits(out_h[0, sel]), target_probs, target_top, draft_ids, head.t2d
                    )
                    total = total + weights[j] * ce / max(int(answer.sum()), 1)
                    stats.append(StepStats(float(ce.detach()), float(n_in), float(hits), float(answer.sum())))
                else:
                    stats.append(NO_STATS)
        return total, stats

    # --- loop --------------------------------------------------------------------------------------------------
    def lr_at(self, step: int) -> float:
        return cosine_lr(step, self.config.lr, self.config.warmup_frac, self.config.steps)

    def train(self, progress: bool = True) -> None:
        from tqdm import tqdm

        cfg = self.config
        order = self._order()
        label = "+".join(r.name for r in self.runs)
        bar = tqdm(total=cfg.steps, initial=self.step, desc=f"draft {label}", disable=not progress, dynamic_ncols=True)
        for run in self.runs:
            run.head.train()
        started, tokens = time.monotonic(), 0
        while self.step < cfg.steps:
            step = self.step
            aggs = [[NO_STATS] * cfg.ttt_steps for _ in self.runs]
            losses = [0.0] * len(self.runs)
            for run in self.runs:
                for group in run.optimizer.param_groups:
                    group["lr"] = self.lr_at(step)
                run.optimizer.zero_grad(set_to_none=True)
            first = step * cfg.samples_per_step
            for feats in self.step_features(order[first : first + cfg.samples_per_step]):
                targets = feats.targets(self.draft_lm_head)  # frozen target states: no graph to keep
                for i, run in enumerate(self.runs):
                    loss, stats = self.head_loss(run.head, feats, targets)
                    (loss / cfg.samples_per_step).backward()
                    losses[i] += float(loss.detach())
                    aggs[i] = [a + st for a, st in zip(aggs[i], stats, strict=True)]
                tokens += int(stats[0].positions)  # answer positions of this sample
            shown = []
            for i, run in enumerate(self.runs):
                torch.nn.utils.clip_grad_norm_(run.head.trainable_parameters(), cfg.grad_clip)
                run.optimizer.step()
                run.step += 1
                acc = [a.accuracy for a in aggs[i]]
                record = {
                    "step": run.step,
                    "loss": losses[i] / cfg.samples_per_step,
                    **{f"acc{j}": acc[j] for j in range(len(acc))},
                }
                run.history.append(record)
                shown.append(f"{run.name}: loss {record['loss']:.2f} acc " + " ".join(f"{a:.2f}" for a in acc))
            rate = tokens / max(time.monotonic() - started, 1e-9)
            bar.set_postfix_str(" | ".join(shown) + f" | {rate:.0f} tok/s")
            bar.update(1)
            if self.step % cfg.checkpoint_every == 0 or self.step == cfg.steps:
                self.save_checkpoint()
        bar.close()

    def export(self, index: int, out_dir: Path, name: str, dtype: str = "bfloat16") -> Path:
        run = self.runs[index]
        cfg = run.config
        record = TrainingRecord(
            target=self._target_name(),
            data_sha256=self.data_sha256,
            seed=cfg.seed,
            steps=run.step,
            variant="eagle3.1" if (cfg.fc_norm or cfg.norm_output) else "eagle3",
            extra={
                "train": cfg.model_dump(mode="json", exclude={"work_dir", "threads", "data"}),
                "samples": len(self.samples),
                "vocab": self.vocab_stats.model_dump(),
                "final": run.history[-1] if run.history else {},
                # the exported head this one was fine-tuned from: path and manifest (or weights) sha256; None = scratch
                "init_from": run.init_from,
            },
        )
        return export_draft(run.head, out_dir, record=record, dtype=dtype, name=name)

    def _target_name(self) -> str:
        manifest = self.model_dir / "manifest.json"
        if manifest.exists():
            import hashlib

            return "manifest-sha256:" + hashlib.sha256(manifest.read_bytes()).hexdigest()
        return str(self.model_dir)

    def write_history(self) -> None:
        for run in self.runs:
            (run.config.work_dir / "history.jsonl").write_text("\n".join(json.dumps(r) for r in run.history) + "\n")
