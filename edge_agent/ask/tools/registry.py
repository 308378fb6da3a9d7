"""Every tool by name, with its input and output models, and `run_tool`, the one way a tool is called: arguments as
a JSON object in, a typed output or a `ToolError` with its reason out."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, get_args

from pydantic import ValidationError

from edge_agent.ask.tools.alarms import alarms
from edge_agent.ask.tools.context import ToolContext
from edge_agent.ask.tools.errors import ToolError
from edge_agent.ask.tools.kpis import kpis
from edge_agent.ask.tools.mes import production, quality_checks, stops
from edge_agent.ask.tools.models import ToolInput, ToolName, ToolOutput
from edge_agent.ask.tools.namespace import namespace
from edge_agent.ask.tools.notes import notes
from edge_agent.ask.tools.stored_reports import report_get, reports_list
from edge_agent.ask.tools.tags import tag_stats, tag_value_at

# An argument error names this many characters of the first bad field's message at most.
DETAIL_CHARS_MAX = 200


@dataclass(frozen=True)
class Tool:
    name: str
    input_model: type[ToolInput]
    output_model: type[ToolOutput]
    fn: Callable[[ToolContext, Any], ToolOutput]
    description: str


def _tool(fn: Callable[[ToolContext, Any], ToolOutput]) -> Tool:
    """A tool from its typed function: its name, models and description (the docstring) are the function's."""
    hints = inspect.get_annotations(fn, eval_str=True)
    return Tool(fn.__name__, hints["args"], hints["return"], fn, inspect.getdoc(fn) or "")


_FUNCTIONS: tuple[Callable[[ToolContext, Any], ToolOutput], ...] = (
    namespace, tag_stats, tag_value_at, stops, production, quality_checks, alarms, notes, kpis, reports_list,
    report_get,
)  # fmt: skip
TOOLS: dict[str, Tool] = {t.name: t for t in (_tool(fn) for fn in _FUNCTIONS)}
assert tuple(TOOLS) == get_args(ToolName), "TOOLS and plan.ToolName list the same tools, in the same order"


def run_tool(ctx: ToolContext, name: str, args: dict[str, Any]) -> ToolOutput:
    """Validate `args` with the tool's input model and run it; every failure is a ToolError with its reason."""
    tool = TOOLS.get(name) if isinstance(name, str) else None
    if tool is None:
        raise ToolError("unknown_tool", f"no tool {name!r} (known: {', '.join(TOOLS)})")
    if not isinstance(args, dict):
        raise ToolError("bad_arguments", f"arguments must be a JSON object, not {type(args).__name__}")
    try:
        parsed = tool.input_model.model_validate(args)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "<args>"
        raise ToolError("bad_arguments", f"{where}: {err['msg']}"[:DETAIL_CHARS_MAX]) from exc
    return tool.fn(ctx, parsed)
