"""Train the narrator's LoRA adapter on (section prompt → reference text) pairs, resumably; export it.

Each sample is rendered exactly as the serving engine renders a request (edge_agent/llm/worker.py): the chat
template over its messages with the generation prompt, encoded without added special tokens; then the reference
text plus ChatML's end-of-turn token, encoded on its own (as the model will produce it). The loss is the mean
cross-entropy over those target tokens only. Only the LoRA tensors train (AdamW, warm-up then cosine, gradient
clipping); the base model stays frozen.

Batches are length-bucketed (similar lengths together, right-padded) from a seeded plan of the whole
run, which the checkpoint carries with the adapter, the optimizer, the step and the RNG states: a run killed at any
moment and resumed trains exactly what an uninterrupted run trains.

`init_from` starts from an exported adapter instead of a fresh one (e.g. the shipped adapter, when the prompts
gained a fact kind): same LoRA shape, trained on the same base weights, both checked; its manifest hash goes into the
checkpoint's identity and the export, so a shipped adapter names the one it grew from.
"""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

import structlog
import torch
from pydantic import Field, field_validator

from edge_agent.base.canonical import canonical_json, sha256_hex
from edge_agent.llm.adapter import AdapterError, LoraConfig, load_adapter
from edge_agent.llm.chat import render_chat
from edge_agent.reports.narrative import SECTIONS
from training.narrator.lora import adapter_state, attach, lora_parameters, save_adapter
from training.recipes import RecipeModel, load_recipe_file
from training.trainer import TrainError, cosine_lr, train_device

log = structlog.get_logger(__name__).bind(component="narrator")

CHECKPOINT = "checkpoint.pt"
HISTORY = "history.jsonl"
END_OF_TURN = "<|im_end|>"  # ChatML: the token the served model stops on
# Batches are cut from pools of this many batches sorted by length: padding stays small while the order stays
# shuffled at the scale of a few hundred samples.
BUCKET_BATCHES = 32


class NarratorTrainConfig(RecipeModel):
    """`[train]` of configs/narrator.toml."""

    corpus: Path = Path("var/narrator/corpus.jsonl")
    work_dir: Path = Path("var/narrator")
    lr: float = Field(1e-3, gt=0)
    # 5 % warm-up then cosine to 10 % of lr, as the draft head's schedule.
    warmup_frac: float = Field(0.05, ge=0, lt=1)
    weight_decay: float = Field(0.0, ge=0)
    grad_clip: float = Field(1.0, gt=0)
    batch_size: int = Field(4, ge=1)
    steps: int = Field(1200, ge=1)
    # Longer samples are left out, not cut: a prompt cut from the left loses facts and teaches the model to invent.
    max_seq_len: int = Field(1024, ge=16)
    seed: int = 0
    dtype: Literal["float32", "bfloat16"] = "float32"
    device: Literal["auto", "cpu", "cuda"] = "auto"
    threads: int | None = Field(None, ge=1)
    checkpoint_every: int = Field(25, ge=1)
    # An exported adapter to start from (its [lora] and base weights must be these); None: a fresh adapter.
    init_from: Path | None = None
    # Train only on these sections' samples: a continuation teaching one section a new fact kind costs that
    # section's samples alone (r5: the downtime section's `downtime_longest`). None: every section.
    sections: list[str] | None = None

    @field_validator("sections")
    @classmethod
    def _known_sections(cls, value: list[str] | None) -> list[str] | None:
        unknown = sorted(set(value or ()) - set(SECTIONS))
        if unknown or value == []:
            raise ValueError(f"sections must be some of {', '.join(SECTIONS)}; got {unknown or 'none'}")
        return value

    # Recompute each layer's activations in the backward pass instead of keeping them: about a third more compute
    # for a fraction of the memory (at batch 4 of ~900 tokens, ~10 GB of activations on the CPU otherwise).
    gradient_checkpointing: bool = False


class NarratorExportConfig(RecipeModel):
    dir: Path = Path("edge_agent/llm/shipped/narrator-smollm2-135m")
    name: str = Field("narrator-smollm2-135m", pattern=r"^[A-Za-z0-9_.-]+$")
    dtype: Literal["float32", "bfloat16"] = "bfloat16"


class NarratorRecipe(RecipeModel):
    """configs/narrator.toml."""

    model_dir: Path = Path("models/default")
    lora: LoraConfig = Field(default_factory=LoraConfig)
    train: NarratorTrainConfig = Field(default_factory=NarratorTrainConfig)
    export: NarratorExportConfig = Field(default_factory=NarratorExportConfig)


