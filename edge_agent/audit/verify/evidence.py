"""What a bundle carries beside its reports: qualification documents and the evidence behind the facts and
answers, each checked before the signed manifest so a changed member is named (bundle.py runs them)."""

from __future__ import annotations

import binascii
import hashlib
import json
from base64 import b64decode
from collections.abc import Mapping, Sequence
from pathlib import Path

from edge_agent.audit import bundle
from edge_agent.audit.entry import AuditEntry
from edge_agent.audit.evidence import Recompute, RecomputeAnswer, answered_entries, describe
from edge_agent.audit.evidence_check import EvidenceCheck, check_evidence
from edge_agent.audit.verify.chain import VerifyResult
from edge_agent.signing import Verifier


def _check_qualifications(root: Path, lines: Sequence[bytes], result: VerifyResult) -> str | None:
    """Each `qualifications/<sha256>.json` (edge-agent qualify) hashes to its name, an exported `qualification` entry
    records that sha256, and its `.sig` is a signature by a key the log has used. Checked before the signed
    manifest, so a changed qualification is named."""
    directory = root / bundle.QUALIFICATIONS
    documents = sorted(directory.glob("*.json")) if directory.is_dir() else []
    if not documents:
        return None
    recorded = {json.loads(line)["payload"].get("sha256") for line in lines if b'"event":"qualification"' in line}
    keys = {k.key_string(): k for k in (Verifier.parse(t) for t in (root / bundle.KEYS).read_text().splitlines() if t)}
    for path in documents:
        where = f"{bundle.QUALIFICATIONS}/{path.name}"
        data = path.read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        if path.name != f"{digest}.json":
            return f"{where}: its sha256 is {digest}, not its name"
        if digest not in recorded:
            return f"{where}: no exported qualification entry records it"
        try:
            key_line, signature = path.with_name(path.name + ".sig").read_text(encoding="ascii").splitlines()
            key = keys[key_line]
            valid = key.verify(b64decode(signature, validate=True), data)
        except (OSError, ValueError, KeyError, binascii.Error):
            valid = False
        if not valid:
            return f"{where}: no valid signature by a key of {bundle.KEYS} in {path.name}.sig"
    result.notes.append(f"{len(documents)} qualification(s) recorded in the log and signed with its key")
    return None


def _check_evidence(
    root: Path,
    lines: Sequence[bytes],
    recompute: Recompute | None,
    recompute_answer: RecomputeAnswer | None,
    result: VerifyResult,
) -> str | None:
    """The records behind the reports' facts and the answers (evidence.py): tied to the facts by record ids, and with
    `recompute` every fact recomputed from them, with `recompute_answer` every answer. Checked before the signed
    manifest, so a dropped or added record is named."""
    directory = root / bundle.REPORTS  # every report file there is bound to the log (check_reports)
    files = sorted(directory.glob("*.json")) if directory.is_dir() else []
    documents = {path.name.removesuffix(".json"): json.loads(path.read_bytes()) for path in files}
    answers = {e.seq: e for e in answered_entries(lines)}
    check = check_evidence(root, documents, answers)
    if check.problem is not None:
        return check.problem
    result.notes += check.notes
    if recompute_answer is not None and answers:
        reason = _recompute_answers(check, answers, recompute_answer, result)
        if reason is not None:
            return reason
    if recompute is None:
        return None
    if not check.present and documents:
        return "--recompute: the bundle carries no evidence (records.jsonl, evidence.json) to recompute from"
    if check.without:
        report_id, why = sorted(check.without.items())[0]
        return f"--recompute: report {report_id} carries no evidence: {why}"
    differences = [
        d
        for report_id, (records, settings) in sorted(check.inputs.items())
        for d in recompute(report_id, documents[report_id], records, settings)
    ]
    if differences:
        return f"{describe(differences)} (the exporter's fact rules: version {check.facts_version})"
    facts = sum(len(documents[rid]["body"]["facts"]) for rid in check.inputs)
    result.notes.append(
        f"recomputed all {facts} facts of {len(check.inputs)} report(s) from the bundle's records: every one equal"
    )
    return None


def _recompute_answers(
    check: EvidenceCheck, answers: Mapping[int, AuditEntry], recompute_answer: RecomputeAnswer, result: VerifyResult
) -> str | None:
    """Every carried answer answered again from its records alone; an answered one that carries none fails, naming
    it (a refusal or a clarification has no facts to recompute)."""
    answered = [seq for seq, e in sorted(answers.items()) if e.payload.get("status") == "answered"]
    if not check.present and answered:
        return "--recompute: the bundle carries no evidence (records.jsonl, evidence.json) to recompute from"
    for seq in answered:
        if seq in check.answers_without:
            return f"--recompute: answer {seq} carries no evidence: {check.answers_without[seq]}"
    for seq, (records, settings) in sorted(check.answer_inputs.items()):
        differences = recompute_answer(answers[seq], records, settings)
        if differences:
            question = answers[seq].payload.get("question_id")
            return f"--recompute: answer {seq} (question {question}) differs: {'; '.join(differences[:10])}"
    result.notes.append(
        f"recomputed all {len(check.answer_inputs)} answer(s) from the bundle's records: every one equal"
    )
    return None
