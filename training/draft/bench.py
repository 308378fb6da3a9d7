"""Measure draft heads in the real vLLM engine: acceptance per position, τ at k, tokens/s, identical output.

Engines opened one after another, each in a fresh child process, with the engine's settings (float32, greedy, seed 0):
1. no draft: reference outputs (the `test`, `plant` and `report` slices one request at a time, as the agent runs
   reports, the others batched; this run's tokens/s is only printed by `--reference-only`);
2. each head at k = max(ks), prompts run the same way: acceptance per position on every slice (acceptance does
   not depend on batching), outputs compared token for token with the reference;
   τ at a smaller k is 1 + the sum of the first k per-position rates (greedy: a longer draft leaves earlier
   drafted tokens unchanged);
3. speed: the first head at each k of `speed_ks` and no draft, engines alive side by side and requests alternated
   prompt by prompt, so all see the same machine load (the only tokens/s the bench quotes). Each request is stepped
   through the engine as the agent's worker steps it, so its first token (the prefill, which a draft cannot speed
   up) and its decoding are timed apart: tokens/s end to end, and the decode rate after the first token.
Every engine runs with the agent's default `enforce_eager` (`AGENT_EAGER`), the settings a user gets.
Offline, with transformers: the norm of the state each head feeds forward across draft steps (plot).

Speed figures on a shared 2-core box move with the other load; ratios are only quoted within one run. The results
are written out (plots, the BENCHMARKS.md section) by `bench_report`.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import structlog
import torch

from edge_agent.llm.chat import render_chat
from edge_agent.llm.speculation import speculative_config
from training.draft import corpus
from training.draft.acceptance import from_counts
from training.draft.bench_report import AGENT_EAGER, SPEED_SLICES, markdown, plot, recipe_line
from training.draft.data import generate, open_vllm, slice_prompts
from training.draft.recipe import DraftRecipe

log = structlog.get_logger(__name__).bind(component="draft")


def _spec_counters(llm: Any) -> tuple[int, list[int]]:
    drafts = 0
    per_pos: list[int] = []
    for metric in llm.get_metrics():
        if metric.name == "vllm:spec_decode_num_drafts":
            drafts += metric.value
        elif metric.name == "vllm:spec_decode_num_accepted_tokens_per_pos":
            vals = list(metric.values)
            per_pos = [a + b for a, b in zip(per_pos, vals, strict=False)] if per_pos else vals
    return drafts, per_pos


def _speed(llm: Any, prompts: list[corpus.Prompt], max_tokens: int) -> tuple[float, dict[str, list[int]]]:
    """Single-stream decode: one request at a time, generated tokens over wall time."""
    outs: dict[str, list[int]] = {}
    tokens, elapsed = 0, 0.0
    for p in prompts:
        start = time.perf_counter()
        [(_, _, out)] = list(generate(llm, [p], max_tokens))
        elapsed += time.perf_counter() - start
        tokens += len(out)
        outs[p.id] = out
    return tokens / elapsed, outs


def state_norms(head_dir: Path, model_dir: Path, prompts: list[corpus.Prompt], steps: int) -> list[float]:
    """Mean L2 norm of the state a head feeds to its next step, per draft step (teacher-forced tokens)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from training.draft.export import load_exported

    target = AutoModelForCausalLM.from_pretrained(str(model_dir), dtype=torch.float32).eval()
    tok = AutoTokenizer.from_pretrained(str(model_dir))
    head = load_exported(head_dir, target.get_input_embeddings().weight).eval()
    sums = [0.0] * steps
    count = 0
    with torch.no_grad():
        for p in prompts:
            ids = torch.tensor(tok(prompt_text(tok, p), add_special_tokens=False)["input_ids"][-512:])[None]
            out = target(ids, output_hidden_states=True)
            aux = torch.cat([out.hidden_states[i] for i in head.config.aux_layer_ids], dim=-1)
            s = ids.shape[1]
            n = s - steps - 1
            if n < 1:
                continue
            hidden = head.combine(aux[:, :n])
            past: list = []
            from training.draft.ttt import ttt_mask

            for j in range(steps):
                tok_j = ids[:, 1 + j : 1 + j + n]
                pos = (torch.arange(n) + j)[None]
                _, hidden, kv = head.step(tok_j, hidden, pos, past, None if j == 0 else ttt_mask(n, j))
                past.append(kv)
                sums[j] += float(hidden[0, -1].norm())
            count += 1
    return [x / max(count, 1) for x in sums]


