"""`edge-agent model import`: a local Hugging Face causal-LM directory → a model directory with our manifest.

The source is what a plant downloaded for its own model (config.json, safetensors weights, tokenizer, chat
template). Nothing is converted: every file is copied byte for byte (hashed while it is copied, with progress for
large files), the weights' safetensors headers are checked against config.json, and the manifest records the
architecture and the licence file. Pickled weights (`*.bin`, `*.pt`, …) are refused: loading them can run code, and
nothing here ever unpickles. Like `model prepare`, the copy is built in a sibling temporary directory that replaces
`--out` only when complete.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog

import edge_agent
from edge_agent.base.directories import build_directory
from edge_agent.llm.manifest import (
    MANIFEST_NAME,
    FileEntry,
    Manifest,
    verify,
    write_manifest,
)
from edge_agent.llm.types import EngineError

log = structlog.get_logger(component="llm")

# Suffixes of pickle-based checkpoints (torch.save / pickle): refused, never opened.
PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt", ".pkl", ".pickle")
# Files holding the chat template the engine renders (tokenizer_config.json may carry it instead).
CHAT_TEMPLATE_FILES = ("chat_template.jinja", "chat_template.json")
TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model")
LICENSE_NAMES = ("LICENSE", "LICENSE.txt", "LICENSE.md", "LICENCE", "license.txt", "LICENSE.pdf")
# Files at least this large are hashed with a progress bar: ~1 s of disk reading and up.
PROGRESS_MIN_BYTES = 256 * 1024 * 1024
# 8 MiB copy/hash blocks: disk-bound on a multi-GB shard, flat memory.
_CHUNK = 8 * 1024 * 1024
# A safetensors header is JSON of a few hundred kB even for large models; 100 MB is far beyond any real one.
_MAX_HEADER = 100 * 1024 * 1024
_SAFETENSORS_DTYPES = {
    "F64": 8,
    "F32": 4,
    "F16": 2,
    "BF16": 2,
    "I64": 8,
    "I32": 4,
    "I16": 2,
    "I8": 1,
    "U8": 1,
    "BOOL": 1,
    "F8_E4M3": 1,
    "F8_E5M2": 1,
    "U16": 2,
    "U32": 4,
    "U64": 8,
}


class ModelImportError(EngineError):
    """A model or draft directory cannot be imported; the message names the file and the reason."""


class PickleRefused(ModelImportError):
    """The source holds pickle-based weights, which are never loaded."""


@dataclass(frozen=True)
class TensorInfo:
    dtype: str
    shape: tuple[int, ...]
    file: str  # the safetensors file (shard) holding it, relative to the directory


@dataclass(frozen=True)
class ImportResult:
    directory: Path
    manifest: Manifest
    seconds: float


def pickled_files(source: Path) -> list[str]:
    """Relative paths of every pickle-based checkpoint under `source` (hidden directories skipped)."""
    return [rel for rel in source_files(source) if rel.lower().endswith(PICKLE_SUFFIXES)]


def refuse_pickles(source: Path) -> None:
    """PickleRefused naming each pickled file, so a plant sees what to remove or convert."""
    found = pickled_files(source)
    if found:
        raise PickleRefused(
            f"{source}: pickled weights are refused ({', '.join(found)}): loading a pickle can run arbitrary code. "
            "Use the safetensors files of the same model, or convert with a trusted tool, and remove the pickled "
            "files from the directory"
        )


def read_json(path: Path) -> dict[str, Any]:
    """A JSON object from `path`, or ModelImportError naming the file."""
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ModelImportError(f"{path}: missing") from exc
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelImportError(f"{path}: not valid JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise ModelImportError(f"{path}: a JSON object was expected, found {type(value).__name__}")
    return value


def read_safetensors_header(path: Path) -> dict[str, TensorInfo]:
    """Tensor names, dtypes and shapes from a safetensors file's header, checked against the file's size.

    Only the header is read: the format is an 8-byte little-endian length, that much JSON, then the raw data, and
    every tensor's [begin, end) must match its dtype and shape and lie inside the data.
    """
    try:
        size = path.stat().st_size
        with open(path, "rb") as fh:
            prefix = fh.read(8)
            if len(prefix) < 8:
                raise ModelImportError(f"{path}: not a safetensors file (shorter than its 8-byte header length)")
            (length,) = struct.unpack("<Q", prefix)
            if length > min(_MAX_HEADER, size - 8):
                raise ModelImportError(f"{path}: safetensors header length {length} exceeds the file ({size} bytes)")
            raw = fh.read(length)
    except OSError as exc:
        raise ModelImportError(f"{path}: cannot read: {exc}") from exc
    try:
        header = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelImportError(f"{path}: safetensors header is not JSON: {exc}") from exc
    if not isinstance(header, dict):
        raise ModelImportError(f"{path}: safetensors header is not a JSON object")
    data_size = size - 8 - length
    tensors: dict[str, TensorInfo] = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        tensors[name] = _tensor_info(path, name, entry, data_size)
    return tensors


def _tensor_info(path: Path, name: str, entry: Any, data_size: int) -> TensorInfo:
    if not isinstance(entry, dict):
        raise ModelImportError(f"{path}: tensor {name!r} has no header entry")
    dtype, shape, offsets = entry.get("dtype"), entry.get("shape"), entry.get("data_offsets")
    if dtype not in _SAFETENSORS_DTYPES:
        raise ModelImportError(f"{path}: tensor {name!r} has unknown dtype {dtype!r}")
    if not (isinstance(shape, list) and all(isinstance(d, int) and d >= 0 for d in shape)):
        raise ModelImportError(f"{path}: tensor {name!r} has shape {shape!r}")
    if not (isinstance(offsets, list) and len(offsets) == 2 and all(isinstance(o, int) for o in offsets)):
        raise ModelImportError(f"{path}: tensor {name!r} has data_offsets {offsets!r}")
    begin, end = offsets
    expected = _SAFETENSORS_DTYPES[dtype]
    for dim in shape:
        expected *= dim
    if not 0 <= begin <= end <= data_size or end - begin != expected:
        raise ModelImportError(
            f"{path}: tensor {name!r} ({dtype} {shape}) spans bytes {begin}..{end} of {data_size}: truncated or corrupt"
        )
    return TensorInfo(dtype=dtype, shape=tuple(shape), file=path.name)


def read_weights(directory: Path) -> dict[str, TensorInfo]:
    """Every tensor of a directory's safetensors weights (one file or an indexed set of shards)."""
    index_path = directory / "model.safetensors.index.json"
    if index_path.exists():
        weight_map = read_json(index_path).get("weight_map")
        if not isinstance(weight_map, dict) or not weight_map:
            raise ModelImportError(f"{index_path}: no weight_map")
        shards = sorted(set(weight_map.values()))
    else:
        shards = sorted(p.name for p in directory.glob("*.safetensors"))
        weight_map = None
    if not shards:
        raise ModelImportError(f"{directory}: no safetensors weights (model.safetensors or an indexed set of shards)")
    tensors: dict[str, TensorInfo] = {}
    for shard in shards:
        path = directory / shard
        if not path.is_file():
            raise ModelImportError(f"{index_path}: names shard {shard}, which is missing")
        for name, info in read_safetensors_header(path).items():
            if name in tensors:
                raise ModelImportError(f"{directory}: tensor {name!r} appears in more than one shard")
            tensors[name] = info
    if weight_map is not None:
        absent = sorted(set(weight_map) - tensors.keys())
        if absent:
            raise ModelImportError(f"{index_path}: tensors {absent[:5]} are listed but in no shard")
    return tensors


