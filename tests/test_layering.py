"""Import layering, read from the source with `ast`: nothing is imported, and an import inside a function counts as
much as one at the top of a module.

Three rules, over every module of edge_agent, training, harness and bench:
- files: no import cycle among the modules (a package's `__init__` is a module of its own);
- units: each unit sits on one layer of LAYERS and imports only units of lower layers (README's Architecture draws
  the runtime's layers, and `TestLayers.test_the_readme_draws_the_layers` holds the drawing to LAYERS);
- wings: code outside a wing of the reports imports the wing's face (its package), never its modules.

A unit is a top-level module or subpackage of `edge_agent`, `edge_agent.reports` or `training` (`edge_agent.llm`,
`edge_agent.reports.facts`, `training.draft`; a package's own `__init__` is the unit named after the package), or
the whole of `harness` or `bench`.
"""

from __future__ import annotations

import ast
import functools
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import edge_agent

REPO = Path(edge_agent.__file__).resolve().parents[1]
# The packages walked; the runtime is the first, the rest are dev-only (the wheel leaves them out).
RUNTIME = "edge_agent"
DEV_ONLY = ("training", "harness", "bench")
# Split into a unit per top-level module or subpackage, deepest first; the other packages are one unit each.
SPLIT = ("edge_agent.reports", "edge_agent", "training")
# The reports' wings, lowest first: each imports only the faces of those below it.
WINGS = tuple(f"edge_agent.reports.{wing}" for wing in ("facts", "narrative", "document", "service"))

# File-level import loops waiting for the lead's decision, each with its reason. Any other loop fails, and so does an
# entry that no longer loops: the list only shrinks.
ALLOWED_CYCLES: dict[tuple[str, ...], str] = {
    ("edge_agent.config", "edge_agent.config.identities"): (
        "type-only (under TYPE_CHECKING): identity_table(config: AgentConfig) takes the whole config that declares "
        "the identities; taking the identities, the legacy approver keys and the agent's user would break it"
    ),
}

# Bottom first. A unit may sit higher than its imports need: the order follows the data where the imports allow.
LAYERS: list[tuple[str, ...]] = [
    # the ground floor: values and helpers everything may use (`edge_agent` itself: the version)
    ("edge_agent", "edge_agent.base"),
    # signing (pure: keys, SSHSIG, statements, approvals, cosignatures): the config validates approver keys with it,
    # the audit log signs its checkpoints and the bundle verifier re-checks recorded approvals with it
    ("edge_agent.signing",),
    ("edge_agent.config",),
    # below the connectors although last in the data flow: the connectors and the engine write to audit's AuditSink,
    # and the connectors write their records into the store
    ("edge_agent.store", "edge_agent.audit"),
    ("edge_agent.connectors", "edge_agent.llm", "edge_agent.daemon"),
    # the reports: what they are asked for, then the wings in the order a report is made
    ("edge_agent.reports.errors", "edge_agent.reports.untrusted"),
    ("edge_agent.reports.request",),
    ("edge_agent.reports.facts",),
    ("edge_agent.reports.narrative",),
    ("edge_agent.reports.document",),
    ("edge_agent.reports.service",),
    ("edge_agent.reports",),
    # ask the plant: tools read the store through the reports' faces; its service gets its MQTT client from app
    ("edge_agent.ask",),
    # the agent's outgoing side: the report service wakes the outbox through a callback app hands it
    ("edge_agent.publish",),
    # the shift's console: reads the reports' face, decides sign-offs through the document wing; app serves it
    ("edge_agent.console",),
    # where whole programs are assembled: the agent, `make demo`, `edge-agent doctor` (the agent's own clients
    # against the broker and OPC UA servers), the plant simulator (its OPC UA certificate comes from the
    # connectors' security helper)
    ("edge_agent.app", "edge_agent.demo", "edge_agent.doctor", "edge_agent.sim"),
    # qualification runs doctor's checks and the simulator's hostile stream against the agent app builds
    ("edge_agent.qualify",),
    ("edge_agent.cli",),
    ("edge_agent.__main__",),
    # training: imports the runtime; the wheel leaves it out (pyproject's packages.find)
    ("training", "training.recipes", "training.trainer"),
    ("training.narrator",),  # its corpus comes from the simulator's plant
    ("training.draft",),  # its report-specialist data are the narrator corpus' prompts
    ("training.planner",),  # continues the narrator's adapter with the narrator's samples mixed in
    ("training.cli",),
    ("training.__main__",),
    # what the tests and the benches share (a random draft head comes from training.draft)
    ("harness",),
    ("bench",),
]