def load_recipe(path: Path | str) -> NarratorRecipe:
    return load_recipe_file(path, NarratorRecipe, TrainError)


class ChatSample(Protocol):
    """What training needs of a corpus sample (training.narrator.corpus.NarratorSample has it)."""

    @property
    def messages(self) -> Sequence[Any]: ...  # {"role", "content"} dicts or models with model_dump()

    @property
    def target(self) -> str: ...


@dataclass(frozen=True)
class Encoded:
    ids: list[int]  # prompt + target + end of turn
    prompt_len: int


def encode(tokenizer: Any, sample: ChatSample) -> Encoded:
    """Token ids of a sample as the engine would see the prompt and the model should answer it."""
    chat = [m if isinstance(m, dict) else m.model_dump() for m in sample.messages]
    text = render_chat(tokenizer, chat)
    prompt = list(tokenizer.encode(text, add_special_tokens=False))
    answer = list(tokenizer.encode(sample.target + END_OF_TURN, add_special_tokens=False))
    return Encoded(prompt + answer, len(prompt))


def samples_sha256(samples: Sequence[ChatSample]) -> str:
    """One hash of what is trained on: messages and target of every sample, in order."""
    chat = [
        {"messages": [m if isinstance(m, dict) else m.model_dump() for m in s.messages], "target": s.target}
        for s in samples
    ]
    return sha256_hex(canonical_json(chat))


def batch_plan(lengths: Sequence[int], batch_size: int, steps: int, seed: int) -> list[list[int]]:
    """Sample indices of every step of the run: per seeded epoch, shuffle, sort pools of `BUCKET_BATCHES` batches
    by length, cut them into batches and shuffle the batches. Pure: the same inputs give the same plan."""
    if not lengths:
        raise TrainError("no samples to plan batches from")
    plan: list[list[int]] = []
    epoch = 0
    while len(plan) < steps:
        rng = random.Random(seed * 1_000_003 + epoch)
        order = list(range(len(lengths)))
        rng.shuffle(order)
        pool = batch_size * BUCKET_BATCHES
        batches: list[list[int]] = []
        for lo in range(0, len(order), pool):
            ranked = sorted(order[lo : lo + pool], key=lambda i: (lengths[i], i))
            batches += [ranked[b : b + batch_size] for b in range(0, len(ranked), batch_size)]
        rng.shuffle(batches)
        plan += batches
        epoch += 1
    return plan[:steps]


