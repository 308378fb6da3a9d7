"""OPC UA node ids from plain Python values, for the agent's client and the plant simulator alike."""

from __future__ import annotations

from asyncua import ua


def node_id(identifier: int | str, namespace: int = 0) -> ua.NodeId:
    """A NodeId from a plain int (`ua.ObjectIds.Server`) or string, the way asyncua's own code builds them; its
    annotations name its Int32/String/Int16 marker classes, which NodeId never requires."""
    return ua.NodeId(identifier, namespace)  # type: ignore[arg-type]  # plain int/str: see the docstring