def imported_modules(source: Path, module: str | None = None) -> set[str]:
    """Every module an `import` or `from ... import` in the file names, at any depth (lazy imports included).

    Relative imports are resolved when `module` (the file's dotted name) is given. `from pkg import name` names
    `pkg.name` when that is a module of the repository, else `pkg` (whose `__init__` holds `name`).
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
            for alias in node.names:
                name = f"{base}.{alias.name}"
                names.add(name if _is_repo_module(name) else base)
    return names


def _is_repo_module(name: str) -> bool:
    path = REPO.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def source_files() -> Iterator[tuple[str, Path]]:
    """(dotted module name, path) of every module of the walked packages."""
    for top in (RUNTIME, *DEV_ONLY):
        for path in sorted((REPO / top).rglob("*.py")):
            parts = path.relative_to(REPO).with_suffix("").parts
            yield ".".join(parts[:-1] if parts[-1] == "__init__" else parts), path


@functools.cache
def file_imports() -> dict[str, set[str]]:
    """module → the walked modules it imports (itself left out); read once per test session."""
    modules = dict(source_files())
    return {
        module: {name for name in imported_modules(path, module) if name in modules and name != module}
        for module, path in modules.items()
    }


def unit_of(module: str) -> str | None:
    """The unit a dotted module name belongs to; None outside the walked packages."""
    for package in SPLIT:
        if module == package:
            return package
        if module.startswith(package + "."):
            return f"{package}.{module[len(package) + 1 :].split('.')[0]}"
    top = module.split(".")[0]
    return top if top in DEV_ONLY else None


def unit_imports() -> dict[str, dict[str, set[str]]]:
    """unit → imported unit → the modules importing it."""
    graph: dict[str, dict[str, set[str]]] = {}
    for module, targets in file_imports().items():
        unit = unit_of(module)
        for target in targets:
            target_unit = unit_of(target)
            if target_unit != unit:
                assert unit is not None and target_unit is not None
                graph.setdefault(unit, {}).setdefault(target_unit, set()).add(module)
    return graph


def layer_of() -> dict[str, int]:
    return {unit: i for i, layer in enumerate(LAYERS) for unit in layer}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph.get(node, ())):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def wing_of(module: str) -> str | None:
    return next((wing for wing in WINGS if module == wing or module.startswith(wing + ".")), None)


def wing_offences(graph: dict[str, set[str]]) -> list[str]:
    """Imports of a wing's modules (anything below its face) from outside the wing."""
    return sorted(
        f"{module} imports {target}"
        for module, targets in graph.items()
        for target in targets
        if (wing := wing_of(target)) is not None and target != wing and wing_of(module) != wing
    )


def readme_floors() -> list[tuple[str, ...]]:
    """The runtime's layers as README's Architecture draws them, bottom first: the code block after the line
    'Floors, top first', one floor a line, its units (without `edge_agent.`) before two spaces, split by ' · '."""
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    start = lines.index("```", next(i for i, line in enumerate(lines) if line.startswith("Floors, top first"))) + 1
    end = lines.index("```", start)
    floors = []
    for line in lines[start:end]:
        names = line.strip().split("  ")[0].split(" · ")
        floors.append(tuple("edge_agent" if n == "edge_agent" else f"edge_agent.{n}" for n in names))
    return floors[::-1]


