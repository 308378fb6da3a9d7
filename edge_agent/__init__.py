"""edge-agent: plant-floor LLM agent."""

__version__ = "0.1.0"
