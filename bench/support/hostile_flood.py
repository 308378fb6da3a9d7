"""bench.hostile's memory flood, the parts that are not the agent: the payloads it sends, a process tree's memory
read from /proc and sampled while it runs, and the counters it waits on (/metrics)."""

from __future__ import annotations

import json
import random
import threading
import urllib.request
from datetime import UTC, datetime
from pathlib import Path

from edge_agent.sim.hostile import Topics

FLOOD_MAX_PAYLOAD = 4 * 1024 * 1024
_MIB = 1024 * 1024


def _proc_kib(pid: int, field: str) -> int:
    """`field` (VmRSS, VmHWM) of /proc/<pid>/status in KiB; 0 once the process is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def _tree(pid: int) -> list[int]:
    """`pid` and all its descendants (the engine worker and whatever it starts)."""
    out, todo = [], [pid]
    while todo:
        current = todo.pop()
        out.append(current)
        for task in Path(f"/proc/{current}/task").glob("*/children"):
            try:
                todo += [int(c) for c in task.read_text().split()]
            except (OSError, ValueError):
                pass
    return out


class _RssSampler:
    """The peak of the summed VmRSS of a process tree (what a cgroup's MemoryMax= meets), sampled every 0.1 s, and
    each process's own VmHWM as last seen."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.peak_kib = 0
        self.hwm_kib: dict[int, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def sample(self) -> int:
        pids = _tree(self.pid)
        total = sum(_proc_kib(p, "VmRSS") for p in pids)
        for p in pids:
            self.hwm_kib[p] = max(self.hwm_kib.get(p, 0), _proc_kib(p, "VmHWM"))
        self.peak_kib = max(self.peak_kib, total)
        return total

    def _run(self) -> None:
        while not self._stop.wait(0.1):
            self.sample()

    def __enter__(self) -> _RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.sample()


def _metric_sum(port: int, name: str) -> float | None:
    """The sum over labels of one metric on the agent's /metrics; None while it does not answer (a busy 2-core box)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
            text = response.read().decode()
    except (OSError, ValueError):
        return None
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(name + "{"))


def _all_taken(port: int, before: float, expected: int) -> bool:
    received = _metric_sum(port, "edge_agent_mqtt_messages_received_total")
    depth = _metric_sum(port, "edge_agent_mqtt_queue_depth")
    return received is not None and depth is not None and received >= before + expected and depth == 0


def flood_payloads(seed: int, messages: int, topics: Topics) -> list[tuple[str, bytes]]:
    """(topic, payload): MES JSON with a string of 1 MiB up to the limit (quarantined: max_string_chars), log lines as
    long (quarantined), requests as long (answered with an error), and every 20th just over max_payload_bytes
    (payload_too_large)."""
    rng = random.Random(seed)
    out = []
    for n in range(messages):
        size = rng.randint(_MIB, FLOOD_MAX_PAYLOAD - 1024)
        if n % 20 == 19:
            size = FLOOD_MAX_PAYLOAD + 1024
        kind = n % 3
        if kind == 0:
            body = {"id": f"flood-{n}", "asset": "P-101", "type": "flood", "ts": datetime.now(UTC).isoformat()}
            head = json.dumps(body)[:-1] + ', "pad": "'
            out.append((topics.mes_bad, (head + "x" * max(0, size - len(head) - 2) + '"}').encode()))
        elif kind == 1:
            out.append((topics.log_bad, b"flood " + rng.randbytes(8).hex().encode() * (size // 16)))
        else:
            out.append(
                (topics.request, b'{"request_id": "flood-' + str(n).encode() + b'", "pad": "' + b"y" * size + b'"}')
            )
    return out
