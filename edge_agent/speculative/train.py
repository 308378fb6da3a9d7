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
"""

from __future__ import annotations

import json
import math
import random
import time
from pathlib import Path
from typing import Literal

import structlog
import torch
import torch.nn.functional as F
from pydantic import BaseModel, ConfigDict, Field

from edge_agent.speculative.data import Sample, data_sha256, read_samples
from edge_agent.speculative.export import TrainingRecord, export_draft
from edge_agent.speculative.model import DraftConfig, Eagle3Draft
from edge_agent.speculative.vocab import count_tokens, select_vocab

log = structlog.get_logger(__name__).bind(component="draft")

CHECKPOINT = "checkpoint.pt"


class TrainError(Exception):
    """Training could not start or continue."""


class TrainConfig(BaseModel):
    """`[train]` of configs/draft.toml."""

    model_config = ConfigDict(extra="forbid")

    data: Path = Path("var/draft/train.jsonl")
    work_dir: Path = Path("var/draft/eagle31")
    fc_norm: bool = True
    norm_output: bool = True
    # 8192 ids cover ~99 % of the target's answer tokens here and keep the bf16 head under 20 MB.
    draft_vocab_size: int = Field(8192, ge=16)
    # 7 unrolled steps: deeper than the k ≤ 6 drafted at inference, so the last drafted position is trained too.
    ttt_steps: int = Field(7, ge=1)
    # 0.8 per step: later steps still matter (they set τ at large k) without dominating the easy early ones.
    step_decay: float = Field(0.8, gt=0, le=1)
    lr: float = Field(5e-4, gt=0)
    # 5 % warm-up then cosine to 10 %: the usual AdamW schedule for a freshly initialised layer.
    warmup_frac: float = Field(0.05, ge=0, lt=1)
    weight_decay: float = 0.0
    grad_clip: float = Field(0.5, gt=0)
    samples_per_step: int = Field(4, ge=1)
    steps: int = Field(600, ge=1)
    # 1024 tokens of prompt + answer: the answer is kept whole and the prompt cut from the left.
    max_seq_len: int = Field(1024, ge=16)
    seed: int = 0
    dtype: Literal["bfloat16", "float32"] = "bfloat16"
    threads: int | None = Field(None, ge=1)
    checkpoint_every: int = Field(50, ge=1)


def ttt_mask(length: int, step: int, offset: int = 0, device: torch.device | None = None) -> torch.Tensor:
    """Attention mask of draft step `step`: [length - offset, length + step*(length - offset)], True = may attend.

    Queries are indices offset..length-1. Keys: step-0 keys at all `length` indices (causal: index ≤ query), then
    for each step 1..step one key per query index (the same index only).
    """
    q = torch.arange(offset, length, device=device)
    causal = torch.arange(length, device=device)[None, :] <= q[:, None]  # [n_q, length]
    diag = torch.eye(length - offset, dtype=torch.bool, device=device)  # [n_q, n_q]
    return torch.cat([causal] + [diag] * step, dim=1)


def step_weights(steps: int, decay: float) -> list[float]:
    return [decay**j for j in range(steps)]


def restricted_loss(
    draft_logits: torch.Tensor,  # [n, draft_vocab]
    target_logits: torch.Tensor,  # [n, vocab]
    draft_ids: torch.Tensor,  # [draft_vocab] target id of each draft id
    t2d: torch.Tensor,  # [vocab] bool
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(summed soft cross-entropy over in-vocab positions, their count, number of greedy hits)."""
    target_top = target_logits.argmax(-1)  # [n]
    in_vocab = t2d[target_top]  # [n] target's choice is draftable
    p = torch.softmax(target_logits[:, draft_ids].float(), dim=-1)  # [n, draft_vocab]
    logq = torch.log_softmax(draft_logits.float(), dim=-1)
    ce = -(p * logq).sum(-1)  # [n]
    hits = draft_ids[draft_logits.argmax(-1)] == target_top
    return (ce * in_vocab).sum(), in_vocab.sum(), hits.sum()


