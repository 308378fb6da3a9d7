"""`llm.dtype = "int8"` on the real engine: the model a plant runs by default, with the shipped head.

One engine (eager; the compiled default is tested in float32 by test_engine_compiled) on its own state directory:
the int8 copy is made there, verified, named in the fingerprint and the audit log, and the same request gives the
same tokens; a restart reuses the copy.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from edge_agent.config.llm import LlmConfig
from edge_agent.llm.manifest import manifest_sha256, read_manifest
from edge_agent.llm.quantize import SCHEME
from edge_agent.llm.types import ChatMessage, GenerationParams
from tests.fixtures.engine import MODEL_DIR, EngineHandle, _require_model, engine_config

pytestmark = [pytest.mark.engine, pytest.mark.slow]

HEAD_DIR = MODEL_DIR.parent / "eagle31-default"
# Over two of the CPU engine's 128-token KV blocks, so the second asking reads its prefix from the prefix cache
# while the first and a fresh engine compute it: the tokens must not depend on which.
CONTEXT = " ".join(
    f"At 0{h}:{m}0 pump P-10{h} reported vibration {h}.{m} mm/s and bearing temperature 4{m} °C."
    for h in range(1, 7)
    for m in range(1, 5)
)
PROMPT = [
    ChatMessage(role="system", content="You write shift handover notes for a water plant. Log: " + CONTEXT),
    ChatMessage(role="user", content="Pump P-101 tripped twice on high vibration this shift. Summarise it."),
]
PARAMS = GenerationParams(max_tokens=48)


@pytest.fixture(scope="module")
def state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("int8-state")


@pytest.fixture(scope="module")
def int8_engine(state: Path) -> Iterator[EngineHandle]:
    from edge_agent.audit import AuditLog

    _require_model()
    audit = AuditLog.open(state / "audit", origin="edge-agent/test-site")
    handle = EngineHandle(engine_config(state, draft=HEAD_DIR, k=4, dtype="int8"), audit=audit)
    yield handle
    handle.close()


def test_int8_is_the_default() -> None:
    assert LlmConfig().dtype == "int8"


async def test_the_engine_loads_a_verified_int8_copy_made_in_the_state_directory(
    int8_engine: EngineHandle, state: Path
) -> None:
    copy = state / "models" / f"{MODEL_DIR.name}-int8"
    manifest = read_manifest(copy)
    assert manifest.source == {
        "model_manifest_sha256": manifest_sha256(MODEL_DIR),
        "model": MODEL_DIR.name,
        "scheme": SCHEME,
    }
    info = int8_engine.engine.info
    assert (info["precision"], info["dtype"]) == ("int8", "bfloat16")
    fingerprint = int8_engine.engine.base_fingerprint
    assert fingerprint["precision"] == "int8"
    assert fingerprint["model"]["manifest_sha256"] == manifest_sha256(copy)
    assert fingerprint["model"]["source"]["scheme"] == SCHEME


async def test_the_audit_log_records_the_precision(int8_engine: EngineHandle, state: Path) -> None:
    entries = [json.loads(line) for line in int8_engine.audit.path.read_text().splitlines()]
    loaded = next(e for e in entries if e["event"] == "model.loaded")
    assert loaded["payload"]["engine"]["precision"] == "int8"
    assert loaded["payload"]["model"]["manifest_sha256"] == manifest_sha256(state / "models" / "default-int8")


async def test_same_request_gives_the_same_tokens_with_the_draft_accepting(int8_engine: EngineHandle) -> None:
    first = await int8_engine.generate(PROMPT, PARAMS)
    assert first.prompt_tokens > 256
    second = await int8_engine.generate(PROMPT, PARAMS)
    assert first.token_ids == second.token_ids and len(first.token_ids) > 8
    assert first.fingerprint_sha256 == second.fingerprint_sha256
    assert first.spec is not None and first.spec.accepted > 0


async def test_a_second_start_reuses_the_copy_and_gives_the_same_tokens(int8_engine: EngineHandle, state: Path) -> None:
    weights = state / "models" / "default-int8" / "model.safetensors"
    stamp = weights.stat().st_mtime_ns
    before = await int8_engine.generate(PROMPT, PARAMS)
    again = await asyncio.to_thread(EngineHandle, int8_engine.config)
    try:
        after = await again.generate(PROMPT, PARAMS)
    finally:
        await asyncio.to_thread(again.close)
    assert weights.stat().st_mtime_ns == stamp
    assert after.token_ids == before.token_ids and after.fingerprint_sha256 == before.fingerprint_sha256
