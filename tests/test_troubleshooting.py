"""The runbook, docs/troubleshooting.md, has an entry for everything doctor and /readyz can report, read from the
code rather than from a list kept here: every check id `doctor.probes` gives and every security warning code; every
component `app.build_components` makes, every state one can be in, and every reason text a component gives. Doctor's
table points at those entries.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import get_args

import pytest
from hypothesis import given
from hypothesis import strategies as st

from edge_agent.app import AgentContext, build_components
from edge_agent.audit.component import open_audit_log
from edge_agent.cli import main
from edge_agent.config import AgentConfig
from edge_agent.config.security import WarningCode
from edge_agent.daemon.supervisor import ComponentState
from edge_agent.doctor import Check, Host, probes, render
from edge_agent.doctor.runbook import RUNBOOK, anchor, entry, link, slug
from edge_agent.store import RecordWriter, Store

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "edge_agent"
# What /readyz's `last_error` is made of: a component's `not_ready_reason` (the store's and the audit checkpointer's
# read `failure`, which the audit log composes from `_write_failure` and `_sign_failure`) or, after a crash, the
# supervisor's `last_error`.
REASON_ATTRIBUTES = {"not_ready_reason", "failure", "_write_failure", "_sign_failure", "last_error"}
# How the runbook writes a value a reason carries: `store not writable: <error>`.
PLACEHOLDER = r"<[^<>\n]+>"


def sections(text: str) -> dict[str, str]:
    """Each heading's anchor and the text under it, up to the next heading (headings in code blocks are not). A
    heading met again gets `-1`, `-2`, ... as GitHub gives it."""
    found: dict[str, list[str]] = {}
    current: list[str] = []
    fenced = False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        heading = None if fenced else re.match(r"#{1,6} (.+)", line)
        if heading is not None:
            anchor = base = slug(heading.group(1))
            repeat = 0
            while anchor in found:
                repeat += 1
                anchor = f"{base}-{repeat}"
            current = found[anchor] = []
        else:
            current.append(line)
    return {anchor: "\n".join(lines) for anchor, lines in found.items()}


@pytest.fixture(scope="module")
def runbook() -> dict[str, str]:
    return sections((REPO / RUNBOOK).read_text(encoding="utf-8"))


def full_config(state_dir: Path) -> AgentConfig:
    """Every part on that doctor checks or the agent runs: broker, engine, reports, Sparkplug B, an OPC UA source."""
    return AgentConfig.model_validate(
        {
            "site": {"id": "runbook"},
            "paths": {"state_dir": str(state_dir)},
            "sparkplug": {"enabled": True},
            "opcua": {"sources": [{"name": "plc1", "endpoint": "opc.tcp://127.0.0.1:4840"}]},
        }
    )


def doctor_check_ids(tmp_path: Path) -> list[str]:
    """Every id the probes report under, and every `security.<code>` the security probe can add."""
    host = Host(environ={}, euid=os.geteuid(), unit=tmp_path / "absent.service")
    ids = [probe.id for probe in probes(tmp_path / "edge-agent.toml", full_config(tmp_path), host)]
    return ids + [f"security.{code}" for code in get_args(WarningCode)]


def component_names(tmp_path: Path) -> list[str]:
    """The components the agent runs for `full_config`, as /readyz names them."""
    config = full_config(tmp_path)
    audit = open_audit_log(config)
    try:
        with Store(config.paths.store_path) as store:
            ctx = AgentContext(
                config=config,
                store=store,
                writer=RecordWriter(store),
                audit=audit,
                status=lambda: pytest.fail("nothing reads the status while building"),
            )
            return [component.name for component in build_components(ctx)]
    finally:
        audit.close()


def reason_pattern(node: ast.expr) -> str | None:
    """A regex for how the runbook quotes a reason built by `node` (a string or f-string; None for anything else):
    its literal text as is, each run of interpolated values as one `<...>`."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return re.escape(node.value)
    if not isinstance(node, ast.JoinedStr):
        return None
    parts: list[str] = []
    for value in node.values:
        if isinstance(value, ast.Constant):
            parts.append(re.escape(str(value.value)))
        elif not parts or parts[-1] != PLACEHOLDER:
            parts.append(PLACEHOLDER)
    return "".join(parts)


