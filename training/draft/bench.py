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

Speed figures on a shared 2-core box move with the other load; ratios are only quoted within one run.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import structlog
import torch

from edge_agent.config.llm import LlmConfig
from edge_agent.llm.chat import render_chat
from edge_agent.llm.speculation import speculative_config
from training.draft import corpus
from training.draft.acceptance import from_counts
from training.draft.data import generate, open_vllm, slice_prompts
from training.draft.recipe import DraftRecipe

log = structlog.get_logger(__name__).bind(component="draft")

# Slices timed single-stream, as the agent runs reports (those of them in the recipe's `slices`).
SPEED_SLICES: tuple[str, ...] = ("test", "plant", "report")
# The agent's default compile mode: what a user's engine runs, so what its speed figures are measured at.
AGENT_EAGER: bool = LlmConfig.model_fields["enforce_eager"].default


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
            from training.draft.train import ttt_mask

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


def plot(results: dict[str, Any], img_dir: Path) -> list[Path]:
    """acceptance-vs-position and state-norm-vs-step PNGs for every measured head."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    img_dir.mkdir(parents=True, exist_ok=True)
    written = []
    slices = sorted({s for h in results["heads"].values() for s in h["runs"][0]["acceptance"]})
    fig, axes = plt.subplots(1, max(len(slices), 1), figsize=(4 * max(len(slices), 1), 3.2), sharey=True, squeeze=False)
    for ax, name in zip(axes[0], slices, strict=False):
        for head, data in results["heads"].items():
            acc = data["runs"][0]["acceptance"].get(name)
            if acc:
                ax.plot(
                    range(1, len(acc["per_position"]) + 1),
                    acc["per_position"],
                    marker="o",
                    label=f"{head} τ={acc['tau']:.2f}",
                )
        ax.set_title(name)
        ax.set_xlabel("draft position")
        ax.set_ylim(0, 1)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    axes[0][0].set_ylabel("accepted share of rounds")
    fig.tight_layout()
    path = img_dir / "draft-acceptance.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    written.append(path)
    fig, ax = plt.subplots(figsize=(4.5, 3.2))
    for head, data in results["heads"].items():
        if data.get("state_norms"):
            ax.plot(range(1, len(data["state_norms"]) + 1), data["state_norms"], marker="o", label=head)
    ax.set_xlabel("draft step")
    ax.set_ylabel("‖state fed to next step‖")
    ax.set_yscale("log")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    path = img_dir / "draft-state-norm.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    written.append(path)
    return written


def recipe_line(recipe: DraftRecipe, config: Path) -> str:
    """How the benched heads were made, read from their recipe."""
    data, train = recipe.data, recipe.train
    answers = f"{data.prompts} prompts of the corpus's train split"
    if data.report_prompts:
        answers += f" and {data.report_prompts} report-section prompts of the narrator's training seeds"
    kinds = ", ".join(f"{h.name} ({'EAGLE-3.1' if h.fc_norm or h.norm_output else 'EAGLE-3'})" for h in recipe.heads)
    start = f"fine-tuned from {train.init_from}" if train.init_from else "trained from scratch on the same samples"
    return (
        f"Recipe: `python -m training draft data|train|export --config {config}` (on-policy answers of the target "
        f"`{recipe.model_dir}` to {answers}; {kinds} {start}, {train.steps} steps × {train.samples_per_step} "
        f"samples, seed {train.seed}; exported in vLLM's llama_eagle3 format)."
    )


def markdown(results: dict[str, Any], recipe: str, img_dir: Path = Path("docs/img")) -> str:
    """BENCHMARKS.md body: how the heads were made (`recipe_line`), tables of τ, per-position acceptance, speed,
    identical output, and the goals."""
    lines: list[str] = []
    heads = results["heads"]
    cfg = results["config"]
    lines.append(
        f"{recipe} "
        f"Bench: {cfg['prompts_per_slice']} prompts per slice, {cfg['max_tokens']} tokens each, greedy, vLLM CPU "
        "engine (float32) under the agent engine's environment, one engine per child process; "
        "τ = mean tokens emitted per target forward pass (1 + accepted drafts). Slices: `test` = held-out prompts "
        "of the training distribution, `plant` = prompts worded as the training corpus never is, `long` = ≥ 1.5k "
        "tokens of log lines before the question, `perturbed` = unseen chat templates and system prompts, `report` = "
        "report sections of the narrator corpus's test seeds (the specialist's workload; never a training seed).\n"
    )
    for note in results.get("notes", []):
        lines.append(f"> {note}\n")
    # Speed lives only in the interleaved table below: per-head runs minutes apart on a shared box are not comparable.
    lines.append("| head | k | slice | τ | per-position acceptance | identical output |")
    lines.append("|---|---|---|---|---|---|")
    for head, data in heads.items():
        for run in data["runs"]:
            for name, acc in run["acceptance"].items():
                same = run["identical"].get(name, [0, 0])
                pp = " ".join(f"{x:.2f}" for x in acc["per_position"])
                lines.append(f"| {head} | {run['k']} | {name} | {acc['tau']:.2f} | {pp} | {same[0]}/{same[1]} |")
    lines.append("")
    lines.append("τ at each k (from the k = max run: 1 + sum of the first k per-position rates):\n")
    lines.append("| head | slice | " + " | ".join(f"k={k}" for k in results["config"]["ks"]) + " |")
    lines.append("|---|---|" + "---|" * len(results["config"]["ks"]))
    for head, data in heads.items():
        for name, acc in data["runs"][0]["acceptance"].items():
            rates = acc["per_position"]
            taus = [1 + sum(rates[:k]) for k in results["config"]["ks"]]
            lines.append(f"| {head} | {name} | " + " | ".join(f"{t:.2f}" for t in taus) + " |")
    lines.append("")
    if "eagle31" in heads and "eagle3" in heads:
        lines.append("EAGLE-3.1 vs EAGLE-3 (same data, steps, seed), τ at k = max:\n")
        lines.append("| slice | τ 3.1 | τ 3 | ratio |")
        lines.append("|---|---|---|---|")
        a, b = heads["eagle31"]["runs"][0]["acceptance"], heads["eagle3"]["runs"][0]["acceptance"]
        for name in a:
            if name in b and b[name]["tau"]:
                lines.append(
                    f"| {name} | {a[name]['tau']:.2f} | {b[name]['tau']:.2f} | {a[name]['tau'] / b[name]['tau']:.2f} |"
                )
        lines.append("")
        na, nb = heads["eagle31"].get("state_norms"), heads["eagle3"].get("state_norms")
        if na and nb:
            lines.append(
                "Norm of the state fed to the next draft step, steps 1..k: 3.1 "
                + " ".join(f"{x:.0f}" for x in na)
                + "; 3 "
                + " ".join(f"{x:.0f}" for x in nb)
                + "\n"
            )
    inter = results.get("speed_interleaved")
    if inter:
        eager = inter.get("eager")
        mode = "" if eager is None else (", eager" if eager else ", compiled")
        mode += " (the agent's default)" if eager is AGENT_EAGER else ""
        lines.append(
            f"Speed, engines side by side with requests alternated prompt by prompt ({inter['prompts']} prompts of the "
            f"{'+'.join(inter.get('slices', SPEED_SLICES[:2]))} slices, single stream{mode}; the fair comparison on a "
            "shared box), end to end (each request's prefill included):\n"
        )
        lines += _speed_table(inter, "")
        if "decode_tokens_per_s" in inter:
            firsts = ", ".join(f"{name} {s:.2f} s" for name, s in inter["first_token_s"].items())
            lines.append(
                "The same requests' decode rate: tokens after the first over the seconds after it — the phase a "
                "draft speeds up; the first token is the target's prefill plus, with a draft, the draft's own "
                f"prefill and first proposals (first token, mean over all prompts: "
                f"{firsts}):\n"
            )
            lines += _speed_table(inter, "decode_")
    lines += _goals(results)
    for head, data in heads.items():
        t = data.get("training")
        if t:
            final = t.get("final") or {}
            accs = " ".join(f"{final[k]:.2f}" for k in sorted(final) if k.startswith("acc"))
            vocab = t.get("vocab") or {}
            init = t.get("init_from") or {}
            digest = init.get("manifest_sha256") or init.get("weights_sha256") or ""
            start = f"fine-tuned from {init['path']} (sha256 {digest[:12]}…), " if init else ""
            lines.append(
                f"- {head} ({t['variant']}): {start}{t['steps']} steps over {t['samples']} on-policy samples "
                f"(data sha256 {str(t['data_sha256'])[:12]}…, seed {t['seed']}, code {t['code_version']}); "
                f"draft vocab {vocab.get('size')} ids, {vocab.get('distinct_output_tokens')} distinct answer tokens; "
                f"last-step teacher-forced accuracy per draft step {accs}"
            )
    lines.append("")
    lines.append(f"![acceptance per position]({img_dir.as_posix()}/draft-acceptance.png)")
    lines.append(f"![state norm across draft steps]({img_dir.as_posix()}/draft-state-norm.png)")
    return "\n".join(lines) + "\n"


def _speed_table(inter: dict[str, Any], prefix: str) -> list[str]:
    """Tokens/s and speedups per draft setting (`prefix` "" end to end, "decode_" after the first token)."""
    by_slice = inter.get(f"{prefix}speedup_by_slice", {})
    slices = sorted({s for v in by_slice.values() for s in v}, key=SPEED_SLICES.index)
    lines = [
        "| draft | tok/s | speedup | " + "".join(f"speedup on {s} | " for s in slices) + "identical output |",
        "|---|---|---|" + "---|" * len(slices) + "---|",
    ]
    for name, tps in inter[f"{prefix}tokens_per_s"].items():
        sp = inter[f"{prefix}speedup"].get(name)
        per = "".join(f"{by_slice[name][s]:.2f}× | " if name in by_slice else "1.00× | " for s in slices)
        lines.append(
            f"| {name} | {tps:.1f} | {f'{sp:.2f}×' if sp else '1.00×'} | {per}"
            f"{inter['identical'][name]}/{inter['prompts']} |"
        )
    return [*lines, ""]


def _speed_goal(
    inter: dict[str, Any], prefix: str, what: str, workload: str | None = None, max_tokens: int | None = None
) -> str:
    """The 2× goal's row for the fastest k, measured `what` way: over every timed slice, or on the `workload` slice
    alone (report-section prompts, answers cut at `max_tokens`; whole reports are bench.report_speed's); met only
    when every timed output is identical."""
    by_slice = inter.get(f"{prefix}speedup_by_slice", {})
    if workload is None:
        speedups, goal = inter[f"{prefix}speedup"], ""
        timed = "+".join(inter.get("slices", SPEED_SLICES[:2]))  # results before the report slice: test+plant
    else:
        speedups = {n: v[workload] for n, v in by_slice.items()}
        goal, timed = f" on {workload}-section prompts (answers cut at {max_tokens} tokens)", f"{workload} slice"
    name, sp = max(speedups.items(), key=lambda kv: kv[1])
    same = inter["identical"][name] == inter["prompts"]
    per = "" if workload else "".join(f"; {s} {x:.2f}×" for s, x in by_slice.get(name, {}).items())
    return (
        f"| speedup ≥ 2.0×{goal} at identical output{what} | {sp:.2f}× ({name}, {timed}, interleaved, "
        f"identical={'yes' if same else 'NO'}{per}) | {'yes' if sp >= 2.0 and same else 'no'} |"
    )


def _goals(results: dict[str, Any]) -> list[str]:
    """The issue's three goals against the measured figures, met or missed."""
    heads = results["heads"]
    if "eagle31" not in heads:
        return []
    first = heads["eagle31"]["runs"][0]["acceptance"]
    taus = {name: acc["tau"] for name, acc in first.items()}
    out = ["Goals (2-core CPU):\n", "| goal | measured | met? |", "|---|---|---|"]
    inter = results.get("speed_interleaved")
    if inter:
        decoded = "decode_speedup" in inter
        out.append(_speed_goal(inter, "", ", end to end" if decoded else ""))
        if decoded:
            out.append(_speed_goal(inter, "decode_", ", decode rate"))
            # The specialist's own goal (issue #13): its workload, the report sections, on their own.
            if "report" in inter.get("slices", ()):
                cut = results["config"]["max_tokens"]
                out.append(_speed_goal(inter, "", ", end to end", "report", cut))
                out.append(_speed_goal(inter, "decode_", ", decode rate", "report", cut))
    else:
        out.append("| speedup ≥ 2.0× at identical output | not measured (`speed_ks` empty) | — |")
    if taus:
        name, tau = max(taus.items(), key=lambda kv: kv[1])
        out.append(
            "| τ ≥ 3.0 at the best k | "
            + ", ".join(f"{n} {t:.2f}" for n, t in taus.items())
            + f" | {'yes' if tau >= 3.0 else 'no'} (best: {name}) |"
        )
    if "eagle3" in heads and "perturbed" in first and "perturbed" in heads["eagle3"]["runs"][0]["acceptance"]:
        ratio = first["perturbed"]["tau"] / heads["eagle3"]["runs"][0]["acceptance"]["perturbed"]["tau"]
        out.append(f"| τ(3.1)/τ(3) ≥ 1.2 on perturbed templates | {ratio:.2f} | {'yes' if ratio >= 1.2 else 'no'} |")
    out.append("")
    return out
