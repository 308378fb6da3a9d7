"""EAGLE-3 / 3.1 speculative decoding in the real engine: same greedy output, per-request figures, head formats,
and an engine process that dies mid-request."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from edge_agent.llm.types import ChatMessage, EngineDied, GenerationParams
from harness.draft_head import export_random_head
from tests.fixtures.engine import EngineHandle, engine_config

pytestmark = [pytest.mark.engine, pytest.mark.slow]

# Short prompts from the reports' domain; 40 tokens each keeps the set under a minute per engine on 2 cores.
PROMPTS = [
    "Summarise: pump P-101 tripped twice on high vibration during shift A.",
    "Write one sentence about a chlorine dosing alarm that cleared after 4 minutes.",
    "List two checks an operator should do after a tank level sensor fault.",
    "Explain in plain words what a pressure deadband is.",
]
PARAMS = GenerationParams(max_tokens=40)
# A request that runs for seconds on the default model (79 tokens, ~2.8 s on 2 cores without a draft).
LONG_PROMPT = (
    "Write a long, detailed maintenance procedure for a centrifugal pump, with at least twenty numbered steps."
)
LONG_PARAMS = GenerationParams(max_tokens=400)


def chat(text: str) -> list[ChatMessage]:
    return [ChatMessage(role="user", content=text)]


class TestSameOutput:
    async def test_greedy_output_with_draft_equals_without(
        self, engine: EngineHandle, draft_engine: EngineHandle
    ) -> None:
        """On every prompt of the set, the EAGLE-3.1 engine emits exactly the no-draft engine's tokens."""
        for prompt in PROMPTS:
            plain = await engine.generate(chat(prompt), PARAMS)
            drafted = await draft_engine.generate(chat(prompt), PARAMS)
            assert drafted.token_ids == plain.token_ids, prompt

    async def test_output_equals_without_draft_when_a_cached_prefix_is_reused(
        self, engine: EngineHandle, draft_engine: EngineHandle
    ) -> None:
        """Report sections share their system prompt: the draft engine reuses the whole cached prefix (vLLM's EAGLE
        block drop off), and a second prompt on that prefix still gets exactly the no-draft engine's tokens."""
        assert draft_engine.engine.info["draft"]["prefix_block_drop"] is False
        # ~330 tokens of shared system prompt: two full 128-token CPU KV blocks and part of a third.
        rules = " ".join(f"Rule {i}: copy every figure exactly." for i in range(40))
        system = ChatMessage(role="system", content=rules)
        for question in (PROMPTS[0], PROMPTS[2], PROMPTS[0]):
            messages = [system, *chat(question)]
            plain = await engine.generate(messages, PARAMS)
            drafted = await draft_engine.generate(messages, PARAMS)
            assert plain.prompt_tokens > 256
            assert drafted.token_ids == plain.token_ids, question

    async def test_request_figures_come_from_this_request(self, draft_engine: EngineHandle) -> None:
        """drafted = k per drafting step; accepted ≤ drafted; one acceptance rate per draft position."""
        completion = await draft_engine.generate(chat(PROMPTS[0]), PARAMS)
        spec = completion.spec
        assert spec is not None
        assert spec.num_speculative_tokens == 3
        assert spec.drafts > 0
        assert spec.drafted == 3 * spec.drafts
        assert 0 <= spec.accepted <= spec.drafted
        assert len(spec.per_position) == 3
        assert spec.mean_acceptance_length == pytest.approx(1 + spec.accepted / spec.drafts)
        # Every emitted token is either a verified draft token or the target's own token, one per step (the first
        # token comes from the prefill, before any draft exists).
        assert spec.accepted + spec.drafts + 1 >= len(completion.token_ids)


class TestHeadFormats:
    def test_eagle31_flags_are_read_by_vllm(self, draft_engine: EngineHandle) -> None:
        """A head whose config.json sets fc_norm and norm_output is loaded with both on, in config and in modules."""
        draft = draft_engine.engine.info["draft"]
        assert (draft["method"], draft["num_speculative_tokens"]) == ("eagle3", 3)
        assert (draft["fc_norm"], draft["norm_output"]) == (True, True)
        assert draft["modules"] == {"fc_norm": True, "norm_output": True}

    def test_fingerprint_names_the_draft(self, draft_engine: EngineHandle, eagle31_head: Path) -> None:
        from edge_agent.llm.manifest import manifest_sha256

        draft = draft_engine.engine.base_fingerprint["draft"]
        assert draft["manifest_sha256"] == manifest_sha256(eagle31_head)
        assert (draft["fc_norm"], draft["norm_output"], draft["num_speculative_tokens"]) == (True, True, 3)


