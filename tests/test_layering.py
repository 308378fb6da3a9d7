"""Package layering: data flows connectors → store → reports, so `edge_agent` below its composition roots never
imports `connectors`. Read from the source with `ast`; nothing is imported."""

from __future__ import annotations

import ast
from pathlib import Path

import edge_agent

PACKAGE = Path(edge_agent.__file__).parent
# Where whole programs are assembled; each may wire `connectors` in:
COMPOSITION_ROOTS = {
    "app.py",  # the agent: builds every component, hands the report service its MQTT client
    "demo.py",  # `make demo`: broker, simulator and agent together
    "cli",  # the `edge-agent` commands (e.g. `report request` is an MQTT client itself)
    # The plant simulator is a separate program standing in for the plant; it takes its OPC UA server certificate
    # from the same helper the agent's client certificate comes from (`connectors.opcua_security`).
    "sim",
    "doctor",  # `edge-agent doctor`: checks the broker and OPC UA servers through the agent's own clients
}


def imported_modules(source: Path) -> set[str]:
    """Every module an `import` or `from ... import` in the file names, at any depth (lazy imports included)."""
    tree = ast.parse(source.read_text(encoding="utf-8"), filename=str(source))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module is not None:
            names.add(node.module)
    return names


def below_the_roots() -> list[Path]:
    return sorted(path for path in PACKAGE.rglob("*.py") if path.relative_to(PACKAGE).parts[0] not in COMPOSITION_ROOTS)


class TestLayering:
    def test_edge_agent_below_its_roots_does_not_import_connectors(self) -> None:
        """No module of edge_agent outside app.py, demo.py, cli/ and sim/ imports connectors, even lazily."""
        offenders = {
            str(path.relative_to(PACKAGE)): sorted(
                name for name in imported_modules(path) if name == "connectors" or name.startswith("connectors.")
            )
            for path in below_the_roots()
        }
        assert {path: names for path, names in offenders.items() if names} == {}

    def test_the_walk_sees_the_packages_it_guards(self) -> None:
        """The walk covers the report service and the daemon (a wrong root would make the first test vacuous)."""
        walked = {str(path.relative_to(PACKAGE)) for path in below_the_roots()}
        assert {"reports/service.py", "reports/topics.py", "daemon/supervisor.py", "values.py"} <= walked

    def test_lazy_imports_are_seen(self, tmp_path: Path) -> None:
        """An import inside a function counts as much as one at the top of the module."""
        source = tmp_path / "lazy.py"
        source.write_text("def run():\n    from connectors.mqtt import MqttClient\n    import connectors.routes\n")
        assert imported_modules(source) == {"connectors.mqtt", "connectors.routes"}
