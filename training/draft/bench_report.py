"""The draft bench's results written out (`bench`): acceptance and state-norm plots, and the BENCHMARKS.md section
with the recipe the heads were made by, their τ, acceptance per position, speed and the goals."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from edge_agent.config.llm import LlmConfig
from training.draft.recipe import DraftRecipe

# Slices timed single-stream, as the agent runs reports (those of them in the recipe's `slices`).
SPEED_SLICES: tuple[str, ...] = ("test", "plant", "report")
# The agent's default compile mode: what a user's engine runs, so what its speed figures are measured at.
AGENT_EAGER: bool = LlmConfig.model_fields["enforce_eager"].default


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
