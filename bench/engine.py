"""Engine on CPU: tokens/s vs HF transformers `generate`, start-up time, memory peak, and each precision (float32,
bfloat16, int8) with an EAGLE-3 draft at k = 2..4 and without: how many greedy outputs the draft changes, and speed.

    .venv/bin/python -m bench.engine [--prompts 8] [--max-tokens 64] [--ks 2 3 4] [--dtypes float32 bfloat16 int8]
                                     [--draft DIR] [--no-compiled] [--no-hf]

Needs the prepared model (`make model`). The draft is `--draft`, else the shipped head in assets/ when it exists,
else a randomly initialised EAGLE-3.1 head (acceptance ≈ 0: speed with a draft is then a lower bound). Every
configuration runs the same prompts one at a time, greedy, in this one run. Writes the "Engine" section of
BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bench.report import RunInfo, met, write_section
from edge_agent.llm.chat import render_chat

REPO = Path(__file__).resolve().parents[1]
MODEL_DIR = REPO / "models" / "default"
SHIPPED_HEAD = REPO / "assets" / "eagle31-smollm2-135m"

PROMPTS = [
    "Summarise: pump P-101 tripped twice on high vibration during shift A.",
    "Write one sentence about a chlorine dosing alarm that cleared after 4 minutes.",
    "List two checks an operator should do after a tank level sensor fault.",
    "Explain in plain words what a pressure deadband is.",
    "Draft a short handover note: filter F-3 backwashed at 10:20, turbidity back to 0.3 NTU.",
    "What should a shift supervisor do when a blower's motor temperature keeps rising?",
    "Describe a safe way to isolate a leaking valve on a water main.",
    "Give three causes of low suction pressure on a centrifugal pump.",
    "Write a two-sentence incident summary: power dip at 03:12, two pumps restarted automatically.",
    "Explain why a flow meter might read zero while the pump is running.",
    "Summarise the day: 14 alarms, 12 acknowledged within 5 minutes, 2 escalated to maintenance.",
    "What is the purpose of a lockout-tagout procedure?",
    "Write a polite message asking maintenance to inspect compressor C-2 for noise.",
    "Explain the difference between an alarm and an event in a SCADA system.",
    "Give a short checklist for starting a standby pump.",
    "Summarise: reservoir level dropped from 82% to 64% overnight; inflow valve found 30% open.",
    "Why should operators log manual overrides of automatic control?",
    "Write one paragraph about energy use of the aeration blowers this week: 5% above last week.",
    "List the information a good shift report should contain.",
    "Explain what a PLC watchdog fault means for an operator.",
    "Describe how to respond to a high-high level alarm in a wet well.",
    "Summarise: dosing pump DP-2 ran dry for 90 seconds; no product reached the network.",
    "What does it mean when a sensor value has bad quality in OPC UA?",
    "Write a short note thanking the night shift for handling a storm event.",
]


@dataclass
class Run:
    name: str
    dtype: str
    k: int | None
    compiled: bool = False
    start_s: float = 0.0
    tokens: int = 0
    seconds: float = 0.0
    # The float32 no-draft engine, timed prompt by prompt in alternation with this one: both see the same load.
    base_tokens: int = 0
    base_seconds: float = 0.0
    peak_rss_mib: float = 0.0
    outputs: list[list[int]] = field(default_factory=list)
    mean_acceptance_length: float | None = None

    @property
    def tokens_per_s(self) -> float:
        return self.tokens / self.seconds if self.seconds else 0.0

    @property
    def vs_base(self) -> float | None:
        """tokens/s relative to the float32 no-draft engine measured alongside (interleaved)."""
        if not (self.base_seconds and self.seconds and self.base_tokens):
            return None
        return self.tokens_per_s / (self.base_tokens / self.base_seconds)


def _peak_rss_mib(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def bench_config(run: Run, draft: Path | None, state: Path) -> Any:
    """The agent config of one configuration: the prepared model, drafting only when the run has a k (speculative
    decoding is on by default, and a config naming its model_dir must name the head or turn drafting off)."""
    from edge_agent.config import AgentConfig

    llm: dict[str, Any] = {
        "model_dir": str(MODEL_DIR),
        "dtype": run.dtype,
        "max_model_len": 2048,
        "enforce_eager": not run.compiled,
        "speculative": {"enabled": False},
    }
    if run.k is not None:
        llm["speculative"] = {"enabled": True, "draft": str(draft), "num_speculative_tokens": run.k}
    return AgentConfig.model_validate({"site": {"id": "bench"}, "paths": {"state_dir": str(state)}, "llm": llm})


async def open_bench_engine(run: Run, draft: Path | None, state: Path) -> Any:
    from edge_agent.llm.local import LocalEngine

    engine = LocalEngine(bench_config(run, draft, state))
    started = time.monotonic()
    await engine.start()
    run.start_s = time.monotonic() - started
    return engine


async def timed(engine: Any, prompt: str, max_tokens: int) -> tuple[Any, float]:
    from edge_agent.llm.types import ChatMessage, GenerationParams

    t0 = time.monotonic()
    completion = await engine.generate(
        [ChatMessage(role="user", content=prompt)], GenerationParams(max_tokens=max_tokens)
    )
    return completion, time.monotonic() - t0


async def measure(run: Run, engine: Any, prompts: list[str], max_tokens: int, base: Any | None) -> None:
    """Each prompt on `base` (when given) then on `engine`; outputs and acceptance recorded for `engine`."""
    accepted = drafts = 0
    for prompt in prompts:
        if base is not None:
            completion, seconds = await timed(base, prompt, max_tokens)
            run.base_tokens += len(completion.token_ids)
            run.base_seconds += seconds
        completion, seconds = await timed(engine, prompt, max_tokens)
        run.tokens += len(completion.token_ids)
        run.seconds += seconds
        run.outputs.append(completion.token_ids)
        if completion.spec is not None:
            accepted += completion.spec.accepted
            drafts += completion.spec.drafts
    run.peak_rss_mib = _peak_rss_mib(engine.pid)
    if run.k is not None:
        run.mean_acceptance_length = 1 + accepted / drafts if drafts else 1.0


def hf_generate(prompts: list[str], max_tokens: int, threads: int) -> dict[str, Any]:
    """HF transformers greedy `generate`, float32, one prompt at a time (runs in its own process)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.set_num_threads(threads)
    started = time.monotonic()
    tokenizer = AutoTokenizer.from_pretrained(MODEL_DIR)
    model = AutoModelForCausalLM.from_pretrained(MODEL_DIR, dtype=torch.float32).eval()
    start_s = time.monotonic() - started
    tokens = 0
    seconds = 0.0
    outputs = []
    for prompt in prompts:
        text = render_chat(tokenizer, [{"role": "user", "content": prompt}])
        ids = tokenizer(text, return_tensors="pt", add_special_tokens=False).input_ids
        t0 = time.monotonic()
        with torch.inference_mode():
            out = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=max_tokens, do_sample=False)
        seconds += time.monotonic() - t0
        new = out[0, ids.shape[1] :].tolist()
        tokens += len(new)
        outputs.append(new)
    return {
        "start_s": start_s,
        "tokens": tokens,
        "seconds": seconds,
        "outputs": outputs,
        "peak_rss_mib": _peak_rss_mib(os.getpid()),
    }