class TestFiles:
    def test_no_import_cycle_among_the_files(self) -> None:
        """No module of edge_agent, training, harness or bench reaches itself through its imports (e.g. the facts'
        kpi ↔ compute loop), lazy and type-only imports included, outside ALLOWED_CYCLES."""
        assert [loop for loop in cycles(file_imports()) if tuple(loop) not in ALLOWED_CYCLES] == []

    def test_every_allowed_cycle_still_loops(self) -> None:
        """An allowed loop that is gone comes off ALLOWED_CYCLES."""
        found = {tuple(loop) for loop in cycles(file_imports())}
        assert sorted(set(ALLOWED_CYCLES) - found) == []

    def test_the_cycle_finder_finds_cycles(self) -> None:
        """A hand-made graph: a → b → c → a is one cycle, d → e is none, f → f is none (a module's own name)."""
        graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"e"}, "f": {"f"}}
        assert cycles(graph) == [["a", "b", "c"]]

    def test_a_package_init_is_a_module_of_its_own(self) -> None:
        """The reports' face imports the document wing's face; the wing's face imports its own modules."""
        graph = file_imports()
        assert "edge_agent.reports.document" in graph["edge_agent.reports"]
        assert "edge_agent.reports.document.replay" in graph["edge_agent.reports.document"]


class TestLayers:
    def test_every_unit_has_one_layer(self) -> None:
        """Each unit on disk is placed in exactly one layer, and every listed unit exists (a new package must be
        placed before it can be checked)."""
        listed = [unit for layer in LAYERS for unit in layer]
        on_disk = {unit_of(module) for module, _ in source_files()}
        assert sorted(u for u in set(listed) if listed.count(u) > 1) == []
        assert sorted(u for u in on_disk - set(listed) if u is not None) == []
        assert sorted(set(listed) - on_disk) == []

    def test_imports_run_down_the_layers(self) -> None:
        """No unit imports one of its own layer or of a layer above it, even lazily."""
        layer = layer_of()
        offenders = sorted(
            f"{unit} (layer {layer[unit]}) imports {target} (layer {layer[target]}): {', '.join(sorted(modules))}"
            for unit, targets in unit_imports().items()
            for target, modules in targets.items()
            if layer[target] >= layer[unit]
        )
        assert offenders == []

    def test_the_readme_draws_the_layers(self) -> None:
        """README's floors are LAYERS' runtime layers, in the same order."""
        runtime = [layer for layer in LAYERS if all(unit.split(".")[0] == RUNTIME for unit in layer)]
        assert readme_floors() == runtime

    def test_the_runtime_sits_below_the_dev_only_packages(self) -> None:
        """Every runtime layer comes before the first training, harness or bench layer."""
        tops = [{unit.split(".")[0] for unit in layer} for layer in LAYERS]
        first_dev = next(i for i, top in enumerate(tops) if top & set(DEV_ONLY))
        assert all(top == {RUNTIME} for top in tops[:first_dev])
        assert all(RUNTIME not in top for top in tops[first_dev:])


class TestWings:
    def test_outside_a_wing_only_its_face_is_imported(self) -> None:
        """No module outside a wing (another wing, the reports' face, app, cli, training, harness, bench) imports
        one of the wing's modules."""
        assert wing_offences(file_imports()) == []

    def test_a_reach_past_a_face_is_an_offence(self) -> None:
        """A hand-made graph: the service importing the facts' face is fine, the facts' compute module is not; the
        facts' own modules import each other freely."""
        graph = {
            "edge_agent.reports.service.dispatch": {"edge_agent.reports.facts", "edge_agent.reports.facts.compute"},
            "edge_agent.reports.facts.compute": {"edge_agent.reports.facts.kpi.shift"},
        }
        assert wing_offences(graph) == ["edge_agent.reports.service.dispatch imports edge_agent.reports.facts.compute"]

    def test_the_wings_are_layered_in_order(self) -> None:
        """facts < narrative < document < service, each on a layer of its own."""
        layer = layer_of()
        assert [layer[wing] for wing in WINGS] == sorted({layer[wing] for wing in WINGS})

    def test_the_reports_reach_the_broker_only_through_what_they_are_handed(self) -> None:
        """No module of the reports imports the connectors or the outbox: app hands the service its MQTT client
        and the outbox's wake-up."""
        offenders = sorted(
            f"{module} imports {target}"
            for module, targets in file_imports().items()
            if module.startswith("edge_agent.reports")
            for target in targets
            if target.startswith(("edge_agent.connectors", "edge_agent.publish"))
        )
        assert offenders == []


