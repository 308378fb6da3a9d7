"""The in-process engine: vLLM in an engine process this agent starts, watches and restarts.

The agent itself never imports vLLM or torch. It verifies the model (and draft) manifests, starts
`python -m edge_agent.llm.worker` with the environment the launcher built, and talks to it over a socket pair
(`wire`). When the engine process dies, every in-flight request is answered with `EngineDied` and a new engine
process is started at once; a request that arrives meanwhile waits for it.
"""

from __future__ import annotations

import asyncio
import itertools
import socket
import sys
import time
from pathlib import Path
from typing import Any

import structlog

from edge_agent.audit import AuditSink
from edge_agent.config import AgentConfig
from edge_agent.llm import wire
from edge_agent.llm.fingerprint import engine_fingerprint, request_fingerprint
from edge_agent.llm.launcher import WorkerSpec, model_dir, numerics_env, worker_env, worker_spec
from edge_agent.llm.manifest import hash_files, manifest_sha256, verify
from edge_agent.llm.specstats import spec_stats
from edge_agent.llm.types import (
    ChatMessage,
    Completion,
    EngineDied,
    EngineError,
    EngineStartError,
    GenerationParams,
    PromptTooLong,
    Timings,
    fingerprint_sha256,
)

log = structlog.get_logger(component="engine")

# A stopping engine gets this long to exit after "shutdown" (it only frees memory) before it is killed.
_STOP_GRACE_S = 10.0


def _identify_model(directory: Path) -> dict[str, Any]:
    """Verify the model directory against its manifest (ModelVerificationError if not) and name it."""
    manifest = verify(directory)
    return {"name": manifest.name, "manifest_sha256": manifest_sha256(directory), "source": manifest.source}


def _identify_draft(directory: Path) -> dict[str, Any]:
    """A draft with a manifest is verified like the model; one without is named by the hash of its files."""
    if (directory / "manifest.json").exists():
        manifest = verify(directory)
        return {
            "name": manifest.name,
            "manifest_sha256": manifest_sha256(directory),
            "variant": manifest.source.get("variant"),
        }
    if not directory.is_dir():
        raise EngineStartError(f"draft directory {directory} does not exist")
    files = {name: entry.sha256 for name, entry in hash_files(directory).items()}
    return {"name": directory.name, "files_sha256": fingerprint_sha256(files), "manifest_sha256": None}


