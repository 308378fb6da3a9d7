"""`[mcp]`: the plant's read-only tools for other people's assistants over MCP's streamable HTTP, served by the agent
over TLS to holders of a per-user token (docs/ask.md, "MCP over HTTPS"). Off by default: `edge-agent mcp` on stdio
needs none of this."""

from __future__ import annotations

from pathlib import Path
from typing import Self

from pydantic import Field, model_validator

from edge_agent.config.base import Section


class McpConfig(Section):
    enabled: bool = False
    # Loopback unless an admin opens it: the tools read the whole plant's records.
    listen: str = Field("127.0.0.1", min_length=1, max_length=253)
    # 8444: beside the console's 8443, so one firewall rule names both.
    port: int = Field(8444, ge=0, le=65535)
    cert_file: Path | None = None
    key_file: Path | None = None
    # None: <state_dir>/mcp/tokens.json (`tokens_path`).
    tokens_file: Path | None = None
    # 64 KiB: an MCP request is one JSON-RPC message holding a tool call of a few arguments (the agent's own limit on
    # one is 16 KiB, ask.request.MAX_ASK_BYTES); the SDK's default of 4 MiB would let a caller make it parse megabytes.
    max_request_bytes: int = Field(64 * 1024, ge=1024, le=4 * 1024 * 1024)
    # 4 calls at once: each reads the store in a thread of its own; the ask service answers one at a time.
    max_concurrent_calls: int = Field(4, ge=1, le=64)

    @model_validator(mode="after")
    def _tls_when_enabled(self) -> Self:
        if self.enabled and (self.cert_file is None or self.key_file is None):
            raise ValueError("mcp.enabled needs cert_file and key_file: the server speaks only TLS (docs/ask.md)")
        return self

    def tokens_path(self, state_dir: Path) -> Path:
        """Where the tokens are kept: `tokens_file`, or `<state_dir>/mcp/tokens.json`."""
        return self.tokens_file if self.tokens_file is not None else state_dir / "mcp" / "tokens.json"
