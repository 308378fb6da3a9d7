"""The manual's commands, run as a reader runs them: every fenced block of README.md and docs/*.md whose info string
is `sh runnable` runs as one `bash -e` script against the session's staged install (tests/fixtures/install.py).

Beside the staging a docs root stands in for the host: its /etc/edge-agent holds the example config with the docs
root's paths and a broker CA, /opt/edge-agent is the staged one, /var/lib/edge-agent a fresh state directory that
shares the staged models, /usr/local/bin/edge-agent the link `make install` places, first on PATH. A block's host
paths are read as the docs root's, and `runuser -u edge-agent --` is dropped (the test's user owns the staged files
and plays the agent's user). A block exits 0, or N where its last command says `# exits N`. The blocks run in the
pages' order in one working directory, so a file one block writes the next can read.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.fixtures.install import Install
from tests.fixtures.tls import make_pki

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
MARKER = "sh runnable"
FENCE = re.compile(r"^(?P<indent> *)```(?P<info>.*)$")
EXITS = re.compile(r"#\s*exits\s+(\d+)\b")
# The host's paths a block names, each read as the docs root's.
HOST_PATHS = ("/etc/edge-agent", "/opt/edge-agent", "/var/lib/edge-agent", "/var/cache/edge-agent", "/usr/local/bin")
AS_AGENT = "runuser -u edge-agent -- "
# The slowest block starts the CLI a few times (~3 s each on 2 cores); a hung command fails here, not the session.
BLOCK_TIMEOUT_S = 120


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    info: str
    text: str

    @property
    def exits(self) -> int:
        found = EXITS.findall(self.text)
        return int(found[-1]) if found else 0


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of one page, each with its info string and the 1-based line of its opening fence."""
    found: list[Block] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        indent, body = len(opening["indent"]), []
        i += 1
        while not re.match(r"^ *```\s*$", lines[i]):
            body.append(lines[i][indent:])
            i += 1
        page = str(path.relative_to(REPO))
        found.append(Block(page, i - len(body), opening["info"].strip(), "\n".join(body) + "\n"))
        i += 1
    return found


ALL = [block for page in PAGES for block in blocks(page)]
RUNNABLE = [block for block in ALL if block.info == MARKER]


@dataclass(frozen=True)
class DocsRoot:
    root: Path
    work: Path
    env: dict[str, str]

    def script(self, block: Block) -> str:
        text = block.text.replace(AS_AGENT, "")
        for host_path in HOST_PATHS:
            text = text.replace(host_path, f"{self.root}{host_path}")
        return text


@pytest.fixture(scope="session")
def docs_root(installed: Install, tmp_path_factory: pytest.TempPathFactory) -> DocsRoot:
    root = tmp_path_factory.mktemp("docs-root")
    etc = root / "etc/edge-agent"
    etc.mkdir(parents=True)
    pki = make_pki(tmp_path_factory.mktemp("docs-pki"), ["broker.planta.local"])
    shutil.copy(pki["ca"], etc / "broker-ca.pem")
    config = (REPO / "configs/edge-agent.example.toml").read_text(encoding="utf-8")
    for host_path in ("/etc/edge-agent", "/var/lib/edge-agent"):
        config = config.replace(host_path, f"{root}{host_path}")
    (etc / "edge-agent.toml").write_text(config, encoding="utf-8")
    (etc / "edge-agent.toml").chmod(0o640)
    (root / "opt").mkdir()
    (root / "opt/edge-agent").symlink_to(installed.root / "opt/edge-agent")
    for private in ("var/lib/edge-agent", "var/cache/edge-agent"):
        (root / private).mkdir(mode=0o700, parents=True)
    (root / "var/lib/edge-agent/models").symlink_to(installed.state / "models")
    (root / "usr/local/bin").mkdir(parents=True)
    (root / "usr/local/bin/edge-agent").symlink_to(root / "opt/edge-agent/venv/bin/edge-agent")
    work = root / "work"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EDGE_AGENT__", "VIRTUAL_ENV"))}
    env |= {"PATH": f"{root}/usr/local/bin:{env.get('PATH', '/usr/bin:/bin')}", "HF_HUB_OFFLINE": "1"}
    return DocsRoot(root, work, env)


class TestMarkers:
    def test_runnable_is_marked_only_as_sh_runnable(self) -> None:
        """A block meant to run says exactly `sh runnable`; a misspelt or other-language marker would go unrun."""
        assert [f"{b.page}:{b.line} {b.info}" for b in ALL if "runnable" in b.info and b.info != MARKER] == []

    def test_every_page_that_runs_commands_on_the_install_has_runnable_blocks(self) -> None:
        """The pages whose commands run on an install without a running plant each keep their runnable blocks."""
        assert sorted({b.page for b in RUNNABLE}) == [
            "docs/audit.md",
            "docs/deployment.md",
            "docs/operating.md",
            "docs/troubleshooting.md",
        ]


@pytest.mark.slow
def test_edge_agent_on_path_is_the_staged_link(docs_root: DocsRoot, installed: Install) -> None:
    """Bare `edge-agent`, as the docs call it, resolves to the link `make install` places, whose target is the
    staged venv's script."""
    found = shutil.which("edge-agent", path=docs_root.env["PATH"])
    assert found == str(docs_root.root / "usr/local/bin/edge-agent")
    assert Path(found).resolve() == installed.cli.resolve()


@pytest.mark.slow
@pytest.mark.parametrize("block", RUNNABLE, ids=[f"{b.page}:{b.line}" for b in RUNNABLE])
def test_the_block_runs(block: Block, docs_root: DocsRoot) -> None:
    """The block, as the page shows it, exits as the page says: 0, or the N of its last `# exits N`."""
    result = subprocess.run(
        ["bash", "-e", "-c", docs_root.script(block)],
        cwd=docs_root.work,
        env=docs_root.env,
        capture_output=True,
        text=True,
        timeout=BLOCK_TIMEOUT_S,
    )
    output = f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    assert result.returncode == block.exits, f"{block.page}:{block.line} exited {result.returncode}\n{output}"
