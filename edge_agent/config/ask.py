"""Ask the plant: questions over MQTT answered from stored records (docs/ask.md)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from edge_agent.config.base import Section


class AskConfig(Section):
    enabled: bool = True
    # Who turns a question into tool calls: "reference", the planner in code (keywords; answers with no engine); or
    # "model", the engine reading the question under a JSON schema (edge_agent.ask.model_planner), its reading
    # resolved in code, the reference planner standing in when a reading breaks a rule or the engine fails.
    planner: Literal["reference", "model"] = "reference"
    # How long a question waits for the model's reading before the reference planner plans it: the engine may be
    # writing a report (one generation at a time on a CPU). 5 s: a reading takes about 1 s on 2 cores.
    model_timeout_s: float = Field(5.0, gt=0, le=60)
    # What people call things → the asset, line or tag id: {"bomba 101" = "P-101"}. Looked up before fuzzy matching.
    aliases: dict[str, str] = Field(default_factory=dict)
    # 31 days: a month of a plant's records; the demo plant's ~112 000 tag samples a day make ~3.5 M rows, which the
    # tools aggregate in SQL rather than load.
    max_window_days: float = Field(31.0, gt=0, le=366)
    # Rows one tool may read; more is refused (`outside_budget`) before anything is aggregated.
    max_rows: int = Field(500_000, ge=1)
    # Questions answered at once, each user's one at a time (edge_agent.ask.work_queue). 2, measured on 2 cores: a
    # quick question asked behind another user's slow one (3 days of a 1 Hz tag, ~5 s) waited 5.2-5.4 s with 1 worker
    # and 0.6-1.0 s with 2, the slow one no slower. More add rate only with cores to spare (`compute`: each worker in
    # a process of its own takes a core).
    workers: int = Field(2, ge=1, le=32)
    # Where the workers compute answers: "processes", each worker in a process of its own (edge_agent.ask.processes),
    # so answers use more than one core; "threads", in the agent's process, one answer computing at a time under its
    # interpreter lock. Measured on 2 cores (bench.ask, 8 askers): 4,537 questions a minute in processes, 3,093 in
    # threads; one person's answer p50 20.8 ms against 16.2 ms, the hop to the process and back.
    compute: Literal["processes", "threads"] = "processes"
    # Questions waiting; beyond this one is refused (`queue_full`). 16: a control room's worth of people at once.
    queue_max: int = Field(16, ge=1)
    # Questions one user may have waiting (`queue_share_full`): no one user holds the queue.
    per_user_max: int = Field(4, ge=1)
    # An answer not ready this long after it was taken from the queue is refused (`deadline`). Measured: a shift's
    # question answers in well under 1 s on 2 cores; 20 s leaves room for a month's window.
    deadline_s: float = Field(20.0, gt=0, le=600)
    # Questions and tool calls per user in any sliding 60 s; beyond, refused (`throttled`). 30: an assistant makes
    # a handful of tool calls per question a person asks.
    throttle: int = Field(30, ge=1)
