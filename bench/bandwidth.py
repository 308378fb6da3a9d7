"""Memory-bandwidth limit of decoding: measured read bandwidth, and the tokens/s it allows at each weight precision.

    .venv/bin/python -m bench.bandwidth              # 1 and 2 threads, 3 sweeps (about a minute)
    .venv/bin/python -m bench.bandwidth --no-write   # print only

Decoding one token with a small model on a CPU reads every weight once (the tied embedding / lm_head once: the
lm_head matmul reads the whole matrix, the embedding lookup one row), so a target forward pass cannot be faster than
bytes of weights ÷ read bandwidth. This bench measures sustained read bandwidth (torch sum over a float32 buffer,
1 and 2 threads, several repetitions, best and median) on a buffer far larger than the L3 cache (DRAM) and, because a
decode loop re-reads the same weights every pass, on buffers the size of the weights themselves (part of them may stay
in a large last-level cache). Bytes per pass come from the safetensors headers of models/default and the draft head
(no weights loaded) and the llama.cpp GGUF's file size (`edge_agent.llm.prepare.find_gguf`, the file bench.llamacpp
runs). With speculative decoding one target pass yields τ tokens on average while the draft adds k passes of its
own weights; the per-token ceiling at the measured τ is τ × bandwidth ÷ (target bytes + k × draft bytes).

Not counted: KV-cache reads (30 layers × 3 KV heads × 64 × 2 × 4 bytes ≈ 46 KB per token of context in float32,
≈ 23 MB per pass at a 500-token prompt), activations, and quantization scales (int8 and 4-bit are weights only, 1 and
0.5 bytes per parameter: a lower bound on bytes, so an upper bound on speed). Writes ## Memory-bandwidth limit.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import struct
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.report import REPO, RunInfo, write_section

MODEL_DIR = REPO / "models" / "default"
DRAFT_DIR = REPO / "models" / "eagle31-default"
RESULTS = REPO / "var" / "bench" / "bandwidth.json"
# Bytes per parameter read at each weight precision (int8 / 4-bit: weight-only, scales not counted).
PRECISIONS: dict[str, float] = {"fp32": 4.0, "bf16": 2.0, "int8": 1.0, "4-bit": 0.5}
DTYPE_BYTES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U8": 1, "BOOL": 1}
# τ measured outside BENCHMARKS.md: issue #38's held-out general chat prompts (default engine, default head, k = 4).
TAU_CHAT_ISSUE_38 = 2.54
GEMV = "fp32 weights, `torch.mv`"
INT8_ENGINE = "int8 engine"
HIDDEN = 576  # SmolLM2-135M's hidden size: the columns of its matrices


def safetensors_params(path: Path) -> tuple[int, int]:
    """(parameters, stored bytes) of a .safetensors file, from its header alone. A tied embedding is stored once."""
    with path.open("rb") as f:
        (length,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(length))
    params = stored = 0
    for name, info in header.items():
        if name == "__metadata__":
            continue
        n = 1
        for dim in info["shape"]:
            n *= dim
        params += n
        stored += n * DTYPE_BYTES[info["dtype"]]
    return params, stored


def int8_engine_bytes(path: Path) -> float:
    """Bytes per pass of the model as `llm.dtype = "int8"` runs it (edge_agent.llm.quantize): the linear layers'
    weights at 1 byte, everything else (embedding / lm_head, norms) at bfloat16's 2."""
    from edge_agent.llm.quantize import PROJECTIONS

    with path.open("rb") as f:
        (length,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(length))
    total = 0.0
    for name, info in header.items():
        if name != "__metadata__":
            n = 1
            for dim in info["shape"]:
                n *= dim
            total += n * (1 if PROJECTIONS.search(name) else 2)
    return total


def l3_bytes() -> int | None:
    """The last-level cache's size as the kernel reports it (a VM may report its host's); None when unknown."""
    for index in sorted(Path("/sys/devices/system/cpu/cpu0/cache").glob("index*")):
        try:
            if (index / "level").read_text().strip() == "3":
                size = (index / "size").read_text().strip()
                unit = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(size[-1], 1)
                return int(size.rstrip("KMG")) * unit
        except (OSError, ValueError):
            continue
    return None


@dataclass(frozen=True)
class Reading:
    size: int  # bytes in the buffer
    threads: int
    gbs: list[float]  # GB/s (10^9) of each repetition

    @property
    def best(self) -> float:
        return max(self.gbs)

    @property
    def median(self) -> float:
        return statistics.median(self.gbs)


