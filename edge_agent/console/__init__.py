"""The shift's console: a web page the agent serves over TLS to read reports and sign them off with a passkey
(docs/console.md). `build_app` makes the ASGI app from a ConsoleContext; `ConsoleServer` is the agent's component."""
