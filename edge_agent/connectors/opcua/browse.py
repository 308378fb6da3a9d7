"""Walk an OPC UA server's address space: the variables a plant engineer can watch and the objects that emit events.

`browse()` does the I/O over one `Session` (so the configured security, certificates, pin and user apply as they do
for the agent itself) and returns an `AddressSpace` (`address_space`: the nodes found, and `format_table`,
`format_toml` and `as_json`, pure functions of them). The walk goes breadth first, one batched Browse/Read per level,
and stops at `max_nodes`. A node whose children or attributes cannot be read becomes a `NodeProblem` and the walk
goes on.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from asyncua import Client, ua

from edge_agent.config import OpcuaSourceConfig
from edge_agent.connectors.opcua.address_space import (
    AddressSpace,
    EventNotifier,
    NodeProblem,
    Variable,
    as_json,
    format_table,
    format_toml,
    nodes_from_toml,
    suggest_naming,
    toml_string,
)
from edge_agent.connectors.opcua.ids import node_id
from edge_agent.connectors.opcua.session import Session
from edge_agent.connectors.opcua.source import client_identity

# A plant server holds a few thousand tags; past 10 000 nodes the list is too long to read or paste and the walk
# (one round trip per level and batch) starts to take minutes on a slow link: narrow it with --from or --depth.
MAX_NODES = 10_000
DEFAULT_DEPTH = 6
# Nodes per Browse/Read request: at or below the MaxNodesPerBrowse/MaxNodesPerRead limits servers commonly set
# (1000 is usual; some embedded gateways allow 100), so no request is refused as BadTooManyOperations.
BATCH = 100
OBJECTS_FOLDER = node_id(ua.ObjectIds.ObjectsFolder)
_HAS_PROPERTY = node_id(ua.ObjectIds.HasProperty)
_ENGINEERING_UNITS = ua.QualifiedName("EngineeringUnits", 0)
_T = TypeVar("_T")


class BrowseError(Exception):
    """The walk could not start: e.g. the start node does not exist on the server."""


# --- the walk --------------------------------------------------------------------------------------------------


async def browse(
    config: OpcuaSourceConfig,
    pki_dir: Path,
    *,
    start: str | None = None,
    depth: int = DEFAULT_DEPTH,
    max_nodes: int = MAX_NODES,
) -> AddressSpace:
    """Connect as `config` describes (its nodes and events are ignored) and walk from `start` (default: Objects)."""
    identity = client_identity(config, pki_dir)
    # No monitored items: the session only opens, with the source's own security set-up.
    bare = config.model_copy(update={"nodes": [], "events": False})
    async with Session(bare, identity) as session:
        return await walk(session.client, config.endpoint, start=start, depth=depth, max_nodes=max_nodes)


async def walk(
    client: Client, endpoint: str, *, start: str | None = None, depth: int = DEFAULT_DEPTH, max_nodes: int = MAX_NODES
) -> AddressSpace:
    start_id = ua.NodeId.from_string(start) if start else OBJECTS_FOLDER
    space = AddressSpace(endpoint=endpoint, start=start_id.to_string(), depth=depth)
    (name,) = await client.uaclient.read_attributes([start_id], ua.AttributeIds.BrowseName)
    (node_class,) = await client.uaclient.read_attributes([start_id], ua.AttributeIds.NodeClass)
    for dv in (name, node_class):
        if not _good(dv) or dv.Value is None:
            raise BrowseError(f"node {space.start} cannot be read on {endpoint}: {_status_name(dv.StatusCode)}")
    start_path: tuple[str, ...] = (_name(name.Value.Value, space.start),)  # type: ignore[union-attr]  # checked just above
    space.nodes = 1
    await _describe(client, space, [(start_id, start_path, ua.NodeClass(node_class.Value.Value))])  # type: ignore[union-attr]

    visited = {start_id}
    frontier = [(start_id, start_path)]
    for _level in range(depth):
        if not frontier or space.truncated:
            break
        found: list[tuple[ua.NodeId, tuple[str, ...], ua.NodeClass]] = []
        for (_parent, path), refs in zip(frontier, await _children(client, space, frontier), strict=True):
            for ref in refs:
                child = ua.NodeId(ref.NodeId.Identifier, ref.NodeId.NamespaceIndex, ref.NodeId.NodeIdType)
                if getattr(ref.NodeId, "ServerIndex", 0) or child in visited:
                    continue  # on another server, or reached before by another path (the address space is a graph)
                if space.nodes >= max_nodes:
                    space.truncated = True
                    break
                visited.add(child)
                space.nodes += 1
                found.append((child, (*path, _name(ref.BrowseName, child.to_string())), ref.NodeClass))
        await _describe(client, space, found)
        # Namespace 0 holds the standard nodes (the Server object's diagnostics, type definitions): they describe the
        # server, not the plant, so they are listed but not walked into unless the walk starts there.
        frontier = [(nid, path) for nid, path, _cls in found if nid.NamespaceIndex != 0]
    space.variables.sort(key=lambda v: v.browse_path)
    space.notifiers.sort(key=lambda n: n.browse_path)
    space.problems.sort(key=lambda p: p.browse_path)
    return space


async def _children(
    client: Client, space: AddressSpace, nodes: Sequence[tuple[ua.NodeId, tuple[str, ...]]]
) -> list[list[ua.ReferenceDescription]]:
    """Each node's hierarchical children (objects and variables; properties left out), continuation points
    followed. A node whose browse fails gets no children and a NodeProblem."""
    out: list[list[ua.ReferenceDescription]] = []
    for chunk in _chunks(nodes, BATCH):
        params = ua.BrowseParameters()
        params.View = ua.ViewDescription()
        params.RequestedMaxReferencesPerNode = 0  # the server's own page size; continuation points below
        params.NodesToBrowse = [_children_of(nid) for nid, _path in chunk]
        try:
            results = await client.uaclient.browse(params)
        except ua.UaStatusCodeError as exc:
            for nid, path in chunk:
                space.problems.append(NodeProblem(nid.to_string(), path, f"children not browsed: {_status_name(exc)}"))
            out.extend([] for _ in chunk)
            continue
        for (nid, path), result in zip(chunk, _padded(results, len(chunk)), strict=True):
            refs: list[ua.ReferenceDescription] = []
            while result is not None:
                if not result.StatusCode.is_good():
                    what = f"children not browsed: {_status_name(result.StatusCode)}"
                    space.problems.append(NodeProblem(nid.to_string(), path, what))
                    break
                refs.extend(r for r in result.References if r.ReferenceTypeId != _HAS_PROPERTY)
                result = await _browse_next(client, result.ContinuationPoint)
            out.append(refs)
    return out


async def _browse_next(client: Client, continuation: bytes | None) -> ua.BrowseResult | None:
    if not continuation:
        return None
    params = ua.BrowseNextParameters()
    params.ReleaseContinuationPoints = False
    params.ContinuationPoints = [continuation]
    results = await client.uaclient.browse_next(params)
    return results[0] if results else None


def _children_of(nid: ua.NodeId) -> ua.BrowseDescription:
    desc = ua.BrowseDescription()
    desc.NodeId = nid
    desc.BrowseDirection = ua.BrowseDirection.Forward
    desc.ReferenceTypeId = node_id(ua.ObjectIds.HierarchicalReferences)
    desc.IncludeSubtypes = True
    desc.NodeClassMask = ua.NodeClass.Object | ua.NodeClass.Variable
    desc.ResultMask = ua.BrowseResultMask.All
    return desc


async def _describe(
    client: Client, space: AddressSpace, found: Sequence[tuple[ua.NodeId, tuple[str, ...], ua.NodeClass]]
) -> None:
    """Variables: data type and unit; objects: whether they are event notifiers."""
    variables = [(nid, path) for nid, path, cls in found if cls == ua.NodeClass.Variable]
    objects = [(nid, path) for nid, path, cls in found if cls == ua.NodeClass.Object]
    types = await _read(client, space, variables, ua.AttributeIds.DataType, "DataType")
    names = await _type_names(client, [dv.Value.Value for dv in types if _good(dv) and dv.Value is not None])
    units = await _units(client, space, variables)
    for (nid, path), dv, unit in zip(variables, types, units, strict=True):
        data_type = names.get(dv.Value.Value) if _good(dv) and dv.Value is not None else None
        space.variables.append(Variable(nid.to_string(), path, data_type, unit))
    for (nid, path), dv in zip(
        objects, await _read(client, space, objects, ua.AttributeIds.EventNotifier, "EventNotifier"), strict=True
    ):
        bits = dv.Value.Value if _good(dv) and dv.Value is not None else None
        if isinstance(bits, int) and ua.EventNotifier.SubscribeToEvents in ua.EventNotifier.parse_bitfield(bits):
            space.notifiers.append(EventNotifier(nid.to_string(), path))


async def _read(
    client: Client,
    space: AddressSpace,
    nodes: Sequence[tuple[ua.NodeId, tuple[str, ...]]],
    attribute: ua.AttributeIds,
    label: str,
) -> list[ua.DataValue]:
    """One attribute of every node, batched; a bad one is reported as a NodeProblem naming `label`."""
    values: list[ua.DataValue] = []
    for chunk in _chunks(nodes, BATCH):
        try:
            got = await client.uaclient.read_attributes([nid for nid, _path in chunk], attribute)
        except ua.UaStatusCodeError as exc:
            got = [_bad(exc.code) for _ in chunk]
        values.extend(_padded(got, len(chunk), _bad(ua.StatusCodes.BadNoData)))
    for (nid, path), dv in zip(nodes, values, strict=True):
        if not _good(dv):
            space.problems.append(
                NodeProblem(nid.to_string(), path, f"{label} unreadable: {_status_name(dv.StatusCode)}")
            )
    return values


async def _type_names(client: Client, type_ids: Iterable[Any]) -> dict[Any, str]:
    """DataType node id → name: the standard ones from asyncua's table, a server's own ones read as BrowseName."""
    names: dict[Any, str] = {}
    custom: list[ua.NodeId] = []
    for tid in {t for t in type_ids if isinstance(t, ua.NodeId)}:
        if tid.NamespaceIndex == 0 and isinstance(tid.Identifier, int) and tid.Identifier in ua.ObjectIdNames:
            names[tid] = ua.ObjectIdNames[tid.Identifier]
        else:
            custom.append(tid)
    for chunk in _chunks(custom, BATCH):
        try:
            got = await client.uaclient.read_attributes(list(chunk), ua.AttributeIds.BrowseName)
        except ua.UaStatusCodeError:
            got = []
        for tid, dv in zip(chunk, _padded(got, len(chunk)), strict=True):
            good = dv is not None and _good(dv) and dv.Value is not None
            names[tid] = _name(dv.Value.Value, tid.to_string()) if good else tid.to_string()
    return names


async def _units(
    client: Client, space: AddressSpace, variables: Sequence[tuple[ua.NodeId, tuple[str, ...]]]
) -> list[str | None]:
    """Each variable's engineering unit: the EUInformation value of its EngineeringUnits property (OPC 10000-8)."""
    props: list[ua.NodeId | None] = []
    for chunk in _chunks(variables, BATCH):
        paths = [_property_path(nid) for nid, _path in chunk]
        try:
            results = await client.uaclient.translate_browsepaths_to_nodeids(paths)
        except ua.UaStatusCodeError:
            results = []
        for result in _padded(results, len(chunk)):
            target = (
                result.Targets[0].TargetId
                if result is not None and result.StatusCode.is_good() and result.Targets
                else None
            )
            props.append(
                ua.NodeId(target.Identifier, target.NamespaceIndex, target.NodeIdType) if target is not None else None
            )
    with_units = [(prop, path) for prop, (_nid, path) in zip(props, variables, strict=True) if prop is not None]
    values = iter(await _read(client, space, with_units, ua.AttributeIds.Value, "EngineeringUnits"))
    units: list[str | None] = []
    for prop, (nid, path) in zip(props, variables, strict=True):
        if prop is None:
            units.append(None)
            continue
        dv = next(values)
        eu = dv.Value.Value if _good(dv) and dv.Value is not None else None
        if _good(dv) and not isinstance(eu, ua.EUInformation):
            what = f"EngineeringUnits is not an EUInformation ({type(eu).__name__})"
            space.problems.append(NodeProblem(nid.to_string(), path, what))
        units.append(_unit_text(eu) if isinstance(eu, ua.EUInformation) else None)
    return units


