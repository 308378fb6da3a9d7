"""Files and directories a config names that the agent cannot start without: checked by `edge-agent config check`
and before `edge-agent run` starts anything, so a wrong path is an error naming its key at once, not a component
that retries until its start timeout (the engine's is 300 s).

Only paths the config names are checked here. What the agent makes itself on first start is not: its audit signing
key, an OPC UA client certificate when none is configured (state_dir/pki), the int8 copy of the model, the compile
cache. The default model and draft head (`edge-agent model prepare`) are checked by `run` (edge_agent.cli.run_cmd).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from edge_agent.config import AgentConfig

Kind = Literal["file", "directory"]


def missing_files(config: AgentConfig) -> list[tuple[str, str]]:
    """(key path, reason) for each named path the enabled parts of `config` need that is absent or of the wrong
    kind, in config order; relative paths are taken from the working directory, as the agent takes them."""
    wanted: list[tuple[str, Path | None, Kind]] = []
    llm = config.llm
    if llm.enabled and llm.backend == "vllm":
        wanted.append(("llm.model_dir", llm.model_dir, "directory"))
        if llm.speculative.enabled:
            wanted.append(("llm.speculative.draft", llm.speculative.draft, "directory"))
    tls = config.mqtt.tls
    if tls is not None and (config.mqtt.enabled or config.sparkplug.enabled):
        wanted += [
            ("mqtt.tls.ca_file", tls.ca_file, "file"),
            ("mqtt.tls.cert_file", tls.cert_file, "file"),
            ("mqtt.tls.key_file", tls.key_file, "file"),
        ]
    if config.console.enabled:
        wanted += [
            ("console.tls_cert_file", config.console.tls_cert_file, "file"),
            ("console.tls_key_file", config.console.tls_key_file, "file"),
        ]
    if config.mcp.enabled:
        wanted += [("mcp.cert_file", config.mcp.cert_file, "file"), ("mcp.key_file", config.mcp.key_file, "file")]
    for index, source in enumerate(config.opcua.sources):
        wanted += [
            (f"opcua.sources[{index}].client_cert", source.client_cert, "file"),
            (f"opcua.sources[{index}].client_key", source.client_key, "file"),
        ]
    return [(key, reason) for key, path, kind in wanted if path is not None and (reason := absent(path, kind))]


def absent(path: Path, kind: Kind) -> str | None:
    """Why `path` is not a `kind` the agent can open, or None when it is one."""
    try:
        if path.is_dir() if kind == "directory" else path.is_file():
            return None
        exists = path.exists()
    except OSError as exc:  # e.g. a name too long for the file system
        return f"{path}: {exc.strerror or exc}"
    return f"{path} is not a {kind}" if exists else f"{kind} {path} does not exist"


__all__ = ["absent", "missing_files"]
