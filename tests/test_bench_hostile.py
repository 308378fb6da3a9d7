"""bench.hostile's memory flood: the payloads it sends and how it measures a process tree's memory."""

from __future__ import annotations

import subprocess
import sys
import time

from bench.support.hostile_flood import _MIB, FLOOD_MAX_PAYLOAD, _RssSampler, _tree, flood_payloads
from edge_agent.connectors.mqtt.client import PACKET_HEADROOM_BYTES
from edge_agent.sim.hostile import Topics


def test_flood_payloads_span_one_mib_to_the_limit_and_a_few_go_just_over() -> None:
    topics = Topics("s", "r", user="flooder")
    payloads = flood_payloads(1, 60, topics)
    sizes = [len(p) for _, p in payloads]
    over = [s for s in sizes if s > FLOOD_MAX_PAYLOAD]
    assert len(payloads) == 60 and len(over) == 3
    assert all(_MIB <= s for s in sizes)
    # just over: past max_payload_bytes (quarantined payload_too_large), inside the advertised packet size
    assert all(s <= FLOOD_MAX_PAYLOAD + PACKET_HEADROOM_BYTES for s in over)
    assert {t for t, _ in payloads} == {topics.mes_bad, topics.log_bad, topics.request}
    assert sum(sizes) > 120 * _MIB


def test_the_sampler_sees_a_childs_memory_in_the_tree() -> None:
    """A child holding 200 MiB: the tree includes it and both the summed peak and its VmHWM show the 200 MiB."""
    code = "import sys, time; b = bytearray(200 * 1024 * 1024); b[::4096] = b'x' * len(b[::4096]); time.sleep(30)"
    parent = subprocess.Popen(
        [sys.executable, "-c", f"import subprocess, sys; subprocess.run([sys.executable, '-c', {code!r}])"]
    )
    try:
        with _RssSampler(parent.pid) as sampler:
            deadline = time.monotonic() + 20
            while sampler.peak_kib < 200 * 1024 and time.monotonic() < deadline:
                time.sleep(0.1)
            assert len(_tree(parent.pid)) == 2
        assert sampler.peak_kib >= 200 * 1024
        assert max(sampler.hwm_kib.values()) >= 200 * 1024
    finally:
        for pid in _tree(parent.pid)[1:]:
            subprocess.run(["kill", str(pid)], check=False)
        parent.wait(10)