class _Process:
    """One running engine process and the requests waiting on it."""

    def __init__(self, proc: asyncio.subprocess.Process, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.proc = proc
        self.reader = reader
        self.writer = writer
        self.pending: dict[int, asyncio.Future[wire.Answer]] = {}
        self.info: dict[str, Any] = {}
        self.dead = asyncio.Event()
        self.reason = "engine process exited"
        self.listener: asyncio.Task[None] | None = None
        self.watchdog: asyncio.Task[None] | None = None
        # When the process last said anything (a heartbeat or a reply), and its serve loop's age then.
        self.last_seen = time.monotonic()
        self.loop_age_s = 0.0

    async def send(self, message: wire.Request) -> None:
        self.writer.write(wire.encode(message))
        await self.writer.drain()

    async def read(self) -> wire.Reply:
        line = await self.reader.readline()
        if not line:
            raise EOFError("engine process closed its socket")
        return wire.decode_reply(line)

    async def listen(self) -> None:
        """Route replies to their futures until the process goes away, then fail whatever is still waiting."""
        try:
            while True:
                message = await self.read()
                self.last_seen = time.monotonic()
                if isinstance(message, wire.Heartbeat):
                    self.loop_age_s = message.loop_age_s
                    continue
                if isinstance(message, wire.Fatal):
                    self.reason = f"engine failed: {message.message}"
                    continue
                if isinstance(message, wire.Ready):
                    continue  # only ever the first reply, read by the start-up
                future = self.pending.pop(message.id, None)
                if future is not None and not future.done():
                    future.set_result(message)
        except (EOFError, ConnectionError, ValueError) as exc:
            if not isinstance(exc, EOFError):
                self.reason = f"engine socket failed: {exc}"
        finally:
            returncode = await self._reap()
            self.reason = f"{self.reason} (exit status {returncode})"
            self.dead.set()
            for future in self.pending.values():
                if not future.done():
                    future.set_exception(EngineDied(self.reason))
            self.pending.clear()

    def unresponsive(self, heartbeat_timeout_s: float, stall_timeout_s: float) -> str | None:
        """Why this live process counts as hung (no heartbeat, or its loop stuck in one step), or None."""
        silent = time.monotonic() - self.last_seen
        if silent > heartbeat_timeout_s:
            return (
                f"engine unresponsive: no heartbeat for {silent:.0f} s"
                f" (llm.heartbeat_timeout_s = {heartbeat_timeout_s:g})"
            )
        if self.loop_age_s > stall_timeout_s:
            return (
                f"engine stalled: one step has run {self.loop_age_s:.0f} s (llm.stall_timeout_s = {stall_timeout_s:g})"
            )
        return None

    async def watch(self, heartbeat_timeout_s: float, stall_timeout_s: float) -> None:
        """Kill the process once it is unresponsive: the listener then fails what waits on it, and the engine
        restarts it like any dead one."""
        while not self.dead.is_set():
            await asyncio.sleep(1.0)  # 1 s: a hang shows within heartbeat_timeout_s + 1 s
            reason = self.unresponsive(heartbeat_timeout_s, stall_timeout_s)
            if reason is not None and not self.dead.is_set():
                log.error("engine.hung", pid=self.proc.pid, reason=reason)
                self.reason = reason
                self.proc.kill()  # SIGKILL ends a stopped process too
                return

    async def _reap(self) -> int | None:
        try:
            return await asyncio.wait_for(self.proc.wait(), _STOP_GRACE_S)
        except TimeoutError:
            self.proc.kill()
            return await self.proc.wait()

    async def stop(self) -> None:
        if self.proc.returncode is None:
            try:
                await self.send(wire.Shutdown())
            except (ConnectionError, RuntimeError):
                pass
            try:
                await asyncio.wait_for(self.proc.wait(), _STOP_GRACE_S)
            except TimeoutError:
                self.proc.kill()
                await self.proc.wait()
        if self.watchdog is not None:
            self.watchdog.cancel()
            await asyncio.gather(self.watchdog, return_exceptions=True)
        if self.listener is not None:
            await asyncio.gather(self.listener, return_exceptions=True)
        self.writer.close()


def _child_stdout() -> int | None:
    """The engine's own log lines go to our stderr, keeping stdout for the agent's JSON log lines."""
    try:
        return sys.stderr.fileno()
    except (AttributeError, ValueError, OSError):
        return None


async def _ensure_int8(source: Path, out: Path, env: dict[str, str]) -> None:
    """The verified int8 copy of `source` in `out` (edge_agent.llm.quantize; 4 s for the default model on 2 cores
    when missing or stale, a hash check otherwise), made in a child process: importing torch would add ~200 MB to
    the agent for good."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "edge_agent.llm.quantize",
        str(source),
        str(out),
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=_child_stdout(),
        stderr=asyncio.subprocess.PIPE,
    )
    _, stderr = await proc.communicate()
    if proc.returncode != 0:
        reason = stderr.decode(errors="replace").strip() or f"exit status {proc.returncode}"
        raise EngineStartError(f"cannot make the int8 copy of {source} (llm.dtype = int8): {reason}")


class LocalEngine:
    """`Engine` over a vLLM engine process. Use through `open_engine`; `start()` loads, `aclose()` stops."""

    def __init__(self, config: AgentConfig, audit: AuditSink | None = None) -> None:
        self.config = config
        self.audit = audit
        self.spec: WorkerSpec = worker_spec(config)
        self.env = worker_env(config, self.spec)
        self._process: _Process | None = None
        self._starting: asyncio.Task[_Process] | None = None
        self._watch: asyncio.Task[None] | None = None
        self._slots = asyncio.Semaphore(config.llm.max_concurrent)
        self._ids = itertools.count(1)
        self._closed = False
        self.starts = 0
        # Why the last engine process went away (exit, crash, or killed as unresponsive); None before any did.
        self.last_death: str | None = None
        self.base_fingerprint: dict[str, Any] = {}
        self.info: dict[str, Any] = {}

    # -- lifecycle ----------------------------------------------------------------------------------------------

    async def start(self) -> None:
        """Verify the manifests and load the engine; EngineStartError / ModelVerificationError when it can't."""
        await self._ensure_process()

    @property
    def loaded(self) -> bool:
        return self._process is not None and not self._process.dead.is_set()

    @property
    def pid(self) -> int | None:
        return self._process.proc.pid if self._process is not None else None

    async def aclose(self) -> None:
        self._closed = True
        for task in (self._watch, self._starting):
            if task is not None and not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        if self._process is not None:
            await self._process.stop()
            self._process = None

    async def _ensure_process(self) -> _Process:
        if self._closed:
            raise EngineError("engine is closed")
        if self._process is not None and not self._process.dead.is_set():
            return self._process
        if self._starting is None or self._starting.done():
            self._starting = asyncio.create_task(self._launch(), name="engine-start")
        # shield: one caller giving up (timeout, cancellation) must not cancel the start the others wait for.
        return await asyncio.shield(self._starting)

    async def _launch(self) -> _Process:
        started = time.monotonic()
        if self.spec.precision == "int8":
            await _ensure_int8(model_dir(self.config), Path(self.spec.model_dir), self.env)
        # Verify before starting anything: a tampered model never reaches vLLM (hashing runs off the event loop).
        model = await asyncio.to_thread(_identify_model, Path(self.spec.model_dir))
        draft = None
        if self.spec.draft_dir is not None:
            draft = await asyncio.to_thread(_identify_draft, Path(self.spec.draft_dir))
        parent_sock, child_sock = socket.socketpair()
        try:
            proc = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "edge_agent.llm.worker",
                str(child_sock.fileno()),
                pass_fds=(child_sock.fileno(),),
                env=self.env,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=_child_stdout(),
            )
        except OSError as exc:
            parent_sock.close()
            raise EngineStartError(f"cannot start the engine process: {exc}") from exc
        finally:
            child_sock.close()
        reader, writer = await asyncio.open_unix_connection(sock=parent_sock, limit=wire.MAX_LINE)
        process = _Process(proc, reader, writer)
        try:
            await process.send(wire.Start(spec=self.spec))
            reply = await asyncio.wait_for(process.read(), self.config.llm.start_timeout_s)
        except TimeoutError as exc:
            proc.kill()
            await proc.wait()
            raise EngineStartError(f"engine not ready after {self.config.llm.start_timeout_s} s") from exc
        except (EOFError, ConnectionError) as exc:
            returncode = await proc.wait()
            raise EngineStartError(f"engine process exited during start-up (exit status {returncode})") from exc
        if not isinstance(reply, wire.Ready):
            await process.stop()
            detail = None if isinstance(reply, (wire.Result, wire.Heartbeat)) else reply.message
            raise EngineStartError(f"engine could not load the model: {detail}")
        process.info = reply.info
        process.listener = asyncio.create_task(process.listen(), name="engine-listen")
        llm = self.config.llm
        process.last_seen = time.monotonic()
        process.watchdog = asyncio.create_task(
            process.watch(llm.heartbeat_timeout_s, llm.stall_timeout_s), name="engine-watchdog"
        )
        self.info = process.info
        self.base_fingerprint = engine_fingerprint(process.info, numerics_env(self.env), model, draft)
        self._process = process
        self.starts += 1
        self._watch = asyncio.create_task(self._restart_on_death(process), name="engine-watch")
        seconds = round(time.monotonic() - started, 2)
        log.info(
            "engine.loaded",
            pid=proc.pid,
            seconds=seconds,
            device=process.info.get("device"),
            dtype=process.info.get("dtype"),
            draft=process.info.get("draft"),
            fingerprint_sha256=fingerprint_sha256(self.base_fingerprint),
        )
        await self._audit_loaded(model, draft, process.info, seconds)
        return process

    async def _restart_on_death(self, process: _Process) -> None:
        await process.dead.wait()
        if self._closed:
            return
        log.error("engine.died", pid=process.proc.pid, reason=process.reason)
        self.last_death = process.reason
        if self._process is process:
            self._process = None
        try:
            await self._ensure_process()
        except EngineError as exc:
            # The next request tries again; until then the engine is simply not ready.
            log.error("engine.restart_failed", error=str(exc))

    async def _audit_loaded(
        self, model: dict[str, Any], draft: dict[str, Any] | None, info: dict[str, Any], seconds: float
    ) -> None:
        if self.audit is None:
            return
        engine = {k: info.get(k) for k in ("vllm", "torch", "device", "dtype", "precision", "threads")}
        await asyncio.to_thread(
            self.audit.append,
            "model.loaded",
            "engine",
            {
                "model": model,
                "engine": engine,
                "seconds": seconds,
                "fingerprint_sha256": fingerprint_sha256(self.base_fingerprint),
            },
        )
        if draft is not None:
            await asyncio.to_thread(
                self.audit.append, "draft.loaded", "engine", {"draft": self.base_fingerprint["draft"]}
            )

    # -- requests -----------------------------------------------------------------------------------------------

    async def generate(self, messages: list[ChatMessage], params: GenerationParams) -> Completion:
        queued = time.monotonic()
        async with self._slots:
            process = await self._ensure_process()
            waited = time.monotonic() - queued
            rid = next(self._ids)
            future: asyncio.Future[wire.Answer] = asyncio.get_running_loop().create_future()
            process.pending[rid] = future
            try:
                await process.send(wire.Generate(id=rid, messages=messages, params=params))
                reply = await asyncio.wait_for(asyncio.shield(future), self.config.llm.request_timeout_s)
            except TimeoutError as exc:
                await self._abort(process, rid)
                raise EngineError(
                    f"no completion after {self.config.llm.request_timeout_s} s; request aborted"
                ) from exc
            except asyncio.CancelledError:
                await self._abort(process, rid)
                raise
            except (ConnectionError, RuntimeError) as exc:
                # Writing to a dead engine: the listener fails the future too; report the death, not the socket.
                await process.dead.wait()
                raise EngineDied(process.reason) from exc
            finally:
                process.pending.pop(rid, None)
        return self._completion(reply, params, waited)

    async def _abort(self, process: _Process, rid: int) -> None:
        if not process.dead.is_set():
            try:
                await process.send(wire.Abort(id=rid))
            except (ConnectionError, RuntimeError):
                pass

    def _completion(self, reply: wire.Answer, params: GenerationParams, queued_s: float) -> Completion:
        if isinstance(reply, wire.TooLong):
            raise PromptTooLong(reply.prompt_tokens, reply.max_tokens, reply.max_model_len)
        if isinstance(reply, wire.Refused):
            raise EngineError(f"engine refused the request ({reply.kind}): {reply.message}")
        spec = None
        if reply.spec is not None:
            spec = spec_stats(reply.spec.histogram, reply.spec.num_draft_tokens, reply.spec.num_spec_tokens)
        fingerprint = request_fingerprint(self.base_fingerprint, params)
        return Completion(
            text=reply.text,
            token_ids=reply.token_ids,
            finish_reason=reply.finish_reason,
            prompt_tokens=reply.prompt_tokens,
            timings=Timings(queued_s=queued_s, first_token_s=reply.first_token_s, total_s=reply.total_s),
            spec=spec,
            fingerprint=fingerprint,
            fingerprint_sha256=fingerprint_sha256(fingerprint),
        )
