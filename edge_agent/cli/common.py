"""Helpers every subcommand shares: the --config option and loading it with a clean error."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from edge_agent.base.logging import configure_logging
from edge_agent.config import AgentConfig, ConfigError, load_config

DEFAULT_CONFIG = Path("/etc/edge-agent/edge-agent.toml")


class CliExit(SystemExit):
    """Raised to end a command with a message on stderr and an exit code."""

    def __init__(self, message: str, code: int = 1) -> None:
        print(message, file=sys.stderr)
        super().__init__(code)


def add_config_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", "-c", type=Path, default=DEFAULT_CONFIG, help="TOML config (default: %(default)s)")


def load_file(path: Path, environ: Mapping[str, str] | None = None) -> AgentConfig:
    """Load one config file (with `environ`'s overrides, default the process's) or exit 2 naming every bad key."""
    try:
        return load_config(path, environ)
    except ConfigError as exc:
        raise CliExit(f"edge-agent: invalid config {exc}", 2) from exc


def load(args: argparse.Namespace, *, setup_logging: bool = True) -> AgentConfig:
    """Load the config named by --config or exit 2 naming every bad key."""
    config = load_file(args.config)
    if setup_logging:
        configure_logging(config.logging.level, config.logging.format)
    return config


def print_json(data: Any) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False, sort_keys=True, default=str))


def route_logs_to_stderr(level: str = "warning") -> None:
    """stdout carries the command's answer (JSON, a table, a report); its log lines go to stderr."""
    import structlog

    configure_logging(level, "console")
    structlog.configure(logger_factory=structlog.PrintLoggerFactory(file=sys.stderr))


@contextmanager
def logs_on_stderr(level: str = "warning", *, asyncua_level: int | None = None) -> Iterator[None]:
    """`route_logs_to_stderr` for the duration, and asyncua's standard-library logging at `asyncua_level` if given
    (it logs what it negotiates, or each refused connection, as warnings). Restored after: tests run commands in
    one process."""
    import structlog

    saved = structlog.get_config()
    asyncua = logging.getLogger("asyncua")
    saved_level = asyncua.level
    route_logs_to_stderr(level)
    if asyncua_level is not None:
        asyncua.setLevel(asyncua_level)
    try:
        yield
    finally:
        asyncua.setLevel(saved_level)
        structlog.configure(**saved)
