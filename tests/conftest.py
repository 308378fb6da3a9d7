"""Fixture modules, one per real part the tests start: broker, OPC UA server, engine."""

pytest_plugins = ["tests.fixtures.broker", "tests.fixtures.opcua", "tests.fixtures.engine"]