class TestAudit:
    def test_model_and_draft_loads_are_audited(self, draft_engine: EngineHandle, eagle31_head: Path) -> None:
        """Each engine start appends model.loaded and draft.loaded with the manifest hashes that were verified."""
        import json

        from edge_agent.llm.manifest import manifest_sha256
        from tests.fixtures.engine import MODEL_DIR

        lines = draft_engine.audit.path.read_text().splitlines()
        entries = [json.loads(line) for line in lines]
        loaded = [e for e in entries if e["event"] in ("model.loaded", "draft.loaded")]
        assert [e["event"] for e in loaded[:2]] == ["model.loaded", "draft.loaded"]
        assert all(e["actor"] == "engine" for e in loaded)
        assert loaded[0]["payload"]["model"]["manifest_sha256"] == manifest_sha256(MODEL_DIR)
        assert loaded[1]["payload"]["draft"]["manifest_sha256"] == manifest_sha256(eagle31_head)
        assert loaded[1]["payload"]["draft"]["fc_norm"] is True


@pytest.fixture(scope="module")
def old_head_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EngineHandle]:
    """An engine with an EAGLE-3 head from before 3.1: no fc_norm/norm_output keys, no manifest, k = 2."""
    head = export_random_head(tmp_path_factory.mktemp("eagle3-head"), eagle31=False, seed=1)
    handle = EngineHandle(engine_config(tmp_path_factory.mktemp("old-head-state"), draft=head, k=2))
    yield handle
    handle.close()


class TestOldHead:
    async def test_old_format_head_loads_with_flags_off(
        self, old_head_engine: EngineHandle, engine: EngineHandle
    ) -> None:
        """Flags absent → both off; the head still drafts and the output is still the no-draft output."""
        draft = old_head_engine.engine.info["draft"]
        assert (draft["fc_norm"], draft["norm_output"]) == (False, False)
        assert draft["modules"] == {"fc_norm": False, "norm_output": False}
        assert old_head_engine.engine.base_fingerprint["draft"]["manifest_sha256"] is None
        drafted = await old_head_engine.generate(chat(PROMPTS[1]), PARAMS)
        plain = await engine.generate(chat(PROMPTS[1]), PARAMS)
        assert drafted.token_ids == plain.token_ids
        assert drafted.spec is not None and drafted.spec.num_speculative_tokens == 2


class TestEngineDeath:
    """Runs last in this module: it kills the draft engine's process (the fixture's engine restarts it)."""

    async def test_killed_engine_fails_in_flight_request_and_recovers(self, draft_engine: EngineHandle) -> None:
        """SIGKILL mid-generation → that request gets EngineDied at once; the next request runs on a new process."""
        # The kill lands at a third of this request's own measured duration, not after a fixed sleep: a fast machine
        # finished a short answer inside a fixed second (CI, 25 tokens in < 1 s), and the kill then hit an idle engine.
        expected = await draft_engine.generate(chat(LONG_PROMPT), LONG_PARAMS)
        assert expected.timings.total_s > 0.5, "the long prompt must keep this model busy to be killed mid-request"
        old_pid = draft_engine.engine.pid
        assert old_pid is not None
        in_flight = asyncio.ensure_future(draft_engine.generate(chat(LONG_PROMPT), LONG_PARAMS))
        await asyncio.sleep(expected.timings.total_s / 3)
        assert not in_flight.done()
        os.kill(old_pid, signal.SIGKILL)
        with pytest.raises(EngineDied, match="exit status -9"):
            await asyncio.wait_for(in_flight, 30)
        again = await asyncio.wait_for(draft_engine.generate(chat(LONG_PROMPT), LONG_PARAMS), 300)
        assert draft_engine.engine.pid not in (None, old_pid)
        assert draft_engine.engine.starts == 2
        assert again.token_ids == expected.token_ids
        assert again.fingerprint == expected.fingerprint