def _property_path(nid: ua.NodeId) -> ua.BrowsePath:
    element = ua.RelativePathElement()
    element.ReferenceTypeId = _HAS_PROPERTY
    element.IsInverse = False  # type: ignore[assignment]  # asyncua's Boolean marker is a bool
    element.IncludeSubtypes = False  # type: ignore[assignment]
    element.TargetName = _ENGINEERING_UNITS
    path = ua.BrowsePath()
    path.StartingNode = nid
    path.RelativePath = ua.RelativePath()
    path.RelativePath.Elements = [element]
    return path


def _unit_text(eu: ua.EUInformation) -> str | None:
    for text in (eu.DisplayName, eu.Description):
        if text is not None and text.Text:
            return str(text.Text)
    return None


def _name(qualified: Any, fallback: str) -> str:
    name = getattr(qualified, "Name", None)
    return str(name) if name else fallback


def _bad(code: int) -> ua.DataValue:
    return ua.DataValue(StatusCode=ua.StatusCode(code))  # type: ignore[arg-type]  # asyncua's UInt32 is an int


def _good(dv: ua.DataValue) -> bool:
    return dv.StatusCode is None or dv.StatusCode.is_good()


def _status_name(status: ua.StatusCode | ua.UaStatusCodeError | None) -> str:
    if isinstance(status, ua.UaStatusCodeError):
        status = ua.StatusCode(status.code)
    return status.name if status is not None else "Bad"


def _chunks(items: Sequence[_T], size: int) -> Iterator[Sequence[_T]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def _padded(items: Sequence[_T], n: int, filler: Any = None) -> list[Any]:
    """A server's reply is peer data: one shorter than the request must not end the walk with a ValueError."""
    return [*items[:n], *([filler] * (n - len(items)))]


# The walk's results and their outputs (`address_space`) are read from here by `edge-agent opcua browse`.
__all__ = [
    "BATCH",
    "DEFAULT_DEPTH",
    "MAX_NODES",
    "OBJECTS_FOLDER",
    "AddressSpace",
    "BrowseError",
    "EventNotifier",
    "NodeProblem",
    "Variable",
    "as_json",
    "browse",
    "format_table",
    "format_toml",
    "nodes_from_toml",
    "suggest_naming",
    "toml_string",
    "walk",
]