def _phrases(node: ast.AST) -> Iterator[ast.expr]:
    """The f-strings and the string constants that read as words (a space and a word of 3 letters: not `"; "`,
    not an event name) under `node`, docstrings and the pieces of f-strings left out."""
    inner = {id(v) for n in ast.walk(node) if isinstance(n, ast.JoinedStr) for v in n.values}
    docstrings = {
        id(n.body[0].value)
        for n in ast.walk(node)
        if isinstance(n, ast.FunctionDef | ast.ClassDef) and n.body and isinstance(n.body[0], ast.Expr)
    }
    for n in ast.walk(node):
        if isinstance(n, ast.JoinedStr):
            yield n
        elif isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in inner | docstrings:
            if " " in n.value and re.search(r"[A-Za-z]{3}", n.value):
                yield n


def _called(node: ast.AST, functions: dict[str, ast.FunctionDef]) -> Iterator[ast.FunctionDef]:
    """The functions of the module that `node` calls, as `name(...)` or `self.name(...)`, and those they call."""
    seen: set[str] = set()
    todo = [node]
    while todo:
        for call in (n for n in ast.walk(todo.pop()) if isinstance(n, ast.Call)):
            func = call.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
            if name in functions and name not in seen and (isinstance(func, ast.Name) or _on_self(func)):
                seen.add(name)
                todo.append(functions[name])
                yield functions[name]


def _on_self(func: ast.expr) -> bool:
    return isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self"


def readiness_reasons() -> Iterator[tuple[str, str]]:
    """(where, pattern) for every phrase a reason can be made of: a string assigned to a reason attribute, or the
    return of the module's function assigned (`reason_of(findings)`); the phrases of a `not_ready_reason` property;
    and of the module's functions those call."""
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        functions = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        sources: list[ast.AST] = [f for name, f in functions.items() if name == "not_ready_reason"]
        for n in ast.walk(tree):
            if isinstance(n, ast.Assign) and any(
                isinstance(t, ast.Attribute) and t.attr in REASON_ATTRIBUTES for t in n.targets
            ):
                if isinstance(n.value, ast.JoinedStr | ast.Constant):
                    sources.append(n.value)
                elif isinstance(n.value, ast.Call) and isinstance(n.value.func, ast.Name):
                    sources += [functions[n.value.func.id]] if n.value.func.id in functions else []
        for source in sources:
            for node in [source, *_called(source, functions)]:
                for phrase in _phrases(node):
                    pattern = reason_pattern(phrase)
                    if pattern is not None:
                        yield f"{path.relative_to(REPO)}:{phrase.lineno}", pattern


class TestDoctorEntries:
    def test_no_two_entries_share_an_anchor(self) -> None:
        """A heading written twice would send the second to `-1`, where nothing links."""
        text = re.sub(r"```.*?```", "", (REPO / RUNBOOK).read_text(encoding="utf-8"), flags=re.S)
        anchors = [slug(heading) for heading in re.findall(r"^#{1,6} (.+)$", text, flags=re.M)]
        assert sorted(a for a in set(anchors) if anchors.count(a) > 1) == []

    def test_every_check_has_an_entry(self, runbook: dict[str, str], tmp_path: Path) -> None:
        """Each check id doctor can print, under its entry's anchor, heads a section of the runbook."""
        ids = doctor_check_ids(tmp_path)
        assert "opcua.plc1" in ids and "security.mqtt_anonymous" in ids
        missing = sorted({f"{i} -> #{anchor(i)}" for i in ids if anchor(i) not in runbook})
        assert missing == []

    def test_instances_share_their_kinds_entry(self) -> None:
        """A source's name and a repeated security code's `.2` leave the entry; a dotted check's own name stays."""
        assert [entry(i) for i in ("opcua.plc1", "security.mqtt_anonymous.2", "clock.ntp", "disk")] == [
            "opcua",
            "security.mqtt_anonymous",
            "clock.ntp",
            "disk",
        ]
        assert anchor("security.opcua_server_unpinned.3") == "doctor-securityopcua_server_unpinned"

    @given(st.from_regex(r"[A-Za-z0-9_.-]+", fullmatch=True))
    def test_any_source_name_links_to_the_opcua_entry(self, name: str) -> None:
        """Whatever a source is called (the names the config allows), its check links to one entry."""
        assert link(f"opcua.{name}") == "docs/troubleshooting.md#doctor-opcua"

    @given(st.sampled_from(get_args(WarningCode)), st.integers(min_value=2, max_value=10_000))
    def test_a_repeated_security_code_links_to_its_entry(self, code: str, repeat: int) -> None:
        """`security.<code>.<n>`, as doctor numbers a code a later OPC UA source earns again, is `<code>`'s entry."""
        assert link(f"security.{code}.{repeat}") == link(f"security.{code}")


