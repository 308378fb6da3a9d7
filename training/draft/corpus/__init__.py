"""Prompt corpus for training and benchmarking draft heads, built from the data files in this directory.

Slices (each deterministic in its seed):
- `train` / `test`: task prompts (reports, alarm summaries, shift handovers, log questions, maintenance Q&A, general
  chat) in es/en/pt from `instructions.json`, with several system prompts and chat templates and short or medium
  contexts. A prompt belongs to `test` when the sha256 of its text falls in bucket 0 of 10, so the two never overlap.
- `plant`: prompts worded as in `plant_style.json`, which training never reads: what plants will actually send.
- `long`: ≥ 1.5k tokens of log lines, then a question about them.
- `perturbed`: test prompts under chat templates and system prompts that training never saw (raw prompt strings).
"""

from __future__ import annotations

import hashlib
import json
import random
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

Slice = Literal["train", "test", "plant", "long", "perturbed"]
SLICES: tuple[str, ...] = ("train", "test", "plant", "long", "perturbed")
LANGS: tuple[str, ...] = ("es", "en", "pt")
_DIR = Path(__file__).parent
# One prompt in ten is held out: enough test prompts for a benchmark while training keeps 90 % of the wordings.
_TEST_BUCKETS = 10
# ~35 tokens per log line: 50 lines put the long slice above 1.5k tokens and below the engine's 4k context.
_LONG_LOG_LINES = 50


