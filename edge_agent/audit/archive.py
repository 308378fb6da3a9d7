"""Reading a bundle archive (.tar.xz, .tar.gz or .tar) from an untrusted source into a fresh directory.

Only regular files and directories are extracted, all under one top-level directory, each name made of plain
components (no absolute path, no `.`, `..` or empty component, no control character, valid UTF-8), each name once,
within size limits. The first member that breaks a rule stops the read with a `BundleError` naming it; tarfile's
`data` filter is applied as well. The decompressed stream is read through a counter, so a compression bomb or a
huge pax/long-name header stops at the limits instead of filling the disk or memory; an xz stream asking for more
decoder memory than XZ_MEMLIMIT is refused.
"""

from __future__ import annotations

import gzip
import io
import lzma
import tarfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from edge_agent.audit.bundle import BundleError

GZIP_MAGIC = b"\x1f\x8b"
XZ_MAGIC = b"\xfd7zXZ\x00"
# `xz -9`, the largest preset, needs 65 MiB to decompress (export writes preset 6: 9 MiB); an xz header may ask for
# up to 4 GiB, so an archive asking for more than this is refused before the memory is taken.
XZ_MEMLIMIT = 128 << 20
XZ_CHUNK = 64 << 10
# A million-entry export's inclusion.jsonl is about 1 GiB; 4 GiB leaves room for the largest plant we size for.
MAX_MEMBER_BYTES = 4 << 30
# Every member together: 16 GiB stays well inside a verifier's disk and is ten years of a busy plant's entries.
MAX_TOTAL_BYTES = 16 << 30
# Twelve fixed files plus three per report: 200 000 members is over 60 000 reports in one bundle.
MAX_MEMBERS = 200_000
# tarfile reads data in 16 KiB chunks; only a pax or long-name header asks for more, and a real one is under 1 KiB.
MAX_READ = 1 << 20
# Header blocks, long-name records and padding around each member's data: 4 KiB each is ample.
HEADER_ALLOWANCE = 4096
# Linux NAME_MAX and PATH_MAX: longer names could not be written anyway.
MAX_COMPONENT_BYTES = 255
MAX_NAME_BYTES = 4096


@dataclass(frozen=True)
class Limits:
    member_bytes: int = MAX_MEMBER_BYTES
    total_bytes: int = MAX_TOTAL_BYTES
    members: int = MAX_MEMBERS


class _CountingReader:
    """The decompressed archive, refusing reads past the limits (tarfile needs read, seek and tell)."""

    def __init__(self, raw: io.BufferedIOBase, cap: int) -> None:
        self._raw = raw
        self._cap = cap

    def read(self, size: int = -1) -> bytes:
        if size < 0 or size > MAX_READ:
            raise BundleError(f"archive asks for a {size}-byte record at offset {self._raw.tell()} (tar bomb?)")
        if self._raw.tell() + size > self._cap:
            raise BundleError(f"archive decompresses to more than {self._cap} bytes (tar bomb?)")
        return self._raw.read(size)

    def seek(self, offset: int, whence: int = 0) -> int:
        if whence == 0 and offset > self._cap:
            raise BundleError(f"archive decompresses to more than {self._cap} bytes (tar bomb?)")
        return self._raw.seek(offset, whence)

    def tell(self) -> int:
        return self._raw.tell()


class _XzStream(io.RawIOBase):
    """An xz file's decompressed bytes, with the decoder's memory limited to XZ_MEMLIMIT (lzma.LZMAFile takes no
    limit). Read forward only, as tarfile reads an archive: a backward seek is an error."""

    def __init__(self, raw: io.BufferedReader) -> None:
        self._raw = raw
        self._decoder = lzma.LZMADecompressor(memlimit=XZ_MEMLIMIT)
        self._pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def readinto(self, buffer: Any) -> int:
        data = self._next(len(buffer))
        buffer[: len(data)] = data
        self._pos += len(data)
        return len(data)

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        target = offset if whence == io.SEEK_SET else self._pos + offset
        if whence not in (io.SEEK_SET, io.SEEK_CUR) or target < self._pos:
            raise OSError(f"an xz stream is read forward only (seek to {target} from {self._pos})")
        while self._pos < target and self.read(min(target - self._pos, XZ_CHUNK)):
            pass
        return self._pos

    def _next(self, size: int) -> bytes:
        """Up to `size` decompressed bytes; b"" at the end of the file. A file may hold several xz streams."""
        while True:
            if self._decoder.eof:
                rest = self._decoder.unused_data or self._raw.read(XZ_CHUNK)
                if not rest:
                    return b""
                self._decoder = lzma.LZMADecompressor(memlimit=XZ_MEMLIMIT)
            else:
                rest = self._raw.read(XZ_CHUNK) if self._decoder.needs_input else b""
                if self._decoder.needs_input and not rest:
                    raise EOFError("the xz stream ends before its end marker")
            data = self._decoder.decompress(rest, size)
            if data:
                return data


