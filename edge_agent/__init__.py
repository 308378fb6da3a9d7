"""edge-agent: plant-floor LLM agent."""

# The release (CHANGELOG.md, git tag v<version>); recorded in every agent.start entry and prepared manifest.
__version__ = "0.2.0"
