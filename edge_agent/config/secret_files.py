"""Secrets kept out of the config file: beside every secret key (`password`, `remote_api_key`) the config may name a
file holding it instead (`password_file`, `remote_api_key_file`), read when the config is loaded.

A `*_file` path may start from `${CREDENTIALS_DIRECTORY}`, the directory where systemd puts the unit's
`LoadCredential=` files; no other variable is expanded. Which keys are secrets is read off the models: every
`SecretStr` field, in every section and in every entry of an array of tables.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, get_args, get_origin

from pydantic import BaseModel, SecretStr

FILE_SUFFIX = "_file"
CREDENTIALS = "${CREDENTIALS_DIRECTORY}"
# 64 KiB: far above any password, key or token, and a bound on what a mistaken path (a log file) makes us read.
MAX_SECRET_BYTES = 64 * 1024


def read_secret_files(
    data: dict[str, Any], model: type[BaseModel], environ: Mapping[str, str], problems: list[tuple[str, str]]
) -> dict[str, Path]:
    """Replace each `<secret>_file` key in `data` (shaped like `model`) by `<secret>` holding the file's text.
    Returns key path → file read, for every secret taken from a file; each failure adds (key path, reason)."""
    read: dict[str, Path] = {}
    _walk(data, model, "", environ, problems, read)
    return read


def _walk(
    data: dict[str, Any],
    model: type[BaseModel],
    prefix: str,
    environ: Mapping[str, str],
    problems: list[tuple[str, str]],
    read: dict[str, Path],
) -> None:
    for name, field in model.model_fields.items():
        file_key = name + FILE_SUFFIX
        if _is_secret(field.annotation) and file_key in data:
            where = prefix + file_key
            raw = data.pop(file_key)
            if name in data:
                problems.append((where, f"{prefix + name} and {where} are both set: keep one"))
                continue
            try:
                path = _expand(raw, environ)
                data[name] = read_secret(path)
            except ValueError as exc:
                problems.append((where, str(exc)))
                continue
            read[prefix + name] = path
        section, is_list = _section(field.annotation)
        value = data.get(name)
        if section is None:
            continue
        if is_list and isinstance(value, list):
            for index, item in enumerate(value):
                if isinstance(item, dict):
                    _walk(item, section, f"{prefix}{name}[{index}].", environ, problems, read)
        elif not is_list and isinstance(value, dict):
            _walk(value, section, f"{prefix}{name}.", environ, problems, read)


def read_secret(path: Path) -> str:
    """The secret in `path`: its UTF-8 text without one trailing newline; ValueError saying what is wrong."""
    try:
        if not path.is_file():
            raise ValueError(f"{path} is not a file" if path.exists() else f"{path} does not exist")
        with path.open("rb") as handle:
            raw = handle.read(MAX_SECRET_BYTES + 1)
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if len(raw) > MAX_SECRET_BYTES:
        raise ValueError(f"{path} is over {MAX_SECRET_BYTES} bytes: not a secret")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not UTF-8 text") from exc
    secret = text.removesuffix("\n").removesuffix("\r")
    if not secret:
        raise ValueError(f"{path} is empty")
    return secret


def _expand(raw: Any, environ: Mapping[str, str]) -> Path:
    if not isinstance(raw, str) or not raw:
        raise ValueError(f"must be a file path, not {raw!r}")
    if "\0" in raw:
        raise ValueError(f"{raw!r} holds a NUL character: not a file path")
    if CREDENTIALS in raw:
        directory = environ.get("CREDENTIALS_DIRECTORY")
        if not directory:
            raise ValueError(
                f"{raw} names {CREDENTIALS}, which is not set: systemd sets it for a unit with LoadCredential="
            )
        raw = raw.replace(CREDENTIALS, directory)
    return Path(raw)


def _is_secret(annotation: Any) -> bool:
    return annotation is SecretStr or SecretStr in get_args(annotation)


def _section(annotation: Any) -> tuple[type[BaseModel] | None, bool]:
    """The section type a field holds (`X`, `X | None` or `list[X]`), and whether it is an array of them."""
    for candidate in (annotation, *get_args(annotation)):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate, False
        if get_origin(candidate) is list:
            items = get_args(candidate)
            if items and isinstance(items[0], type) and issubclass(items[0], BaseModel):
                return items[0], True
    return None, False


__all__ = ["CREDENTIALS", "FILE_SUFFIX", "MAX_SECRET_BYTES", "read_secret", "read_secret_files"]
