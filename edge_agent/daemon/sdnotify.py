"""systemd's readiness protocol: `KEY=VALUE` lines in one datagram to the AF_UNIX socket named by NOTIFY_SOCKET.

Implemented from sd_notify(3) rather than through libsystemd, so a venv needs no C bindings. An address that starts
with `@` is in the abstract namespace (the `@` becomes a NUL byte). Without NOTIFY_SOCKET (not under systemd, or
`Type=` other than notify) every call is a cheap no-op, so the daemon runs the same way from a shell.
"""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import Mapping, MutableMapping

import structlog

log = structlog.get_logger(component="sdnotify")

# systemd reads the socket at once; a send that blocks longer than this means the manager is wedged, and the agent
# must not hang on it (the watchdog will then fire and restart us, which is the right outcome).
_SEND_TIMEOUT_S = 1.0


class SdNotifyError(Exception):
    """NOTIFY_SOCKET or WATCHDOG_USEC holds a value this module cannot use."""


def _socket_address(raw: str) -> str | bytes:
    if raw.startswith("@"):
        # Abstract namespace: a leading NUL, the rest verbatim, no terminating NUL (Linux counts the length).
        return b"\0" + raw[1:].encode()
    if raw.startswith("/"):
        return raw
    # sd_notify(3) also knows vsock:; systemd only hands those to services in VMs, which this agent is not built for.
    raise SdNotifyError(f"NOTIFY_SOCKET={raw!r} is neither an absolute path nor an abstract '@' name")


class SdNotifier:
    """Sends state changes to the service manager; does nothing when `address` is None."""

    def __init__(self, address: str | None) -> None:
        self._address = _socket_address(address) if address else None
        self._sock: socket.socket | None = None
        if self._address is not None:
            self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
            self._sock.settimeout(_SEND_TIMEOUT_S)

    @classmethod
    def from_environ(cls, environ: MutableMapping[str, str] | None = None, *, unset: bool = False) -> SdNotifier:
        """A notifier for NOTIFY_SOCKET; `unset` removes it so child processes (engine workers) cannot inherit it."""
        env = os.environ if environ is None else environ
        address = env.get("NOTIFY_SOCKET") or None
        if unset:
            env.pop("NOTIFY_SOCKET", None)
        return cls(address)

    @property
    def enabled(self) -> bool:
        return self._sock is not None

    def notify(self, *assignments: str) -> bool:
        """Send `KEY=VALUE` lines as one datagram; False (and a warning) when it could not be delivered."""
        if self._sock is None or self._address is None:
            return False
        for line in assignments:
            if "=" not in line or "\n" in line:
                raise ValueError(f"sd_notify assignment must be one KEY=VALUE line, got {line!r}")
        try:
            self._sock.sendto("\n".join(assignments).encode(), self._address)
        except OSError as exc:
            # Losing a STATUS line is harmless; READY/WATCHDOG loss shows up as a systemd timeout, logged here.
            log.warning("sd_notify_failed", message=list(assignments), error=str(exc))
            return False
        return True

    def ready(self, status: str | None = None) -> bool:
        return self.notify("READY=1", *([f"STATUS={status}"] if status else []))

    def status(self, text: str) -> bool:
        return self.notify(f"STATUS={_one_line(text)}")

    def stopping(self, status: str | None = None) -> bool:
        return self.notify("STOPPING=1", *([f"STATUS={status}"] if status else []))

    def watchdog(self) -> bool:
        return self.notify("WATCHDOG=1")

    def extend_timeout(self, seconds: float) -> bool:
        """Ask for `seconds` more before systemd gives up on start-up or stop (EXTEND_TIMEOUT_USEC)."""
        return self.notify(f"EXTEND_TIMEOUT_USEC={int(seconds * 1_000_000)}")

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None


def _one_line(text: str) -> str:
    return " ".join(text.split())


def watchdog_interval(environ: Mapping[str, str] | None = None, pid: int | None = None) -> float | None:
    """Seconds between WATCHDOG=1 pings, half of WATCHDOG_USEC as sd_watchdog_enabled(3) advises; None when off.

    WATCHDOG_PID, when set, names the process the watchdog is meant for; any other process (e.g. one started from
    a shell inside the service's environment) must not ping.
    """
    env = os.environ if environ is None else environ
    raw_usec = env.get("WATCHDOG_USEC")
    if not raw_usec:
        return None
    raw_pid = env.get("WATCHDOG_PID")
    if raw_pid:
        try:
            if int(raw_pid) != (os.getpid() if pid is None else pid):
                return None
        except ValueError as exc:
            raise SdNotifyError(f"WATCHDOG_PID={raw_pid!r} is not a process id") from exc
    try:
        usec = int(raw_usec)
    except ValueError as exc:
        raise SdNotifyError(f"WATCHDOG_USEC={raw_usec!r} is not an integer") from exc
    if usec <= 0:
        raise SdNotifyError(f"WATCHDOG_USEC={usec} must be positive")
    return usec / 2 / 1_000_000


async def watchdog_loop(notifier: SdNotifier, interval: float) -> None:
    """Ping every `interval` seconds from the event loop itself: a blocked loop stops the pings and systemd
    restarts the service, which is exactly the failure a thread-based ping would hide."""
    log.info("watchdog_started", interval_s=interval)
    while True:
        notifier.watchdog()
        await asyncio.sleep(interval)