def _engine_run(
    model_dir: str, spec: dict | None, prompts: dict[str, list[dict]], max_tokens: int, seed: int
) -> dict[str, Any]:
    """In a child process: one engine, the speed slices single-stream (as the agent runs reports), the others
    batched."""
    llm = open_vllm(model_dir, max_model_len=4096, seed=seed, speculative=spec, enforce_eager=AGENT_EAGER)
    result: dict[str, Any] = {"speed": {}, "acceptance": {}, "outputs": {}}
    for name, raw in prompts.items():
        slice_prompts = [corpus.Prompt.model_validate(p) for p in raw]
        d0, p0 = _spec_counters(llm)
        if name in SPEED_SLICES:
            tps, outs = _speed(llm, slice_prompts, max_tokens)
            result["speed"][name] = tps
        else:
            outs = {p.id: o for p, _, o in generate(llm, slice_prompts, max_tokens)}
        d1, p1 = _spec_counters(llm)
        if spec is not None:
            acc = from_counts(d1 - d0, [b - a for a, b in zip(p0 or [0] * len(p1), p1, strict=True)])
            result["acceptance"][name] = acc.model_dump() | {"tau": acc.tau}
        result["outputs"].update(outs)
    return result


# Cores the bench's engines use: None = all allowed cores, as the agent's engine. On a box other jobs keep busy,
# 1 thread gives steadier figures: two OpenMP threads wait on each other whenever one of them is descheduled.
BENCH_THREADS: int | None = None


def engine_env() -> dict[str, str]:
    """The CPU environment the agent's engine worker runs under (edge_agent.llm.launcher): Intel OpenMP preloaded,
    one OpenMP thread per allowed core (`BENCH_THREADS` of them), 1 GiB of KV cache."""
    from edge_agent.llm.launcher import engine_threads, iomp_library

    env = {
        "VLLM_ENABLE_V1_MULTIPROCESSING": "0",
        "TOKENIZERS_PARALLELISM": "false",
        "VLLM_CPU_KVCACHE_SPACE": "1",
        "OMP_NUM_THREADS": str(engine_threads(BENCH_THREADS)),
    }
    iomp = iomp_library()
    if iomp is not None:
        env["LD_PRELOAD"] = str(iomp)
    return env


def _in_child(*args: Any) -> dict[str, Any]:
    """Run `_engine_run` in a fresh process under `engine_env()`, so each engine's memory goes away with it."""
    import multiprocessing
    import os
    from concurrent.futures import ProcessPoolExecutor

    saved = {k: os.environ.get(k) for k in engine_env()}
    os.environ.update(engine_env())  # a spawned child execs a new interpreter: LD_PRELOAD takes effect there
    try:
        with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as pool:
            return pool.submit(_engine_run, *args).result()
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


_LLM: Any = None


def prompt_text(tokenizer: Any, p: corpus.Prompt) -> str:
    """The text the engine sees: chat messages through the model's template, or a raw prompt (1 in 10 of the
    corpus's, an alternative template) as it is."""
    if p.raw is not None:
        return p.raw
    assert p.messages is not None  # a corpus prompt is chat messages or a raw string
    return render_chat(tokenizer, p.messages)


def _init_engine(model_dir: str, spec: dict | None, seed: int) -> None:
    global _LLM
    _LLM = open_vllm(model_dir, max_model_len=4096, seed=seed, speculative=spec, enforce_eager=AGENT_EAGER)


def _timed_one(prompt: dict, max_tokens: int) -> tuple[list[int], float, float]:
    """One request stepped through the engine as the agent's worker steps it: (output ids, seconds to the first
    token, seconds in all). The prompt is rendered and tokenized as the worker does."""
    from vllm import SamplingParams

    tokenizer = _LLM.get_tokenizer()
    ids = tokenizer.encode(prompt_text(tokenizer, corpus.Prompt.model_validate(prompt)), add_special_tokens=False)
    engine = _LLM.llm_engine
    start = time.perf_counter()
    engine.add_request("timed", {"prompt_token_ids": ids}, SamplingParams(max_tokens=max_tokens, temperature=0.0))
    first: float | None = None
    out: list[int] = []
    while engine.has_unfinished_requests():
        for output in engine.step():
            out = list(output.outputs[0].token_ids)
            if first is None and out:
                first = time.perf_counter() - start
    total = time.perf_counter() - start
    return out, total if first is None else first, total


