"""structlog set-up: JSON lines for journald when stdout is not a TTY, a readable console otherwise.

Every line carries `component`; loggers bind it with `structlog.get_logger(component="...")`, and request handlers
bind `request_id` with `structlog.contextvars.bind_contextvars`.
"""

from __future__ import annotations

import logging
import sys
from typing import Literal

import structlog

_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}


def configure_logging(level: str = "info", fmt: Literal["auto", "json", "console"] = "auto") -> None:
    json_lines = fmt == "json" or (fmt == "auto" and not sys.stdout.isatty())
    renderer = structlog.processors.JSONRenderer() if json_lines else structlog.dev.ConsoleRenderer(colors=False)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(_LEVELS[level]),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stdout),
        cache_logger_on_first_use=False,
    )
