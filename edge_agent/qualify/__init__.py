"""`edge-agent qualify`: installation, operational and performance qualification (IQ / OQ / PQ) of the agent on the
plant's own server with its own config, as evidence an assessor can file (docs/validation.md).

Modules: `check` (the `Check` every step returns, and its bounds), `iq` (installed files, versions, config, unit,
key: doctor's checks with criteria), `sandbox` (the private agent and broker OQ and PQ run against), `requests`
(report requests to it over MQTT), `prompts` (the fixed section prompts), `oq` and `pq` (verdicts, and what they
are measured by), `runner` (every check over engines started once), `report` (JSON, HTML, PDF) and `seal` (the
signature, the kept copy and the `qualification` audit entry).
"""
