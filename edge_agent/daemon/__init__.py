"""Daemon lifecycle: components, the supervisor that runs them, sd_notify and the health server."""

from edge_agent.daemon.component import Component
from edge_agent.daemon.sdnotify import SdNotifier, SdNotifyError, watchdog_interval
from edge_agent.daemon.supervisor import AgentStatus, ComponentStatus, Supervisor, SupervisorError

__all__ = [
    "AgentStatus",
    "Component",
    "ComponentStatus",
    "SdNotifier",
    "SdNotifyError",
    "Supervisor",
    "SupervisorError",
    "watchdog_interval",
]
