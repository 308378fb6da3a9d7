"""`make demo`: the plant simulator feeding the agent, one shift report requested over MQTT and printed, the
shift's console's address with a one-time enrol link, and `edge-agent audit verify` passing — every part a real
process.

Run as `python -m edge_agent.demo --config configs/demo.toml`. Starts its own Mosquitto on the config's port (unless
one already listens there), the simulator, and `edge-agent run` (with the console over a self-signed certificate it
makes for localhost and 127.0.0.1); stops them all on the way out.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from edge_agent.config import AgentConfig, load_config
from edge_agent.config.console import ConsoleConfig

# The engine loads torch and vLLM and warms up: minutes on a busy 2-core box.
READY_TIMEOUT_S = 600.0
# The simulator replays the last shift at high speed; this long is plenty for it to reach the wall clock.
INGEST_TIMEOUT_S = 300.0
# Two years, as docs/console.md's openssl command: a browser told to trust the demo's certificate keeps trusting it.
CONSOLE_CERT_DAYS = 730


def say(message: str) -> None:
    print(f"\n== {message}", flush=True)


def listening(host: str, port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex((host, port)) == 0


def wait_until(
    what: str, check: Callable[[], object], timeout: float, proc: subprocess.Popen[bytes] | None = None
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        if proc is not None and proc.poll() is not None:
            raise SystemExit(f"demo: {what}: the process exited with code {proc.returncode}")
        time.sleep(0.5)
    raise SystemExit(f"demo: timed out after {timeout:.0f}s waiting for {what}")


@contextmanager
def process(
    name: str, argv: list[str], log_dir: Path, env: dict[str, str] | None = None
) -> Iterator[subprocess.Popen[bytes]]:
    """A child process whose output goes to <log_dir>/<name>.log; SIGTERM on the way out, SIGKILL if it hangs."""
    log = open(log_dir / f"{name}.log", "ab")
    proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        log.close()


def mosquitto(config: AgentConfig, stack: ExitStack, run_dir: Path) -> None:
    host, port = config.mqtt.host, config.mqtt.port
    if listening(host, port):
        say(f"using the MQTT broker already listening on {host}:{port}")
        return
    conf = run_dir / "mosquitto.conf"
    conf.write_text(f"listener {port} {host}\nallow_anonymous true\npersistence false\n")
    say(f"starting Mosquitto on {host}:{port}")
    stack.enter_context(process("mosquitto", ["mosquitto", "-c", str(conf)], run_dir))
    wait_until("Mosquitto", lambda: listening(host, port), 10)


def readiness(port: int) -> dict[str, Any]:
    """The agent's /readyz body (200 or 503 alike), or {} while it does not answer."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return json.loads(exc.read() or b"{}")
    except (urllib.error.URLError, OSError, ValueError):
        return {}


def component_ready(port: int, name: str) -> bool:
    return any(c["name"] == name and c["ready"] for c in readiness(port).get("components", []))


def caught_up(sim_log: Path, offset: int) -> bool:
    """The simulator logs `sim_caught_up` once its replay reaches the present."""
    with open(sim_log, "rb") as f:
        f.seek(offset)
        return b"sim_caught_up" in f.read()


