"""What the agent keeps of its witnesses: each one's state (`<audit>/witnesses.json`), the cosignatures
(`<audit>/cosigned`) and the consistency proofs it sends them. The anchor component (anchor.py) drives the loop."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from edge_agent.audit.checkpoint import CheckpointError, SignedNote
from edge_agent.audit.merkle import MerkleTree
from edge_agent.audit.rollback import read_lines
from edge_agent.audit.view import leaf_hashes
from edge_agent.audit.witness_client import WitnessAnswer, WitnessTarget, submit
from edge_agent.signing.keys import write_durably

WITNESS_STATE = "witnesses.json"
COSIGNED = "cosigned"


@dataclass
class WitnessStatus:
    """What the agent knows of one witness: the size it holds, how the last exchange ended, and when to ask again.
    `state` is an answer's kind, or `pending` (a checkpoint not yet sent)."""

    size: int = 0
    state: str = "pending"
    detail: str = "not asked yet"
    at: str | None = None
    failures: int = 0  # exchanges without a cosignature since the last one
    next_try: float = 0.0  # time.monotonic() of the next try; not kept in the file

    @property
    def failing(self) -> bool:
        return self.state not in ("pending", "cosigned")


def read_witness_state(audit_dir: Path) -> dict[str, WitnessStatus]:
    """`witnesses.json`, per witness URL (an older file held only each witness's size)."""
    path = audit_dir / WITNESS_STATE
    try:
        raw = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    except ValueError:
        return {}
    states: dict[str, WitnessStatus] = {}
    for url, value in raw.items() if isinstance(raw, dict) else ():
        if isinstance(value, int):
            states[url] = WitnessStatus(size=value)
        elif isinstance(value, dict):
            try:  # our own file, but a hand-edited one must not stop the agent: a bad record is a fresh start
                states[url] = WitnessStatus(
                    size=int(value.get("size", 0)),
                    state=str(value.get("state", "pending")),
                    detail=str(value.get("detail", "")),
                    at=value.get("at") if isinstance(value.get("at"), str) else None,
                    failures=int(value.get("failures", 0)),
                )
            except (TypeError, ValueError):
                continue
    return states


def write_witness_state(audit_dir: Path, states: dict[str, WitnessStatus]) -> None:
    data = {url: {k: v for k, v in asdict(s).items() if k != "next_try"} for url, s in sorted(states.items())}
    write_durably(audit_dir / WITNESS_STATE, json.dumps(data, indent=1, ensure_ascii=False).encode() + b"\n")


def log_proofs(lines: Sequence[bytes]) -> Callable[[int, int], list[bytes]]:
    """Consistency proofs between two sizes of the log `lines` holds (the tree is built on the first call)."""
    tree: list[MerkleTree] = []

    def proof(old: int, new: int) -> list[bytes]:
        if not tree:
            tree.append(MerkleTree(leaf_hashes(lines)))
        return tree[0].consistency_proof(old, new)

    return proof


def keep_cosignature(audit_dir: Path, note: bytes, answer: WitnessAnswer) -> None:
    """Add a witness's cosignature to `cosigned` (the newest cosigned checkpoint, with every cosignature on it)."""
    assert answer.signature is not None
    parsed = SignedNote.parse(note)
    path = audit_dir / COSIGNED
    kept = list(parsed.signatures)
    if path.exists():
        try:
            previous = SignedNote.parse(path.read_bytes())
            if previous.text == parsed.text:
                kept += [s for s in previous.signatures if s not in kept]
        except CheckpointError:
            pass
    new = answer.signature
    kept = [s for s in kept if (s.name, s.key_hash) != (new.name, new.key_hash)] + [new]
    write_durably(path, SignedNote(parsed.text, tuple(kept)).encode())


def with_cosignatures(audit_dir: Path, note: bytes, targets: Sequence[WitnessTarget] = ()) -> bytes:
    """`note` with every cosignature kept for it in `cosigned` (asking `targets` first, if any, when it has none)."""
    text = SignedNote.parse(note).text
    path = audit_dir / COSIGNED
    if targets and not (path.exists() and SignedNote.parse(path.read_bytes()).text == text):
        states = read_witness_state(audit_dir)
        proofs = log_proofs(read_lines(audit_dir))
        for target in targets:
            answer = submit(target, note, proofs, states.get(target.url, WitnessStatus()).size)
            if answer.signature is not None:
                keep_cosignature(audit_dir, note, answer)
    if path.exists():
        kept = SignedNote.parse(path.read_bytes())
        if kept.text == text:
            return kept.encode()
    return note


# -- the component --------------------------------------------------------------------------------------------------