class TestReadinessEntries:
    def test_every_component_has_an_entry(self, runbook: dict[str, str], tmp_path: Path) -> None:
        """Each component /readyz can name (`opcua:<name>` as `opcua`) heads a section `readyz: <name>`."""
        names = component_names(tmp_path)
        assert {"store", "engine", "reports", "opcua:plc1"} <= set(names)
        missing = [n for n in names if slug(f"readyz: {n.split(':')[0]}") not in runbook]
        assert missing == []

    def test_every_state_has_an_entry(self, runbook: dict[str, str]) -> None:
        """Each component state, and flapping, heads a section `readyz state: <state>`."""
        states = [*get_args(ComponentState), "flapping"]
        assert [s for s in states if slug(f"readyz state: {s}") not in runbook] == []

    def test_every_reason_is_quoted_under_a_component(self, runbook: dict[str, str]) -> None:
        """Each reason text a component can give is quoted, values as `<...>`, in a `readyz` section."""
        readyz = "\n".join(body for anchor, body in runbook.items() if anchor.startswith("readyz-"))
        reasons = list(readiness_reasons())
        assert len(reasons) >= 6, "the scan finds the store's, the audit log's, the engine's, the reports' reasons"
        assert [(where, p) for where, p in reasons if not re.search(p, readyz)] == []

    def test_the_pattern_keeps_text_and_marks_values(self) -> None:
        """`f"engine not running ({reason}); restarting"` is quoted as `engine not running (<reason>); restarting`."""
        node = ast.parse('f"engine not running ({a}{b}); restarting"', mode="eval").body
        pattern = reason_pattern(node)
        assert pattern is not None
        assert re.fullmatch(pattern, "engine not running (<reason>); restarting")
        assert not re.fullmatch(pattern, "engine not running; restarting")


class TestLinks:
    @pytest.mark.parametrize("page", ["troubleshooting.md", "glossary.md", "README.md"])
    def test_every_link_lands(self, page: str) -> None:
        """Each relative link of the runbook, the glossary and the docs index names a file there is and, after `#`,
        a heading that file has."""
        source = REPO / "docs" / page
        text = re.sub(r"```.*?```", "", source.read_text(encoding="utf-8"), flags=re.S)
        broken = []
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, fragment = target.partition("#")
            file = (source.parent / path).resolve() if path else source
            if not file.is_file() or (fragment and fragment not in sections(file.read_text(encoding="utf-8"))):
                broken.append(target)
        assert broken == []


class TestDoctorPrintsTheEntry:
    def test_a_finding_not_ok_carries_its_anchor(self, runbook: dict[str, str]) -> None:
        """Under a fail's and a warn's fix: `see docs/troubleshooting.md#doctor-…`, an anchor the runbook has; an ok
        gets none."""
        checks = [
            Check.fail("mqtt", "connection refused: nothing listens on broker:1883", "start the broker"),
            Check.warn("opcua.plc1", "2 of 9 nodes refused", "correct those node_id values"),
            Check.ok("disk", "plenty"),
        ]
        lines = render(checks).splitlines()
        see = [line.strip() for line in lines if line.strip().startswith("see ")]
        assert see == ["see docs/troubleshooting.md#doctor-mqtt", "see docs/troubleshooting.md#doctor-opcua"]
        fix = next(i for i, line in enumerate(lines) if line.strip() == "fix: start the broker")
        assert lines[fix + 1].strip() == see[0]
        assert all(s.partition("#")[2] in runbook for s in see)

    def test_the_command_prints_it(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """`edge-agent doctor` on an install without its signing key yet: the audit_key warning links its entry."""
        state = tmp_path / "state"
        state.mkdir(mode=0o700)
        path = tmp_path / "edge-agent.toml"
        path.write_text(
            f'[site]\nid = "runbook"\n[paths]\nstate_dir = "{state}"\n[mqtt]\nenabled = false\n[llm]\nenabled = false\n'
        )
        main(["doctor", "--config", str(path), "--unit", str(tmp_path / "absent.service")])
        lines = capsys.readouterr().out.splitlines()
        warned = next(i for i, line in enumerate(lines) if line.startswith("audit_key "))
        assert lines[warned].split()[1] == "warn"
        assert lines[warned + 2].strip() == "see docs/troubleshooting.md#doctor-audit_key"
