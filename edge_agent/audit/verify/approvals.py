"""The recorded approvals a bundle carries, re-checked offline against the manifest's unsigned sign-off state
(edge_agent/audit/approvals.py); bundle.py runs it last."""

from __future__ import annotations

from collections.abc import Sequence

from edge_agent.audit import bundle
from edge_agent.audit.approvals import check_approvals, describe_state, security_states, unsigned_signoff_state
from edge_agent.audit.manifest import BundleManifest
from edge_agent.audit.verify.chain import Problem, VerifyResult
from edge_agent.signing import ApproverKey


def _check_approvals(
    lines: Sequence[bytes],
    manifest: BundleManifest,
    approver_keys: Sequence[ApproverKey] | None,
    before: Sequence[bytes],
    result: VerifyResult,
) -> Problem | None:
    """Every recorded approval re-checked offline, and whether unsigned sign-off was allowed (approvals.py)."""
    check = check_approvals(lines, approver_keys, before=before)
    if check.problem is not None:
        return Problem(check.problem.seq, str(check.problem))
    seen = unsigned_signoff_state(security_states(lines), manifest.first_seq, manifest.last_seq)
    stated = manifest.unsigned_signoff
    if stated is not None and (seen == "on" and stated != "on" or seen == "off" and stated == "unknown"):
        return Problem(
            None,
            f"{bundle.MANIFEST} says unsigned sign-off was {stated!r}, but the bundle's config.security entries"
            f" say {seen!r}",
        )
    if stated is None:
        result.notes.append(f"the manifest does not state unsigned sign-off (an older exporter); the entries: {seen}")
    result.notes.append(describe_state(stated or seen))
    if check.signed:
        whose = (
            f"against the {len(approver_keys)} approver key(s) given"
            if approver_keys is not None
            else "against the approver keys the log held at the time (each decision's config.loaded entry before it;"
            " pass --approver-key NAME=KEY with the keys you hold to prove who signed)"
        )
        result.notes.append(f"{check.signed} signed approval(s) re-checked {whose}")
    for seq, report_id, actor in check.unsigned:
        result.notes.append(f"entry {seq}: the decision on report {report_id} by {actor} was recorded unsigned")
    return None