class Trainer:
    """Owns the frozen target, the head, the optimizer and the checkpoint directory."""

    def __init__(self, config: TrainConfig, model_dir: Path) -> None:
        from transformers import AutoModelForCausalLM

        self.config = config
        if config.threads:
            torch.set_num_threads(config.threads)
        self.dtype = torch.bfloat16 if config.dtype == "bfloat16" else torch.float32
        if not config.data.exists():
            raise TrainError(f"{config.data}: no training data; run `edge-agent draft data` first")
        self.samples = [s for s in read_samples(config.data) if s.output_ids]
        if not self.samples:
            raise TrainError(f"{config.data}: no samples with an answer")
        self.data_sha256 = data_sha256(config.data)
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.target = AutoModelForCausalLM.from_pretrained(str(model_dir), dtype=self.dtype).to(self.device).eval()
        self.target.requires_grad_(False)
        self.model_dir = model_dir
        draft_cfg = DraftConfig.for_target(
            self.target.config,
            draft_vocab_size=config.draft_vocab_size,
            fc_norm=config.fc_norm,
            norm_output=config.norm_output,
        )
        torch.manual_seed(config.seed)
        self.head = Eagle3Draft(draft_cfg)
        self._init_head()
        self.head.to(self.device)
        self.optimizer = torch.optim.AdamW(self.head.trainable_parameters(), lr=config.lr, weight_decay=config.weight_decay)
        self.step = 0
        self.history: list[dict[str, float]] = []

    def _init_head(self) -> None:
        """Vocabulary from the target's answers; lm_head and final norm start as the target's (restricted) ones."""
        ids, stats = select_vocab(
            count_tokens(s.output_ids for s in self.samples), self.config.draft_vocab_size, self.head.config.vocab_size
        )
        self.vocab_stats = stats
        log.info("draft.vocab", **stats.model_dump())
        self.head.set_vocab(ids)
        with torch.no_grad():
            for module in self.head.modules():
                if isinstance(module, torch.nn.Linear):
                    torch.nn.init.normal_(module.weight, std=0.02)  # Llama's initializer_range
            self.head.embed_tokens.weight.copy_(self.target.get_input_embeddings().weight.float())
            self.head.lm_head.weight.copy_(self.target.get_output_embeddings().weight[ids].float())
            self.head.norm.weight.copy_(self.target.model.norm.weight.float())

    # --- checkpoints -------------------------------------------------------------------------------------------
    def save_checkpoint(self) -> None:
        self.config.work_dir.mkdir(parents=True, exist_ok=True)
        state = {
            "step": self.step,
            "head": {k: v for k, v in self.head.state_dict().items() if not k.startswith("embed_tokens")},
            "optimizer": self.optimizer.state_dict(),
            "history": self.history,
            "data_sha256": self.data_sha256,
            "config": self.config.model_dump(mode="json"),
        }
        tmp = self.config.work_dir / (CHECKPOINT + ".tmp")
        torch.save(state, tmp)
        tmp.replace(self.config.work_dir / CHECKPOINT)

    def maybe_resume(self) -> bool:
        path = self.config.work_dir / CHECKPOINT
        if not path.exists():
            return False
        state = torch.load(path, map_location=self.device, weights_only=False)
        if state["data_sha256"] != self.data_sha256:
            raise TrainError(f"{path} was trained on other data (sha256 {state['data_sha256'][:12]}…); remove it")
        self.head.load_state_dict(state["head"], strict=False)
        self.optimizer.load_state_dict(state["optimizer"])
        self.step, self.history = state["step"], state["history"]
        log.info("draft.train.resume", step=self.step)
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

    def sample_loss(self, sample: Sample) -> tuple[torch.Tensor, list[tuple[float, float, float]]]:
        """Weighted TTT loss of one sample and per step (summed ce, in-vocab positions, hits, answer positions)."""
        cfg, head = self.config, self.head
        keep = cfg.max_seq_len - len(sample.output_ids)
        prompt = sample.prompt_ids[-keep:] if keep > 0 else sample.prompt_ids[:1]
        ids = torch.tensor(prompt + sample.output_ids, device=self.device)[: cfg.max_seq_len]
        s, p_len = ids.numel(), len(prompt)
        with torch.no_grad():
            out = self.target(ids[None], output_hidden_states=True)
            aux = torch.cat([out.hidden_states[i] for i in head.config.aux_layer_ids], dim=-1)  # [1, S, 3H]
            logits = out.logits[0]  # [S, vocab]
        n = s - 1  # indices t = 0..S-2 have an input token x[t+1]
        # Steps ≥ 1 only matter where some step lands on an answer position: index ≥ p_len - 1 - K.
        offset = max(0, min(n - 1, p_len - 1 - cfg.ttt_steps))
        weights = step_weights(cfg.ttt_steps, cfg.step_decay)
        draft_ids = head.draft_ids
        total = torch.zeros((), device=self.device)
        stats: list[tuple[float, float, float]] = []
        past: list[tuple[torch.Tensor, torch.Tensor]] = []
        with torch.autocast(self.device.type, dtype=self.dtype, enabled=self.dtype != torch.float32):
            hidden = head.combine(aux[:, :n])  # [1, n, H]
            for j in range(cfg.ttt_steps):
                lo = 0 if j == 0 else offset
                t = torch.arange(lo, n, device=self.device)  # query indices of this step
                src = t + 1 + j  # input token index == target-logits index
                valid = src <= s - 1
                tok = ids[src.clamp(max=s - 1)][None]  # [1, n_q]
                pos = (t + j)[None]
                mask = None if j == 0 else ttt_mask(n, j, offset, self.device)
                if j == 1:  # from step 1 on, queries start at `offset`; trim step-0 state to match
                    hidden = hidden[:, offset:]
                out_h, hidden, kv = head.step(tok, hidden, pos, past, mask)
                past.append(kv)  # step-0 keys cover all n indices; later steps' keys only the queries from `offset`
                answer = valid & (src >= p_len - 1)
                if answer.any():
                    sel = answer.nonzero().squeeze(-1)
                    ce, n_in, hits = restricted_loss(
                        head.logits(out_h[0, sel]), logits[src[sel]], draft_ids, head.t2d
                    )
                    total = total + weights[j] * ce / max(int(answer.sum()), 1)
                    stats.append((float(ce.detach()), float(n_in), float(hits), float(answer.sum())))
                else:
                    stats.append((0.0, 0.0, 0.0, 0.0))
        return total, stats

    # --- loop --------------------------------------------------------------------------------------------------
    def lr_at(self, step: int) -> float:
        cfg = self.config
        warm = max(1, int(cfg.warmup_frac * cfg.steps))
        if step < warm:
            return cfg.lr * (step + 1) / warm
        progress = (step - warm) / max(1, cfg.steps - warm)
        return cfg.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))

    def train(self, progress: bool = True) -> None:
        from tqdm import tqdm

        cfg = self.config
        order = self._order()
        bar = tqdm(total=cfg.steps, initial=self.step, desc=f"draft {'3.1' if cfg.fc_norm or cfg.norm_output else '3'}",
                   disable=not progress, dynamic_ncols=True)
        self.head.train()
        started, tokens = time.monotonic(), 0
        while self.step < cfg.steps:
            for group in self.optimizer.param_groups:
                group["lr"] = self.lr_at(self.step)
            self.optimizer.zero_grad(set_to_none=True)
            agg = [[0.0, 0.0, 0.0, 0.0] for _ in range(cfg.ttt_steps)]
            loss_sum = 0.0
            for k in range(cfg.samples_per_step):
                sample = self.samples[order[self.step * cfg.samples_per_step + k]]
                loss, stats = self.sample_loss(sample)
                (loss / cfg.samples_per_step).backward()
                loss_sum += float(loss.detach())
                for a, st in zip(agg, stats, strict=True):
                    for i in range(4):
                        a[i] += st[i]
                tokens += int(stats[0][3])
            torch.nn.utils.clip_grad_norm_(self.head.trainable_parameters(), cfg.grad_clip)
            self.optimizer.step()
            self.step += 1
            acc = [a[2] / a[3] if a[3] else 0.0 for a in agg]
            record = {"step": self.step, "loss": loss_sum / cfg.samples_per_step, **{f"acc{j}": acc[j] for j in range(len(acc))}}
            self.history.append(record)
            bar.set_postfix_str(
                f"loss {record['loss']:.3f} acc " + " ".join(f"{a:.2f}" for a in acc)
                + f" | {tokens / max(time.monotonic() - started, 1e-9):.0f} tok/s"
            )
            bar.update(1)
            if self.step % cfg.checkpoint_every == 0 or self.step == cfg.steps:
                self.save_checkpoint()
        bar.close()

    def export(self, out_dir: Path, name: str, dtype: str = "bfloat16") -> Path:
        cfg = self.config
        variant = "eagle3.1" if (cfg.fc_norm or cfg.norm_output) else "eagle3"
        record = TrainingRecord(
            target=self._target_name(),
            data_sha256=self.data_sha256,
            seed=cfg.seed,
            steps=self.step,
            variant=variant,
            extra={
                "train": cfg.model_dump(mode="json", exclude={"work_dir", "threads"}),
                "vocab": self.vocab_stats.model_dump(),
                "final": self.history[-1] if self.history else {},
            },
        )
        return export_draft(self.head, out_dir, record=record, dtype=dtype, name=name)

    def _target_name(self) -> str:
        manifest = self.model_dir / "manifest.json"
        if manifest.exists():
            import hashlib

            return "manifest-sha256:" + hashlib.sha256(manifest.read_bytes()).hexdigest()
        return str(self.model_dir)

    def write_history(self, path: Path) -> None:
        path.write_text("\n".join(json.dumps(r) for r in self.history) + "\n")
