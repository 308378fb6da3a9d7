"""The audit trail sits at the end of the data flow: it imports neither the report code nor the connectors, and the
canonical JSON module under everything imports nothing from the project. Read from the source; nothing imported."""

from __future__ import annotations

import ast
from pathlib import Path

import edge_agent

PACKAGE = Path(edge_agent.__file__).parent


def imported_modules(source: Path) -> set[str]:
    """Every module an import in the file names, at any depth (lazy imports included)."""
    tree = ast.parse(source.read_text(encoding="utf-8"), filename=str(source))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            names.add("." * node.level + node.module)
    return names


def project_modules(names: set[str]) -> set[str]:
    return {n for n in names if n.startswith((".", "edge_agent", "training", "harness", "bench", "tests"))}


class TestAuditLayering:
    def test_audit_imports_neither_reports_nor_connectors(self) -> None:
        """Data flows one way: reports and connectors write to the audit log, never the reverse."""
        offenders = {
            str(path.relative_to(PACKAGE)): sorted(
                n
                for n in project_modules(imported_modules(path))
                if n.startswith(("edge_agent.reports", "edge_agent.llm", "edge_agent.connectors"))
            )
            for path in sorted((PACKAGE / "audit").rglob("*.py"))
        }
        assert {name: found for name, found in offenders.items() if found} == {}

    def test_canonical_json_imports_nothing_from_the_project(self) -> None:
        """edge_agent/base/canonical.py stands below every layer that hashes, so any of them may use it."""
        assert project_modules(imported_modules(PACKAGE / "base" / "canonical.py")) == set()

    def test_the_walk_sees_the_audit_modules(self) -> None:
        """The first test covers the modules that hash and bind (a wrong path would make it vacuous)."""
        walked = {str(path.relative_to(PACKAGE / "audit")) for path in (PACKAGE / "audit").rglob("*.py")}
        assert {"binding.py", "entry.py", "hasher.py", "merkle.py"} <= walked