def text_config(config: dict[str, Any]) -> dict[str, Any]:
    """The language model's part of a config: `text_config` for multimodal wrappers, else the config itself."""
    inner = config.get("text_config")
    return inner if isinstance(inner, dict) else config


def _check_model(source: Path) -> dict[str, Any]:
    """What the engine needs from a causal-LM directory, each missing piece named; returns config.json."""
    config = read_json(source / "config.json")
    architectures = config.get("architectures")
    if not (isinstance(architectures, list) and architectures and all(isinstance(a, str) for a in architectures)):
        raise ModelImportError(f"{source}/config.json: no `architectures` list")
    if not any(a.endswith(("ForCausalLM", "ForConditionalGeneration")) for a in architectures):
        raise ModelImportError(f"{source}/config.json: architectures {architectures} name no causal language model")
    inner = text_config(config)
    for key in ("hidden_size", "num_hidden_layers", "vocab_size"):
        if not isinstance(inner.get(key), int) or inner[key] <= 0:
            raise ModelImportError(f"{source}/config.json: {key} is {inner.get(key)!r}, not a positive integer")
    if not any((source / name).is_file() for name in TOKENIZER_FILES):
        raise ModelImportError(f"{source}: no tokenizer ({' or '.join(TOKENIZER_FILES)})")
    if not _has_chat_template(source):
        raise ModelImportError(
            f"{source}: no chat template ({', '.join(CHAT_TEMPLATE_FILES)} or `chat_template` in "
            "tokenizer_config.json); the engine renders every request with the model's own template"
        )
    tensors = read_weights(source)
    embed = [info for name, info in tensors.items() if name.endswith("embed_tokens.weight")]
    want = (inner["vocab_size"], inner["hidden_size"])
    if embed and embed[0].shape != want:
        raise ModelImportError(
            f"{source}: embed_tokens.weight has shape {list(embed[0].shape)}, config.json says "
            f"vocab_size × hidden_size = {list(want)}"
        )
    return config


def _has_chat_template(source: Path) -> bool:
    if any((source / name).is_file() for name in CHAT_TEMPLATE_FILES):
        return True
    tokenizer_config = source / "tokenizer_config.json"
    return tokenizer_config.is_file() and bool(read_json(tokenizer_config).get("chat_template"))


