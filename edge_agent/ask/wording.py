"""The answer wordings: the narrative wing's wording/ask/v1/answers.toml (es, en and pt in one file), read through
its face once and parsed here."""

from __future__ import annotations

import functools
import tomllib
from typing import Any

from edge_agent.reports.narrative import read_wording

# v1: the answer wordings as the writer first shipped them (es, en and pt in one file).
WORDING_VERSION = "v1"


@functools.cache
def wording() -> dict[str, Any]:
    return tomllib.loads(read_wording("ask", WORDING_VERSION).raw.decode("utf-8"))