def speed_interleaved(recipe: DraftRecipe, head_dir: Path, ks: list[int]) -> dict[str, Any]:
    """Tokens/s without a draft and with `head_dir` at each k, engines alive side by side (one child process
    each) and requests alternated prompt by prompt, so every engine sees the same background load."""
    import multiprocessing
    import os
    from concurrent.futures import ProcessPoolExecutor

    cfg = recipe.bench
    timed = [s for s in SPEED_SLICES if s in cfg.slices]
    prompts = [p.model_dump() for name in timed for p in slice_prompts(name, cfg.prompts_per_slice, seed=cfg.seed)]
    os.environ.update(engine_env())
    ctx = multiprocessing.get_context("spawn")
    variants: list[tuple[str, dict | None]] = [("none", None)] + [
        (f"k={k}", speculative_config("eagle3", str(head_dir), k)) for k in ks
    ]
    pools = {
        name: ProcessPoolExecutor(
            1, mp_context=ctx, initializer=_init_engine, initargs=(str(recipe.model_dir), spec, cfg.seed)
        )
        for name, spec in variants
    }
    try:
        for pool in pools.values():  # start each engine now, one after another, before any timing
            pool.submit(time.sleep, 0).result()
        # per engine and slice: generated tokens, seconds in all, seconds to the first token, requests
        tokens = {name: dict.fromkeys(timed, 0) for name in pools}
        seconds = {name: dict.fromkeys(timed, 0.0) for name in pools}
        firsts = {name: dict.fromkeys(timed, 0.0) for name in pools}
        requests = dict.fromkeys(timed, 0)
        outputs: dict[str, list[list[int]]] = {name: [] for name in pools}
        for prompt in prompts:
            requests[prompt["slice"]] += 1
            for name, pool in pools.items():
                out, first, total = pool.submit(_timed_one, prompt, cfg.max_tokens).result()
                tokens[name][prompt["slice"]] += len(out)
                seconds[name][prompt["slice"]] += total
                firsts[name][prompt["slice"]] += first
                outputs[name].append(out)
    finally:
        for pool in pools.values():
            pool.shutdown()

    def rate(name: str, names: list[str], decode: bool) -> float:
        """Tokens per second end to end, or after each request's first token (the prefill's) when `decode`."""
        n = sum(tokens[name][s] - (requests[s] if decode else 0) for s in names)
        return n / sum(seconds[name][s] - (firsts[name][s] if decode else 0.0) for s in names)

    figures: dict[str, Any] = {
        "prompts": len(prompts),
        "slices": timed,
        "eager": AGENT_EAGER,
        "identical": {name: sum(a == b for a, b in zip(outputs[name], outputs["none"], strict=True)) for name in pools},
        "first_token_s": {name: sum(firsts[name].values()) / len(prompts) for name in pools},
    }
    for prefix, decode in (("", False), ("decode_", True)):
        tps = {name: rate(name, timed, decode) for name in pools}
        by_slice = {name: {s: rate(name, [s], decode) for s in timed} for name in pools}
        figures[f"{prefix}tokens_per_s"] = tps
        figures[f"{prefix}speedup"] = {name: tps[name] / tps["none"] for name in pools if name != "none"}
        # the issue asks for both: held-out prompts of the training distribution, and plant wordings
        figures[f"{prefix}speedup_by_slice"] = {
            name: {s: by_slice[name][s] / by_slice["none"][s] for s in timed} for name in pools if name != "none"
        }
    return figures


REFERENCE_CACHE = Path("var/draft/bench-reference.json")