def record_count(config_path: Path) -> int:
    out = subprocess.run(
        [sys.executable, "-m", "edge_agent", "store", "stats", "--config", str(config_path)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return int(json.loads(out)["records"]["total"])


def console_certificate(cert_file: Path, key_file: Path) -> bool:
    """A self-signed P-256 certificate for localhost and 127.0.0.1 (PEM) and its key (PEM, 0600), made once: True when
    made now, False when both files were already there."""
    if cert_file.is_file() and key_file.is_file():
        return False
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.now(UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=CONSOLE_CERT_DAYS))
        .add_extension(
            x509.SubjectAlternativeName([x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    key_file.parent.mkdir(parents=True, exist_ok=True)
    key_file.unlink(missing_ok=True)
    # Created 0600 rather than chmod-ed after: the key is never readable by others, even for an instant.
    with os.fdopen(os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as f:
        f.write(key_pem)
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return True


def enrol_link(config_path: Path, console: ConsoleConfig) -> str:
    """A one-time enrol link for the first identity `[console] roles` makes an approver, from `edge-agent console
    enrol` itself."""
    name = next(name for name, roles in console.roles.items() if "approver" in roles)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "edge_agent",
            "console",
            "enrol",
            name,
            "--role",
            "approver",
            "--config",
            str(config_path),
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def sparkplug_env(config: AgentConfig) -> dict[str, str]:
    """The agent as a Sparkplug host: [sparkplug] on, and its OPC UA sources kept for alarms and events but without
    their value nodes, which the simulator's edge node now publishes under the same tags (read twice, a report would
    count every sample twice)."""
    sources = ", ".join(
        "{ "
        + ", ".join(
            [
                f"name = {json.dumps(s.name)}",
                f"endpoint = {json.dumps(s.endpoint)}",
                f"events = {str(s.events).lower()}",
                f"history_backfill_initial_s = {s.history_backfill_initial_s}",
            ]
        )
        + " }"
        for s in config.opcua.sources
    )
    return os.environ | {"EDGE_AGENT__SPARKPLUG__ENABLED": "true", "EDGE_AGENT__OPCUA__SOURCES": f"[{sources}]"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=Path("configs/demo.toml"))
    parser.add_argument("--lang", default=None, help="report language (default: [reports] default_language)")
    parser.add_argument(
        "--sparkplug",
        action="store_true",
        help="the plant's values come from a Sparkplug B edge node instead of OPC UA (alarms still over OPC UA)",
    )
    args = parser.parse_args()
    config = load_config(args.config)
    run_dir = config.paths.state_dir / "run"
    run_dir.mkdir(parents=True, exist_ok=True)
    cli = [sys.executable, "-m", "edge_agent"]
    console = config.console
    if console.enabled and console.tls_cert_file is not None and console.tls_key_file is not None:
        if console_certificate(console.tls_cert_file, console.tls_key_file):
            say(f"made the console's self-signed certificate {console.tls_cert_file} (localhost, 127.0.0.1)")
    with ExitStack() as stack:
        mosquitto(config, stack, run_dir)
        # The agent first: the simulator replays the last hours at start, and MES/log messages published before the
        # agent's MQTT session exists would go to nobody (OPC UA values would still come back from history).
        say("starting the agent (logs: var/demo/run/agent.log)")
        agent_env = sparkplug_env(config) if args.sparkplug else None
        agent = stack.enter_context(process("agent", [*cli, "run", "--config", str(args.config)], run_dir, agent_env))
        started = time.monotonic()
        wait_until("the agent's MQTT ingest", lambda: component_ready(config.health.port, "mqtt-ingest"), 120, agent)
        say("starting the plant simulator (OPC UA server + MES/log publisher), replaying the last hours")
        sim_argv = [*cli, "sim", "--config", str(args.config), *(["--sparkplug"] if args.sparkplug else [])]
        sim = stack.enter_context(process("sim", sim_argv, run_dir))
        sim_log = run_dir / "sim.log"
        offset = sim_log.stat().st_size if sim_log.exists() else 0
        wait_until(
            "the simulator to catch up with the wall clock", lambda: caught_up(sim_log, offset), INGEST_TIMEOUT_S, sim
        )
        say("waiting for the agent to be ready: OPC UA subscribed, engine loaded (the first load takes a while)")
        wait_until(
            "the agent to be ready (/readyz)",
            lambda: readiness(config.health.port).get("ready"),
            READY_TIMEOUT_S,
            agent,
        )
        say(f"agent ready {time.monotonic() - started:.0f}s after start")
        say(f"store holds {record_count(args.config)} records")
        # The last 8 hours: the simulator replays them at start, so the window is full.
        end = datetime.now(UTC).replace(microsecond=0)
        window = f"{(end - timedelta(hours=8)).isoformat()}/{end.isoformat()}"
        lang = args.lang or config.reports.default_language
        say(f"requesting a shift summary over MQTT for {window} ({lang})")
        report = subprocess.run(
            [
                *cli,
                "report",
                "request",
                "--config",
                str(args.config),
                "--type",
                "shift_summary",
                "--window",
                window,
                "--lang",
                lang,
                "--format",
                "markdown",
                "--timeout",
                "900",
            ],
            text=True,
        )
        if report.returncode != 0:
            raise SystemExit(f"demo: the report request failed (exit {report.returncode})")
        if console.enabled:
            say(
                f"the shift's console, while the agent runs (`edge-agent run --config {args.config}`): "
                f"{console.effective_origin}; one-time enrol link: {enrol_link(args.config, console)}"
            )
        say("stopping the agent (SIGTERM)")
        agent.send_signal(signal.SIGTERM)
        agent.wait(config.daemon.shutdown_grace_s + 30)
        print(f"agent exited with code {agent.returncode}")
    say("verifying the audit trail")
    verify = subprocess.run([*cli, "audit", "verify", "--config", str(args.config)])
    print(json.dumps({"store": record_count(args.config)}))
    return verify.returncode


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
