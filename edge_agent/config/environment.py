"""Environment overrides: `EDGE_AGENT__MQTT__PORT=1884` sets `mqtt.port`, and an index names an entry of an array of
tables (`EDGE_AGENT__OPCUA__SOURCES__0__PASSWORD` sets `opcua.sources[0].password`)."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from typing import Any

ENV_PREFIX = "EDGE_AGENT__"


def apply_env(data: dict[str, Any], environ: Mapping[str, str], problems: list[tuple[str, str]]) -> None:
    """Every EDGE_AGENT__ variable of `environ` into `data`, in name order; each one that cannot be applied adds
    (key path, reason naming the variable) to `problems`. Values parse as TOML scalars, else stay strings."""
    for name in sorted(environ):
        if not name.startswith(ENV_PREFIX):
            continue
        parts = name[len(ENV_PREFIX) :].split("__")
        keys = [part.lower() for part in parts]
        if not all(keys):
            problems.append((name, "empty key in environment override"))
            continue
        problem = _set(data, keys, parse_env_value(environ[name]), parts)
        if problem is not None:
            where, reason = problem
            problems.append((where, f"environment override {name}: {reason}"))


def parse_env_value(raw: str) -> Any:
    try:
        return tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        return raw


def _set(data: dict[str, Any], keys: list[str], value: Any, parts: list[str]) -> tuple[str, str] | None:
    """Put `value` at `keys`, creating missing tables; None, or (key path, why it cannot go there)."""
    node: Any = data
    here = ""  # the key path walked so far, an index as "[0]" (as pydantic's errors name it)
    for depth, key in enumerate(keys):
        last = depth == len(keys) - 1
        if isinstance(node, list):
            if not _is_index(key):
                example = "__".join([*parts[:depth], "0", *parts[depth:]])
                reason = f"{here} is an array of tables: name an entry by its index, e.g. {ENV_PREFIX}{example}"
                return _joined(here, keys[depth:]), reason
            index = int(key)
            if index >= len(node):
                entries = "1 entry" if len(node) == 1 else f"{len(node)} entries"
                reason = f"index {index} is beyond {here}, which has {entries} in the config file"
                return _joined(f"{here}[{index}]", keys[depth + 1 :]), reason
            here = f"{here}[{index}]"
            if last:
                node[index] = value
                return None
            node = node[index]
        elif isinstance(node, dict):
            if last:
                node[key] = value
                return None
            # A missing key followed by an index is an array the file does not have: every index is beyond it.
            node = node.setdefault(key, [] if _is_index(keys[depth + 1]) else {})
            here = _joined(here, [key])
        else:
            return _joined(here, keys[depth:]), f"{here} is a value, not a table"
    raise AssertionError("unreachable: the last key always returns")


def _joined(path: str, keys: list[str]) -> str:
    return ".".join([path, *keys] if path else keys)


def _is_index(key: str) -> bool:
    return key.isascii() and key.isdigit()


__all__ = ["ENV_PREFIX", "apply_env", "parse_env_value"]
