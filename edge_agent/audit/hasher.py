"""RFC 6962 §2.1 hashing, in one place (transparency-dev/merkle's `rfc6962.Hasher`): every leaf and node hash of
the log's Merkle tree — roots, proofs, verification — is computed here.

    MTH({})   = SHA-256()                          the empty root
    leaf hash = SHA-256(0x00 || data)              data: an entry's stored line, without its newline
    node hash = SHA-256(0x01 || left || right)     left, right: 32-byte child hashes

The prefixes keep a leaf from ever hashing like a node (RFC 6962 §2.1, second-preimage resistance).
"""

from __future__ import annotations

import hashlib

HASH_SIZE = 32
LEAF_PREFIX = b"\x00"
NODE_PREFIX = b"\x01"
EMPTY_ROOT = hashlib.sha256(b"").digest()

_sha256 = hashlib.sha256


def leaf_hash(data: bytes) -> bytes:
    return _sha256(LEAF_PREFIX + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return _sha256(NODE_PREFIX + left + right).digest()
