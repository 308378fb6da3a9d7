"""Ask planner benchmark: the model planner (the model's reading under a JSON schema, resolved in code) against the
reference planner, on bench.ask's held-out questions.

    .venv/bin/python -m bench.ask_planner [--config configs/demo.toml] [--model-dir DIR] [--no-write]

Stores bench.ask's simulated history (seed SEED), starts the config's engine (int8 and the shipped EAGLE 3.1 head at
the defaults), then for every question of bench/data/ask_questions.toml: the model's reading (`read_question`: greedy,
constrained to the reading's schema), the answer planned from it (`answer_at(..., reading=...)`; a reading that breaks
a rule is not followed and the reference planner plans, as the service does) and the reference planner's answer.
Counted: readings that parse (every one should: the schema constrains the decoding), readings followed, plans equal
to the reference planner's, answers right by bench.ask's verdict (the figure computed here from the records, in the
text and the facts, a determining record cited), refusals kept, and the reading's latency (engine request → reply).
In process, not over MQTT: bench.ask measures the service's own latency.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
import tomllib
from pathlib import Path
from typing import Any

from bench.ask import OUR_QUESTIONS, RIGHT_GOAL, percentile
from bench.report import RunInfo, met, write_section
from bench.support.ask_expected import SEED, SHIFTS, TZ, expectations, history, verdict
from edge_agent.ask.model_planner import PlanDraft, read_question
from edge_agent.ask.pipeline import AskAnswer, answer_at
from edge_agent.base.types import utcnow
from edge_agent.config import AgentConfig, load_config
from edge_agent.llm.engine import open_engine
from edge_agent.store import Store

COMMAND = ".venv/bin/python -m bench.ask_planner"


def planner_config(config: AgentConfig, state: Path) -> AgentConfig:
    """`config`'s engine, with bench.ask's site, shifts and a private state directory."""
    site = config.site.model_copy(update={"id": "demo", "timezone": TZ})
    shifts = AgentConfig.model_validate({"site": {"id": "demo"}, "reports": {"shifts": SHIFTS}}).reports.shifts
    reports = config.reports.model_copy(update={"shifts": shifts})
    paths = config.paths.model_copy(update={"state_dir": state})
    return config.model_copy(update={"site": site, "reports": reports, "paths": paths})


async def run(config: AgentConfig) -> dict[str, Any]:
    data = tomllib.loads(OUR_QUESTIONS.read_text(encoding="utf-8"))
    questions = [*data["answerable"], *data["refuse"]]
    now = utcnow()
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        cfg = planner_config(config, Path(tmp) / "state")
        store = Store(cfg.paths.store_path)
        try:
            store.insert_records(history(now))
            async with open_engine(cfg) as engine:
                await read_question(engine, questions[0]["q"])  # one-off costs (grammar compile, first prefill)
                for i, q in enumerate(questions):
                    start = time.perf_counter()
                    model = await read_question(engine, q["q"])
                    seconds = time.perf_counter() - start
                    ask = {"user": "bench", "lang": q["lang"], "now": now}
                    by_model = answer_at(cfg, store, q["q"], reading=model.reading, **ask)
                    by_code = answer_at(cfg, store, q["q"], **ask)
                    row = _row(q, model.text, model.rejected, seconds, by_model, by_code) | {"tau": model.tau}
                    if i < len(data["answerable"]):
                        row["verdict"] = verdict(expectations(q, store, now), by_model.model_dump(mode="json"))
                    rows.append(row)
        finally:
            store.close()
    return summarize(rows, len(data["answerable"]))


def _row(
    q: dict[str, Any], text: str, rejected: str | None, seconds: float, by_model: AskAnswer, by_code: AskAnswer
) -> dict[str, Any]:
    try:
        PlanDraft.model_validate_json(text)
        parses = True
    except ValueError:
        parses = False
    plan = by_model.plan.model_dump(mode="json") if by_model.plan else None
    reference = by_code.plan.model_dump(mode="json") if by_code.plan else None
    return {
        "q": q["q"],
        "lang": q["lang"],
        "reading": text,
        "parses": parses,
        "rejected": rejected,
        "seconds": seconds,
        "status": by_model.status,
        "reference_status": by_code.status,
        "same_plan": plan == reference and by_model.status == by_code.status,
    }


def summarize(rows: list[dict[str, Any]], answerable: int) -> dict[str, Any]:
    asked, refuse = rows[:answerable], rows[answerable:]
    seconds = [r["seconds"] for r in rows]
    return {
        "seed": SEED,
        "questions": len(rows),
        "parses": sum(r["parses"] for r in rows),
        "followed": sum(r["rejected"] is None for r in rows),
        "same_plan": sum(r["same_plan"] for r in rows),
        "answerable": answerable,
        "right": sum(r.get("verdict") == "right" for r in asked),
        # right by the model's own plan: its reading followed, not the reference planner standing in
        "right_by_model": sum(r.get("verdict") == "right" and r["rejected"] is None for r in asked),
        "to_refuse": len(refuse),
        "refused": sum(r["status"] in ("refused", "needs_clarification") for r in refuse),
        "reading_p50_s": statistics.median(seconds),
        "reading_p95_s": percentile(seconds, 0.95),
        "tau": statistics.mean(t) if (t := [r["tau"] for r in rows if r["tau"] is not None]) else None,
        "rows": rows,
    }


def markdown(s: dict[str, Any], config: AgentConfig) -> tuple[str, str, str]:
    right = s["right"] / s["answerable"]
    own = s["right_by_model"] / s["answerable"]
    rows = [
        f"| readings that parse under the schema | {s['parses']}/{s['questions']} | all |",
        f"| readings followed (spans in the question) | {s['followed']}/{s['questions']} | — |",
        f"| plans equal to the reference planner's | {s['same_plan']}/{s['questions']} | — |",
        f"| answered with the right figure and a determining record | {s['right']}/{s['answerable']} ({right:.1%}) "
        f"| ≥ {RIGHT_GOAL:.0%} |",
        f"| of those, planned from the model's own reading (followed) | {s['right_by_model']}/{s['answerable']} "
        f"({own:.1%}) | ≥ {RIGHT_GOAL:.0%} |",
        f"| commands, out of scope, unknown assets, injections refused or asked back | {s['refused']}/{s['to_refuse']} "
        "| — |",
        f"| the reading: p50 / p95 engine request → reply | {s['reading_p50_s']:.2f} s / "
        f"{s['reading_p95_s']:.2f} s | — |",
        f"| the reading: tokens per target pass (τ, EAGLE 3.1 head) | "
        f"{'—' if s['tau'] is None else format(s['tau'], '.2f')} | ≥ 3.0 |",
    ]
    llm = config.llm
    body = (
        f"bench.ask's questions (seed {s['seed']}), planned by the model (`{llm.model_dir or 'models/default'}`, "
        f"{llm.dtype}, draft {'on' if llm.speculative.enabled else 'off'}) under the reading's JSON schema and "
        "resolved in code; a reading whose span is not in the question is not followed (the reference planner "
        "plans). In process, one question at a time.\n\n| measure | result | goal |\n| --- | --- | --- |\n"
        + "\n".join(rows)
        + "\n"
    )
    headline = (
        f"{s['parses']}/{s['questions']} readings parse, {s['same_plan']} plans as the reference's, "
        f"{s['right']}/{s['answerable']} right, {s['right_by_model']} by the model's own plan; reading p50 "
        f"{s['reading_p50_s']:.2f} s"
    )
    goal = f"≥ {RIGHT_GOAL:.0%} right by the model's own plan (not the reference planner standing in): "
    goal += met(own >= RIGHT_GOAL)
    return body, headline, goal


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=Path("configs/demo.toml"))
    parser.add_argument("--model-dir", type=Path, default=None, help="another prepared model")
    parser.add_argument("--out", type=Path, default=Path("var/bench/ask_planner.json"))
    parser.add_argument("--no-write", action="store_true", help="print only; leave BENCHMARKS.md alone")
    args = parser.parse_args()
    config = load_config(args.config)
    if args.model_dir is not None:
        config = config.model_copy(update={"llm": config.llm.model_copy(update={"model_dir": args.model_dir})})
    result = asyncio.run(run(config))
    result["run"] = RunInfo.now().as_dict()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False), encoding="utf-8")
    print(json.dumps({k: v for k, v in result.items() if k != "rows"}, indent=1))
    if args.no_write:
        return
    body, headline, goal = markdown(result, config)
    command = COMMAND + (f" --model-dir {args.model_dir}" if args.model_dir else "")
    write_section("ask_planner", "Ask planner", body, command, headline=headline, goal=goal)


if __name__ == "__main__":
    main()
