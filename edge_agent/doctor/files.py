"""The state directory: who owns it, who may write it, the audit signing key's mode, and the disk it lives on."""

from __future__ import annotations

import pwd
import shutil
import stat
from pathlib import Path

from edge_agent.audit.log import SIGNING_KEY
from edge_agent.config import AgentConfig
from edge_agent.config.core import StoreConfig
from edge_agent.doctor.disk import DISK_WARN_DAYS, growth_verdict, measure_state, outbox_verdict
from edge_agent.doctor.types import Check

MIB = 1024 * 1024
# A floor, not a budget: below 100 MiB free, one report burst, the SQLite WAL or the next audit segment can fill the
# disk, and the store then stores nothing until space returns (it loses nothing, but the plant's data waits).
DISK_FAIL_MIB = 100


def user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def check_state_dir(state_dir: Path, euid: int) -> Check:
    """Exists, owned by the user running doctor (run it as the agent's user), not group- or world-writable."""
    try:
        st = state_dir.stat()
    except FileNotFoundError:
        return Check.fail(
            "state_dir",
            f"{state_dir} does not exist",
            f"install -d -o edge-agent -g edge-agent -m 0700 {state_dir} (systemd's StateDirectory= creates it)",
        )
    if not stat.S_ISDIR(st.st_mode):
        return Check.fail(
            "state_dir", f"{state_dir} is not a directory", "move it away; the agent keeps its state there"
        )
    mode = stat.S_IMODE(st.st_mode)
    owner, me = user_name(st.st_uid), user_name(euid)
    if st.st_uid != euid:
        return Check.fail(
            "state_dir",
            f"{state_dir} is owned by {owner}, but doctor runs as {me}",
            f"run doctor as the agent's user (runuser -u {owner} -- edge-agent doctor ...); if the agent runs as"
            f" {me}: chown -R {me} {state_dir}",
        )
    if mode & (stat.S_IWGRP | stat.S_IWOTH):
        return Check.fail(
            "state_dir",
            f"{state_dir} has mode {mode:04o}: others may write the store and the audit log",
            f"chmod go-w {state_dir} (0700, as systemd's StateDirectoryMode= makes it)",
        )
    return Check.ok("state_dir", f"{state_dir}: owner {owner}, mode {mode:04o}")


def check_audit_key(config: AgentConfig) -> Check:
    """The signing key: mode 0600, as the agent demands before it signs with it (`signing.keys.Signer.read`)."""
    path = config.paths.audit_dir / SIGNING_KEY
    try:
        st = path.stat()
    except FileNotFoundError:
        return Check.warn(
            "audit_key",
            f"no signing key at {path} yet",
            "start the agent once: it creates the key (mode 0600) at its first start",
        )
    mode = stat.S_IMODE(st.st_mode)
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        return Check.fail(
            "audit_key",
            f"{path} has mode {mode:04o}: others may read the key that signs the audit log (the agent refuses it)",
            f"chmod 600 {path}; then rotate the key (edge-agent audit rotate-key), since it may have been copied",
        )
    return Check.ok("audit_key", f"{path}: owner {user_name(st.st_uid)}, mode {mode:04o}")


def store_bytes(state_dir: Path) -> int:
    """What the store's files hold now: the part of the caps already on disk."""
    names = ("store.sqlite3", "store.sqlite3-wal", "store.sqlite3-shm")
    return sum((state_dir / n).stat().st_size for n in names if (state_dir / n).is_file())


def caps_mib(store: StoreConfig) -> float:
    return store.retention_max_mb + store.quarantine_max_mb + store.dead_letter_max_mb


def disk_verdict(free_bytes: int, caps: float, used_bytes: int) -> tuple[str, str]:
    """ok / warn / fail for `free_bytes` against the store's caps (MiB) less what it already holds, with the
    numbers. Pure: `check_disk` measures."""
    headroom = max(caps * MIB - used_bytes, 0)
    numbers = (
        f"{free_bytes / MIB:,.0f} MiB free; the store's caps (retention + quarantine + dead letters) are"
        f" {caps:,.0f} MiB, of which it holds {used_bytes / MIB:,.0f} MiB"
    )
    if free_bytes < DISK_FAIL_MIB * MIB:
        return "fail", numbers
    if free_bytes < headroom:
        return "warn", numbers
    return "ok", numbers


def check_disk(config: AgentConfig) -> Check:
    state_dir = config.paths.state_dir
    existing = state_dir
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    usage = shutil.disk_usage(existing)
    used = store_bytes(state_dir) if state_dir.is_dir() else 0
    caps = caps_mib(config.store)
    status, numbers = disk_verdict(usage.free, caps, used)
    state = measure_state(state_dir, config.paths.audit_dir)
    growth_status, growth = growth_verdict(max(usage.free - max(int(caps * MIB) - used, 0), 0), state)
    detail = f"{existing}: {numbers}; {state.describe()}; {growth}"
    fix = (
        "free space on that filesystem, or lower store.retention_max_mb / quarantine_max_mb / dead_letter_max_mb"
        " so the caps fit"
    )
    if status == "fail":
        return Check.fail("disk", f"{detail}: under {DISK_FAIL_MIB} MiB", fix)
    if status == "warn":
        return Check.warn("disk", f"{detail}: the disk fills before the caps trim anything", fix)
    if growth_status == "warn":
        return Check.warn(
            "disk",
            f"{detail}, within {DISK_WARN_DAYS} days",
            "add disk, or export the audit log and move old report files off the host (docs/deployment.md, Disk);"
            " set reports.retention_days to age out drafts and rejections",
        )
    outbox = outbox_verdict(state)
    if outbox is not None:
        return Check.warn("disk", f"{detail}: {outbox}", "edge-agent doctor's mqtt checks: why the broker refuses")
    return Check.ok("disk", detail)