class Prompt(BaseModel):
    """One prompt: chat `messages` (rendered with the model's template) or a `raw` pre-rendered prompt string."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    slice: str
    lang: str
    kind: str
    messages: list[dict[str, str]] | None = None
    raw: str | None = None

    def text(self) -> str:
        return self.raw if self.raw is not None else json.dumps(self.messages, ensure_ascii=False)


@cache
def _load(name: str) -> dict:
    return json.loads((_DIR / name).read_text(encoding="utf-8"))


def _bucket(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big") % _TEST_BUCKETS


class _Facts:
    """Random but plausible plant data rendered as text: readings, alarms, log lines."""

    def __init__(self, rng: random.Random, lang: str) -> None:
        self.rng, self.lang = rng, lang
        self.plant = _load("plant.json")
        self.line = rng.choice(self.plant["lines"])
        self.equipment = rng.choice(self.plant["equipment"])
        self.day = rng.choice(["2026-03-04", "2026-07-19", "2026-11-02"])

    def _time(self, minute: int) -> str:
        return f"{self.day} {minute // 60 % 24:02d}:{minute % 60:02d}"

    def readings(self, n: int) -> str:
        tags = self.rng.sample(self.plant["tags"], k=min(n, len(self.plant["tags"])))
        col = {"es": 1, "en": 2, "pt": 3}[self.lang]
        style = self.rng.choice(["bullets", "csv", "kv", "json", "sentence"])
        rows = []
        for tag in tags:
            lo, hi = tag[5], tag[6]
            rows.append((tag[0], tag[col], round(self.rng.uniform(lo, hi), self.rng.choice([0, 1, 2])), tag[4]))
        if style == "csv":
            return "tag,description,value,unit\n" + "\n".join(f"{t},{d},{v},{u}" for t, d, v, u in rows)
        if style == "kv":
            return " ".join(f"{t}={v}{u}" for t, _, v, u in rows)
        if style == "json":
            return json.dumps({t: {"value": v, "unit": u} for t, _, v, u in rows}, ensure_ascii=False)
        if style == "sentence":
            return "; ".join(f"{d} {v} {u}" for _, d, v, u in rows) + "."
        return "\n".join(f"- {t} ({d}): {v} {u}" for t, d, v, u in rows)

    def _fill(self, template: str) -> str:
        p, rng = self.plant, self.rng
        return template.format(
            equipment=rng.choice(p["equipment"]) if rng.random() < 0.3 else self.equipment,
            line=self.line,
            product=rng.choice(p["products"]),
            person=rng.choice(p["people"]),
            tag=rng.choice(p["tags"])[0],
            value=round(rng.uniform(1, 250), 1),
            batch=f"L{rng.randint(1000, 9999)}",
            count=rng.randint(200, 60000),
            wo=f"OT-{rng.randint(10000, 99999)}",
        )

    def alarms(self, n: int) -> str:
        start = self.rng.randint(0, 1439)
        out = []
        for i in range(n):
            text = self._fill(self.rng.choice(self.plant["alarms"][self.lang]))
            prio = self.rng.choice(["HIGH", "MED", "LOW", "CRIT"])
            out.append(f"{self._time(start + 7 * i + self.rng.randint(0, 6))} [{prio}] {text}")
        return "\n".join(out)

    def events(self, n: int) -> str:
        start = self.rng.randint(0, 1439)
        area = self.line.lower().replace(" ", "")
        out = []
        for i in range(n):
            text = self._fill(self.rng.choice(self.plant["log_events"][self.lang]))
            out.append(f"{self._time(start + 3 * i + self.rng.randint(0, 2))} {area} {text}")
        return "\n".join(out)


def _task_prompt(rng: random.Random, lang: str, max_log_lines: int) -> tuple[str, str]:
    """(kind, user text) for one task prompt in `lang`."""
    ins = _load("instructions.json")
    facts = _Facts(rng, lang)
    kind = rng.choices(["report", "alarms", "handover", "logs", "maintenance_qa", "general"], [3, 2, 2, 2, 2, 1.5])[0]
    shift = rng.choice(facts.plant["shifts"][lang])
    if kind == "maintenance_qa":
        return kind, facts._fill(rng.choice(ins["maintenance_qa"][lang]))
    if kind == "general":
        return kind, rng.choice(ins["general"][lang])
    head = rng.choice(ins["tasks"][kind][lang]).format(line=facts.line, shift=shift, equipment=facts.equipment)
    if kind == "report":
        body = facts.readings(rng.randint(2, 8))
    elif kind == "alarms":
        body = facts.alarms(rng.randint(2, 10))
    else:
        body = facts.events(rng.randint(4, max_log_lines))
    return kind, (f"{head}\n{body}" if rng.random() < 0.7 else f"{body}\n\n{head}")


def _chat(rng: random.Random, lang: str, user: str) -> tuple[list[dict[str, str]] | None, str | None]:
    """Messages with one of the training system prompts (or none), or 1 in 10 a raw alternative template."""
    ins = _load("instructions.json")
    if rng.random() < 0.1:
        return None, rng.choice(ins["alt_templates"]).format(user=user)
    roll = rng.random()
    if roll < 0.25:
        return [{"role": "user", "content": user}], None
    system_lang = lang if roll < 0.85 else rng.choice(LANGS)
    return [
        {"role": "system", "content": rng.choice(ins["system"][system_lang])},
        {"role": "user", "content": user},
    ], None


def _standard(seed: int) -> list[Prompt]:
    """An endless-enough pool of train/test-distribution prompts for `seed` (deduplicated by text)."""
    rng = random.Random(seed)
    seen: set[str] = set()
    pool: list[Prompt] = []
    for _ in range(6000):
        lang = rng.choice(LANGS)
        kind, user = _task_prompt(rng, lang, max_log_lines=24)
        messages, raw = _chat(rng, lang, user)
        p = Prompt(id="", slice="", lang=lang, kind=kind, messages=messages, raw=raw)
        text = p.text()
        if text in seen:
            continue
        seen.add(text)
        split = "test" if _bucket(text) == 0 else "train"
        pool.append(p.model_copy(update={"id": hashlib.sha256(text.encode()).hexdigest()[:16], "slice": split}))
    return pool


def _plant(rng: random.Random) -> Prompt:
    style = _load("plant_style.json")
    lang = rng.choice(LANGS)
    facts = _Facts(rng, lang)
    tag = rng.choice(facts.plant["tags"])
    user = rng.choice(style["prompts"]).format(
        equipment=facts.equipment,
        line=facts.line,
        data=facts.readings(rng.randint(2, 7)),
        alarms=facts.alarms(rng.randint(2, 8)),
        events=facts.events(rng.randint(4, 25)),
        tag_name=tag[{"es": 1, "en": 2, "pt": 3}[lang]],
        value=round(rng.uniform(tag[5], tag[6]), 1),
    )
    messages = [{"role": "user", "content": user}]
    if rng.random() < 0.5:
        messages.insert(0, {"role": "system", "content": rng.choice(style["system"])})
    return Prompt(id="", slice="plant", lang=lang, kind="plant", messages=messages)


def _long(rng: random.Random) -> Prompt:
    ins = _load("instructions.json")
    lang = rng.choice(LANGS)
    facts = _Facts(rng, lang)
    log = facts.events(_LONG_LOG_LINES)
    question = rng.choice(ins["tasks"]["logs"][lang] + ins["tasks"]["handover"][lang]).format(
        line=facts.line, equipment=facts.equipment, shift=rng.choice(facts.plant["shifts"][lang])
    )
    return Prompt(
        id="", slice="long", lang=lang, kind="long", messages=[{"role": "user", "content": f"{log}\n\n{question}"}]
    )


def _perturbed(rng: random.Random, base: Prompt) -> Prompt:
    style = _load("plant_style.json")
    user = next(m["content"] for m in (base.messages or []) if m["role"] == "user") if base.messages else None
    if user is None:
        raise ValueError("perturbed prompts are built from chat prompts")
    system = rng.choice(style["perturbed_system"]).format(line=_Facts(rng, base.lang).line)
    raw = rng.choice(style["perturbed_templates"]).format(system=system, user=user)
    return Prompt(id="", slice="perturbed", lang=base.lang, kind=base.kind, raw=raw)


def build(slice_: Slice, n: int, seed: int = 0) -> list[Prompt]:
    """`n` prompts of one slice (fewer only if the slice's pool is smaller), deterministic in `seed`."""
    if slice_ not in SLICES:
        raise ValueError(f"unknown slice {slice_!r}; one of {SLICES}")
    if slice_ in ("train", "test"):
        # The pool is always built with seed 0, so train and test never share a prompt whatever seed picks from it.
        pool = [p for p in _standard(0) if p.slice == slice_]
        return random.Random(seed).sample(pool, k=min(n, len(pool)))
    rng = random.Random(f"{slice_}:{seed}")
    if slice_ == "plant":
        made = [_plant(rng) for _ in range(n)]
    elif slice_ == "long":
        made = [_long(rng) for _ in range(n)]
    else:
        chat = [p for p in build("test", 10 * n, seed) if p.messages is not None]
        made = [_perturbed(rng, p) for p in chat[:n]]
    return [p.model_copy(update={"id": hashlib.sha256(p.text().encode()).hexdigest()[:16]}) for p in made]
