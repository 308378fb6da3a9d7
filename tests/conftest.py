"""Fixture modules (the real parts the tests start: broker, OPC UA server, engine, sd_notify socket; the report
shift), registered here so tests ask for them by name instead of importing them; and the Hypothesis profile."""

import os

from hypothesis import HealthCheck, settings

pytest_plugins = [
    "tests.fixtures.broker",
    "tests.fixtures.opcua",
    "tests.fixtures.engine",
    "tests.fixtures.notify",
    "tests.fixtures.reports",
    "tests.fixtures.install",
    "tests.fixtures.browser",
]

# Boundary properties run thousands of generated inputs in `make test`; a property that is slow per example sets a
# smaller `max_examples` on itself. No deadline: a 2-core CI box under load would make timing flaky, not the code.
settings.register_profile(
    "default", max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.register_profile("quick", max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