class TestRuntime:
    def test_the_runtime_never_imports_the_dev_only_packages(self) -> None:
        """edge_agent never imports training, harness or bench: a plant's wheel has none of them."""
        offenders = sorted(
            f"{module} imports {target}"
            for module, targets in file_imports().items()
            if module.split(".")[0] == RUNTIME
            for target in targets
            if target.split(".")[0] in DEV_ONLY
        )
        assert offenders == []

    def test_the_wheel_leaves_the_dev_only_packages_out(self) -> None:
        """pyproject's package list names the runtime only."""
        import tomllib

        pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
        assert pyproject["tool"]["setuptools"]["packages"]["find"]["include"] == ["edge_agent*"]

    def test_the_walk_sees_the_packages_it_guards(self) -> None:
        """The walk covers the wings, the connectors, training, harness and bench (a wrong root would make the
        tests vacuous)."""
        modules = dict(source_files())
        assert {
            "edge_agent.reports.service.dispatch",
            "edge_agent.reports.facts.kpi",
            "edge_agent.connectors.mqtt.ingest",
            "edge_agent.base.canonical",
            "training.draft.model",
            "harness.reports_service",
            "bench.reports",
        } <= set(modules)
        units = unit_imports()
        assert "edge_agent.llm" in units["edge_agent.reports.narrative"]
        assert "training.narrator" in units["training.draft"] and "harness" in units["bench"]

    def test_lazy_imports_are_seen(self, tmp_path: Path) -> None:
        """An import inside a function counts as much as one at the top of the module."""
        source = tmp_path / "lazy.py"
        source.write_text(
            "def run():\n    from edge_agent.connectors.mqtt import MqttClient\n"
            "    import edge_agent.connectors.mqtt.routes\n"
        )
        assert imported_modules(source) == {"edge_agent.connectors.mqtt", "edge_agent.connectors.mqtt.routes"}

    def test_relative_and_submodule_imports_are_resolved(self, tmp_path: Path) -> None:
        """Inside edge_agent.reports.service.dispatch, `from .. import facts` names the facts package,
        `from ...llm.types import ChatMessage` the llm's types module, `from edge_agent import llm` the llm package,
        and `from edge_agent.reports.facts import Fact` the facts' face."""
        source = tmp_path / "dispatch.py"
        source.write_text(
            "from .. import facts\nfrom ...llm.types import ChatMessage\nfrom edge_agent import llm\n"
            "from edge_agent.reports.facts import Fact\n"
        )
        assert imported_modules(source, "edge_agent.reports.service.dispatch") == {
            "edge_agent.reports.facts",
            "edge_agent.llm.types",
            "edge_agent.llm",
        }


class TestBenchStandsAlone:
    def test_no_bench_or_harness_module_imports_the_tests(self) -> None:
        """bench and harness never import `tests`, even lazily: a benchmark runs without the test suite."""
        offenders = sorted(
            f"{module} imports {name}"
            for module, path in source_files()
            if module.split(".")[0] in ("bench", "harness")
            for name in imported_modules(path, module)
            if name.split(".")[0] == "tests"
        )
        assert offenders == []

    def test_every_bench_module_imports_where_tests_cannot_be_found(self, tmp_path: Path) -> None:
        """Each bench module imports in a fresh interpreter whose path holds edge_agent, training, harness and bench
        and no `tests` (checked in the same interpreter)."""
        for package in (RUNTIME, *DEV_ONLY):
            (tmp_path / package).symlink_to(REPO / package, target_is_directory=True)
        modules = sorted(module for module, _ in source_files() if module.split(".")[0] == "bench")
        script = (
            "import importlib, json, sys\n"
            "failed = {}\n"
            "for name in sys.argv[1:]:\n"
            "    try:\n"
            "        importlib.import_module(name)\n"
            "    except Exception as exc:\n"
            "        failed[name] = repr(exc)\n"
            "try:\n"
            "    import tests\n"
            "    failed['tests'] = 'importable: ' + str(tests.__path__)\n"
            "except ModuleNotFoundError:\n"
            "    pass\n"
            "print(json.dumps(failed))\n"
        )
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        proc = subprocess.run(
            [sys.executable, "-c", script, *modules],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        assert len(modules) > 10
        assert json.loads(proc.stdout.splitlines()[-1]) == {}
