"""`edge-agent --version`: the package version, the git commit when run from a checkout, and the prepared model and
draft head the installed config names. Fast and never failing: it reads two manifests, nothing is verified."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
from pathlib import Path

from edge_agent import __version__
from edge_agent.config import AgentConfig, ConfigError, load_config

# Where a checkout keeps its .git: the directory above the package.
CHECKOUT = Path(__file__).resolve().parents[2]
# 2 s: `git describe` answers in milliseconds; a hung file system must not hang --version.
GIT_TIMEOUT_S = 2.0


def version_lines(config_path: Path) -> list[str]:
    """What `--version` prints: `edge-agent VERSION`, then `git: DESCRIBE` from a checkout, `model: …`, `draft: …`."""
    described = git_describe(CHECKOUT)
    lines = [f"edge-agent {package_version(described)}"]
    if described is not None:
        lines.append(f"git: {described}")
    model, draft = _prepared_dirs(config_path)
    lines.append(f"model: {_manifest_id(model)}")
    if draft is not None:
        lines.append(f"draft: {_manifest_id(draft)}")
    return lines


def package_version(described: str | None) -> str:
    """The release's version when the checkout is exactly at its tag (or there is no checkout); otherwise that
    version with a PEP 440 local part from `git describe`, so an unreleased build never claims to be the release:
    v0.2.0-3-g1a2b3c4-dirty → 0.2.0+3.g1a2b3c4.dirty."""
    if described is None or described == f"v{__version__}":
        return __version__
    local = described.removeprefix(f"v{__version__}-")
    if re.fullmatch(r"[0-9a-f]{7,40}(-dirty)?", local):  # no tag at all: describe --always gives the bare hash
        local = "g" + local
    return f"{__version__}+{re.sub(r'[^A-Za-z0-9]+', '.', local).strip('.')}"


def git_describe(checkout: Path) -> str | None:
    """`git describe --tags --always --dirty` of `checkout`, or None when it is no git checkout (an installed
    wheel) or git cannot say."""
    if not (checkout / ".git").exists():
        return None
    # GIT_OPTIONAL_LOCKS=0: --dirty must not refresh (write) the index of a checkout someone is working in.
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}
    try:
        result = subprocess.run(
            ["git", "-C", str(checkout), "describe", "--tags", "--always", "--dirty"],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            env=env,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    described = result.stdout.strip()
    return described if result.returncode == 0 and described else None


def _prepared_dirs(config_path: Path) -> tuple[Path, Path | None]:
    """The model and draft directories the engine would load for the config (edge_agent.llm.launcher); a config
    that does not load (none yet, or a bad one: config check says why) gets the defaults."""
    from edge_agent.llm.launcher import draft_dir, model_dir

    try:
        config = load_config(config_path)
    except (ConfigError, OSError):  # OSError: e.g. a config only root and the agent's group may read
        config = AgentConfig.model_validate({"site": {"id": "unconfigured"}})
    return model_dir(config), draft_dir(config)


def _manifest_id(directory: Path) -> str:
    """`NAME (manifest sha256 12 hex)` from the directory's manifest.json, or `not prepared (DIR)`."""
    try:
        raw = (directory / "manifest.json").read_bytes()
        name = json.loads(raw)["name"]
    except (OSError, ValueError, KeyError, TypeError):
        return f"not prepared ({directory})"
    return f"{name} (manifest sha256 {hashlib.sha256(raw).hexdigest()[:12]}, {directory})"


__all__ = ["git_describe", "package_version", "version_lines"]
