"""Keys and checkpoints in the golang.org/x/mod/sumdb/note and C2SP signed-note / tlog-checkpoint formats."""

from __future__ import annotations

import base64
import hashlib
import os
import stat
from pathlib import Path

import pytest

from edge_agent.audit.checkpoint import Checkpoint, CheckpointError, SignedNote, open_checkpoint, sign_checkpoint
from edge_agent.signing.keys import Signer, SigningKeyError, Verifier, key_hash

# The example of golang.org/x/mod/sumdb/note's package documentation (note.go), also used by its tests: Ed25519 is
# deterministic, so signing the text with this key must give this exact note.
GO_SIGNER = "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz"
GO_VERIFIER = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"
GO_TEXT = b"If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n"
GO_NOTE = (
    GO_TEXT
    + "\n\u2014 PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyB"
    "wJnAM=\n".encode()
)


class TestKeys:
    def test_go_signer_key_yields_go_verifier_key(self) -> None:
        """Parsing the Go example signer key (its base64 holds a '+') gives the Go example verifier key."""
        assert Signer.parse(GO_SIGNER).verifier.key_string() == GO_VERIFIER
        assert Signer.parse(GO_SIGNER).key_string() == GO_SIGNER

    def test_key_hash_is_sha256_of_name_newline_type_and_key(self) -> None:
        """key ID = SHA-256(name || 0x0A || 0x01 || pubkey)[:4], as C2SP signed-note recommends."""
        v = Verifier.parse(GO_VERIFIER)
        expected = hashlib.sha256(b"PeterNeumann\n\x01" + v.public).digest()[:4]
        assert key_hash("PeterNeumann", v.public) == int.from_bytes(expected, "big") == 0xC74F20A3

    def test_verifier_key_with_wrong_hash_is_rejected(self) -> None:
        """A key string whose hash does not match its key names both."""
        with pytest.raises(SigningKeyError, match="hash c74f20a4 != computed c74f20a3"):
            Verifier.parse(GO_VERIFIER.replace("c74f20a3", "c74f20a4"))

    def test_key_names_with_spaces_or_plus_are_refused(self) -> None:
        """C2SP: key names are non-empty with no spaces and no '+'."""
        for name in ("", "a b", "a+b"):
            with pytest.raises(SigningKeyError):
                Signer.generate(name)

    def test_key_file_is_created_with_mode_0600(self, tmp_path: Path) -> None:
        """The private key never exists with wider permissions."""
        path = tmp_path / "signing.key"
        Signer.generate("edge-agent/test").write(path)
        assert stat.S_IMODE(path.stat().st_mode) == 0o600

    def test_key_file_readable_by_others_is_refused(self, tmp_path: Path) -> None:
        """Like ssh, a group- or world-readable key is an error naming the mode."""
        path = tmp_path / "signing.key"
        signer = Signer.generate("edge-agent/test")
        signer.write(path)
        os.chmod(path, 0o644)
        with pytest.raises(SigningKeyError, match="mode 0644"):
            Signer.read(path)


class TestSignedNote:
    def test_signing_reproduces_the_go_example_byte_for_byte(self) -> None:
        """Our note format and Ed25519 signing equal golang.org/x/mod/sumdb/note's."""
        assert SignedNote.sign(GO_TEXT, [Signer.parse(GO_SIGNER)]).encode() == GO_NOTE

    def test_go_example_verifies(self) -> None:
        """A note signed by Go's implementation verifies with ours."""
        note = SignedNote.parse(GO_NOTE)
        assert note.text == GO_TEXT
        assert note.verified_by([Verifier.parse(GO_VERIFIER)]) == [Verifier.parse(GO_VERIFIER)]

    def test_altered_text_fails_with_the_known_key(self) -> None:
        """One changed letter in the text makes the known key's signature fail."""
        tampered = GO_NOTE.replace(b"cryptography", b"cryptographY")
        with pytest.raises(CheckpointError, match="does not verify"):
            SignedNote.parse(tampered).verified_by([Verifier.parse(GO_VERIFIER)])

    def test_signature_by_unknown_key_is_not_trusted(self) -> None:
        """A note signed only by another key is rejected, naming the signer and the trusted keys."""
        other = Signer.generate("PeterNeumann")
        note = SignedNote.sign(GO_TEXT, [other])
        with pytest.raises(CheckpointError, match="no signature from a trusted key"):
            note.verified_by([Verifier.parse(GO_VERIFIER)])

    def test_note_without_blank_line_is_malformed(self) -> None:
        """The text/signature separator is required."""
        with pytest.raises(CheckpointError, match="no blank line"):
            SignedNote.parse(GO_TEXT)


class TestCheckpoint:
    def test_body_is_origin_size_and_base64_root(self) -> None:
        """Exactly three lines, each ending in a newline (C2SP tlog-checkpoint)."""
        root = hashlib.sha256(b"").digest()
        body = Checkpoint("edge-agent/site", 12, root).body()
        assert body == b"edge-agent/site\n12\n" + base64.b64encode(root) + b"\n"
        assert Checkpoint.parse_body(body) == Checkpoint("edge-agent/site", 12, root)

    def test_size_with_leading_zero_is_rejected(self) -> None:
        """The size is a decimal without leading zeros."""
        with pytest.raises(CheckpointError, match="leading zeros"):
            Checkpoint.parse_body(b"o\n012\n" + base64.b64encode(b"\x00" * 32) + b"\n")

    def test_root_of_wrong_length_is_rejected(self) -> None:
        """The root must decode to 32 bytes."""
        with pytest.raises(CheckpointError, match="31 bytes"):
            Checkpoint.parse_body(b"o\n1\n" + base64.b64encode(b"\x00" * 31) + b"\n")

    def test_root_with_a_non_ascii_character_is_rejected(self) -> None:
        """A root line holding a non-ASCII character is refused as not base64 (the witness's Hypothesis property
        found it raising a bare ValueError, which the witness answered as a crash, not a 400)."""
        with pytest.raises(CheckpointError, match="is not base64"):
            Checkpoint.parse_body("o\n1\nAAAA\u0080AAA\n".encode())

    def test_signed_checkpoint_round_trips(self) -> None:
        """sign_checkpoint then open_checkpoint gives back the body, checking the origin."""
        signer = Signer.generate("edge-agent/site")
        cp = Checkpoint("edge-agent/site", 3, b"\x07" * 32)
        note = sign_checkpoint(cp, [signer])
        assert note.startswith(cp.body() + "\n\u2014 edge-agent/site ".encode())
        assert open_checkpoint(note, [signer.verifier], "edge-agent/site") == cp
        with pytest.raises(CheckpointError, match="origin"):
            open_checkpoint(note, [signer.verifier], "edge-agent/other")
