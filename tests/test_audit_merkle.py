"""RFC 6962 Merkle tree: known answers, a naive reference cross-check over many sizes, and corrupted proofs."""

from __future__ import annotations

import hashlib
from base64 import b64decode

import pytest

from edge_agent.audit.merkle import EMPTY_ROOT, MerkleError, MerkleTree, RootBuilder, leaf_hash, node_hash, root
from edge_agent.audit.proof import (
    ProofError,
    RootMismatch,
    root_from_inclusion_proof,
    roots_from_consistency_proof,
    verify_consistency,
    verify_inclusion,
)

# -- an independent reference, written straight from RFC 6962 §2.1 (recursive, no precomputation) ------------------


def ref_hash(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def ref_mth(d: list[bytes]) -> bytes:
    """MTH(D[n]) of §2.1 over leaf *data*."""
    n = len(d)
    if n == 0:
        return ref_hash(b"")
    if n == 1:
        return ref_hash(b"\x00" + d[0])
    k = 1
    while k * 2 < n:
        k *= 2
    return ref_hash(b"\x01" + ref_mth(d[:k]) + ref_mth(d[k:]))


def ref_path(m: int, d: list[bytes]) -> list[bytes]:
    """PATH(m, D[n]) of §2.1.1."""
    n = len(d)
    if n == 1:
        return []
    k = 1
    while k * 2 < n:
        k *= 2
    if m < k:
        return ref_path(m, d[:k]) + [ref_mth(d[k:])]
    return ref_path(m - k, d[k:]) + [ref_mth(d[:k])]


def ref_subproof(m: int, d: list[bytes], b: bool) -> list[bytes]:
    """SUBPROOF(m, D[n], b) of §2.1.2."""
    n = len(d)
    if m == n:
        return [] if b else [ref_mth(d)]
    k = 1
    while k * 2 < n:
        k *= 2
    if m <= k:
        return ref_subproof(m, d[:k], b) + [ref_mth(d[k:])]
    return ref_subproof(m - k, d[k:], False) + [ref_mth(d[:k])]


def ref_proof(m: int, d: list[bytes]) -> list[bytes]:
    """PROOF(m, D[n]) of §2.1.2."""
    return ref_subproof(m, d, True)


DATA = [f"entry {i}".encode() for i in range(64)]
TREES = {n: MerkleTree([leaf_hash(x) for x in DATA[:n]]) for n in (1, 2, 3, 5, 7, 8, 13, 31, 32, 33, 63, 64)}


# -- known answers --------------------------------------------------------------------------------------------------

# Leaf inputs and roots from transparency-dev/merkle testonly/constants.go (LeafInputs, RootHashes); the same values
# are in RFC 6962's reference tests. The first two are re-derived by hand:
#   printf '\x00' | sha256sum                                                  → 6e340b9c… (size 1: leaf "" )
#   { printf '\x01'; printf '\x00' | openssl dgst -sha256 -binary;
#     printf '\x00\x00' | openssl dgst -sha256 -binary; } | sha256sum         → fac54203… (size 2: leaves "", "00")
TD_LEAVES = [
    bytes.fromhex(h)
    for h in ("", "00", "10", "2021", "3031", "40414243", "5051525354555657", "606162636465666768696a6b6c6d6e6f")
]
TD_ROOTS = [
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
]
TD_TREE = MerkleTree([leaf_hash(x) for x in TD_LEAVES])

# transparency-dev/merkle testdata/inclusion/1/happy-path.json and testdata/inclusion/3/happy-path.json.
TD_INCLUSION = [
    (
        0,
        8,
        "XcnaeacGWamtVZy3Ad7ZoqudgjqtL0lgz+Nw7/RgQyg=",
        "bjQLnP+zepicpUTmu3gKLHiQHT+zNzh2hRGjBhevoB0=",
        [
            "lqKW0iTyhcZ77pPDD4owkVfw2qNdxbh+QQt4YwoJz8c=",
            "Xwg/ChozygdqlSeYMlgNs+DvRYS9/x9UyKNg9Q3jAx4=",
            "a0eq8p7jwq+a+Im8H7klTavTEXfxYjLdaqsDXKOb9uQ=",
        ],
    ),
    (
        2,
        3,
        "rra8/idLcKFPsGel5VeCZNsPqbUa9eC6FZFY8yngbnc=",
        "ApjRIpBtz8EIkstTpzmS/FufST6kybrbJ7eRtBJ6f+c=",
        ["+sVCA+fMaWzw38tCySodnbr3CtnmIfS9jZhmLwDjwSU="],
    ),
]
# transparency-dev/merkle testdata/consistency/{1,2,4}/happy-path.json.
TD_CONSISTENCY = [
    (
        1,
        8,
        "bjQLnP+zepicpUTmu3gKLHiQHT+zNzh2hRGjBhevoB0=",
        "XcnaeacGWamtVZy3Ad7ZoqudgjqtL0lgz+Nw7/RgQyg=",
        [
            "lqKW0iTyhcZ77pPDD4owkVfw2qNdxbh+QQt4YwoJz8c=",
            "Xwg/ChozygdqlSeYMlgNs+DvRYS9/x9UyKNg9Q3jAx4=",
            "a0eq8p7jwq+a+Im8H7klTavTEXfxYjLdaqsDXKOb9uQ=",
        ],
    ),
    (
        6,
        8,
        "duZ9rbzfHhDht03cYIq9L5jfsW+851J3tSMqEn8gh+8=",
        "XcnaeacGWamtVZy3Ad7ZoqudgjqtL0lgz+Nw7/RgQyg=",
        [
            "DrxdNDf74tsVi58Sah0RjjCBgQMdCpSfje3t68VY72o=",
            "yoVOoSjtBQtBs1/8G4e46yveRh6eO1WW7Oa51ZdaCuA=",
            "037kGJdt2VdTwcc4Yrk5j6Kiz5tP8P3+izDNlSCWFLc=",
        ],
    ),
    (
        6,
        7,
        "duZ9rbzfHhDht03cYIq9L5jfsW+851J3tSMqEn8gh+8=",
        "3bib5AOAnjJXUNPSY814kpwpQreUKjS3fhIslZSnTIw=",
        [
            "DrxdNDf74tsVi58Sah0RjjCBgQMdCpSfje3t68VY72o=",
            "sIaT7C5yFZcTBkHoIR5+7cy0wmQTlj7ubB4u0W/7Gl8=",
            "037kGJdt2VdTwcc4Yrk5j6Kiz5tP8P3+izDNlSCWFLc=",
        ],
    ),
]


def b64s(items: list[str]) -> list[bytes]:
    return [b64decode(x) for x in items]


class TestKnownAnswers:
    def test_empty_tree_root_is_sha256_of_nothing(self) -> None:
        """MTH({}) = SHA-256() (printf '' | sha256sum)."""
        assert EMPTY_ROOT.hex() == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        assert root([]) == EMPTY_ROOT

    def test_leaf_and_node_hash_use_the_domain_prefixes(self) -> None:
        """Leaf = H(0x00 || d), node = H(0x01 || l || r), derived by the shell commands above."""
        assert leaf_hash(b"").hex() == TD_ROOTS[0]
        assert node_hash(leaf_hash(b""), leaf_hash(b"\x00")).hex() == TD_ROOTS[1]

    @pytest.mark.parametrize("size", range(1, 9))
    def test_roots_match_transparency_dev_vectors(self, size: int) -> None:
        """Roots of the 8-leaf test tree at every size equal transparency-dev/merkle's RootHashes."""
        assert TD_TREE.root(size).hex() == TD_ROOTS[size - 1]
        assert root([leaf_hash(x) for x in TD_LEAVES[:size]]).hex() == TD_ROOTS[size - 1]

    @pytest.mark.parametrize("index, size, root_b64, leaf_b64, proof", TD_INCLUSION)
    def test_inclusion_proofs_match_transparency_dev_vectors(
        self, index: int, size: int, root_b64: str, leaf_b64: str, proof: list[str]
    ) -> None:
        """Our proof construction yields transparency-dev's proof, and our verifier accepts it."""
        assert TD_TREE.inclusion_proof(index, size) == b64s(proof)
        assert TD_TREE.levels[0][index] == b64decode(leaf_b64)
        verify_inclusion(index, size, b64decode(leaf_b64), b64s(proof), b64decode(root_b64))

    @pytest.mark.parametrize("old, new, root1, root2, proof", TD_CONSISTENCY)
    def test_consistency_proofs_match_transparency_dev_vectors(
        self, old: int, new: int, root1: str, root2: str, proof: list[str]
    ) -> None:
        """Our consistency proofs equal transparency-dev's, and verify."""
        assert TD_TREE.consistency_proof(old, new) == b64s(proof)
        verify_consistency(old, new, b64decode(root1), b64decode(root2), b64s(proof))


class TestAgainstReference:
    def test_roots_match_reference_for_sizes_1_to_64(self) -> None:
        """RootBuilder, MerkleTree and the naive MTH agree at every size."""
        tree = MerkleTree([leaf_hash(x) for x in DATA])
        builder = RootBuilder()
        for n in range(1, 65):
            builder.append(leaf_hash(DATA[n - 1]))
            expected = ref_mth(DATA[:n])
            assert builder.root() == expected, n
            assert tree.root(n) == expected, n

    def test_inclusion_proofs_match_reference_for_every_index_of_sizes_1_to_64(self) -> None:
        """PATH(m, D[n]) for all 1 ≤ n ≤ 64 and m < n, and each verifies against the reference root."""
        tree = MerkleTree([leaf_hash(x) for x in DATA])
        for n in range(1, 65):
            expected_root = ref_mth(DATA[:n])
            for m in range(n):
                proof = tree.inclusion_proof(m, n)
                assert proof == ref_path(m, DATA[:n]), (m, n)
                assert root_from_inclusion_proof(m, n, leaf_hash(DATA[m]), proof) == expected_root, (m, n)

    def test_consistency_proofs_match_reference_for_every_pair_up_to_64(self) -> None:
        """PROOF(m, D[n]) for all 1 ≤ m ≤ n ≤ 64, each verifying between the reference roots."""
        tree = MerkleTree([leaf_hash(x) for x in DATA])
        roots = [ref_mth(DATA[:n]) for n in range(65)]
        for n in range(1, 65):
            for m in range(1, n + 1):
                proof = tree.consistency_proof(m, n)
                assert proof == ref_proof(m, DATA[:n]) if m < n else proof == [], (m, n)
                assert roots_from_consistency_proof(m, n, roots[m], proof) == (roots[m], roots[n]), (m, n)

    def test_consistency_proof_does_not_verify_against_a_different_old_tree(self) -> None:
        """A proof from size m checks the old root: a tree that differs in its first m leaves fails."""
        other = [b"forged"] + DATA[1:]
        for n, m in [(8, 3), (13, 5), (33, 32), (64, 63)]:
            proof = TREES[n].consistency_proof(m)
            with pytest.raises(RootMismatch):
                verify_consistency(m, n, ref_mth(other[:m]), ref_mth(DATA[:n]), proof)


class TestCorruptedProofs:
    @pytest.mark.parametrize("size", [3, 7, 13, 33, 64])
    def test_any_flipped_bit_in_an_inclusion_proof_fails(self, size: int) -> None:
        """Flipping one bit of any proof element leads to a different root."""
        tree = TREES[size]
        index = size // 2
        proof = tree.inclusion_proof(index)
        for i in range(len(proof)):
            bad = list(proof)
            bad[i] = bytes([bad[i][0] ^ 0x08]) + bad[i][1:]
            with pytest.raises(RootMismatch):
                verify_inclusion(index, size, tree.levels[0][index], bad, tree.root())

    def test_wrong_leaf_fails(self) -> None:
        """The proof of leaf 5 does not prove leaf 6 at index 5."""
        tree = TREES[13]
        with pytest.raises(RootMismatch, match="inclusion of index 5 in size 13"):
            verify_inclusion(5, 13, tree.levels[0][6], tree.inclusion_proof(5), tree.root())

    def test_trailing_garbage_is_rejected_by_count(self) -> None:
        """An extra hash after a valid path is named as extra, not silently ignored."""
        tree = TREES[7]
        proof = tree.inclusion_proof(2) + [b"\x00" * 32]
        with pytest.raises(ProofError, match="has 1 extra hashes"):
            root_from_inclusion_proof(2, 7, tree.levels[0][2], proof)

    def test_truncated_inclusion_proof_is_too_short(self) -> None:
        """A path missing its last hash is rejected before any comparison."""
        tree = TREES[33]
        with pytest.raises(ProofError, match="too short"):
            root_from_inclusion_proof(4, 33, tree.levels[0][4], tree.inclusion_proof(4)[:-1])

    def test_proof_element_of_wrong_length_is_rejected(self) -> None:
        """transparency-dev's trailing-garbage vector appends an empty element: its length is named."""
        tree = TREES[8]
        with pytest.raises(ProofError, match="element 3 is 0 bytes, not 32"):
            root_from_inclusion_proof(0, 8, tree.levels[0][0], tree.inclusion_proof(0) + [b""])

    def test_index_beyond_size_is_named(self) -> None:
        """Both construction and verification name the bad index and the size."""
        with pytest.raises(MerkleError, match="index 9 is beyond size 8"):
            TREES[8].inclusion_proof(9)
        with pytest.raises(ProofError, match="index 9 is beyond size 8"):
            root_from_inclusion_proof(9, 8, b"\x00" * 32, [])

    def test_flipped_bit_in_consistency_proof_fails(self) -> None:
        """Every element of a consistency proof matters."""
        tree = TREES[31]
        proof = tree.consistency_proof(13)
        for i in range(len(proof)):
            bad = list(proof)
            bad[i] = bad[i][:-1] + bytes([bad[i][-1] ^ 1])
            with pytest.raises(ProofError):
                verify_consistency(13, 31, tree.root(13), tree.root(31), bad)

    def test_consistency_trailing_garbage_is_rejected(self) -> None:
        """A consistency proof with an extra hash fails on its count."""
        tree = TREES[63]
        with pytest.raises(ProofError, match="extra"):
            verify_consistency(5, 63, tree.root(5), tree.root(63), tree.consistency_proof(5) + [b"\x11" * 32])

    def test_consistency_between_equal_sizes_needs_an_empty_proof_and_equal_roots(self) -> None:
        """Same size: anything in the proof is garbage, and the roots must be identical."""
        tree = TREES[8]
        verify_consistency(8, 8, tree.root(), tree.root(), [])
        with pytest.raises(ProofError, match="must be empty"):
            verify_consistency(8, 8, tree.root(), tree.root(), [tree.root()])
        with pytest.raises(RootMismatch):
            verify_consistency(8, 8, tree.root(), tree.root(7), [])

    def test_shrinking_tree_is_not_consistent(self) -> None:
        """A new size below the old one is refused, naming both."""
        with pytest.raises(ProofError, match="old size 9 must be between 1 and new size 8"):
            roots_from_consistency_proof(9, 8, b"\x00" * 32, [])
