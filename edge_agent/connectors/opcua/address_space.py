"""An OPC UA server's address space as `browse` found it (variables, event notifiers, nodes it could not read), and
what is made of it: a readable table, `[[opcua.sources.nodes]]` TOML to paste under a source, and JSON. All pure."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from edge_agent.config import NodeConfig


@dataclass(frozen=True)
class Variable:
    node_id: str
    browse_path: tuple[str, ...]  # browse names from the start node (included) down to this node
    data_type: str | None  # None: unreadable (a NodeProblem says why)
    unit: str | None  # the DisplayName of its EngineeringUnits property's EUInformation; None when it has none


@dataclass(frozen=True)
class EventNotifier:
    node_id: str
    browse_path: tuple[str, ...]


@dataclass(frozen=True)
class NodeProblem:
    node_id: str
    browse_path: tuple[str, ...]
    what: str  # e.g. "DataType unreadable: BadUserAccessDenied"


@dataclass
class AddressSpace:
    endpoint: str
    start: str
    depth: int
    variables: list[Variable] = field(default_factory=list)
    notifiers: list[EventNotifier] = field(default_factory=list)
    problems: list[NodeProblem] = field(default_factory=list)
    nodes: int = 0  # nodes visited, the start node included
    truncated: bool = False  # the walk stopped at max_nodes


def as_json(space: AddressSpace) -> dict[str, Any]:
    return {
        "endpoint": space.endpoint,
        "start": space.start,
        "depth": space.depth,
        "nodes": space.nodes,
        "truncated": space.truncated,
        "variables": [
            {"node_id": v.node_id, "browse_path": list(v.browse_path), "data_type": v.data_type, "unit": v.unit}
            for v in space.variables
        ],
        "event_notifiers": [{"node_id": n.node_id, "browse_path": list(n.browse_path)} for n in space.notifiers],
        "problems": [
            {"node_id": p.node_id, "browse_path": list(p.browse_path), "what": p.what} for p in space.problems
        ],
    }


def format_table(space: AddressSpace) -> str:
    """Readable columns: variables, then event notifiers, then the nodes that could not be read."""
    lines = [_summary(space), ""]
    rows = [(v.node_id, _path(v.browse_path), v.data_type or "?", v.unit or "") for v in space.variables]
    lines += _columns(("NODE ID", "BROWSE PATH", "DATA TYPE", "UNIT"), rows) if rows else ["no variables"]
    if space.notifiers:
        lines += ["", "event notifiers (SubscribeToEvents):"]
        lines += _columns(("NODE ID", "BROWSE PATH"), [(n.node_id, _path(n.browse_path)) for n in space.notifiers])
    if space.problems:
        lines += ["", "not readable (the walk went on):"]
        lines += _columns(
            ("NODE ID", "BROWSE PATH", "PROBLEM"), [(p.node_id, _path(p.browse_path), p.what) for p in space.problems]
        )
    return "\n".join(_printable(line).rstrip() for line in lines) + "\n"


def format_toml(space: AddressSpace, sampling_interval_ms: float = 1000.0) -> str:
    """`[[opcua.sources.nodes]]` blocks, one per variable, to paste under a source. A variable whose browse name
    reads ASSET.measurement keeps it as its tag; any other is named asset = its parent's browse name, measurement
    = its own."""
    lines = [
        f"# {_printable(_summary(space))}",
        "# Review each asset and measurement before pasting: they name the tag.",
    ]
    seen: set[str] = set()
    for v in space.variables:
        naming = suggest_naming(v.browse_path, v.node_id)
        tag = naming.get("tag") or f"{naming['asset']}.{naming['measurement']}"
        detail = "  ".join(x for x in (_path(v.browse_path), v.data_type or "?", v.unit or "") if x)
        lines += ["", f"# {_printable(detail)}"]
        if tag in seen:
            lines.append(f"# the tag {_printable(tag)} is already used above: rename one of them")
        seen.add(tag)
        if not _toml_representable(v.node_id):
            lines.append("# node id not representable in TOML (unpaired surrogate): left out")
            continue
        lines.append("[[opcua.sources.nodes]]")
        lines.append(f"node_id = {toml_string(v.node_id)}")
        lines += [f"{key} = {toml_string(value)}" for key, value in naming.items()]
        lines.append(f"sampling_interval_ms = {float(sampling_interval_ms)!r}")
    if space.notifiers:
        lines += [
            "",
            "# Event notifiers. `events = true` on the source subscribes to the Server object's events, which a server",
            "# normally reports its other notifiers' events through as well:",
        ]
        lines += [f"#   {_printable(n.node_id)}  {_printable(_path(n.browse_path))}" for n in space.notifiers]
    return "\n".join(lines) + "\n"


def suggest_naming(browse_path: Sequence[str], fallback: str) -> dict[str, str]:
    """{"tag": ...} for a browse name that already reads ASSET.measurement; else {"asset": ..., "measurement": ...},
    the asset from the parent's browse name with "." made "_" (an asset must not contain one). Always a naming
    `NodeConfig` accepts."""
    name = (browse_path[-1] if browse_path else "") or fallback
    asset, dot, measurement = name.partition(".")
    if asset and dot and measurement:
        return {"tag": name}
    parent = (browse_path[-2] if len(browse_path) > 1 else "").replace(".", "_") or "ASSET"
    return {"asset": parent, "measurement": name}


def nodes_from_toml(data: dict[str, Any]) -> list[NodeConfig]:
    """The NodeConfig entries a parsed `format_toml` output holds (as a config file would validate them)."""
    return [NodeConfig.model_validate(n) for n in data.get("opcua", {}).get("sources", {}).get("nodes", [])]


def toml_string(text: str) -> str:
    """A TOML basic string: quote, backslash and control characters escaped, everything else as is."""
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\u{code:04X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _toml_representable(text: str) -> bool:
    return not any(_surrogate(ch) for ch in text)


def _summary(space: AddressSpace) -> str:
    plural = "" if len(space.variables) == 1 else "s"
    notifiers = f"{len(space.notifiers)} event notifier{'' if len(space.notifiers) == 1 else 's'}"
    text = (
        f"{space.endpoint} from {space.start}, depth {space.depth}: {len(space.variables)} variable{plural},"
        f" {notifiers}, {len(space.problems)} unreadable, {space.nodes} nodes visited"
    )
    if space.truncated:
        text += f"; stopped at {space.nodes} nodes (narrow the walk with --from or --depth)"
    return text


def _path(path: Sequence[str]) -> str:
    return "/".join(path)


def _columns(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) for row in [header, *rows]]


def _printable(text: str) -> str:
    """Control characters and unpaired surrogates from the server shown escaped: a terminal never interprets them,
    and a TOML comment stays one line of valid UTF-8."""
    return "".join(
        f"\\x{ord(ch):02x}" if ord(ch) < 0x20 or ord(ch) == 0x7F else f"\\u{ord(ch):04x}" if _surrogate(ch) else ch
        for ch in text
    )


def _surrogate(ch: str) -> bool:
    return 0xD800 <= ord(ch) <= 0xDFFF
