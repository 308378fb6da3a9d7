"""The bundle's signed manifest: every file's path, size and SHA-256, and the checkpoint the bundle belongs to.

`manifest.json` lists every file of the bundle but itself and `manifest.sig`. `manifest.sig` is a C2SP signed note,
signed by the key that signed `checkpoint` (the same Signer and note code as checkpoints, checkpoint.py):

    <origin>\\n
    edge-agent-audit-bundle/1 manifest\\n
    <SHA-256 of manifest.json, 64 hex digits>\\n
    \\n
    — <key name> <base64(4-byte key hash || 64-byte Ed25519 signature)>\\n

A checkpoint's second line is a decimal tree size; this note's is not, so one can never be taken for the other.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import stat
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from edge_agent.audit import bundle
from edge_agent.audit.bundle import BundleError
from edge_agent.audit.checkpoint import Checkpoint, CheckpointError, SignedNote
from edge_agent.signing import Signer, Verifier

NOTE_TYPE = f"{bundle.FORMAT} manifest"
UNLISTED = frozenset({bundle.MANIFEST, bundle.SIGNATURE})


class ManifestFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str = Field(min_length=1)
    size: int = Field(ge=0)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")


class ManifestCheckpoint(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    origin: str
    size: int = Field(ge=0)
    root: str  # base64, as on the checkpoint's third line


class BundleManifest(BaseModel):
    """manifest.json. Strict: a bundle is untrusted input, and its manifest is read before its signature is checked
    (the signature covers these bytes, so a well-formed but altered manifest still fails)."""

    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True)

    format: str
    origin: str
    created: str
    start: str | None = Field(alias="from")
    end: str | None = Field(alias="to")
    first_seq: int = Field(ge=0)
    last_seq: int = Field(ge=0)
    checkpoint_size: int = Field(ge=0)
    previous_checkpoint_size: int | None
    recorded_in_log: bool
    reports: list[str]
    # Reports the entries name that the bundle does not hold: no file at the plant; a file that does not bind to
    # the exported entries (binding.py), with the reason.
    missing_reports: list[str]
    unbound_reports: dict[str, str]
    # Whether reports.allow_unsigned_signoff was on at any time in the window, by the config.security entries in
    # force (approvals.py): "on", "off", "unknown" (no such entry); None from an exporter before this member.
    unsigned_signoff: Literal["on", "off", "unknown"] | None = None
    # The seq of the config.loaded entry in force at first_seq that precedes the window, carried in
    # config_in_force.json (bundle.py); None: none precedes it, or an exporter before this member.
    config_in_force: int | None = Field(None, ge=0)
    # The seqs of the console.enrolled entries before first_seq, oldest first, carried in enrolments_in_force.json
    # (bundle.py); empty: none precedes it, or an exporter before this member.
    enrolments_in_force: list[int] = Field(default_factory=list)
    checkpoint: ManifestCheckpoint
    files: list[ManifestFile]

    def to_bytes(self) -> bytes:
        return (json.dumps(self.model_dump(by_alias=True), indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def checkpoint_record(checkpoint: Checkpoint) -> ManifestCheckpoint:
    return ManifestCheckpoint(
        origin=checkpoint.origin, size=checkpoint.size, root=base64.b64encode(checkpoint.root).decode()
    )


def list_files(root: Path) -> list[str]:
    """Every regular file under `root` as a sorted relative POSIX path. BundleError names anything that is neither
    a regular file nor a directory (a symlink, a device, a FIFO)."""
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):  # does not follow symlinks: they are listed, then refused
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode):
                raise BundleError(f"{rel} is a symlink; a bundle holds only files and directories")
            if stat.S_ISREG(mode):
                found.append(rel)
            elif not stat.S_ISDIR(mode):
                raise BundleError(f"{rel} is not a regular file; a bundle holds only files and directories")
    return sorted(found)


def file_sha256(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def describe_files(root: Path) -> list[ManifestFile]:
    """The manifest's `files`: path, size and SHA-256 of every file but the manifest and its signature."""
    return [
        ManifestFile(path=rel, size=(root / rel).stat().st_size, sha256=file_sha256(root / rel))
        for rel in list_files(root)
        if rel not in UNLISTED
    ]


def note_text(origin: str, manifest_bytes: bytes) -> bytes:
    return f"{origin}\n{NOTE_TYPE}\n{hashlib.sha256(manifest_bytes).hexdigest()}\n".encode()


def sign_manifest(manifest_bytes: bytes, origin: str, signer: Signer) -> bytes:
    """manifest.sig for these manifest.json bytes."""
    return SignedNote.sign(note_text(origin, manifest_bytes), [signer]).encode()


def check_manifest(
    root: Path, manifest_bytes: bytes, manifest: BundleManifest, pubkey: Verifier, checkpoint: Checkpoint
) -> str | None:
    """Why the bundle's files are not exactly the ones its signed manifest lists, or None. `manifest` is the parsed
    `manifest_bytes`. Raises BundleError for a file that is not a regular file."""
    try:
        note = SignedNote.parse((root / bundle.SIGNATURE).read_bytes())
        note.verified_by([pubkey])
    except FileNotFoundError:
        return f"{bundle.SIGNATURE} is missing: nothing vouches for the bundle's files"
    except CheckpointError as exc:
        return f"{bundle.SIGNATURE}: {exc}"
    if note.text != note_text(checkpoint.origin, manifest_bytes):
        if note.text.split(b"\n")[1:2] != [NOTE_TYPE.encode()]:
            return f"{bundle.SIGNATURE} does not sign a bundle manifest"
        return (
            f"{bundle.MANIFEST} is not the manifest {bundle.SIGNATURE} signs (changed after export, or another log's)"
        )
    if manifest.checkpoint != checkpoint_record(checkpoint):
        return (
            f"{bundle.MANIFEST} belongs to checkpoint {manifest.checkpoint.size} of {manifest.checkpoint.origin!r},"
            f" not to the bundle's {bundle.CHECKPOINT} (size {checkpoint.size})"
        )
    listed = {f.path: f for f in manifest.files}
    if len(listed) != len(manifest.files):
        return f"{bundle.MANIFEST} lists a file more than once"
    present = {rel for rel in list_files(root) if rel not in UNLISTED}
    added, removed = sorted(present - listed.keys()), sorted(listed.keys() - present)
    if added:
        return f"{added[0]} is not in the signed manifest (added after export)"
    if removed:
        return f"{removed[0]} is in the signed manifest but missing from the bundle (removed after export)"
    for rel, described in sorted(listed.items()):
        path = root / rel
        if path.stat().st_size != described.size or file_sha256(path) != described.sha256:
            return f"{rel}: SHA-256 differs from the signed manifest (changed after export)"
    return None
