"""Plant simulator: an OPC UA server and an MQTT MES/log publisher driven by one seeded plant model."""

from edge_agent.sim.clock import SimClock
from edge_agent.sim.messages import MALFORMED_KINDS, Malformer, Message, encode_log, encode_mes
from edge_agent.sim.opcua_server import PlantServer, RetainedHistory
from edge_agent.sim.plant import ASSETS, AlarmEvent, LogLine, Plant, Tick, tag_names
from edge_agent.sim.runner import SimStats, run_sim, tick_messages

__all__ = [
    "ASSETS",
    "MALFORMED_KINDS",
    "AlarmEvent",
    "LogLine",
    "Malformer",
    "Message",
    "Plant",
    "PlantServer",
    "RetainedHistory",
    "SimClock",
    "SimStats",
    "Tick",
    "encode_log",
    "encode_mes",
    "run_sim",
    "tag_names",
    "tick_messages",
]
