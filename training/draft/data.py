"""On-policy training data: the target model answers corpus prompts (greedy, vLLM batch generation).

Only token ids are stored (JSONL, a few MB); the target's hidden states are recomputed on the fly during training,
so there is no multi-GB feature store. The file is written in chunks, so a crash loses one chunk, a rerun resumes
after the prompts already answered, and training can start on a partial file. A stamp beside it (`<file>.model`)
names the model that answered (its manifest's sha256): answers of another model (a retrained narrator merged in)
are not on-policy any more, so they are discarded and every prompt is answered again.

Prompts come from the general corpus (`training.draft.corpus`) and, for a report specialist, from the narrator's own
report-section prompts (`report_prompts`): the messages the agent sends for a section of a report.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import cast

import structlog
from pydantic import BaseModel, ConfigDict

from edge_agent.reports.narrative import Phrasebook, Template
from training.draft import corpus
from training.draft.corpus import Prompt
from training.narrator.corpus import TEST_SEEDS, TRAIN_SEEDS, case_messages, section_cases

log = structlog.get_logger(__name__).bind(component="draft")


REPORT_SLICE = "report"
# Bench slices: the corpus's, and the report sections of the narrator's test seeds.
BENCH_SLICES: tuple[str, ...] = (*corpus.SLICES, REPORT_SLICE)


def report_prompts(n: int, seeds: Sequence[int], seed: int = 0) -> list[Prompt]:
    """The first `n` report-section prompts of the narrator corpus over `seeds`, starting at `seeds[seed % len]`
    and wrapping round: the chat messages the agent sends for each section, deterministic in `seed`."""
    if not seeds:
        raise ValueError("report prompts need at least one narrator seed")
    if n <= 0:
        return []
    start = seed % len(seeds)
    templates: dict[str, tuple[Template, Phrasebook]] = {}
    prompts: list[Prompt] = []
    for day in [*seeds[start:], *seeds[:start]]:
        for case in section_cases(day):
            messages = [m.model_dump() for m in case_messages(case, templates)]
            prompts.append(
                Prompt(
                    id=f"{REPORT_SLICE}-{case.id}",
                    slice=REPORT_SLICE,
                    lang=case.request.language,
                    kind="report_section",
                    messages=messages,
                )
            )
            if len(prompts) == n:
                return prompts
    return prompts


def training_prompts(general: int, report: int, seed: int = 0) -> list[Prompt]:
    """`[data]`'s prompts: `general` from the corpus's train split, then `report` from the narrator's training
    seeds (never its test seeds, which the bench's report slice draws from)."""
    return corpus.build("train", general, seed=seed) + report_prompts(report, TRAIN_SEEDS, seed)


def slice_prompts(name: str, n: int, seed: int = 0) -> list[Prompt]:
    """`n` prompts of one bench slice; `report` comes from the narrator's test seeds only."""
    if name not in BENCH_SLICES:
        raise ValueError(f"unknown bench slice {name!r}; one of {BENCH_SLICES}")
    if name == REPORT_SLICE:
        return report_prompts(n, TEST_SEEDS, seed)
    return corpus.build(cast(corpus.Slice, name), n, seed=seed)  # a corpus slice: checked against BENCH_SLICES


class Sample(BaseModel):
    """One answered prompt: the prompt's token ids, then the target's greedy answer."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    slice: str
    kind: str
    lang: str
    prompt_ids: list[int]
    output_ids: list[int]


def read_samples(path: Path | str) -> list[Sample]:
    path = Path(path)
    if not path.exists():
        return []
    return [Sample.model_validate_json(line) for line in path.read_text().splitlines() if line.strip()]


def data_sha256(path: Path | str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def open_vllm(  # noqa: ANN201
    model_dir: Path | str,
    max_model_len: int,
    seed: int = 0,
    speculative: dict | None = None,
    enforce_eager: bool = False,
):
    """A vLLM `LLM` on the target with the engine's deterministic settings (float32, in-process engine core).
    Compiled by default: batched answering wins its start-up back; the bench passes the agent's `enforce_eager`."""
    os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")  # one process: no spawn, less memory on a small box
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "2")
    from vllm import LLM

    kwargs: dict = {}
    if speculative is not None:
        kwargs["speculative_config"] = speculative
    return LLM(
        model=str(model_dir),
        dtype="float32",
        max_model_len=max_model_len,
        seed=seed,
        enforce_eager=enforce_eager,
        disable_log_stats=False,
        **kwargs,
    )


def generate(llm: object, prompts: list[Prompt], max_tokens: int) -> Iterator[tuple[Prompt, list[int], list[int]]]:
    """Greedy answers for `prompts` in one batch: (prompt, prompt token ids, output token ids)."""
    from vllm import SamplingParams

    params = SamplingParams(max_tokens=max_tokens, temperature=0.0)
    chats = [p for p in prompts if p.messages is not None]
    raws = [p for p in prompts if p.raw is not None]
    outs = []
    # `llm` is a vllm.LLM typed `object` (vllm is imported lazily): the attr-defined ignores below.
    if chats:
        outs += list(zip(chats, llm.chat([p.messages for p in chats], params, use_tqdm=False), strict=True))  # type: ignore[attr-defined]
    if raws:
        outs += list(zip(raws, llm.generate([p.raw for p in raws], params, use_tqdm=False), strict=True))  # type: ignore[attr-defined]
    for prompt, out in outs:
        yield prompt, list(out.prompt_token_ids), list(out.outputs[0].token_ids)


def model_stamp(out_path: Path) -> Path:
    return out_path.with_name(out_path.name + ".model")


def discard_off_policy(out_path: Path, model_sha256: str) -> bool:
    """Remove `out_path` when another model wrote it (or no stamp says which did); True when it removed answers."""
    stamp = model_stamp(out_path)
    was = stamp.read_text().strip() if stamp.exists() else None
    if not out_path.exists() or was == model_sha256:
        return False
    log.warning("draft.data.off_policy", path=str(out_path), was=was)
    out_path.unlink()
    return True


def build_dataset(
    prompts: list[Prompt], out_path: Path | str, *, model_dir: Path | str, max_tokens: int, chunk: int = 32
) -> Path:
    """Answer every prompt not yet in `out_path` and append the samples, `chunk` prompts per vLLM batch."""
    from edge_agent.llm.manifest import manifest_sha256, verify

    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    verify(model_dir)  # the answers are the target's, so they must be the files its manifest names
    model_sha256 = manifest_sha256(Path(model_dir))
    discard_off_policy(out_path, model_sha256)
    model_stamp(out_path).write_text(model_sha256 + "\n")
    done = {s.id for s in read_samples(out_path)}
    todo = [p for p in prompts if p.id not in done]
    log.info("draft.data.start", total=len(prompts), done=len(done), todo=len(todo))
    if not todo:
        return out_path
    llm = open_vllm(model_dir, max_model_len=4096)
    from tqdm import tqdm

    bar = tqdm(total=len(todo), desc="on-policy answers", unit="prompt")
    for start in range(0, len(todo), chunk):
        lines = []
        for prompt, prompt_ids, output_ids in generate(llm, todo[start : start + chunk], max_tokens):
            sample = Sample(
                id=prompt.id,
                slice=prompt.slice,
                kind=prompt.kind,
                lang=prompt.lang,
                prompt_ids=prompt_ids,
                output_ids=output_ids,
            )
            lines.append(sample.model_dump_json() + "\n")
        with open(out_path, "a") as fh:
            fh.writelines(lines)
            fh.flush()
            os.fsync(fh.fileno())
        bar.update(len(lines))
    bar.close()
    return out_path
