"""Package layering: data flows connectors → store → reports → engine → audit/publish, and the code's imports run one
way, down the layers below. Read from the source with `ast`; nothing is imported, and an import inside a function
counts as much as one at the top of a module.

A unit is a top-level module or subpackage of `edge_agent` or `training` (`edge_agent.llm`, `training.draft`, the
package's own `__init__` as `edge_agent`), or the whole of `connectors` or `bench`. A unit may import its own modules
and any unit of a lower layer; units sharing a layer do not import each other.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import edge_agent

REPO = Path(edge_agent.__file__).resolve().parents[1]
PACKAGE = REPO / "edge_agent"
# Split into a unit per top-level module or subpackage; the others are one unit each.
SPLIT = ("edge_agent", "training")
WHOLE = ("bench",)

# Where whole programs are assembled; each may wire `connectors` in (and anything else below it):
COMPOSITION_ROOTS = {
    "edge_agent.app": "the agent: builds every component, hands the report service its MQTT client",
    "edge_agent.demo": "`make demo`: broker, simulator and agent together",
    "edge_agent.doctor": "`edge-agent doctor`: checks the broker and OPC UA servers through the agent's own clients",
    # The plant simulator is a separate program standing in for the plant; it takes its OPC UA server certificate
    # from the same helper the agent's client certificate comes from (`edge_agent.connectors.opcua.security`).
    "edge_agent.sim": "the plant simulator (OPC UA server, MES/log publisher) for the demo, the benches and tests",
    "edge_agent.qualify": "`edge-agent qualify`: IQ through doctor's checks, OQ/PQ on a private agent and broker",
    "edge_agent.cli": "the `edge-agent` commands (e.g. `report request` is an MQTT client itself)",
    "edge_agent.__main__": "`python -m edge_agent`: the commands",
}

# Bottom first. What the plant installs (edge_agent, connectors) ends with its composition roots; training and the
# benches sit above the runtime, which never imports them.
LAYERS: list[tuple[str, ...]] = [
    # values and helpers everything may use, each standing alone (`edge_agent` itself: the version)
    ("edge_agent", "edge_agent.base"),
    # signed approvals (pure: keys, SSHSIG, statements): the config validates approver keys with it, the audit
    # bundle verifier re-checks recorded approvals with it
    ("edge_agent.approval",),
    ("edge_agent.base.values", "edge_agent.config"),
    # audit is low in the code although last in the data flow: the engine and the connectors write to its AuditSink
    ("edge_agent.store", "edge_agent.audit"),
    # connectors may use the runtime's lower layers, never the engine, the daemon or the reports
    ("edge_agent.daemon", "edge_agent.llm", "connectors"),
    ("edge_agent.reports",),
    ("edge_agent.app", "edge_agent.demo", "edge_agent.doctor", "edge_agent.sim"),
    # qualification runs doctor's checks and the simulator's hostile stream against the agent app builds
    ("edge_agent.qualify",),
    ("edge_agent.cli",),
    ("edge_agent.__main__",),
    # training: imports the runtime; the wheel leaves it out (pyproject's packages.find)
    ("training", "training.recipes", "training.trainer"),
    ("training.narrator",),
    ("training.draft",),  # its report-specialist data are the narrator corpus' prompts
    ("training.cli",),
    ("training.__main__",),
    ("bench",),
]


def imported_modules(source: Path, module: str | None = None) -> set[str]:
    """Every module an `import` or `from ... import` in the file names, at any depth (lazy imports included).

    Relative imports are resolved when `module` (the file's dotted name) is given; `from pkg import name` also names
    `pkg.name` when that is a module of the repository.
    """
    tree = ast.parse(source.read_text(encoding="utf-8"), filename=str(source))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0 and node.module is not None:
                base = node.module
            elif node.level > 0 and module is not None:
                package = module.split(".") if source.name == "__init__.py" else module.split(".")[:-1]
                base = ".".join(package[: len(package) - node.level + 1] + ([node.module] if node.module else []))
            else:
                continue
            names.add(base)
            names.update(f"{base}.{a.name}" for a in node.names if _is_repo_module(f"{base}.{a.name}"))
    return names


def _is_repo_module(name: str) -> bool:
    path = REPO.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def unit_of(module: str) -> str | None:
    """The unit a dotted module name belongs to; None outside the repository's packages."""
    parts = module.split(".")
    if parts[0] in SPLIT:
        return ".".join(parts[:2])
    return parts[0] if parts[0] in WHOLE else None


def source_files() -> Iterator[tuple[str, Path]]:
    """(dotted module name, path) of every module of the four packages."""
    for top in (*SPLIT, *WHOLE):
        for path in sorted((REPO / top).rglob("*.py")):
            parts = path.relative_to(REPO).with_suffix("").parts
            yield ".".join(parts[:-1] if parts[-1] == "__init__" else parts), path


def unit_imports() -> dict[str, dict[str, set[str]]]:
    """unit → imported unit → the files (relative to the repository) importing it."""
    graph: dict[str, dict[str, set[str]]] = {}
    for module, path in source_files():
        unit = unit_of(module)
        assert unit is not None
        for name in imported_modules(path, module):
            target = unit_of(name)
            if target is not None and target != unit:
                graph.setdefault(unit, {}).setdefault(target, set()).add(str(path.relative_to(REPO)))
    return graph


def layer_of() -> dict[str, int]:
    return {unit: i for i, layer in enumerate(LAYERS) for unit in layer}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for succ in graph.get(node, ()):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def below_the_roots() -> list[Path]:
    return sorted(
        path
        for module, path in source_files()
        if module.split(".")[0] == "edge_agent" and unit_of(module) not in COMPOSITION_ROOTS
    )


class TestLayers:
    def test_every_unit_has_one_layer(self) -> None:
        """Each unit on disk is placed in exactly one layer, and every listed unit exists (a new package must be
        placed before it can be checked)."""
        listed = [unit for layer in LAYERS for unit in layer]
        on_disk = {unit_of(module) for module, _ in source_files()}
        assert sorted(u for u in set(listed) if listed.count(u) > 1) == []
        assert sorted(on_disk - set(listed)) == []
        assert sorted(set(listed) - on_disk) == []
        assert set(COMPOSITION_ROOTS) <= set(listed)

    def test_imports_run_down_the_layers(self) -> None:
        """No unit imports one of its own layer or of a layer above it, even lazily."""
        layer = layer_of()
        offenders = sorted(
            f"{unit} (layer {layer[unit]}) imports {target} (layer {layer[target]}): {', '.join(sorted(files))}"
            for unit, targets in unit_imports().items()
            for target, files in targets.items()
            if layer[target] >= layer[unit]
        )
        assert offenders == []

    def test_no_cycles_among_the_units(self) -> None:
        """No package-level import cycle among edge_agent's and training's subpackages (e.g. llm ↔ narrator)."""
        graph = {unit: set(targets) for unit, targets in unit_imports().items()}
        assert cycles(graph) == []

    def test_the_cycle_finder_finds_cycles(self) -> None:
        """A hand-made graph: a → b → c → a is one cycle, d → e is none, f → f is none (a unit's own imports)."""
        graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"e"}, "f": {"f"}}
        assert cycles(graph) == [["a", "b", "c"]]


