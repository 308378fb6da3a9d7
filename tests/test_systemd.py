"""The systemd unit and GPU drop-in: `systemd-analyze verify` accepts them and the sandbox rates OK (≤ 2.5)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from edge_agent.config import DaemonConfig

REPO = Path(__file__).resolve().parent.parent
UNIT = REPO / "systemd" / "edge-agent.service"
GPU_DROPIN = REPO / "systemd" / "edge-agent-gpu.conf"
INSTALLED_BINARY = "/opt/edge-agent/venv/bin/edge-agent"
MAX_EXPOSURE = 2.5


def systemd_analyze(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    if shutil.which("systemd-analyze") is None:
        pytest.fail("systemd-analyze is not installed: run `make test`, which installs Debian's systemd package")
    return subprocess.run(["systemd-analyze", *args], capture_output=True, text=True, timeout=60, cwd=cwd)


def unit_copy(tmp_path: Path, *, gpu: bool = False, edit: tuple[str, str] | None = None) -> Path:
    """The unit in a temporary directory, ExecStart pointing at a binary that exists here (verify checks it)."""
    local_binary = Path(sys.executable).with_name("edge-agent")
    text = UNIT.read_text(encoding="utf-8")
    assert INSTALLED_BINARY in text
    text = text.replace(INSTALLED_BINARY, str(local_binary if local_binary.exists() else Path(sys.executable)))
    if edit is not None:
        assert edit[0] in text
        text = text.replace(*edit)
    unit = tmp_path / "edge-agent.service"
    unit.write_text(text, encoding="utf-8")
    if gpu:
        dropins = tmp_path / "edge-agent.service.d"
        dropins.mkdir()
        shutil.copy(GPU_DROPIN, dropins / "gpu.conf")
    return unit


def exposure(unit: Path) -> tuple[float, str]:
    """The overall exposure number and its rating from `systemd-analyze security --offline=true`."""
    result = systemd_analyze("security", "--offline=true", "--no-pager", str(unit), cwd=unit.parent)
    match = re.search(r"Overall exposure level for \S+: (\d+(?:\.\d+)?) (\w+)", result.stdout)
    assert match, result.stdout + result.stderr
    return float(match.group(1)), match.group(2)


def directives(path: Path) -> dict[str, list[str]]:
    """`Key=value` lines of a unit file; a key given several times keeps every value in order."""
    out: dict[str, list[str]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if "=" in line and not line.lstrip().startswith(("#", ";", "[")):
            key, value = line.split("=", 1)
            out.setdefault(key.strip(), []).append(value.strip())
    return out


class TestVerify:
    def test_unit_verifies_without_a_warning(self, tmp_path: Path) -> None:
        """`systemd-analyze verify` exits 0 and has nothing to say about the unit."""
        result = systemd_analyze("verify", str(unit_copy(tmp_path)), cwd=tmp_path)
        assert (result.returncode, result.stdout + result.stderr) == (0, "")

    def test_unit_with_the_gpu_dropin_verifies_without_a_warning(self, tmp_path: Path) -> None:
        """The GPU drop-in is loaded next to the unit and is accepted as well."""
        result = systemd_analyze("verify", str(unit_copy(tmp_path, gpu=True)), cwd=tmp_path)
        assert (result.returncode, result.stdout + result.stderr) == (0, "")

    def test_the_credential_the_unit_shows_verifies(self, tmp_path: Path) -> None:
        """The LoadCredential= line the unit's comment gives for a secret (docs/deployment.md, "Secrets") is one
        systemd accepts, uncommented in the unit."""
        shown = "#LoadCredential=mqtt-password:/etc/edge-agent/credentials/mqtt-password\n"
        unit = unit_copy(tmp_path, edit=(shown, shown.removeprefix("#")))
        result = systemd_analyze("verify", str(unit), cwd=tmp_path)
        assert (result.returncode, result.stdout + result.stderr) == (0, "")

    def test_a_misspelt_directive_is_caught(self, tmp_path: Path) -> None:
        """The check above can fail: verify names an unknown key even though it still exits 0."""
        unit = unit_copy(tmp_path, edit=("WatchdogSec=", "WatchdogSecs="))
        result = systemd_analyze("verify", str(unit), cwd=tmp_path)
        assert "Unknown key 'WatchdogSecs'" in result.stderr


class TestSecurity:
    def test_unit_rates_ok(self, tmp_path: Path) -> None:
        """The sandbox scores at most 2.5, which systemd rates OK (a bare unit is 9.6 UNSAFE)."""
        level, rating = exposure(unit_copy(tmp_path))
        assert (level <= MAX_EXPOSURE, rating) == (True, "OK"), level

    def test_unit_with_the_gpu_dropin_still_rates_ok(self, tmp_path: Path) -> None:
        """Opening the NVIDIA devices costs only the device lines, and the rating stays OK."""
        level, rating = exposure(unit_copy(tmp_path, gpu=True))
        assert (level <= MAX_EXPOSURE, rating) == (True, "OK"), level

    def test_rating_reflects_the_sandbox(self, tmp_path: Path) -> None:
        """Removing the file-system protection raises the exposure: the number measures this unit."""
        strict_dir, loose_dir = tmp_path / "strict", tmp_path / "loose"
        strict_dir.mkdir()
        loose_dir.mkdir()
        loose = unit_copy(loose_dir, edit=("ProtectSystem=strict", "ProtectSystem=no"))
        assert exposure(loose)[0] > exposure(unit_copy(strict_dir))[0]


class TestSettings:
    def test_readiness_and_restart_settings(self) -> None:
        """Type=notify from the main process only, a watchdog, and restart on failure."""
        unit = directives(UNIT)
        assert {k: unit[k] for k in ("Type", "NotifyAccess", "Restart", "KillMode")} == {
            "Type": ["notify"],
            "NotifyAccess": ["main"],
            "Restart": ["on-failure"],
            "KillMode": ["mixed"],
        }
        assert re.fullmatch(r"\d+s", unit["WatchdogSec"][0])

    def test_stop_timeout_exceeds_the_default_grace_period(self) -> None:
        """systemd waits longer than the agent's own shutdown deadline, so the agent's fires first."""
        stop = directives(UNIT)["TimeoutStopSec"][0]
        assert re.fullmatch(r"\d+s", stop)
        assert float(stop[:-1]) > DaemonConfig().shutdown_grace_s

    def test_required_sandbox_directives(self) -> None:
        """The protections the issue names are all present with their strict values."""
        unit = directives(UNIT)
        assert {k: unit[k] for k in ("ProtectSystem", "ProtectHome", "PrivateTmp", "NoNewPrivileges")} == {
            "ProtectSystem": ["strict"],
            "ProtectHome": ["yes"],
            "PrivateTmp": ["yes"],
            "NoNewPrivileges": ["yes"],
        }
        assert unit["RestrictAddressFamilies"] == ["AF_UNIX AF_INET AF_INET6"]
        assert unit["SystemCallFilter"][0] == "@system-service"
        assert [unit[k] for k in ("StateDirectory", "ConfigurationDirectory", "LogsDirectory")] == [["edge-agent"]] * 3

    def test_agent_runs_as_a_dedicated_user_with_the_state_directory(self) -> None:
        """Non-root, and the agent's state_dir is forced to the unit's StateDirectory."""
        unit = directives(UNIT)
        assert (unit["User"], unit["Group"]) == (["edge-agent"], ["edge-agent"])
        assert "EDGE_AGENT__PATHS__STATE_DIR=%S/edge-agent" in unit["Environment"]


class TestSysusers:
    def test_sysusers_file_creates_the_user_and_group(self, tmp_path: Path) -> None:
        """systemd-sysusers, on an empty root, creates the edge-agent user and group the unit names."""
        if shutil.which("systemd-sysusers") is None:
            pytest.fail("systemd-sysusers is not installed: run `make test`, which installs Debian's systemd package")
        (tmp_path / "etc").mkdir()
        sysusers = REPO / "systemd" / "edge-agent.sysusers"
        result = subprocess.run(
            ["systemd-sysusers", f"--root={tmp_path}", str(sysusers)], capture_output=True, text=True, timeout=60
        )
        assert result.returncode == 0, result.stderr
        passwd = (tmp_path / "etc" / "passwd").read_text().splitlines()
        group = (tmp_path / "etc" / "group").read_text().splitlines()
        assert [line.split(":")[0::5] for line in passwd] == [["edge-agent", "/var/lib/edge-agent"]]
        assert [line.split(":")[0] for line in group] == ["edge-agent"]


MDWE_PROBE = """
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
# PR_SET_MDWE (65), PR_MDWE_REFUSE_EXEC_GAIN (1): the kernel's form of MemoryDenyWriteExecute=yes.
if libc.prctl(65, 1, 0, 0, 0) != 0:
    sys.exit(3)
