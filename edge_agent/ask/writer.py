"""The answer writer: one to three sentences from the facts, in the question's language, written in code.

Wordings are data (the narrative wing's wording/ask/v1/answers.toml, read through its face by wording.py); this
module picks them per fact and fills them in through `Phrasing` (phrasing.py), which says the names, numbers, times
and plant text as the question's language does. A note that reads like an instruction is withheld.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from edge_agent.ask.phrasing import Finding, Phrasing
from edge_agent.config import ShiftConfig
from edge_agent.reports.facts import DEFAULT_CONSOLE

# Sentences in an answer: the spec's "one to three" — each fact's main sentence first, then their details.
MAX_SENTENCES = 3
# Assets listed by name in the namespace answer; the rest are counted.
LIST_MAX = 8


class Writer(Phrasing):
    # --- the answer --------------------------------------------------------------------------------------------

    def answer(self, findings: Sequence[Finding]) -> str:
        """Each finding's first sentence, then their further ones, to at most MAX_SENTENCES, each finding's together
        (its "the main cause was..." right after its own count). Findings of one kind (the same question of several
        assets: "las bombas") give their first sentences only: a further one would not say whose it is."""
        per_fact = [self.sentences(f) for f in findings]
        if len({f.kind for f in findings}) < len(findings):
            per_fact = [self._each(f) or s[:1] for f, s in zip(findings, per_fact, strict=True)]
            if len(per_fact) > MAX_SENTENCES:  # each of four assets: the last ones share the last sentence
                tail = [s for sentences in per_fact[MAX_SENTENCES - 1 :] for s in sentences]
                per_fact = [*per_fact[: MAX_SENTENCES - 1], [_joined(tail)]]
        taken = [0] * len(per_fact)
        depth = 0
        while sum(taken) < MAX_SENTENCES and any(len(s) > depth for s in per_fact):
            for i, sentences in enumerate(per_fact):
                if len(sentences) > depth and sum(taken) < MAX_SENTENCES:
                    taken[i] += 1
            depth += 1
        return " ".join(sentence for sentences, n in zip(per_fact, taken, strict=True) for sentence in sentences[:n])

    def _each(self, f: Finding) -> list[str]:
        """The one sentence a finding gets among several of its kind, where its first would leave out what is asked
        of each: the longest stop beside the count ("la parada más larga de cada una"). Else none."""
        v = f.values
        if f.kind != "stops" or v["count"] < 2 or v["longest_s"] is None:
            return []
        during, stops = self.during(f), self.count(v["count"], "stop")
        dur, longest = self.duration(v["total_s"]), self.duration(v["longest_s"])
        return [
            self.phrase("stops.total_longest", **self.subject(f), during=during, stops=stops, dur=dur, longest=longest)
        ]

    def clarification(self, reason: str, candidates: Sequence[str]) -> str:
        if candidates:
            names = [self._candidate(c) for c in candidates]
            return self.phrase("clarify.candidates", list=self.join(names, self.w["or"]))
        key = {"unknown_name": "unknown", "unknown_tag": "unknown", "unknown_asset": "unknown"}.get(reason)
        key = key or {"future_window": "future", "unknown_time": "time"}.get(reason, "other")
        return self.phrase(f"clarify.{key}")

    def _candidate(self, name: str) -> str:
        """A candidate as people say it: "la bomba P-101", "la vibración de la bomba P-101"; else as written."""
        if name in self._tags:
            return self.the(self.tag(name))
        return self.the(self.label(name)) if name in self._assets or name in self._lines else name

    def refusal(self, reason: str) -> str:
        key = f"refused.{reason}"
        return self.phrase(key if key in self.w["phrases"] else "refused.other")

    # --- sentences per tool ------------------------------------------------------------------------------------

    def sentences(self, f: Finding) -> list[str]:
        method = getattr(self, f"_{f.kind}", None)
        return method(f) if method is not None else []

    def _stops(self, f: Finding) -> list[str]:
        v, subject = f.values, self.subject(f)
        during, stops = self.during(f), self.count(v["count"], "stop")
        if v["count"] == 0:
            return [self.phrase("stops.none", **subject, during=during)]
        top = max(v["reasons"], key=lambda r: (r["total_s"], r["count"])) if v["reasons"] else None
        reason = self.reason(top["reason"]) if top is not None else None
        if v["count"] == 1 and v["longest_at"] is not None:
            at, dur = self.at(v["longest_at"], f), self.duration(v["longest_s"])
            out = [self.phrase("stops.one", **subject, during=during, stops=stops, at=at, dur=dur)]
            if reason is not None:
                out.append(self.phrase("stops.cause_one", reason=reason))
        else:
            out = [self.phrase("stops.total", **subject, during=during, stops=stops, dur=self.duration(v["total_s"]))]
            if top is not None:
                cause = {"stops": self.count(top["count"], "stop"), "dur": self.duration(top["total_s"])}
                out.append(self.phrase("stops.cause", reason=reason, **cause))
            if v["longest_s"] is not None and v["longest_at"] is not None:
                at, dur = self.at(v["longest_at"], f), self.duration(v["longest_s"])
                out.append(self.phrase("stops.longest", at=at, dur=dur))
        if v["open_count"]:
            key = "stops.open_one" if v["open_count"] == 1 else "stops.open_many"
            out.append(self.phrase(key, n=self.number(v["open_count"])))
        return out

    def _tag_stats(self, f: Finding) -> list[str]:
        v = f.values
        tag = self.tag(v["tag"])
        unit = self.unit(v["unit"])
        if not v["count"] or v["max"] is None:
            return [self.phrase("tag.none", of_tag=self.of(tag), during=self.during(f))]
        names = {"Tag": self.cap(self.the(tag)), "unit": unit, "during": self.during(f)}
        if v["count"] == 1:
            return [self.phrase("tag.single", **names, max=self.number(v["max"]), at=self.at(v["max_at"], f))]
        out = [
            self.phrase(
                "tag.range",
                **names,
                min=self.number(v["min"]),
                max=self.number(v["max"]),
                mean=self.number(v["mean"]),
            ),
            self.phrase("tag.max_at", at=self.at(v["max_at"], f), at_min=self.at(v["min_at"], f)),
        ]
        if v["last"] is not None and v["last_at"] is not None:
            out.append(self.phrase("tag.last", last=self.number(v["last"]), unit=unit, at=self.at(v["last_at"], f)))
        return out

    def _tag_value_at(self, f: Finding) -> list[str]:
        v = f.values
        tag = self.tag(v["tag"])
        value = v["value"]
        if isinstance(value, bool):  # a run state: said of the asset ("la bomba P-101 estaba parada")
            info = self._tags.get(v["tag"])
            owner = self.label(info.asset if info is not None else v["tag"].partition(".")[0])
            state = self.w["yes" if value else "no"][owner.article in ("la", "a")]
            at = self.at(v["sampled_at"], f)
            return [self.phrase("value.state", Subject=self.cap(self.the(owner)), state=state, at=at)]
        if isinstance(value, int | float):
            shown, unit = self.number(value), self.unit(v["unit"])
        elif value is None:
            shown, unit = self.w["none"], ""
        else:
            shown, unit = f"«{self.text(str(value))}»" if self.lang == "es" else f"“{self.text(str(value))}”", ""
        return [self.phrase("value.at", of_tag=self.of(tag), value=shown, unit=unit, at=self.at(v["sampled_at"], f))]

    def _production(self, f: Finding) -> list[str]:
        v, subject = f.values, self.subject(f)
        if not v["produced"] or v["unit"] is None:
            return [self.phrase("production.none", **subject, during=self.during(f))]
        unit = self.unit(v["unit"])
        out = [
            self.phrase(
                "production.total", **subject, produced=self.number(v["produced"]), unit=unit, during=self.during(f)
            )
        ]
        if v["scrap"] is not None and v["good"] is not None:
            out.append(
                self.phrase("production.scrap", scrap=self.number(v["scrap"]), good=self.number(v["good"]), unit=unit)
            )
        else:
            out.append(self.phrase("production.no_scrap"))
        return out

    def _quality_checks(self, f: Finding) -> list[str]:
        v, subject = f.values, self.subject(f)
        if v["count"] == 0:
            return [self.phrase("quality.none", **subject, during=self.during(f))]
        out = [
            self.phrase(
                "quality.total",
                **subject,
                during=self.during(f),
                checks=self.count(v["count"], "check"),
                passed=self.count(v["passed"], "passed"),
                failed=self.count(v["failed"], "failed"),
            )
        ]
        failed = [c for c in v["checks"] if c["result"] == "fail"]
        if failed:
            last = failed[0]  # newest first
            out.append(self.phrase("quality.last_failed", at=self.at(last["at"], f), in_asset=self.in_(last["asset"])))
        return out

    def _alarms(self, f: Finding) -> list[str]:
        v, subject = f.values, self.subject(f)
        out = []
        if v["count"] == 0:
            out.append(self.phrase("alarms.none", **subject, during=self.during(f)))
        else:
            p = v["by_priority"]
            out.append(
                self.phrase(
                    "alarms.total",
                    **subject,
                    during=self.during(f),
                    alarms=self.count(v["count"], "alarm"),
                    high=self.number(p["high"]),
                    medium=self.number(p["medium"]),
                    low=self.number(p["low"]),
                )
            )
        active = v.get("active_at")
        if active is not None:
            if not active:  # of an asset, named: in a plural answer each sentence says whose it is
                none = self.phrase("alarms.active_none_of", **subject) if f.args.get("asset") else None
                out.insert(0, none or self.phrase("alarms.active_none"))
            else:
                oldest = min(active, key=lambda a: a["since"])
                key = "alarms.active_one" if len(active) == 1 else "alarms.active_many"
                out.insert(
                    0,
                    self.phrase(
                        key,
                        n=self.number(v["active_count"]),
                        condition=self.text(oldest["condition"]),
                        in_asset=self.in_(oldest["asset"]),
                        at=self.at(oldest["since"], f, "since"),
                    ),
                )
        if v["count"] and v["most_frequent"]:
            top = v["most_frequent"][0]
            out.append(
                self.phrase(
                    "alarms.frequent",
                    condition=self.text(top["condition"]),
                    in_asset=self.in_(top["asset"]),
                    times=self.count(top["count"], "time"),
                )
            )
        return out

    def _notes(self, f: Finding) -> list[str]:
        v = f.values
        if not v["notes"]:
            return [self.phrase("notes.none", during=self.during(f))]
        latest = v["notes"][0]  # newest first
        text = self.w["withheld"] if latest["flagged"] else self.text(latest["text"])
        return [
            self.phrase(
                "notes.latest",
                notes=self.count(v["count"], "note"),
                during=self.during(f),
                author=self.text(latest["author"]),
                at=self.at(latest["at"], f),
                text=text,
            )
        ]

    def _kpis(self, f: Finding) -> list[str]:
        out = []
        for fact in f.values["facts"]:
            sentence = self._kpi(fact, f)
            if sentence is not None:
                out.append(sentence)
        return out or [self.phrase("kpis.none", during=self.during(f))]

    def _kpi(self, fact: dict[str, Any], f: Finding) -> str | None:
        v, kind = fact["values"], fact["kind"]
        subject = self.label(fact["subject"]) if fact["subject"] else self.label(None)
        if kind == "oee":
            if v.get("oee") is None:
                return self.phrase(
                    "oee.missing",
                    of_subject=self.of(subject),
                    during=self.during(f),
                    missing=self.text(v.get("missing") or self.w["na"]),
                )
            return self.phrase(
                "oee.value",
                of_subject=self.of(subject),
                during=self.during(f),
                oee=self.percent(v["oee"]),
                availability=self.percent(v.get("availability")),
                performance=self.percent(v.get("performance")),
                quality=self.percent(v.get("quality")),
            )
        if kind == "mtbf":
            mttr: dict[str, Any] = next(
                (x["values"] for x in f.values["facts"] if x["kind"] == "mttr" and x["subject"] == fact["subject"]), {}
            )
            if not v.get("failure_count") or v.get("mtbf_s") is None:
                return self.phrase("reliability.none", Subject=self.cap(self.the(subject)), during=self.during(f))
            return self.phrase(
                "reliability.value",
                of_subject=self.of(subject),
                during=self.during(f),
                mtbf=self.duration(v["mtbf_s"]),
                mttr=self.duration(mttr["mttr_s"]) if mttr.get("mttr_s") is not None else self.w["na"],
                failures=self.count(v["failure_count"], "failure"),
            )
        if kind == "alarm_rate":
            # Without [[reports.kpi.consoles]] one operator takes every alarm: the subject is the plant, not a console.
            console = fact["subject"] or DEFAULT_CONSOLE
            return self.phrase(
                "alarm_rate.plant" if console == DEFAULT_CONSOLE else "alarm_rate.value",
                console=self.text(console),
                alarms=self.count(v["count"], "alarm"),
                during=self.during(f),
                per_hour=self.number(v["per_hour_mean"]),
                rating=self.w["labels"].get(str(v.get("rating")), self.w["na"]),
            )
        return None

    def _reports_list(self, f: Finding) -> list[str]:
        reports = f.values["reports"]
        during = self.during(f) if f.window is not None else ""
        if not reports:
            return [self.phrase("reports.none", during=during)]
        newest = max(reports, key=lambda r: r["requested_at"])
        return [
            self.phrase(
                "reports.list",
                reports=self.count(len(reports), "report"),
                during=during,
                report_id=newest["report_id"],
                type=self.w["labels"].get(newest["type"], newest["type"]),
                status=self.w["labels"].get(newest["status"], newest["status"]),
                at=self.at(newest["requested_at"], None),
            )
        ]

    def _report_get(self, f: Finding) -> list[str]:
        v = f.values
        return [
            self.phrase(
                "report.get",
                report_id=v["report_id"],
                type=self.w["labels"].get(v["type"], v["type"]),
                status=self.w["labels"].get(v["status"], v["status"]),
                at=self.at(v["requested_at"], None),
                facts=self.count(len(v["facts"]), "fact"),
            )
        ]

    def _namespace(self, f: Finding) -> list[str]:
        v = f.values
        out = [
            self.phrase(
                "namespace.summary",
                site=v["site"],
                lines=self.count(len(v["lines"]), "line"),
                assets=self.count(len(v["assets"]), "asset"),
                tags=self.count(len(v["tags"]), "tag"),
            )
        ]
        if v["assets"]:
            names = [self.label(a["asset"]).noun for a in v["assets"][:LIST_MAX]]
            out.append(self.phrase("namespace.assets", list=self.join(names, self.w["and"])))
        return out


def _joined(sentences: Sequence[str]) -> str:
    """Sentences as one, joined by semicolons: "La bomba P-102 tuvo 2 alarmas…; el tanque T-301 tuvo 24 alarmas…"."""
    parts = [s.rstrip().removesuffix(".") for s in sentences]
    return "; ".join([parts[0], *(p[:1].lower() + p[1:] for p in parts[1:])]) + "."


def shift_of(start: datetime, end: datetime, tz: ZoneInfo, shifts: Sequence[ShiftConfig], now: datetime) -> str | None:
    """The shift whose occurrence is [start, end), or starts at `start` and is under way at `end` = `now` (a shift
    so far); None for any other window (yesterday 06:00-12:00 is part of shift A, not shift A)."""
    local = start.astimezone(tz)
    for shift in shifts:
        h, m = map(int, shift.start.split(":"))
        eh, em = map(int, shift.end.split(":"))
        if (local.hour, local.minute, local.second, local.microsecond) != (h, m, 0, 0):
            continue
        shift_end = local.replace(hour=eh, minute=em)
        if (eh, em) <= (h, m):
            shift_end += timedelta(days=1)
        if end == shift_end or (end == now and end < shift_end):
            return shift.name
    return None
