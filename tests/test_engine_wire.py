"""The engine wire protocol (`edge_agent.llm.wire`): every message round-trips, and a bad line is a WireError."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from edge_agent.llm import wire
from edge_agent.llm.launcher import WorkerSpec
from edge_agent.llm.types import ChatMessage, EngineError, GenerationParams

SPEC = WorkerSpec(
    model_dir="/var/lib/edge-agent/models/default",
    draft_dir="/var/lib/edge-agent/models/draft",
    num_speculative_tokens=4,
    device="cpu",
    dtype="float32",
    precision="float32",
    max_model_len=4096,
    seed=0,
    enforce_eager=True,
    max_num_seqs=1,
)
PUMP = [ChatMessage(role="system", content="Informe breve."), ChatMessage(role="user", content="¿P-101? ✓")]

REQUESTS: list[wire.Request] = [
    wire.Start(spec=SPEC),
    wire.Generate(id=7, messages=PUMP, params=GenerationParams(max_tokens=64, seed=3, stop=["\n\n"])),
    wire.Abort(id=7),
    wire.Shutdown(),
]
REPLIES: list[wire.Reply] = [
    wire.Ready(info={"vllm": "0.11.0", "device": "cpu", "threads": 2, "load_s": 24.512, "draft": None}),
    wire.Fatal(message="RuntimeError: out of memory"),
    wire.Result(
        id=7,
        text="Bomba P-101: 2 disparos.",
        token_ids=[1, 2, 3],
        finish_reason="stop",
        prompt_tokens=41,
        first_token_s=0.25,
        total_s=1.5,
        spec=wire.SpecCounts(histogram=[2, 1, 0, 1], num_draft_tokens=12, num_spec_tokens=3),
    ),
    wire.Result(
        id=8,
        text="",
        token_ids=[],
        finish_reason="length",
        prompt_tokens=41,
        first_token_s=0.0,
        total_s=0.0,
        spec=None,
    ),
    wire.TooLong(id=9, prompt_tokens=1200, max_tokens=16, max_model_len=1024),
    wire.Refused(id=10, kind="bad_request", message="chat template: no template"),
    wire.Refused(id=11, kind="engine", message="RuntimeError: boom"),
]


class TestRoundTrip:
    @pytest.mark.parametrize("message", REQUESTS, ids=lambda m: m.op)
    def test_every_request_decodes_to_itself(self, message: wire.Request) -> None:
        """What the agent encodes, the engine process decodes to an equal model of the same type."""
        line = wire.encode(message)
        assert line.endswith(b"\n") and line.count(b"\n") == 1
        decoded = wire.decode_request(line)
        assert (type(decoded), decoded) == (type(message), message)

    @pytest.mark.parametrize("message", REPLIES, ids=lambda m: f"{m.op}-{getattr(m, 'kind', '')}")
    def test_every_reply_decodes_to_itself(self, message: wire.Reply) -> None:
        """What the engine process encodes, the agent decodes to an equal model of the same type."""
        decoded = wire.decode_reply(wire.encode(message))
        assert (type(decoded), decoded) == (type(message), message)

    def test_bytes_are_those_of_the_former_dict_literals(self) -> None:
        """Field order is declaration order, UTF-8 unescaped, no spaces: the JSON lines the protocol always had."""
        generate = wire.Generate(
            id=7, messages=[ChatMessage(role="user", content="¿P-101?")], params=GenerationParams(max_tokens=4)
        )
        assert (
            wire.encode(generate)
            == (
                '{"op":"generate","id":7,"messages":[{"role":"user","content":"¿P-101?"}],'
                '"params":{"max_tokens":4,"temperature":0.0,"seed":0,"stop":[]}}\n'
            ).encode()
        )
        assert wire.encode(wire.TooLong(id=9, prompt_tokens=1200, max_tokens=16, max_model_len=1024)) == (
            b'{"op":"error","id":9,"kind":"prompt_too_long","prompt_tokens":1200,"max_tokens":16,'
            b'"max_model_len":1024,"message":"prompt too long"}\n'
        )
        assert wire.encode(REPLIES[2]) == (
            b'{"op":"result","id":7,"text":"Bomba P-101: 2 disparos.","token_ids":[1,2,3],"finish_reason":"stop",'
            b'"prompt_tokens":41,"first_token_s":0.25,"total_s":1.5,'
            b'"spec":{"histogram":[2,1,0,1],"num_draft_tokens":12,"num_spec_tokens":3}}\n'
        )
        assert wire.encode(wire.Shutdown()) == b'{"op":"shutdown"}\n'

    def test_start_carries_the_spec_as_json(self) -> None:
        assert wire.encode(wire.Start(spec=SPEC)) == (
            b'{"op":"start","spec":' + SPEC.model_dump_json().encode() + b"}\n"
        )


class TestMalformed:
    @pytest.mark.parametrize(
        ("line", "reason"),
        [
            (b"not json\n", "Expecting value"),
            (b"[1, 2]\n", "valid dictionary"),
            (b"\xc3(\n", "'utf-8' codec can't decode byte 0xc3"),
            (b'{"id": 7}\n', "Unable to extract tag using discriminator 'op'"),
            (b'{"op": "stats"}\n', "Input tag 'stats' found using 'op'"),
            (b'{"op": "result", "id": 7, "text": "x"}\n', "result.token_ids: Field required"),
            (b'{"op": "error", "id": 7, "kind": "oom", "message": "x"}\n', "Input tag 'oom' found using 'kind'"),
            (
                b'{"op": "error", "id": 7, "kind": "prompt_too_long", "message": "x"}\n',
                "error.prompt_too_long.prompt_tokens: Field required",
            ),
            (b'{"op": "fatal", "message": "x", "extra": 1}\n', "fatal.extra: Extra inputs are not permitted"),
            (b'{"op": "shutdown"}\n', "Input tag 'shutdown' found using 'op'"),
        ],
    )
    def test_a_bad_reply_is_a_wire_error_naming_the_line(self, line: bytes, reason: str) -> None:
        """Not a KeyError later: decoding fails at once, with the line and what is wrong with it."""
        with pytest.raises(wire.WireError) as info:
            wire.decode_reply(line)
        assert (info.value.direction, info.value.line) == ("reply", line)
        assert str(info.value).startswith(f"not an engine reply: {line!r} (")
        assert reason in str(info.value)

    def test_a_reply_sent_as_a_request_is_refused(self) -> None:
        """Each direction has its own union: a reply is not a request."""
        line = wire.encode(wire.Fatal(message="x"))
        with pytest.raises(wire.WireError, match=r"^not an engine request: .*Input tag 'fatal' found using 'op'"):
            wire.decode_request(line)

    def test_a_generate_without_params_is_refused(self) -> None:
        with pytest.raises(wire.WireError, match="generate.params: Field required"):
            wire.decode_request(b'{"op": "generate", "id": 1, "messages": []}\n')

    def test_wire_error_is_an_engine_error_and_a_value_error(self) -> None:
        """Callers catching the engine root, or ValueError as a bad line always was, both catch it."""
        assert issubclass(wire.WireError, EngineError) and issubclass(wire.WireError, ValueError)

    @given(st.binary(max_size=200))
    def test_any_bytes_decode_or_raise_wire_error(self, line: bytes) -> None:
        """Whatever the other process writes, decoding returns a message or raises WireError, nothing else."""
        for decode in (wire.decode_request, wire.decode_reply):
            try:
                decode(line)
            except wire.WireError as exc:
                assert exc.line == line
