"""`edge-agent qualify`: installation, operational and performance qualification (IQ / OQ / PQ) of the agent on the
plant's own server with its own config, as evidence an assessor can file (docs/validation.md).

Modules: `check` (the `Check` every step returns), `iq` (installed files, versions, config, unit, key), the rest
as they are added.
"""