def reference_run(recipe: DraftRecipe, raw: dict[str, list[dict]]) -> dict[str, Any]:
    """The no-draft run (outputs, tokens/s), cached under var/ keyed by prompts, settings and the model manifest,
    so `--reference-only` can run it while the heads still train."""
    import hashlib

    cfg = recipe.bench
    manifest = recipe.model_dir / "manifest.json"
    key = hashlib.sha256(
        json.dumps(
            [raw, cfg.max_tokens, cfg.seed, AGENT_EAGER, manifest.read_text() if manifest.exists() else ""]
        ).encode()
    ).hexdigest()
    if REFERENCE_CACHE.exists():
        cached = json.loads(REFERENCE_CACHE.read_text())
        if cached.get("key") == key:
            log.info("draft.bench.reference_cached", path=str(REFERENCE_CACHE))
            return cached["run"]
    run = _in_child(str(recipe.model_dir), None, raw, cfg.max_tokens, cfg.seed)
    REFERENCE_CACHE.parent.mkdir(parents=True, exist_ok=True)
    REFERENCE_CACHE.write_text(json.dumps({"key": key, "run": run}))
    return run


def bench_prompts(recipe: DraftRecipe) -> dict[str, list[dict]]:
    cfg = recipe.bench
    return {n: [p.model_dump() for p in slice_prompts(n, cfg.prompts_per_slice, seed=cfg.seed)] for n in cfg.slices}


def run_bench(recipe: DraftRecipe) -> dict[str, Any]:
    """Run the benchmark described by `recipe.bench`; writes the JSON results and plots, returns the results."""
    cfg = recipe.bench
    k_max = max(cfg.ks)
    slices = {name: slice_prompts(name, cfg.prompts_per_slice, seed=cfg.seed) for name in cfg.slices}
    raw = {name: [p.model_dump() for p in ps] for name, ps in slices.items()}
    model_dir = str(recipe.model_dir)
    results: dict[str, Any] = {"config": cfg.model_dump(mode="json"), "heads": {}}

    started = time.monotonic()
    base = reference_run(recipe, raw)
    reference = base["outputs"]
    log.info("draft.bench.reference", elapsed_s=round(time.monotonic() - started))

    def with_head(head_dir: Path, k: int) -> dict[str, Any]:
        spec = speculative_config("eagle3", str(head_dir), k)
        run = _in_child(model_dir, spec, raw, cfg.max_tokens, cfg.seed)
        identical = {}
        for name, ps in slices.items():
            if all(p.id in run["outputs"] for p in ps):
                identical[name] = [sum(run["outputs"][p.id] == reference[p.id] for p in ps), len(ps)]
        log.info(
            "draft.bench.run",
            head=str(head_dir),
            k=k,
            identical=identical,
            tau={n: round(a["tau"], 2) for n, a in run["acceptance"].items()},
        )
        return {"k": k, "acceptance": run["acceptance"], "identical": identical}

    for head in recipe.heads:
        if not (head.export_dir / "config.json").exists():
            log.warning("draft.bench.skip", head=head.name, reason="not exported")
            continue
        results["heads"][head.name] = {"runs": [with_head(head.export_dir, k_max)]}
    first = next((h for h in recipe.heads if h.name in results["heads"]), None)
    if first is not None:
        if cfg.speed_ks:
            results["speed_interleaved"] = speed_interleaved(recipe, first.export_dir, cfg.speed_ks)
        norms_prompts = slices.get("test", [])[:4]
        for head in recipe.heads:
            if head.name in results["heads"]:
                results["heads"][head.name]["state_norms"] = state_norms(
                    head.export_dir, recipe.model_dir, norms_prompts, k_max
                )
    for head in recipe.heads:
        manifest = head.export_dir / "manifest.json"
        if head.name in results["heads"] and manifest.exists():
            source = json.loads(manifest.read_text())["source"]
            results["heads"][head.name]["training"] = {
                k: source.get(k) for k in ("variant", "data_sha256", "seed", "steps", "code_version")
            } | {k: source.get("extra", {}).get(k) for k in ("samples", "vocab", "final", "init_from")}
    results["elapsed_s"] = round(time.monotonic() - started)
    cfg.results.parent.mkdir(parents=True, exist_ok=True)
    cfg.results.write_text(json.dumps(results, indent=1) + "\n")
    plot(results, cfg.img_dir)
    return results


# What `bench.draft` (`make bench`) and the tests read from here, `bench_report`'s writers among them.
__all__ = ["bench_prompts", "markdown", "plot", "prompt_text", "recipe_line", "reference_run", "run_bench"]