import torch
a = torch.ones(64, 64, dtype=torch.bfloat16)
print(float((a @ a).float().sum()))
"""


class TestWriteExecuteChoice:
    @pytest.mark.slow
    def test_denying_write_execute_memory_breaks_the_cpu_engine_kernels(self) -> None:
        """Why the unit keeps MemoryDenyWriteExecute=no: under W^X torch's oneDNN cannot JIT its bf16 matmul.

        If a future torch passes this, the unit should be tightened to MemoryDenyWriteExecute=yes.
        """
        result = subprocess.run([sys.executable, "-c", MDWE_PROBE], capture_output=True, text=True, timeout=300)
        if result.returncode == 3:
            pytest.skip("kernel without PR_SET_MDWE (Linux < 6.3): cannot reproduce W^X here")
        assert (result.returncode, "could not create a primitive" in result.stderr) == (1, True), result.stderr
        assert directives(UNIT)["MemoryDenyWriteExecute"] == ["no"]


class TestMemoryMax:
    """MemoryMax= is the memory flood's measured peak (bench.hostile, BENCHMARKS.md) plus the margin the unit states."""

    @staticmethod
    def measured_peak_mib() -> int:
        section = (REPO / "BENCHMARKS.md").read_text(encoding="utf-8").split("<!-- bench:hostile -->")[1]
        match = re.search(r"\| agent \+ worker \(sum of VmHWM[^|]*\| — \| (\d+) \|", section)
        assert match, "BENCHMARKS.md's hostile section has no memory flood peak"
        return int(match[1])

    def test_memory_max_covers_the_measured_peak_plus_the_margin(self) -> None:
        [value] = directives(UNIT)["MemoryMax"]
        assert re.fullmatch(r"\d+M", value), value
        assert int(value[:-1]) >= self.measured_peak_mib() + 1024

    def test_the_unit_cites_the_peak_benchmarks_md_records(self) -> None:
        """The comment above MemoryMax= names the figure that decided it; a new measurement must update both."""
        text = UNIT.read_text(encoding="utf-8")
        assert f"peak {self.measured_peak_mib()} MiB" in text

    def test_the_gpu_dropin_lifts_the_cpu_figure(self) -> None:
        """Not measured on a GPU host: the drop-in must not leave the CPU engine's bound on a GPU engine's load."""
        assert directives(GPU_DROPIN)["MemoryMax"] == ["infinity"]
