"""The layout of an auditor's export bundle (a directory, or the same tree in a .tar.gz).

    manifest.json        what was exported: origin, time range, seq range, checkpoint size, previous export
    entries.jsonl        the exported entries, stored lines byte for byte (a contiguous seq range)
    checkpoint           the signed checkpoint (C2SP tlog-checkpoint note) every proof leads to
    inclusion.jsonl      per exported entry: {"seq", "leaf_hash" (hex), "proof" ([base64 hashes], leaf to root)}
    consistency.json     the previous export's signed checkpoint and the proof that this tree extends it (or null)
    pubkey.txt           the note verifier key that signed `checkpoint`
    keys.txt             every verifier key the log has used, oldest first
    reports/<id>.json    the reports the exported entries name
    entries.csv          the entries for spreadsheets
    summary.html         the same for people: timeline, reports, fingerprints, verification result
    SHA256SUMS           `sha256sum -c` list of every other file
"""

from __future__ import annotations

MANIFEST = "manifest.json"
ENTRIES = "entries.jsonl"
CHECKPOINT = "checkpoint"
INCLUSION = "inclusion.jsonl"
CONSISTENCY = "consistency.json"
PUBKEY = "pubkey.txt"
KEYS = "keys.txt"
REPORTS = "reports"
CSV = "entries.csv"
SUMMARY = "summary.html"
SUMS = "SHA256SUMS"
FORMAT = "edge-agent-audit-bundle/1"
