"""The ask tools: typed, read-only functions over the stored records, each computing its figures in code (on the
report facts wherever a fact exists, so an answer and a report agree) and returning the ids of the records behind
them, within a budget of window length and rows. Code outside the package uses these names only."""

from edge_agent.ask.tools.context import Budget, ToolContext
from edge_agent.ask.tools.errors import ToolError
from edge_agent.ask.tools.models import AssetInfo, LineInfo, Namespace, TagInfo, ToolOutput, Window
from edge_agent.ask.tools.namespace import build_namespace
from edge_agent.ask.tools.records import data_span, stored_from
from edge_agent.ask.tools.registry import TOOLS, Tool, run_tool

__all__ = [
    "AssetInfo",
    "Budget",
    "build_namespace",
    "data_span",
    "LineInfo",
    "Namespace",
    "run_tool",
    "stored_from",
    "TagInfo",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolOutput",
    "TOOLS",
    "Window",
]