def run_hf(prompts: list[str], max_tokens: int) -> Run:
    """HF in a child process with the engine's environment (same cores, same Intel OpenMP), for a fair comparison."""
    from edge_agent.config import AgentConfig
    from edge_agent.llm.launcher import worker_env, worker_spec

    llm = {"model_dir": str(MODEL_DIR), "speculative": {"enabled": False}}  # HF runs no draft
    config = AgentConfig.model_validate({"site": {"id": "bench"}, "llm": llm})
    env = worker_env(config, worker_spec(config))
    threads = int(env["OMP_NUM_THREADS"])
    payload = json.dumps({"prompts": prompts, "max_tokens": max_tokens, "threads": threads})
    done = subprocess.run(
        [sys.executable, "-m", "bench.engine", "--hf-child", payload],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    run = Run(name="HF transformers generate", dtype="float32", k=None)
    run.start_s, run.tokens, run.seconds = result["start_s"], result["tokens"], result["seconds"]
    run.outputs, run.peak_rss_mib = result["outputs"], result["peak_rss_mib"]
    return run


def _run_from(data: dict[str, Any]) -> Run:
    return Run(**data)


def differing(a: Run, b: Run) -> int:
    return sum(x != y for x, y in zip(a.outputs, b.outputs, strict=True))


def markdown(
    runs: list[Run], hf: Run | None, n_prompts: int, max_tokens: int, head: str, load: float | None = None
) -> str:
    baseline = {r.dtype: r for r in runs if r.k is None and not r.compiled}
    fp32 = baseline.get("float32")
    lines = [
        f"{n_prompts} prompts × up to {max_tokens} new tokens, greedy, one request at a time, 2048-token context. "
        f"Draft head: {head}. Speed ratios are interleaved: every configuration ran prompt by prompt in alternation "
        "with the float32 no-draft engine, so both saw the same machine load.",
        "",
        "| configuration | start-up s | tokens/s | × float32 no draft (interleaved) | outputs ≠ no draft (same dtype) "
        "| outputs ≠ float32 no draft | mean acceptance length | peak RSS MiB |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in runs:
        same = baseline.get(r.dtype)
        ratio = f"{r.vs_base:.2f}×" if r.vs_base is not None else "1 (reference)"
        diff_same = f"{differing(r, same)}/{n_prompts}" if same and same is not r else "—"
        diff_fp32 = f"{differing(r, fp32)}/{n_prompts}" if fp32 and fp32 is not r else "—"
        mal = f"{r.mean_acceptance_length:.2f}" if r.mean_acceptance_length is not None else "—"
        lines.append(
            f"| {r.name} | {r.start_s:.1f} | {r.tokens_per_s:.1f} | {ratio} | {diff_same} | {diff_fp32} | {mal} "
            f"| {r.peak_rss_mib:.0f} |"
        )
    if hf is not None:
        hf_diff = f"{differing(hf, fp32)}/{n_prompts}" if fp32 else "—"
        lines.append(
            f"| {hf.name} (float32, own process) | {hf.start_s:.1f} | {hf.tokens_per_s:.1f} | {hf.vs_base:.2f}× | — "
            f"| {hf_diff} | — | {hf.peak_rss_mib:.0f} |"
        )
    lines.append("")
    if hf is not None and hf.vs_base and fp32 is not None:
        lines.append(
            f"Engine (float32, no draft) vs HF transformers `generate`: **{1 / hf.vs_base:.2f}×** tokens/s (the engine "
            f"timed right before and after HF); token-identical outputs on "
            f"{n_prompts - differing(fp32, hf)}/{n_prompts} prompts."
        )
    for dtype, plain in baseline.items():
        if fp32 is not None and plain is not fp32 and plain.vs_base:
            lines.append(
                f"{dtype} vs float32 without a draft: {plain.vs_base:.2f}× tokens/s; outputs differ on "
                f"{differing(plain, fp32)}/{n_prompts} prompts."
            )
    for dtype, same in baseline.items():
        drafted = [r for r in runs if r.dtype == dtype and r.k is not None]
        if drafted:
            total = sum(differing(r, same) for r in drafted)
            lines.append(
                f"{dtype}: the draft changed {total} of {len(drafted) * n_prompts} outputs "
                f"({len(drafted)} draft settings × {n_prompts} prompts)."
            )
    compiled = [r for r in runs if r.compiled]
    if compiled and fp32 is not None and compiled[0].vs_base:
        c = compiled[0]
        lines.append(
            f"torch.compile (enforce_eager = false) vs eager, float32 no draft: start-up {c.start_s:.0f} s vs "
            f"{fp32.start_s:.0f} s, {c.vs_base:.2f}× tokens/s, outputs differ on "
            f"{differing(c, fp32)}/{n_prompts} prompts."
        )
    if load is not None:
        lines += [
            "",
            f"Load average at the end of the run: {load:.1f} on {os.cpu_count()} cores (other jobs shared the "
            "CPUs): absolute tokens/s move by tens of percent between runs; the interleaved ratios much less; "
            "the identical-output counts not at all.",
        ]
    return "\n".join(lines)


def headline_goal(runs: list[Run], hf: Run | None, n_prompts: int) -> tuple[str, str]:
    """The section's headline (the float32 engine against HF `generate`, the fastest float32 draft setting) and its
    goal: a draft never changes the float32 default's output."""
    fp32 = next((r for r in runs if r.dtype == "float32" and r.k is None and not r.compiled), None)
    drafted = [r for r in runs if r.dtype == "float32" and r.k is not None]
    parts = []
    if hf is not None and hf.vs_base:
        parts.append(f"float32 engine {1 / hf.vs_base:.2f}× HF transformers `generate` tokens/s")
    best = max((r for r in drafted if r.vs_base is not None), key=lambda r: r.vs_base or 0.0, default=None)
    if best is not None and best.vs_base is not None:
        parts.append(f"best draft {best.name} {best.vs_base:.2f}× no draft")
    if fp32 is None or not drafted:
        return "; ".join(parts) or "no float32 reference run", "the draft leaves float32 output unchanged: not run"
    changed = sum(differing(r, fp32) for r in drafted)
    goal = (
        f"the draft leaves float32 output unchanged ({changed} of {len(drafted) * n_prompts} outputs differ): "
        f"{met(changed == 0)}"
    )
    return "; ".join(parts), goal


async def bench(args: argparse.Namespace) -> tuple[list[Run], Run | None, str]:
    prompts = (PROMPTS * ((args.prompts // len(PROMPTS)) + 1))[: args.prompts]
    with tempfile.TemporaryDirectory(prefix="bench-engine-") as tmp:
        tmp_path = Path(tmp)
        if args.draft is not None:
            draft, head = args.draft, f"`{args.draft}`"
        elif SHIPPED_HEAD.is_dir():
            draft, head = SHIPPED_HEAD, f"trained EAGLE-3.1 head `{SHIPPED_HEAD.relative_to(REPO)}`"
        else:
            from harness.draft_head import export_random_head

            draft = export_random_head(tmp_path / "random-head")
            head = "randomly initialised EAGLE-3.1 head (acceptance ≈ 0; the trained head is not exported yet)"
        baseline = Run("float32, no draft", "float32", None)
        base = await open_bench_engine(baseline, None, tmp_path / "base")
        try:
            await measure(baseline, base, prompts, args.max_tokens, None)
            print(f"{baseline.name}: start {baseline.start_s:.1f} s, {baseline.tokens_per_s:.1f} tok/s", flush=True)
            runs = [baseline]
            configs = [
                Run(f"{dtype}, " + (f"EAGLE k={k}" if k else "no draft"), dtype, k)
                for dtype in args.dtypes
                for k in [None, *args.ks]
                if (dtype, k) != ("float32", None)
            ]
            if not args.no_compiled:
                configs.append(Run("float32, no draft, torch.compile", "float32", None, compiled=True))
            for run in configs:
                engine = await open_bench_engine(run, draft if run.k else None, tmp_path / f"run{len(runs)}")
                try:
                    await measure(run, engine, prompts, args.max_tokens, base)
                finally:
                    await engine.aclose()
                print(
                    f"{run.name}: start {run.start_s:.1f} s, {run.tokens_per_s:.1f} tok/s, {run.vs_base:.2f}× base",
                    flush=True,
                )
                runs.append(run)
            hf = None
            if not args.no_hf:
                # HF runs in its own process; the base engine is timed right before and right after it.
                before = Run("base before HF", "float32", None)
                await measure(before, base, prompts, args.max_tokens, None)
                hf = run_hf(prompts, args.max_tokens)
                after = Run("base after HF", "float32", None)
                await measure(after, base, prompts, args.max_tokens, None)
                hf.base_tokens, hf.base_seconds = before.tokens + after.tokens, before.seconds + after.seconds
                assert hf.vs_base is not None  # both timed runs generated tokens
                print(f"HF: {hf.tokens_per_s:.1f} tok/s, engine {1 / hf.vs_base:.2f}× HF", flush=True)
        finally:
            await base.aclose()
    return runs, hf, head


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.engine", description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=8)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--ks", type=int, nargs="*", default=[2, 3, 4])
    parser.add_argument("--dtypes", nargs="*", default=["float32", "bfloat16", "int8"])
    parser.add_argument("--draft", type=Path)
    parser.add_argument("--no-compiled", action="store_true", help="skip the torch.compile run (~90 s start-up)")
    parser.add_argument("--no-hf", action="store_true")
    parser.add_argument("--results", type=Path, default=REPO / "var" / "bench" / "engine.json")
    parser.add_argument("--markdown-only", action="store_true", help="rewrite the section from --results")
    parser.add_argument("--hf-child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.hf_child:
        job = json.loads(args.hf_child)
        print(json.dumps(hf_generate(job["prompts"], job["max_tokens"], job["threads"])))
        return 0
    if args.markdown_only:
        saved = json.loads(args.results.read_text())
        runs = [_run_from(r) for r in saved["runs"]]
        hf = _run_from(saved["hf"]) if saved["hf"] else None
        head, load, argv = saved["head"], saved["load"], saved["argv"]
        run = RunInfo.from_dict(saved.get("run"))
    else:
        run = RunInfo.now()
        runs, hf, head = asyncio.run(bench(args))
        load = os.getloadavg()[0]
        argv = argv if argv is not None else sys.argv[1:]
        args.results.parent.mkdir(parents=True, exist_ok=True)
        args.results.write_text(
            json.dumps(
                {
                    "runs": [asdict(r) for r in runs],
                    "hf": asdict(hf) if hf else None,
                    "head": head,
                    "load": load,
                    "argv": argv,
                    "prompts": args.prompts,
                    "max_tokens": args.max_tokens,
                    "run": run.as_dict(),
                }
            )
        )
        saved = {"prompts": args.prompts, "max_tokens": args.max_tokens}
    body = markdown(runs, hf, saved["prompts"], saved["max_tokens"], head, load)
    print(body)
    command = ".venv/bin/python -m bench.engine " + " ".join(argv)
    headline, goal = headline_goal(runs, hf, saved["prompts"])
    write_section("engine", "Engine", body, command.strip(), headline=headline, goal=goal, run=run)
    return 0


if __name__ == "__main__":
    sys.exit(main())
