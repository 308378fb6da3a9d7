"""Operational qualification: the agent does what it claims, on this server, against the private agent (sandbox).
Each check is a pure verdict over what was measured (tested without I/O), beside the function that measures it."""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from edge_agent.audit import AuditLog
from edge_agent.audit.component import origin_for
from edge_agent.audit.evidence_records import RECORDS
from edge_agent.audit.export import export_bundle
from edge_agent.audit.log import ENTRIES
from edge_agent.audit.verify import Problem, VerifyResult, verify_bundle, verify_log
from edge_agent.config import AgentConfig
from edge_agent.llm import launcher
from edge_agent.llm.types import Completion
from edge_agent.qualify.check import Check, Measure
from edge_agent.qualify.requests import Answered
from edge_agent.reports.document import ReplayResult, StoreEvidence, recompute
from edge_agent.sim.hostile import HostileOutcome
from edge_agent.store import Store


def check_settings(config: AgentConfig, device: str) -> Check:
    """The settings the report's bytes depend on: on a CPU one generation at a time (no batch-invariant mode there).
    Every precision is deterministic; it is recorded here, and float32 alone also makes the draft change nothing
    (oq.draft_identical; at another precision, the measure oq.draft_effect)."""
    llm = config.llm
    wrong = []
    if device != "cuda" and llm.max_concurrent != 1:
        wrong.append(f"llm.max_concurrent = {llm.max_concurrent} on {device}")
    return Check(
        id="oq.settings",
        shows="the configuration cannot make the same request give different bytes",
        criterion="llm.max_concurrent = 1 unless on CUDA (batch-invariant mode)",
        measured=f"device {device}, precision (llm.dtype) {llm.dtype}, max_concurrent {llm.max_concurrent}"
        + (f"; not deterministic: {', '.join(wrong)}" if wrong else ""),
        passed=not wrong,
    )


def settings(config: AgentConfig) -> Check:
    return check_settings(config, launcher.resolve_device(config.llm.device))


def check_determinism(answered: Sequence[Answered]) -> Check:
    """Every request of one type (same window, scope, language) got a report, all with the same body sha256."""
    bodies: dict[str, list[str | None]] = defaultdict(list)
    for a in answered:
        bodies[a.type].append(a.body_sha256)
    parts, ok = [], bool(bodies)
    for report_type, hashes in bodies.items():
        distinct = set(hashes)
        same = None not in distinct and len(distinct) == 1 and len(hashes) >= 2
        ok = ok and same
        shown = ", ".join(sorted(h[:12] if h else "no report" for h in distinct))
        parts.append(f"{report_type}: {len(hashes)} reports, {len(distinct)} distinct bodies ({shown})")
    return Check(
        id="oq.determinism",
        shows="the same request gives byte-identical reports (reproducible evidence, replayable by an auditor)",
        criterion="at least 2 requests per report type over MQTT, each answered, one body sha256 per type",
        measured="; ".join(parts) or "no reports",
        passed=ok,
    )


def compare_draft(
    plain: Sequence[Completion], draft: Sequence[Completion] | None, precision: str = "float32"
) -> Check | Measure:
    """float32 promises that the draft changes no output: a check, passed only when every prompt's tokens with the
    draft equal those without. Other precisions do not promise it (a k+1-token verify pass rounds differently from a
    1-token one; BENCHMARKS.md, "Report workload speed"), and no draft configured has nothing to compare: the count
    is a measure, and oq.determinism and oq.replay hold the configured engine to its own bytes."""
    if draft is None:
        return Measure(
            id="oq.draft_effect",
            shows="whether speculative decoding changes the output: no draft runs, so nothing to compare",
            measured="no draft configured (llm.speculative.enabled = false): the engine is the plain one",
        )
    differ = [i for i, (p, d) in enumerate(zip(plain, draft, strict=True)) if p.token_ids != d.token_ids]
    measured = f"{len(plain) - len(differ)} of {len(plain)} prompts identical" + (
        f"; prompts {differ} differ" if differ else ""
    )
    if precision != "float32":
        return Measure(
            id="oq.draft_effect",
            shows=f"how often the draft changes the output at llm.dtype = {precision} (only float32 promises never)",
            measured=measured,
        )
    return Check(
        id="oq.draft_identical",
        shows="speculative decoding changes only the speed: the draft engine writes the plain engine's tokens",
        criterion="on the fixed report-section prompts, token ids with the draft == without, every prompt",
        measured=measured,
        passed=bool(plain) and not differ,
    )


def check_replay(result: ReplayResult) -> Check:
    measured = (
        f"report {result.report_id}: recorded {result.recorded_body_sha256[:12]},"
        f" replayed {(result.replayed_body_sha256 or '-')[:12]}"
    )
    if result.refused:
        measured += f"; refused: {result.refused}"
    elif result.differences:
        measured += f"; differs in {', '.join(result.differences)}"
    return Check(
        id="oq.replay",
        shows="`edge-agent audit replay` regenerates a stored report from its records and settings, byte for byte",
        criterion="the replayed body's sha256 equals the recorded one",
        measured=measured,
        passed=result.identical,
    )


