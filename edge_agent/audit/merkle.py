"""RFC 6962 §2.1 Merkle tree: hashing, roots, and proof *construction* (verification lives in `proof.py`).

    MTH({})        = SHA-256()
    MTH({d0})      = SHA-256(0x00 || d0)                        leaf hash
    MTH(D[n])      = SHA-256(0x01 || MTH(D[0:k]) || MTH(D[k:n]))  node hash, k the largest power of two < n

Everything here works on leaf *hashes* (32 bytes each); `leaf_hash` turns an entry line into one. The hashes
themselves are `hasher.py`'s, re-exported here with the tree they build.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from edge_agent.audit.entry import AuditError
from edge_agent.audit.hasher import EMPTY_ROOT, HASH_SIZE, leaf_hash, node_hash

__all__ = [
    "EMPTY_ROOT",
    "HASH_SIZE",
    "MerkleError",
    "MerkleTree",
    "RootBuilder",
    "leaf_hash",
    "node_hash",
    "root",
]


class MerkleError(AuditError):
    """A proof or root asked of a tree that cannot give it (index beyond size, sizes out of order)."""


def _split(n: int) -> int:
    """The largest power of two strictly below n (n ≥ 2): RFC 6962's k."""
    return 1 << ((n - 1).bit_length() - 1)


class RootBuilder:
    """Root of a growing tree in O(log n) memory: a stack of perfect subtrees (a "compact range" from 0).

    Appending merges equal-size subtrees as a binary counter does; the root folds the stack from the right, which
    is exactly RFC 6962's split for sizes that are not powers of two.
    """

    __slots__ = ("size", "_stack")

    def __init__(self) -> None:
        self.size = 0
        self._stack: list[bytes] = []

    def append(self, leaf: bytes) -> None:
        node = leaf
        size = self.size
        # Each trailing 1 bit of the old size is a perfect subtree the new leaf completes.
        while size & 1:
            node = node_hash(self._stack.pop(), node)
            size >>= 1
        self._stack.append(node)
        self.size += 1

    def extend(self, leaves: Iterable[bytes]) -> None:
        for leaf in leaves:
            self.append(leaf)

    def root(self) -> bytes:
        if not self._stack:
            return EMPTY_ROOT
        node = self._stack[-1]
        for left in reversed(self._stack[:-1]):
            node = node_hash(left, node)
        return node

    def copy(self) -> RootBuilder:
        other = RootBuilder()
        other.size = self.size
        other._stack = list(self._stack)
        return other


def root(leaves: Sequence[bytes]) -> bytes:
    builder = RootBuilder()
    builder.extend(leaves)
    return builder.root()


class MerkleTree:
    """A tree over a fixed list of leaf hashes, with every perfect subtree precomputed for fast proofs.

    `levels[k][i]` is the hash of the perfect subtree of 2**k leaves starting at leaf i * 2**k. Memory is about
    two hashes per leaf; proofs then cost O(log² n) hashes.
    """

    def __init__(self, leaves: Sequence[bytes]) -> None:
        self.levels: list[list[bytes]] = [list(leaves)]
        while len(self.levels[-1]) > 1:
            below = self.levels[-1]
            self.levels.append([node_hash(below[i], below[i + 1]) for i in range(0, len(below) - 1, 2)])

    @property
    def size(self) -> int:
        return len(self.levels[0])

    def subtree_hash(self, start: int, end: int) -> bytes:
        """MTH(D[start:end]) for a range that RFC 6962's recursion produces (start aligned to the split)."""
        n = end - start
        if n == 0:
            return EMPTY_ROOT
        if n & (n - 1) == 0 and start % n == 0:
            return self.levels[n.bit_length() - 1][start // n]
        k = _split(n)
        return node_hash(self.subtree_hash(start, start + k), self.subtree_hash(start + k, end))

    def root(self, size: int | None = None) -> bytes:
        size = self.size if size is None else size
        self._check_size(size)
        return self.subtree_hash(0, size)

    def inclusion_proof(self, index: int, size: int | None = None) -> list[bytes]:
        """RFC 6962 §2.1.1 PATH(index, D[0:size]), leaf-to-root order."""
        size = self.size if size is None else size
        self._check_size(size)
        if not 0 <= index < size:
            raise MerkleError(f"index {index} is beyond size {size}")
        proof: list[bytes] = []
        self._path(index, 0, size, proof)
        return proof

    def _path(self, m: int, start: int, end: int, out: list[bytes]) -> None:
        n = end - start
        if n == 1:
            return
        k = _split(n)
        if m < k:
            self._path(m, start, start + k, out)
            out.append(self.subtree_hash(start + k, end))
        else:
            self._path(m - k, start + k, end, out)
            out.append(self.subtree_hash(start, start + k))

    def consistency_proof(self, old_size: int, new_size: int | None = None) -> list[bytes]:
        """RFC 6962 §2.1.2 PROOF(old_size, D[0:new_size]); empty when the sizes are equal or old_size is 0."""
        new_size = self.size if new_size is None else new_size
        self._check_size(new_size)
        if not 0 <= old_size <= new_size:
            raise MerkleError(f"old size {old_size} is beyond new size {new_size}")
        proof: list[bytes] = []
        if 0 < old_size < new_size:
            self._subproof(old_size, 0, new_size, True, proof)
        return proof

    def _subproof(self, m: int, start: int, end: int, complete: bool, out: list[bytes]) -> None:
        n = end - start
        if m == n:
            if not complete:
                out.append(self.subtree_hash(start, end))
            return
        k = _split(n)
        if m <= k:
            self._subproof(m, start, start + k, complete, out)
            out.append(self.subtree_hash(start + k, end))
        else:
            self._subproof(m - k, start + k, end, False, out)
            out.append(self.subtree_hash(start, start + k))

    def _check_size(self, size: int) -> None:
        if not 0 <= size <= self.size:
            raise MerkleError(f"tree size {size} is beyond the {self.size} leaves held")
