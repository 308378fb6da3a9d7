"""`edge-agent --version` (package version, git commit, prepared model and head) and the top-level help."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from edge_agent import __version__
from edge_agent.cli import COMMAND_MODULES
from edge_agent.cli.version import package_version, version_lines

REPO = Path(__file__).resolve().parents[1]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EDGE_AGENT__")}
    return subprocess.run(
        [sys.executable, "-m", "edge_agent", *args], capture_output=True, text=True, env=env, cwd=REPO, timeout=60
    )


class TestPackageVersion:
    @pytest.mark.parametrize(
        ("described", "version"),
        [
            (None, __version__),  # an installed wheel: no checkout to ask
            (f"v{__version__}", __version__),  # exactly at the release's tag
            (f"v{__version__}-3-g1a2b3c4", f"{__version__}+3.g1a2b3c4"),
            (f"v{__version__}-3-g1a2b3c4-dirty", f"{__version__}+3.g1a2b3c4.dirty"),
            ("1a2b3c4-dirty", f"{__version__}+g1a2b3c4.dirty"),  # no tag yet: the bare commit
            (f"v{__version__}-dirty", f"{__version__}+dirty"),  # at the tag, with local changes
        ],
    )
    def test_only_the_release_itself_reports_the_release(self, described: str | None, version: str) -> None:
        assert package_version(described) == version


class TestVersionLines:
    def test_the_prepared_model_and_head_are_named_by_their_manifests(self, tmp_path: Path) -> None:
        state = tmp_path / "state"
        (state / "models/default").mkdir(parents=True)
        (state / "models/default/manifest.json").write_text(json.dumps({"name": "smollm2-135m"}))
        config = tmp_path / "agent.toml"
        config.write_text(f'[site]\nid = "plant-7"\n[paths]\nstate_dir = "{state}"\n')
        lines = version_lines(config)
        model = next(line for line in lines if line.startswith("model: "))
        draft = next(line for line in lines if line.startswith("draft: "))
        assert model.startswith("model: smollm2-135m (manifest sha256 ")
        assert model.endswith(f", {state}/models/default)")
        assert draft == f"draft: not prepared ({state}/models/eagle31-default)"

    def test_no_config_means_the_defaults(self, tmp_path: Path) -> None:
        lines = version_lines(tmp_path / "absent.toml")
        assert any(
            line.startswith("model: ") and line.endswith("/var/lib/edge-agent/models/default)") for line in lines
        )


class TestCommandLine:
    def test_version_prints_the_version_and_the_checkouts_commit(self) -> None:
        result = cli("--version")
        assert result.returncode == 0, result.stderr
        first, *rest = result.stdout.splitlines()
        assert first.startswith(f"edge-agent {__version__}")
        if (REPO / ".git").exists():
            described = rest[0].removeprefix("git: ")
            assert rest[0].startswith("git: ") and first == f"edge-agent {package_version(described)}"
        assert any(line.startswith("model: ") for line in rest)

    def test_help_is_written_for_users_with_one_line_per_command(self) -> None:
        result = cli("--help")
        assert result.returncode == 0
        assert "edge-agent collects plant data" in result.stdout
        assert "register(subparsers)" not in result.stdout  # the developer's docstring stays in the code
        listed = [
            line.split()[0]
            for line in result.stdout.split("commands:")[1].split("\n\n")[0].splitlines()[2:]
            if line.startswith("    ") and not line.startswith("      ")
        ]
        assert listed == [name.removesuffix("_cmd") for name in COMMAND_MODULES]