def source_files(source: Path) -> list[str]:
    """Regular files (symlinks followed: a Hugging Face cache snapshot is links into its blob store) as sorted
    relative POSIX paths; hidden files and directories (.git, .cache) and our own manifest are left out."""
    names: list[str] = []
    for root, dirs, files in os.walk(source, followlinks=True):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
        for name in files:
            path = Path(root) / name
            if name.startswith(".") or not path.is_file():
                continue
            rel = path.relative_to(source).as_posix()
            if rel != MANIFEST_NAME:
                names.append(rel)
    return sorted(names)


def copy_hashed(src: Path, dst: Path, progress: Callable[[int], None] | None = None) -> FileEntry:
    """Copy `src` to `dst` and return the sha256 and size of the bytes written, reading the source once."""
    digest = hashlib.sha256()
    size = 0
    dst.parent.mkdir(parents=True, exist_ok=True)
    with open(src, "rb") as fin, open(dst, "wb") as fout:
        while chunk := fin.read(_CHUNK):
            digest.update(chunk)
            fout.write(chunk)
            size += len(chunk)
            if progress is not None:
                progress(len(chunk))
        fout.flush()
        os.fsync(fout.fileno())
    return FileEntry(sha256=digest.hexdigest(), size=size)


def copy_tree_hashed(source: Path, out: Path, names: list[str], *, show_progress: bool) -> dict[str, FileEntry]:
    """Copy `names` from `source` into `out`, hashing as it goes; a progress bar for files ≥ PROGRESS_MIN_BYTES."""
    from tqdm import tqdm

    entries: dict[str, FileEntry] = {}
    for rel in names:
        src = source / rel
        size = src.stat().st_size
        if show_progress and size >= PROGRESS_MIN_BYTES:
            with tqdm(total=size, unit="B", unit_scale=True, desc=f"hashing {rel}", dynamic_ncols=True) as bar:
                entries[rel] = copy_hashed(src, out / rel, bar.update)
        else:
            entries[rel] = copy_hashed(src, out / rel)
    return entries


def license_info(source: Path) -> dict[str, Any] | None:
    """The licence file (name, sha256) and the `license:` of the model card's front matter, if either exists."""
    info: dict[str, Any] = {}
    for name in LICENSE_NAMES:
        if (source / name).is_file():
            info["file"] = name
            break
    readme = source / "README.md"
    if readme.is_file():
        match = re.search(r"\A---\n(.*?)\n---", readme.read_text(encoding="utf-8", errors="replace"), re.DOTALL)
        if match:
            spdx = re.search(r"^license:\s*(\S+)\s*$", match.group(1), re.MULTILINE)
            if spdx:
                info["id"] = spdx.group(1).strip("'\"")
    return info or None


def default_name(source: Path) -> str:
    """`Llama-3.1-8B-Instruct` for a Hugging Face cache snapshot (`models--org--name/snapshots/<rev>`), else the
    directory's own name."""
    source = source.resolve()
    if source.parent.name == "snapshots" and source.parent.parent.name.startswith("models--"):
        return source.parent.parent.name.split("--")[-1]
    return source.name


def install_atomically(out: Path, build: Callable[[Path], Manifest]) -> Manifest:
    """Run `build(tmp)` in a sibling temporary directory, then move it to `out` (which must not hold files)."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ModelImportError(f"{out}: already exists and is not empty; remove it or choose another --out")
    return build_directory(out, build)


def import_model(
    source: Path | str, out: Path | str, *, name: str | None = None, show_progress: bool = True
) -> ImportResult:
    """Check `source`, copy it into `out` with a manifest (kind "model"), verify the result; ModelImportError
    (PickleRefused for pickled weights) naming what is wrong otherwise."""
    source, out = Path(source), Path(out)
    started = time.monotonic()
    if not source.is_dir():
        raise ModelImportError(f"{source}: not a directory")
    refuse_pickles(source)
    config = _check_model(source)
    names = source_files(source)

    def build(tmp: Path) -> Manifest:
        files = copy_tree_hashed(source, tmp, names, show_progress=show_progress)
        inner = text_config(config)
        origin = {
            "origin": "imported",
            "architecture": config["architectures"][0],
            "model_type": inner.get("model_type", config.get("model_type")),
            "hidden_size": inner["hidden_size"],
            "num_hidden_layers": inner["num_hidden_layers"],
            "vocab_size": inner["vocab_size"],
            "license": license_info(source),
        }
        return write_manifest(
            tmp,
            kind="model",
            name=name or default_name(source),
            source=origin,
            converter={"edge_agent": edge_agent.__version__},
            files=files,
        )

    install_atomically(out, build)
    manifest = verify(out)  # re-reads every file: what the engine will check at every start
    seconds = time.monotonic() - started
    log.info(
        "model.imported", directory=str(out), name=manifest.name, files=len(manifest.files), seconds=round(seconds, 1)
    )
    return ImportResult(out, manifest, seconds)
