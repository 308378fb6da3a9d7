"""bench.llamacpp's figures as measured: each engine's Tally, the Results of a run (var/bench/llamacpp.json),
and the goals and thresholds they are judged by."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

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