class TestLayering:
    def test_edge_agent_below_its_roots_does_not_import_connectors(self) -> None:
        """No module of edge_agent outside its composition roots imports connectors, even lazily (the reports sit
        above connectors in the layers, yet never reach into them)."""
        offenders = {
            str(path.relative_to(PACKAGE)): sorted(
                name for name in imported_modules(path) if name == "connectors" or name.startswith("connectors.")
            )
            for path in below_the_roots()
        }
        assert {path: names for path, names in offenders.items() if names} == {}

    def test_the_runtime_never_imports_training_or_bench(self) -> None:
        """edge_agent (its roots included) and connectors never import training or bench: a plant's wheel has
        neither."""
        offenders = {
            str(path.relative_to(REPO)): sorted(
                name for name in imported_modules(path, module) if name.split(".")[0] in ("training", "bench")
            )
            for module, path in source_files()
            if module.split(".")[0] in ("edge_agent", "connectors")
        }
        assert {path: names for path, names in offenders.items() if names} == {}

    def test_the_wheel_leaves_training_out(self) -> None:
        """pyproject's package list names the runtime only."""
        import tomllib

        pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
        assert pyproject["tool"]["setuptools"]["packages"]["find"]["include"] == ["edge_agent*", "connectors*"]

    def test_the_walk_sees_the_packages_it_guards(self) -> None:
        """The walk covers the report service, the daemon and training (a wrong root would make the tests vacuous)."""
        walked = {str(path.relative_to(PACKAGE)) for path in below_the_roots()}
        assert {"reports/service.py", "reports/topics.py", "daemon/supervisor.py", "values.py"} <= walked
        units = unit_imports()
        assert {"edge_agent.llm", "edge_agent.reports", "training.narrator", "training.draft", "bench"} <= set(units)
        assert "edge_agent.llm" in units["edge_agent.reports"] and "training.narrator" in units["training.draft"]

    def test_lazy_imports_are_seen(self, tmp_path: Path) -> None:
        """An import inside a function counts as much as one at the top of the module."""
        source = tmp_path / "lazy.py"
        source.write_text(
            "def run():\n    from edge_agent.connectors.mqtt import MqttClient\n"
            "    import edge_agent.connectors.mqtt.routes\n"
        )
        assert imported_modules(source) == {"edge_agent.connectors.mqtt", "edge_agent.connectors.mqtt.routes"}

    def test_relative_and_submodule_imports_are_resolved(self, tmp_path: Path) -> None:
        """`from . import x` inside edge_agent.reports names edge_agent.reports.x; `from edge_agent import llm`
        names the llm package."""
        source = tmp_path / "service.py"
        source.write_text("from . import facts\nfrom ..llm.types import ChatMessage\nfrom edge_agent import llm\n")
        assert imported_modules(source, "edge_agent.reports.service.dispatch") == {
            "edge_agent.reports",
            "edge_agent.reports.facts.compute",
            "edge_agent.llm.types",
            "edge_agent",
            "edge_agent.llm",
        }