def member_problem(name: str) -> str | None:
    """Why an archive member name is unsafe, or None. Pure."""
    try:
        encoded = name.encode("utf-8")
    except UnicodeEncodeError:
        return "is not valid UTF-8"
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in name):
        return "holds a control character"
    if name.startswith("/"):
        return "is an absolute path"
    if len(encoded) > MAX_NAME_BYTES:
        return f"is longer than {MAX_NAME_BYTES} bytes"
    for part in name.split("/"):
        if part in ("", ".", ".."):
            return f"has a {part!r} component" if part else "has an empty component"
        if len(part.encode("utf-8")) > MAX_COMPONENT_BYTES:
            return f"has a component longer than {MAX_COMPONENT_BYTES} bytes"
    return None


def extract_bundle(archive: Path, dest: Path, limits: Limits = Limits()) -> Path:
    """Extract `archive` into the empty directory `dest`; returns the bundle directory (dest/<its one top dir>).
    Raises BundleError, naming the member, on anything unsafe or unreadable."""
    cap = limits.total_bytes + limits.members * HEADER_ALLOWANCE
    try:
        with open(archive, "rb") as f:
            magic = f.read(len(XZ_MAGIC))
        with open(archive, "rb") as raw_file, _decompressed(raw_file, magic) as stream:
            reader = _CountingReader(stream, cap)
            # typeshed's tarfile file object also has write() and close(), which reading never calls.
            with tarfile.open(fileobj=reader, mode="r:") as tar:  # type: ignore[call-overload]
                return _extract_members(tar, dest, limits)
    except (tarfile.TarError, OSError, EOFError, zlib.error, lzma.LZMAError, ValueError) as exc:
        raise BundleError(f"{archive} is not a readable bundle archive: {exc}") from exc


def _decompressed(raw_file: io.BufferedReader, magic: bytes) -> io.BufferedIOBase:
    """The archive's tar stream, by its first bytes: xz, gzip (the only archive `audit export` wrote before .tar.xz;
    bundles an auditor already holds), or none."""
    if magic.startswith(XZ_MAGIC):
        return io.BufferedReader(_XzStream(raw_file))
    if magic.startswith(GZIP_MAGIC):
        return gzip.GzipFile(fileobj=raw_file, mode="rb")
    return raw_file


def _extract_members(tar: tarfile.TarFile, dest: Path, limits: Limits) -> Path:
    top: str | None = None
    seen: set[str] = set()
    files: set[str] = set()
    dirs: set[str] = set()
    total = count = 0
    for member in tar:
        name = member.name
        count += 1
        if count > limits.members:
            raise BundleError(f"archive holds more than {limits.members} members (tar bomb?)")
        problem = member_problem(name)
        if problem is not None:
            raise BundleError(f"archive member {name!r} {problem}")
        if not (member.isdir() or member.type in (tarfile.REGTYPE, tarfile.AREGTYPE)):
            kind = "a symlink" if member.issym() else "a hard link" if member.islnk() else "not a regular file"
            raise BundleError(f"archive member {name!r} is {kind}; a bundle holds only files and directories")
        parts = name.split("/")
        if top is None:
            top = parts[0]
        if parts[0] != top:
            raise BundleError(f"archive member {name!r} is outside the bundle directory {top!r}")
        if len(parts) == 1 and not member.isdir():
            raise BundleError(f"archive member {name!r} is a file where the bundle directory should be")
        if name in seen or (member.isdir() and name in files) or (not member.isdir() and name in dirs):
            raise BundleError(f"archive member {name!r} appears more than once")
        ancestors = ["/".join(parts[:i]) for i in range(1, len(parts))]
        clash = next((a for a in ancestors if a in files), None)
        if clash is not None:
            raise BundleError(f"archive member {name!r} is inside {clash!r}, which is a file")
        if member.size > limits.member_bytes:
            raise BundleError(f"archive member {name!r} is {member.size} bytes, over {limits.member_bytes} (tar bomb?)")
        total += member.size
        if total > limits.total_bytes:
            raise BundleError(f"archive members exceed {limits.total_bytes} bytes at {name!r} (tar bomb?)")
        seen.add(name)
        dirs.update(ancestors)
        (dirs if member.isdir() else files).add(name)
        try:
            tar.extract(member, dest, set_attrs=False, filter="data")
        except (tarfile.TarError, OSError) as exc:
            raise BundleError(f"archive member {name!r} cannot be extracted: {exc}") from exc
    if top is None:
        raise BundleError("archive is empty: it holds no bundle directory")
    return dest / top
