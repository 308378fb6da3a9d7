"""The one error a tool raises: a reason code a client can act on, and a detail naming the value."""

from __future__ import annotations

from typing import Literal

Reason = Literal["unknown_tool", "bad_arguments", "outside_budget", "outside_data", "unknown_tag", "unknown_asset"]


class ToolError(Exception):
    def __init__(self, reason: Reason, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason: Reason = reason
        self.detail = detail
