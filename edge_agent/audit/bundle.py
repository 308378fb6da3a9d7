"""The layout of an auditor's export bundle (a directory, or the same tree in a .tar.xz or .tar.gz).

manifest.json        what was exported (origin, time range, seq range, previous export, reports and why any
                     are not included) and every other file's path, size and SHA-256, with the checkpoint
manifest.sig         a C2SP signed note by the checkpoint's key over the SHA-256 of manifest.json (manifest.py)
entries.jsonl        the exported entries, stored lines byte for byte (a contiguous seq range)
checkpoint           the signed checkpoint (C2SP tlog-checkpoint note) every proof leads to
inclusion.jsonl      per exported entry: {"seq", "leaf_hash" (hex), "proof" ([base64 hashes], leaf to root)}
consistency.json     the previous export's signed checkpoint and the proof that this tree extends it (or null)
pubkey.txt           the note verifier key that signed `checkpoint`
keys.txt             every verifier key the log has used, oldest first
config_in_force.json the config.loaded entry in force at the window's first entry when it precedes the window:
                     {"seq", "entry" (the stored line), "leaf_hash" (hex), "proof"}, included in `checkpoint`
                     like the exported entries; the approvals are checked against its approver keys
enrolments_in_force.json
                     every console.enrolled entry before the window's first entry, oldest first, as a list of
                     records of the same shape: the passkeys console sign-offs in the window are checked against
reports/<id>.json    the reports the exported entries name and bind (binding.py)
reports/<id>.md|html each report's renderings, byte for byte as in its document
records.jsonl        the records each report's facts were computed from, every stored field (idempotency_key
                     on MES events only, the one kind a fact reads it of; evidence.py)
evidence.json        per report: its fact settings, its records' ids, per fact every record id behind it; the
                     exporter's code and fact rules versions
entries.csv          the entries for spreadsheets
summary.html         the same for people: timeline, reports, fingerprints, verification result
SHA256SUMS           `sha256sum -c` list of the files before it (a convenience: manifest.sig is what vouches)
"""

from __future__ import annotations

from pathlib import Path

from edge_agent.audit.entry import AuditError

MANIFEST = "manifest.json"
SIGNATURE = "manifest.sig"
ENTRIES = "entries.jsonl"
CHECKPOINT = "checkpoint"
INCLUSION = "inclusion.jsonl"
CONSISTENCY = "consistency.json"
PUBKEY = "pubkey.txt"
KEYS = "keys.txt"
CONFIG_IN_FORCE = "config_in_force.json"
ENROLMENTS_IN_FORCE = "enrolments_in_force.json"
REPORTS = "reports"
# Qualification reports (edge-agent qualify) the exported entries record, under the audit dir and in a bundle alike.
QUALIFICATIONS = "qualifications"
CSV = "entries.csv"
SUMMARY = "summary.html"
SUMS = "SHA256SUMS"
FORMAT = "edge-agent-audit-bundle/2"  # 2: signed manifest.sig, report files bound to the log
# Archive suffixes `audit export` writes and their tarfile compression. xz: a day of shift summaries with their
# evidence packs to about half the size gzip gives (docs/audit.md, "Size"); gzip stays for tools without xz.
ARCHIVES = {".tar.xz": "xz", ".tar.gz": "gz", ".tgz": "gz"}
# A report document's rendering formats and the suffix of the file each is exported to.
RENDERING_SUFFIXES = {"markdown": ".md", "html": ".html"}


def archive_suffix(path: Path) -> str | None:
    """The ARCHIVES suffix `path` ends with, or None (a directory bundle)."""
    return next((s for s in ARCHIVES if path.name.endswith(s)), None)


class BundleError(AuditError):
    """A bundle that cannot be read safely (an archive member that is unsafe or too large), naming the member."""