def check_tamper(edited: int, edit_found: Problem | None, removed: int, removal_found: Problem | None) -> Check:
    def said(problem: Problem | None) -> str:
        return str(problem) if problem is not None else "verify passed"

    return Check(
        id="oq.tamper",
        shows="an edited or a removed audit entry is found and named by its sequence number",
        criterion=f"on copies of the log: entry {edited} edited → verify names entry {edited}; entry {removed}"
        f" removed → verify names entry {removed}",
        measured=f"edited: {said(edit_found)}; removed: {said(removal_found)}",
        passed=edit_found is not None
        and edit_found.seq == edited
        and removal_found is not None
        and removal_found.seq == removed,
    )


def tamper_self_test(audit_dir: Path, workdir: Path) -> Check:
    """One copy of the log with one entry's payload edited, another with a later entry removed; each verified."""
    lines = (audit_dir / ENTRIES).read_bytes().splitlines(keepends=True)
    edited, removed = len(lines) // 3, 2 * len(lines) // 3
    found: list[Problem | None] = []
    for name, seq in (("edited", edited), ("removed", removed)):
        copy = workdir / f"tamper-{name}"
        shutil.copytree(audit_dir, copy)
        changed = list(lines)
        if name == "edited":
            entry = json.loads(lines[seq])
            entry["payload"] = {**entry["payload"], "qualify_edit": True}
            changed[seq] = json.dumps(entry, separators=(",", ":")).encode() + b"\n"
        else:
            del changed[seq]
        (copy / ENTRIES).write_bytes(b"".join(changed))
        found.append(verify_log(copy).problem)
    return check_tamper(edited, found[0], removed, found[1])


def check_hostile(outcome: HostileOutcome, restarts: dict[str, int]) -> Check:
    unhandled = [
        f"{c.channel}/{c.cls} {c.tried - c.handled} of {c.tried}" for c in outcome.classes if c.handled != c.tried
    ]
    restarted = {name: n for name, n in restarts.items() if n}
    measured = (
        f"{sum(c.tried for c in outcome.classes)} inputs in {len(outcome.classes)} classes,"
        f" settled in {outcome.seconds:.1f} s; unhandled: {', '.join(unhandled) or 'none'};"
        f" good lost: {outcome.lost}; stray publishes: {outcome.stray_publishes};"
        f" component restarts: {restarted or 'none'}"
    )
    return Check(
        id="oq.hostile",
        shows="bad input is quarantined or refused with its reason and stops nothing (no component restarts)",
        criterion="every bad input of every class quarantined, refused or dropped as expected; every good message"
        " stored once; nothing published outside the requester's namespace; no component restarted",
        measured=measured,
        passed=outcome.unhandled == 0 and outcome.lost == 0 and not restarted,
    )


def check_bundle(intact: VerifyResult, changed: VerifyResult, reports: int) -> Check:
    return Check(
        id="oq.bundle",
        shows="an exported bundle lets an auditor recompute every fact offline, and a changed record is refused",
        criterion="audit export carries ≥ 1 report with its records; verify-bundle --recompute passes on it and fails"
        " on a copy with one record changed",
        measured=f"{reports} reports exported; intact: {intact.summary()}; one record changed: {changed.summary()}",
        passed=reports > 0 and intact.ok and not changed.ok,
    )


def bundle_self_test(config: AgentConfig, workdir: Path) -> Check:
    """Export the private agent's log (closed: the sandbox has stopped) with its evidence, verify it recomputing
    every fact, then change one record of a copy and verify that."""
    out = workdir / "bundle"
    with (
        AuditLog.open(config.paths.audit_dir, origin_for(config)) as log,
        Store(config.paths.store_path) as store,
    ):
        result = export_bundle(
            config.paths.audit_dir,
            out,
            reports_dir=config.paths.state_dir / "reports",
            log=log,
            actor="qualify",
            evidence=StoreEvidence(store, config.reports),
        )
    intact = verify_bundle(out, recompute=recompute)
    changed_dir = workdir / "bundle-changed"
    shutil.copytree(out, changed_dir)
    records = changed_dir / RECORDS
    lines = records.read_bytes().splitlines(keepends=True)
    if lines:
        record = json.loads(lines[0])
        record["key"] = f"{record['key']}-changed"
        lines[0] = json.dumps(record, separators=(",", ":")).encode() + b"\n"
        records.write_bytes(b"".join(lines))
    changed = verify_bundle(changed_dir, recompute=recompute)
    return check_bundle(intact, changed, len(result.reports) if lines else 0)
