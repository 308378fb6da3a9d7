"""What the tests and the benchmarks share: real parts started for them and the data they feed in (dev only; the
wheel leaves it out, and the runtime never imports it).

- `reports_service`: the report service and its outbox on a real broker, mosquitto_rr/mosquitto_pub clients
- `shift`: one hand-written shift of plant records
- `draft_head`: a randomly initialised EAGLE-3.1 draft head in vLLM's format

The private Mosquitto both start is `edge_agent.base.broker` (`edge-agent qualify` starts one too). Pytest fixtures
stay in `tests/`; nothing here imports `tests`.
"""