def collate(batch: Sequence[Encoded], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-padded ids [B, W] and `predicts` [B, W]: True where position p's next token p+1 is a target token
    (prompt and padding excluded).

    No attention mask: under the causal mask a real token only sees positions before it, all real when the padding
    is on the right, and the pads' own outputs are never read. Without a mask sdpa takes its causal kernel (a
    third faster on the CPU at batch 4 × 900 tokens, the same loss)."""
    width = max(len(e.ids) for e in batch)
    ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
    predicts = torch.zeros(len(batch), width, dtype=torch.bool)
    for row, e in enumerate(batch):
        ids[row, : len(e.ids)] = torch.tensor(e.ids)
        predicts[row, e.prompt_len - 1 : len(e.ids) - 1] = True
    return ids, predicts


def plain_base_weights(model_dir: Path) -> str | None:
    """The sha256 of a prepared model's weights (None for a directory without a manifest, e.g. a test model);
    TrainError when an adapter is already merged into them: the adapter must train on the plain base."""
    from edge_agent.llm.manifest import read_manifest

    if not (model_dir / "manifest.json").exists():
        return None
    manifest = read_manifest(model_dir)
    if manifest.adapter is not None:
        raise TrainError(
            f"{model_dir} has the adapter {manifest.adapter.name} merged in; train on a plain base: "
            f"edge-agent model prepare --no-narrator --out {model_dir}"
        )
    entry = manifest.files.get("model.safetensors")
    return entry.sha256 if entry else None


class NarratorTrainer:
    """The frozen base model with LoRA attached, its optimizer, the run's batch plan and the step reached."""

    def __init__(self, recipe: NarratorRecipe, samples: Sequence[ChatSample]) -> None:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        cfg = self.config = recipe.train
        self.recipe = recipe
        if cfg.threads:
            torch.set_num_threads(cfg.threads)
        self.device = train_device(cfg.device)
        self.dtype = torch.bfloat16 if cfg.dtype == "bfloat16" else torch.float32
        self.base_weights_sha256 = plain_base_weights(recipe.model_dir)
        self.tokenizer = AutoTokenizer.from_pretrained(str(recipe.model_dir))
        pad = self.tokenizer.pad_token_id
        self.pad_id = int(pad if pad is not None else self.tokenizer.eos_token_id)
        encoded = [encode(self.tokenizer, s) for s in samples]
        keep = [i for i, e in enumerate(encoded) if len(e.ids) <= cfg.max_seq_len]
        if len(keep) < len(encoded):
            log.warning("narrator.train.too_long", skipped=len(encoded) - len(keep), max_seq_len=cfg.max_seq_len)
        if not keep:
            raise TrainError(f"no sample fits max_seq_len {cfg.max_seq_len}")
        self.samples = [encoded[i] for i in keep]
        self.corpus_sha256 = samples_sha256([samples[i] for i in keep])
        model = AutoModelForCausalLM.from_pretrained(str(recipe.model_dir), dtype=torch.float32)
        attach(model, recipe.lora, seed=cfg.seed)
        self.init_from = self._load_init(model, cfg.init_from) if cfg.init_from else None
        if cfg.gradient_checkpointing:
            model.gradient_checkpointing_enable({"use_reentrant": False})
            # transformers then makes the embeddings' output require grad, which would carry the backward pass
            # through the layers below the first adapted one; the non-reentrant checkpoint does not need it.
            model.disable_input_require_grads()
        torch.nn.Module.to(model, self.device)  # see training/draft/train.py: PreTrainedModel.to defeats mypy
        self.model = model
        self.num_layers = int(model.config.num_hidden_layers)
        self.params = lora_parameters(model)
        self.optimizer = torch.optim.AdamW(self.params, lr=cfg.lr, weight_decay=cfg.weight_decay)
        self.plan = batch_plan([len(e.ids) for e in self.samples], cfg.batch_size, cfg.steps, cfg.seed)
        self.step = 0
        self.history: list[dict[str, float]] = []

    def _load_init(self, model: torch.nn.Module, directory: Path) -> dict[str, str]:
        """Copy an exported adapter's tensors into the freshly attached ones; its lineage for identity and export."""
        from edge_agent.llm.manifest import manifest_sha256

        try:
            adapter = load_adapter(directory)
        except AdapterError as exc:
            raise TrainError(f"init_from {directory}: {exc}") from exc
        if adapter.config != self.recipe.lora:
            raise TrainError(f"init_from {directory}: its [lora] differs from the recipe's: {adapter.config}")
        trained_on = adapter.meta.get("base_weights_sha256")
        if trained_on and self.base_weights_sha256 and trained_on != self.base_weights_sha256:
            raise TrainError(f"init_from {directory}: trained on base weights {trained_on[:12]}…, not these")
        model.load_state_dict({n: t.float() for n, t in adapter.tensors.items()}, strict=False)
        return {"path": str(directory), "manifest_sha256": manifest_sha256(directory)}

    # --- checkpoints -------------------------------------------------------------------------------------------
    def _identity(self) -> dict[str, Any]:
        """What a checkpoint must agree on to be resumed: data, adapter shape and every setting that changes the
        trajectory (not paths, threads or how often it checkpoints)."""
        volatile = {"corpus", "work_dir", "threads", "checkpoint_every", "gradient_checkpointing", "init_from"}
        train = self.config.model_dump(mode="json", exclude=volatile)
        if self.init_from is not None:
            train["init_from_manifest_sha256"] = self.init_from["manifest_sha256"]
        return {"corpus_sha256": self.corpus_sha256, "lora": self.recipe.lora.model_dump(mode="json"), "train": train}

    def save_checkpoint(self) -> None:
        """Adapter, optimizer, step, RNG states and the batch plan, written to a temporary file and renamed over
        the last checkpoint: a kill leaves either the old checkpoint or the new one, never half of one."""
        work = self.config.work_dir
        work.mkdir(parents=True, exist_ok=True)
        state = {
            "step": self.step,
            "lora": adapter_state(self.model),
            "optimizer": self.optimizer.state_dict(),
            "rng": {
                "torch": torch.get_rng_state(),
                "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
                "python": random.getstate(),
            },
            "plan": self.plan,
            "history": self.history,
            "identity": self._identity(),
        }
        tmp = work / (CHECKPOINT + ".tmp")
        with open(tmp, "wb") as fh:
            torch.save(state, fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, work / CHECKPOINT)

    def maybe_resume(self) -> bool:
        path = self.config.work_dir / CHECKPOINT
        if not path.exists():
            return False
        state = torch.load(path, map_location="cpu", weights_only=False)
        if state["identity"] != self._identity():
            raise TrainError(f"{path} is from another corpus or recipe; remove it (or the work_dir) to start over")
        unexpected = self.model.load_state_dict(state["lora"], strict=False).unexpected_keys
        if unexpected:
            raise TrainError(f"{path} holds tensors this model has no place for: {unexpected[:4]}")
        self.optimizer.load_state_dict(state["optimizer"])
        torch.set_rng_state(state["rng"]["torch"])
        if state["rng"]["cuda"] and torch.cuda.is_available():
            torch.cuda.set_rng_state_all(state["rng"]["cuda"])
        random.setstate(state["rng"]["python"])
        self.plan, self.step, self.history = state["plan"], state["step"], state["history"]
        log.info("narrator.train.resume", step=self.step, path=str(path))
        return True

    # --- loss and loop -----------------------------------------------------------------------------------------
    def batch_loss(self, indices: Sequence[int]) -> tuple[torch.Tensor, int]:
        """Mean cross-entropy over the target tokens of the batch, and their number."""
        ids, predicts = collate([self.samples[i] for i in indices], self.pad_id)
        ids, predicts = ids.to(self.device), predicts.to(self.device)
        with torch.autocast(self.device.type, dtype=self.dtype, enabled=self.dtype != torch.float32):
            hidden = self.model.model(input_ids=ids).last_hidden_state  # [B, W, H]
            # logits only where a target token is predicted: the vocabulary is 49k wide, the prompt most of W
            logits = self.model.lm_head(hidden[predicts])  # [n, vocab]
        labels = ids[:, 1:][predicts[:, :-1]]  # [n]: token p+1 for every predicting position p
        return torch.nn.functional.cross_entropy(logits.float(), labels), int(labels.numel())

    def train(self, progress: bool = True) -> None:
        from tqdm import tqdm

        cfg = self.config
        self.model.train()
        bar = tqdm(total=cfg.steps, initial=self.step, desc="narrator", disable=not progress, dynamic_ncols=True)
        started, tokens = time.monotonic(), 0
        while self.step < cfg.steps:
            lr = cosine_lr(self.step, cfg.lr, cfg.warmup_frac, cfg.steps)
            for group in self.optimizer.param_groups:
                group["lr"] = lr
            self.optimizer.zero_grad(set_to_none=True)
            loss, n = self.batch_loss(self.plan[self.step])
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.params, cfg.grad_clip)
            self.optimizer.step()
            self.step += 1
            tokens += sum(len(self.samples[i].ids) for i in self.plan[self.step - 1])
            rate = tokens / max(time.monotonic() - started, 1e-9)
            self.history.append({"step": self.step, "loss": float(loss.detach()), "lr": lr, "target_tokens": n})
            bar.set_postfix_str(f"loss {self.history[-1]['loss']:.3f} | {rate:.0f} tok/s")
            bar.update(1)
            if self.step % cfg.checkpoint_every == 0 or self.step == cfg.steps:
                self.save_checkpoint()
                recent = self.history[-cfg.checkpoint_every :]
                log.info(
                    "narrator.train.checkpoint",
                    step=self.step,
                    loss=round(sum(h["loss"] for h in recent) / len(recent), 4),
                    tokens_per_s=round(rate, 1),
                )
        bar.close()
        self.write_history()

    def write_history(self) -> None:
        self.config.work_dir.mkdir(parents=True, exist_ok=True)
        (self.config.work_dir / HISTORY).write_text("".join(json.dumps(h) + "\n" for h in self.history))

    def export(self, out_dir: Path | None = None) -> Path:
        """The adapter as trained so far, in the recipe's export dtype, with how it was trained."""
        from edge_agent.llm.manifest import manifest_sha256

        exp = self.recipe.export
        model_dir = self.recipe.model_dir
        base = manifest_sha256(model_dir) if (model_dir / "manifest.json").exists() else str(model_dir)
        recent = self.history[-self.config.checkpoint_every :]
        meta = {
            "num_layers": self.num_layers,
            "base_manifest_sha256": base,
            # `model prepare` refuses to merge into other weights than these
            "base_weights_sha256": self.base_weights_sha256,
            "samples": len(self.samples),
            "steps": self.step,
            "init_from": self.init_from,
            **self._identity(),
            "final_loss": sum(h["loss"] for h in recent) / len(recent) if recent else None,
        }
        return save_adapter(
            out_dir or exp.dir, adapter_state(self.model), self.recipe.lora, meta, dtype=exp.dtype, name=exp.name
        )