def read_bandwidth(size: int, threads: int, reps: int, *, gemv: bool = False) -> Reading:
    """Sustained read bandwidth: `torch.sum` over a float32 buffer of `size` bytes on `threads` intra-op threads,
    after one untimed pass (page faults, cache warm-up); GB/s of each of `reps` timed passes. `gemv`: the buffer as
    a 576-column matrix times a vector (`torch.mv`, the product a decode pass runs) instead of a sum."""
    import torch

    torch.set_num_threads(threads)
    n = size // 4 // HIDDEN * HIDDEN if gemv else size // 4
    buf = torch.ones(n, dtype=torch.float32)
    if gemv:
        matrix, vector = buf.view(-1, HIDDEN), torch.ones(HIDDEN, dtype=torch.float32)
        op = lambda: torch.mv(matrix, vector)  # noqa: E731
    else:
        op = buf.sum
    op()
    gbs = []
    for _ in range(reps):
        start = time.perf_counter()
        op()
        gbs.append(n * 4 / (time.perf_counter() - start) / 1e9)
    del buf
    return Reading(size, threads, gbs)


def repetitions(size: int, reps: int) -> int:
    """At least `reps` passes, more on a small buffer (≈ 2 GB read in all, at most 50), as a decode loop re-reads."""
    return max(reps, min(50, -(-2_000_000_000 // size)))


def ceiling(bytes_per_pass: float, gbs: float) -> float:
    """Forward passes per second at most: bandwidth ÷ bytes read per pass."""
    return gbs * 1e9 / bytes_per_pass


def spec_ceiling(target_bytes: float, draft_bytes: float, k: int, tau: float, gbs: float) -> float:
    """Tokens/s at most with a draft: each target pass yields τ tokens and costs k draft passes besides."""
    return tau * gbs * 1e9 / (target_bytes + k * draft_bytes)


# llama.cpp's weights in limit_note: the GGUF file's size.
LLAMA_Q4_1 = "Q4_1"
# llm.dtype → the precision names of this bench's tables.
BY_DTYPE = {"float32": "fp32", "bfloat16": "bf16", "int8": INT8_ENGINE}


def limit_note(figures: Sequence[tuple[str, str, float, float | None]], k: int) -> str | None:
    """One paragraph for another bench's section: each (label, llm.dtype, measured tok/s, τ or None without a
    draft) against the ceiling at the last recorded bandwidth (var/bench/bandwidth.json); None before any run."""
    if not RESULTS.exists():
        return None
    recorded = json.loads(RESULTS.read_text(encoding="utf-8"))
    readings = recorded["readings"]["DRAM (> L3)"]
    threads = max(readings, key=int)
    gbs = statistics.median(readings[threads])
    target_params, _ = safetensors_params(MODEL_DIR / "model.safetensors")
    draft_params, _ = safetensors_params(DRAFT_DIR / "model.safetensors")
    when = (recorded.get("run") or {}).get("stamp", "an earlier run")
    parts = []
    for label, dtype, rate, tau in figures:
        precision = BY_DTYPE.get(dtype)
        if dtype == LLAMA_Q4_1:
            from edge_agent.llm.prepare import find_gguf

            target, draft = float(find_gguf().stat().st_size), 0.0
        elif precision is None:
            continue
        elif precision == INT8_ENGINE:
            target, draft = int8_engine_bytes(MODEL_DIR / "model.safetensors"), draft_params * PRECISIONS["bf16"]
        else:
            target, draft = target_params * PRECISIONS[precision], draft_params * PRECISIONS[precision]
        limit = ceiling(target, gbs) if tau is None else spec_ceiling(target, draft, k, tau, gbs)
        how = "one token per target pass" if tau is None else f"τ = {tau:.2f}, k = {k} draft passes"
        parts.append(f"{label} {rate:.1f} tok/s is {100 * rate / limit:.0f} % of its {limit:.0f} ({how})")
    if not parts:
        return None
    return (
        f"Memory-bandwidth limit (bench.bandwidth, {when}: {gbs:.1f} GB/s read on {threads} threads, weights read "
        f"once per pass; a limit, not a forecast): " + "; ".join(parts) + "."
    )


def quoted_taus(text: str) -> dict[str, float]:
    """τ as BENCHMARKS.md records it now: the report_speed section's `τ = X` and the llama.cpp section's compiled
    draft row; plus issue #38's chat figure. Missing ones are left out."""
    taus: dict[str, float] = {}
    section = re.search(r"<!-- bench:report_speed -->(.*?)<!-- /bench:report_speed -->", text, re.S)
    if section and (m := re.search(r"τ = ([\d.]+)", section[1])):
        taus["report workload, narrator head (bench.report_speed)"] = float(m[1].rstrip("."))
    section = re.search(r"<!-- bench:llamacpp -->(.*?)<!-- /bench:llamacpp -->", text, re.S)
    if section:
        header = next((line for line in section[1].splitlines() if line.startswith("| engine |") and "τ" in line), None)
        row = next(
            (line for line in section[1].splitlines() if "compiled (agent default)" in line and "|" in line), None
        )
        if header and row:
            cells = [c.strip() for c in header.strip("|").split("|")]
            values = [c.strip() for c in row.strip("|").split("|")]
            try:
                taus["4 report + 4 test prompts (bench.llamacpp)"] = float(values[cells.index("τ")])
            except (ValueError, IndexError):
                pass
    taus["held-out general chat prompts (issue #38)"] = TAU_CHAT_ISSUE_38
    return taus


def unwrap(text: str) -> str:
    """Each prose paragraph of `text` on one line (tables left as they are), as the other sections write theirs."""
    paragraphs = text.strip().split("\n\n")
    return "\n\n".join(p if p.lstrip().startswith("|") else " ".join(p.split()) for p in paragraphs)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=15, help="timed passes per buffer and thread count")
    parser.add_argument("--rounds", type=int, default=3, help="sweeps over every buffer, their passes pooled")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2], help="thread counts to measure")
    parser.add_argument("--dram-mib", type=int, default=0, help="DRAM buffer in MiB (default: 4 × L3, ≥ 1024)")
    parser.add_argument("--k", type=int, default=4, help="draft tokens per target pass (the agent's default)")
    parser.add_argument("--no-write", action="store_true", help="print only; leave BENCHMARKS.md alone")
    args = parser.parse_args(argv)

    from edge_agent.llm.prepare import find_gguf

    target_params, target_stored = safetensors_params(MODEL_DIR / "model.safetensors")
    draft_params, draft_stored = safetensors_params(DRAFT_DIR / "model.safetensors")
    gguf = find_gguf()
    gguf_bytes = gguf.stat().st_size
    target = {p: target_params * b for p, b in PRECISIONS.items()}
    draft = {p: draft_params * b for p, b in PRECISIONS.items()}
    # The default engine: int8 linear layers, the rest and the draft head in bfloat16.
    target[INT8_ENGINE] = int8_engine_bytes(MODEL_DIR / "model.safetensors")
    draft[INT8_ENGINE] = draft_params * PRECISIONS["bf16"]
    print(
        f"target {target_params:,} parameters ({target_stored / 1e6:.1f} MB stored); draft {draft_params:,} "
        f"({draft_stored / 1e6:.1f} MB stored); {gguf.name} {gguf_bytes / 1e6:.1f} MB",
        flush=True,
    )

    l3 = l3_bytes()
    dram = (args.dram_mib << 20) or max(1 << 30, 4 * (l3 or 0))
    sizes = {"DRAM (> L3)": dram}
    sizes |= {f"{p} weights": int(b) for p, b in target.items()}
    sizes["Q4_1 GGUF"] = gguf_bytes
    sizes[GEMV] = int(target["fp32"])
    load_before = os.getloadavg()[0]
    readings: dict[str, dict[int, Reading]] = {label: {} for label in sizes}
    for round_ in range(args.rounds):
        for label, size in sizes.items():
            for threads in args.threads:
                reps = args.reps if label.startswith("DRAM") else repetitions(size, args.reps)
                new = read_bandwidth(size, threads, reps, gemv=label == GEMV)
                old = readings[label].get(threads)
                readings[label][threads] = Reading(size, threads, (old.gbs if old else []) + new.gbs)
                print(
                    f"round {round_ + 1}: {label} {size / 1e6:.1f} MB, {threads} thread(s): best {new.best:.1f} "
                    f"GB/s, median {new.median:.1f} GB/s",
                    flush=True,
                )
    load_after = os.getloadavg()[0]

    threads = max(args.threads)
    dram_bw = readings["DRAM (> L3)"][threads].median
    text = (REPO / "BENCHMARKS.md").read_text(encoding="utf-8") if (REPO / "BENCHMARKS.md").exists() else ""
    taus = quoted_taus(text)

    results = {
        "target_params": target_params,
        "draft_params": draft_params,
        "gguf": gguf.name,
        "gguf_bytes": gguf_bytes,
        "l3_bytes": l3,
        "k": args.k,
        "readings": {label: {t: r.gbs for t, r in by.items()} for label, by in readings.items()},
        "taus": taus,
        "run": RunInfo.now().as_dict(),
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=1), encoding="utf-8")

    bw_rows = "\n".join(
        f"| {label} | {size / 1e6:,.1f} MB | "
        + " | ".join(f"{by[t].best:.1f} / {by[t].median:.1f}" for t in args.threads)
        + " |"
        for (label, size), by in zip(sizes.items(), readings.values(), strict=True)
    )
    thread_cols = " | ".join(f"{t} thread{'s' if t > 1 else ''}: best / median GB/s" for t in args.threads)

    def row(name: str, nbytes: float, label: str) -> str:
        ws = readings[label][threads].median
        return f"| {name} | {nbytes / 1e6:,.1f} MB | {ceiling(nbytes, dram_bw):.1f} | {ceiling(nbytes, ws):.1f} |"

    ceil_rows = [row(f"target, {p}", target[p], f"{p} weights") for p in target]
    ceil_rows.append(row(f"llama.cpp, `{gguf.name}` (file size)", gguf_bytes, "Q4_1 GGUF"))
    spec_rows = []
    for source, tau in taus.items():
        cells = [f"{spec_ceiling(target[p], draft[p], args.k, tau, dram_bw):.0f}" for p in target]
        spec_rows.append(f"| {source} | {tau:.2f} | " + " | ".join(cells) + " |")

    fp32_pass = ceiling(target["fp32"], dram_bw)
    gguf_pass = ceiling(gguf_bytes, dram_bw)
    one = readings["DRAM (> L3)"][min(args.threads)].median
    headline = (
        f"DRAM read {one:.1f} GB/s on {min(args.threads)} thread, {dram_bw:.1f} GB/s on {threads} (median): "
        f"at most {fp32_pass:.0f} target passes/s "
        f"at fp32, {ceiling(target['bf16'], dram_bw):.0f} at bf16, {ceiling(target[INT8_ENGINE], dram_bw):.0f} as "
        f"the default int8 engine runs it; llama.cpp's Q4_1 {gguf_pass:.0f} tok/s"
    )
    goal = "— (a measurement: the limit other benches' tok/s are read against)"
    l3_mib = f"{l3 / 2**20:,.0f} MiB" if l3 else "unknown"
    reread_col = "passes/s at the bandwidth re-reading a buffer of that size"
    body = f"""
Read bandwidth: `torch.sum` over a float32 buffer, per buffer size and thread count, {args.reps} timed passes after
an untimed one on the DRAM buffer and enough for ≈ 2 GB of re-reads (at most 50) on the others, the whole sweep
{args.rounds} times and the passes pooled (neighbours on this VM's host move the 2-thread figure between runs); GB =
10^9 bytes. The last row reads the fp32-sized buffer as a {HIDDEN}-column matrix times a vector (`torch.mv`, what a
decode pass runs), a check that the kernel the engine uses reaches the same bandwidth. The kernel reports a {l3_mib}
L3 (a VM may show its host's, shared with neighbours); the DRAM buffer is {dram / 2**20:,.0f} MiB. The other buffers
are the size of the weights a decode pass re-reads, so their figures include whatever of them stays in cache. Load
average {load_before:.1f} before, {load_after:.1f} after.

| buffer | size | {thread_cols} |
|---|---:|{"---:|" * len(args.threads)}
{bw_rows}

Bytes per pass: `models/default` has {target_params:,} parameters ({target_stored / 1e6:,.1f} MB stored; the tied
embedding / lm_head counted once, as the lm_head matmul reads it each pass); the draft head `models/eagle31-default`
{draft_params:,} ({draft_stored / 1e6:,.1f} MB stored, read at the engine's dtype). int8 and 4-bit are weights only
(scales, norms at fp32 and KV-cache reads not counted: ceilings are upper bounds). "{INT8_ENGINE}" is the default
`llm.dtype = "int8"` as it runs: the linear layers at 1 byte, the embedding / lm_head and norms at bfloat16, the
draft head at bfloat16.

Ceiling per target forward pass (no draft: one pass, one token), {threads} threads, median bandwidth:

| weights | bytes per pass | passes/s at DRAM bandwidth ({dram_bw:.1f} GB/s) | {reread_col} |
|---|---:|---:|---:|
{chr(10).join(ceil_rows)}

With the draft (k = {args.k}): tokens/s at most = τ × bandwidth ÷ (target bytes + {args.k} × draft bytes), target and
draft at the same precision, DRAM bandwidth ({dram_bw:.1f} GB/s), at the τ each source measured:

| τ measured on | τ | {" | ".join(f"tok/s at {p}" for p in target)} |
|---|---:|{"---:|" * len(target)}
{chr(10).join(spec_rows)}

llama.cpp decodes one token per pass (no draft): its ceiling is the passes/s row above.
"""
    print(headline, flush=True)
    if not args.no_write:
        write_section(
            "bandwidth",
            "Memory-bandwidth limit",
            unwrap(body),
            ".venv/bin/python -m bench.bandwidth",
            headline=headline,
            goal=goal,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
