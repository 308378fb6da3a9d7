"""Verifying RFC 6962 proofs, following the algorithms of RFC 9162 §2.1.3.2 and §2.1.4.2.

Each check has two steps, kept apart so a caller (or an auditor reading this) can see which failed: *compute* the
root(s) a proof implies (`root_from_inclusion_proof`, `roots_from_consistency_proof` — these reject proofs of the
wrong shape), then *compare* with the root that was signed (`verify_inclusion`, `verify_consistency`).
"""

from __future__ import annotations

from collections.abc import Sequence

from edge_agent.audit.entry import AuditError
from edge_agent.audit.hasher import HASH_SIZE, node_hash


class ProofError(AuditError):
    """A proof that is malformed, or that does not lead to the expected root."""


class RootMismatch(ProofError):
    def __init__(self, what: str, computed: bytes, expected: bytes) -> None:
        self.computed = computed
        self.expected = expected
        super().__init__(f"{what}: computed root {computed.hex()} != expected {expected.hex()}")


def _check_hashes(proof: Sequence[bytes], what: str) -> None:
    for i, h in enumerate(proof):
        if not isinstance(h, bytes | bytearray) or len(h) != HASH_SIZE:
            raise ProofError(f"{what} proof element {i} is {len(h)} bytes, not {HASH_SIZE}")


def root_from_inclusion_proof(index: int, size: int, leaf: bytes, proof: Sequence[bytes]) -> bytes:
    """The root of a `size`-leaf tree that holds `leaf` (a leaf hash) at `index`, if `proof` is its audit path."""
    if not 0 <= index < size:
        raise ProofError(f"index {index} is beyond size {size}")
    if len(leaf) != HASH_SIZE:
        raise ProofError(f"leaf hash is {len(leaf)} bytes, not {HASH_SIZE}")
    _check_hashes(proof, "inclusion")
    fn, sn, r = index, size - 1, bytes(leaf)
    for used, p in enumerate(proof):
        if sn == 0:
            raise ProofError(f"inclusion proof for index {index} in size {size} has {len(proof) - used} extra hashes")
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            if not fn & 1:
                while not fn & 1 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError(f"inclusion proof for index {index} in size {size} is too short ({len(proof)} hashes)")
    return r


def verify_inclusion(index: int, size: int, leaf: bytes, proof: Sequence[bytes], root: bytes) -> None:
    computed = root_from_inclusion_proof(index, size, leaf, proof)
    if computed != root:
        raise RootMismatch(f"inclusion of index {index} in size {size}", computed, root)


def roots_from_consistency_proof(
    old_size: int, new_size: int, old_root: bytes, proof: Sequence[bytes]
) -> tuple[bytes, bytes]:
    """The (old root, new root) a consistency proof implies. `old_root` is only *used* when old_size is a power of
    two (the proof then omits it, RFC 9162 step 2); the caller still compares the returned old root with it."""
    if not 1 <= old_size <= new_size:
        raise ProofError(f"old size {old_size} must be between 1 and new size {new_size}")
    _check_hashes(proof, "consistency")
    if old_size == new_size:
        if proof:
            raise ProofError(f"consistency proof from {old_size} to {new_size} must be empty, has {len(proof)} hashes")
        return old_root, old_root
    path = list(proof)
    if old_size & (old_size - 1) == 0:
        path.insert(0, bytes(old_root))
    if not path:
        raise ProofError(f"consistency proof from {old_size} to {new_size} is empty")
    fn, sn = old_size - 1, new_size - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for used, c in enumerate(path[1:], start=1):
        if sn == 0:
            raise ProofError(f"consistency proof from {old_size} to {new_size} has {len(path) - used} extra hashes")
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            if not fn & 1:
                while not fn & 1 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError(f"consistency proof from {old_size} to {new_size} is too short ({len(proof)} hashes)")
    return fr, sr


def verify_consistency(old_size: int, new_size: int, old_root: bytes, new_root: bytes, proof: Sequence[bytes]) -> None:
    if old_size == 0:
        # Every tree extends the empty one: there is nothing to prove, so anything but an empty proof is garbage.
        if not 0 <= new_size or proof:
            raise ProofError(f"consistency proof from 0 to {new_size} must be empty, has {len(proof)} hashes")
        return
    fr, sr = roots_from_consistency_proof(old_size, new_size, old_root, proof)
    if fr != old_root:
        raise RootMismatch(f"consistency {old_size}→{new_size}, old root", fr, old_root)
    if sr != new_root:
        raise RootMismatch(f"consistency {old_size}→{new_size}, new root", sr, new_root)
