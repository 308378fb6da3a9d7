"""Daemon lifecycle: components, the supervisor that runs them, sd_notify and the health server."""

from edge_agent.daemon.component import Component

__all__ = ["Component"]
