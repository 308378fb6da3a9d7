"""A private Mosquitto on a free loopback port, with a generated config in a directory of its own: what
`edge-agent qualify` runs its operational checks against (never the plant's broker), and what the tests start."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listening on 127.0.0.1:{port} after {timeout}s")


@dataclass
class Broker:
    """A Mosquitto process we own. `stop()`/`start()` simulate a broker restart; persistence keeps sessions."""

    workdir: Path
    port: int = field(default_factory=free_port)
    extra_conf: str = ""
    proc: subprocess.Popen[bytes] | None = None
    # False with `users`/`acl`: a broker that authenticates every client.
    allow_anonymous: bool = True
    users: dict[str, str] = field(default_factory=dict)
    acl: str = ""

    @property
    def host(self) -> str:
        return "127.0.0.1"

    def start(self) -> None:
        conf = self.workdir / "mosquitto.conf"
        auth = ""
        if self.users:
            passwords = self.workdir / "passwords"
            passwords.write_text("")
            for user, password in self.users.items():
                subprocess.run(["mosquitto_passwd", "-b", str(passwords), user, password], check=True)
            auth += f"password_file {passwords}\n"
        if self.acl:
            (self.workdir / "acl").write_text(self.acl)
            auth += f"acl_file {self.workdir / 'acl'}\n"
        if auth and os.geteuid() == 0:
            # As root, mosquitto drops to user "mosquitto", which cannot read files under a 0700 private dir.
            auth += "user root\n"
        conf.write_text(
            f"listener {self.port} 127.0.0.1\n"
            f"allow_anonymous {'true' if self.allow_anonymous else 'false'}\n"
            f"{auth}"
            "persistence true\n"
            f"persistence_location {self.workdir}/\n"
            "max_queued_messages 1000000\n"
            # Nagle off on the broker's side too: a reply forwarded while the last packet is unacknowledged waits for
            # the asker's delayed ACK (40 ms) otherwise.
            "set_tcp_nodelay true\n"
            # Started as root, mosquitto drops to user `mosquitto`, which cannot write the session store into a
            # private dir: sessions would silently not survive a restart.
            f"{'user root' if os.geteuid() == 0 and 'user root' not in auth else ''}\n"
            f"{self.extra_conf}\n"
        )
        log = open(self.workdir / "mosquitto.log", "ab")
        self.proc = subprocess.Popen(["mosquitto", "-c", str(conf)], stdout=log, stderr=log)
        wait_for_port(self.port)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(10)
            self.proc = None

    def restart(self) -> None:
        self.stop()
        self.start()
