"""Messages between the agent and its engine process: JSON lines over a socket pair.

agent → engine:  {"op": "start", "spec": WorkerSpec}            first message, once
                 {"op": "generate", "id": 7, "messages": [...], "params": {...}}
                 {"op": "abort", "id": 7}                        the caller gave up (timeout, cancellation)
                 {"op": "shutdown"}
engine → agent:  {"op": "ready", "info": {...}}                  engine loaded; info feeds the fingerprint
                 {"op": "fatal", "message": "..."}               could not load; the process exits
                 {"op": "result", "id": 7, ...}                  one per generate, or
                 {"op": "error", "id": 7, "kind": "prompt_too_long" | "bad_request" | "engine", ...}
"""

from __future__ import annotations

import json
from typing import Any

# Socket stream limit: a 4096-token completion is ~30 kB of JSON; 64 MiB leaves room for any max_model_len.
MAX_LINE = 64 * 1024 * 1024


def encode(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode("utf-8") + b"\n"


def decode(line: bytes) -> dict[str, Any]:
    message = json.loads(line)
    if not isinstance(message, dict) or "op" not in message:
        raise ValueError(f"not an engine message: {line[:200]!r}")
    return message
