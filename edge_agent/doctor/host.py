"""The host around the agent: its clock (report windows and audit times are only as good as it is) and its systemd
unit's sandbox. The subprocesses are bounded; the verdicts are pure functions of what they answered."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import edge_agent
from edge_agent.doctor.types import Check

# No agent was built before 2025: a clock before then is certainly wrong (a dead RTC battery reads 1970 or 2000).
EPOCH_FLOOR = datetime(2025, 1, 1, tzinfo=UTC)
# timedatectl answers from systemd-timedated over D-Bus in milliseconds; 5 s covers a slow first D-Bus activation.
TIMEDATECTL_TIMEOUT_S = 5.0
# systemd-analyze security --offline reads the unit and its drop-ins: about a second; 60 s as tests/test_systemd.py.
ANALYZE_TIMEOUT_S = 60.0
# The rating the shipped unit earns and tests/test_systemd.py keeps: "OK" in systemd-analyze's own scale.
MAX_EXPOSURE = 2.5
DEFAULT_UNIT = Path("/etc/systemd/system/edge-agent.service")
CLOCK_FIX = (
    "set the clock and keep it set: enable NTP (timedatectl set-ntp true, or chrony pointed at the plant's server)"
)


def installed_at() -> datetime:
    """When this copy of the agent was installed (its package's files written): the clock cannot be before it."""
    return datetime.fromtimestamp(Path(edge_agent.__file__).stat().st_mtime, UTC)


def check_clock(now: datetime, installed: datetime) -> Check:
    floor = max(EPOCH_FLOOR, installed)
    if now < floor:
        why = (
            "before 2025"
            if floor == EPOCH_FLOOR
            else f"before this agent was installed ({installed:%Y-%m-%d %H:%M:%S} UTC)"
        )
        return Check.fail("clock", f"the host clock says {now:%Y-%m-%d %H:%M:%S} UTC, {why}", CLOCK_FIX)
    return Check.ok("clock", f"{now:%Y-%m-%d %H:%M:%S} UTC, after this agent's install ({installed:%Y-%m-%d})")


def query_ntp() -> tuple[str | None, str]:
    """timedatectl's NTPSynchronized ("yes" / "no"), or None and why it could not be asked."""
    if shutil.which("timedatectl") is None:
        return None, "timedatectl is not installed"
    try:
        result = subprocess.run(
            ["timedatectl", "show", "-p", "NTPSynchronized", "--value"],
            capture_output=True,
            text=True,
            timeout=TIMEDATECTL_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        return None, f"timedatectl did not answer within {TIMEDATECTL_TIMEOUT_S:g} s"
    if result.returncode != 0:
        return None, f"timedatectl failed: {result.stderr.strip() or f'exit {result.returncode}'}"
    return result.stdout.strip(), ""


def check_ntp(answer: str | None, why: str) -> Check:
    if answer == "yes":
        return Check.ok("clock.ntp", "NTP-synchronised (timedatectl)")
    if answer is None:
        return Check.warn("clock.ntp", f"cannot tell whether the clock is NTP-synchronised: {why}", CLOCK_FIX)
    return Check.warn(
        "clock.ntp",
        f"the clock is not NTP-synchronised (timedatectl: NTPSynchronized={answer}): report windows and audit"
        " times drift with it",
        CLOCK_FIX,
    )


def exposure(output: str) -> tuple[float, str] | None:
    """The overall exposure and its rating from `systemd-analyze security` output, or None if absent."""
    match = re.search(r"Overall exposure level for \S+: (\d+(?:\.\d+)?) (\w+)", output)
    return (float(match.group(1)), match.group(2)) if match else None


def check_unit(unit: Path) -> Check:
    if not unit.exists():
        return Check.ok("unit", f"not installed as a systemd unit (no {unit})")
    if shutil.which("systemd-analyze") is None:
        return Check.warn(
            "unit",
            f"{unit} exists, but systemd-analyze is not installed to rate its sandbox",
            "apt-get install systemd",
        )
    try:
        result = subprocess.run(
            ["systemd-analyze", "security", "--offline=true", "--no-pager", str(unit.resolve())],
            capture_output=True,
            text=True,
            timeout=ANALYZE_TIMEOUT_S,
            cwd=unit.parent,
        )
    except subprocess.TimeoutExpired:
        return Check.warn(
            "unit", f"systemd-analyze security did not finish within {ANALYZE_TIMEOUT_S:g} s", "run it by hand"
        )
    rated = exposure(result.stdout)
    if rated is None:
        return Check.warn(
            "unit",
            f"systemd-analyze security rated nothing for {unit}: {(result.stderr or result.stdout).strip()[:300]}",
            f"systemd-analyze security --offline=true {unit}, and mend what it reports",
        )
    level, rating = rated
    found = f"{unit}: sandbox exposure {level} {rating} (systemd-analyze security)"
    if level > MAX_EXPOSURE:
        return Check.warn(
            "unit",
            f"{found}, above the shipped unit's {MAX_EXPOSURE}",
            "restore the shipped unit's sandbox (systemd/edge-agent.service); put local changes in a drop-in"
            " (systemctl edit edge-agent) that keeps it",
        )
    return Check.ok("unit", found)


# systemd's specifiers in a system unit's Environment= lines (systemd.unit(5), "Specifiers"): the ones ours uses.
_SPECIFIERS = {"%S": "/var/lib", "%C": "/var/cache", "%L": "/var/log", "%E": "/etc", "%t": "/run", "%%": "%"}


def unit_environment(unit: Path) -> dict[str, str]:
    """The `EDGE_AGENT__*` variables the unit and its drop-ins (`<unit>.d/*.conf`, in name order, later wins) give
    the agent, specifiers resolved: doctor loads the config as the agent will see it (e.g. the unit's state dir).
    Empty when there is no unit. EnvironmentFile= is not read: its secrets are root's, not the caller's."""
    files = [unit, *sorted(unit.with_name(unit.name + ".d").glob("*.conf"))] if unit.is_file() else []
    found: dict[str, str] = {}
    for path in files:
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            key, _, value = line.strip().partition("=")
            if key.strip() != "Environment":
                continue
            for item in shlex.split(value):
                name, sep, raw = item.partition("=")
                if sep and name.startswith("EDGE_AGENT__"):
                    found[name] = re.sub("|".join(re.escape(s) for s in _SPECIFIERS), lambda m: _SPECIFIERS[m[0]], raw)
    return found
