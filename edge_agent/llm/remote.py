"""The remote engine: a vLLM OpenAI-compatible server shared by several agents (one GPU server per plant).

Plain HTTP with the standard library (run in a thread), so an agent that only talks to a server installs no engine
at all. The request asks for token ids (`return_token_ids`); the server reports per-request speculative figures
when it runs with `--per-request-spec-decode-metrics summary`, and timings with `--enable-per-request-metrics`.
The fingerprint names the server's vLLM version and its model; the server's own weights are its operator's to
verify (`edge-agent model verify` on that host).
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
import time
import urllib.error
import urllib.request
from typing import Any

import structlog

from edge_agent.config import AgentConfig
from edge_agent.config.urls import split_userinfo
from edge_agent.llm.specstats import spec_stats
from edge_agent.llm.types import (
    ChatMessage,
    Completion,
    EngineError,
    EngineStartError,
    GenerationParams,
    PromptTooLong,
    Timings,
    fingerprint_sha256,
)

log = structlog.get_logger(component="engine")

# Probing /version and /v1/models at start: a healthy server answers in milliseconds.
_PROBE_TIMEOUT_S = 10.0


class RemoteEngine:
    """`Engine` over HTTP. `start()` checks the server and the model; `generate()` posts one chat completion."""

    def __init__(self, config: AgentConfig) -> None:
        llm = config.llm
        if not llm.remote_url:
            raise EngineStartError("llm.backend = remote needs llm.remote_url (e.g. http://gpu-server:8000/v1)")
        self.config = config
        # Credentials in the URL (https://user:pass@host/v1) go in a header, never into a URL we log, put in an
        # error, or record in the engine fingerprint (reports, audit entries, bundles): base_url has none.
        url, userinfo = split_userinfo(llm.remote_url)
        self.base_url = url.rstrip("/")
        self.root_url = self.base_url.removesuffix("/v1")
        self.model = llm.remote_model
        self._api_key = llm.remote_api_key.get_secret_value() if llm.remote_api_key else None
        self._basic = base64.b64encode(":".join(userinfo).encode()).decode() if userinfo is not None else None
        self._slots = asyncio.Semaphore(llm.max_concurrent)
        self.base_fingerprint: dict[str, Any] = {}
        self.info: dict[str, Any] = {}
        self.loaded = False
        self.max_model_len: int | None = None

    def _request(self, method: str, url: str, body: dict[str, Any] | None, timeout: float) -> dict[str, Any]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        elif self._basic:
            headers["Authorization"] = f"Basic {self._basic}"
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(url, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode("utf-8", "replace")[:2000]
            raise _HttpError(exc.code, detail) from exc
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            raise EngineError(f"{method} {url}: {exc}") from exc
        except json.JSONDecodeError as exc:
            raise EngineError(f"{method} {url}: answer is not JSON: {exc}") from exc

    async def _call(self, method: str, url: str, body: dict[str, Any] | None, timeout: float) -> dict[str, Any]:
        return await asyncio.to_thread(self._request, method, url, body, timeout)

    async def start(self) -> None:
        try:
            models = await self._call("GET", f"{self.base_url}/models", None, _PROBE_TIMEOUT_S)
            try:
                version = (await self._call("GET", f"{self.root_url}/version", None, _PROBE_TIMEOUT_S)).get("version")
            except EngineError:
                version = None  # not every OpenAI-compatible server has /version
        except EngineError as exc:
            raise EngineStartError(f"remote engine {self.base_url} not reachable: {exc}") from exc
        served = {m["id"]: m for m in models.get("data", [])}
        if self.model is None:
            if len(served) != 1:
                raise EngineStartError(f"{self.base_url} serves {sorted(served)}: set llm.remote_model to one of them")
            self.model = next(iter(served))
        if self.model not in served:
            raise EngineStartError(f"{self.base_url} does not serve {self.model!r} (serves {sorted(served)})")
        card = served[self.model]
        self.max_model_len = card.get("max_model_len")
        self.info = {"server_version": version, "model": card}
        self.base_fingerprint = {
            "engine": "vllm-remote",
            "url": self.base_url,
            "vllm": version,
            "model": {"id": self.model, "root": card.get("root"), "max_model_len": card.get("max_model_len")},
        }
        self.loaded = True
        log.info("engine.remote_ready", url=self.base_url, model=self.model, vllm=version)

    async def aclose(self) -> None:
        self.loaded = False

    async def generate(self, messages: list[ChatMessage], params: GenerationParams) -> Completion:
        queued = time.monotonic()
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [m.model_dump() for m in messages],
            "max_tokens": params.max_tokens,
            "temperature": params.temperature,
            "seed": params.seed,
            "stop": params.stop,
            "n": 1,
            "stream": False,
            "return_token_ids": True,
        }
        if params.json_schema is not None:  # OpenAI's form, which vLLM's server and other OpenAI-compatible ones read
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "output", "schema": params.json_schema, "strict": True},
            }
        async with self._slots:
            # The server would quietly shorten max_tokens to fit its context; a report must not be cut short, so
            # refuse up front like the local engine does.
            prompt_tokens = await self._prompt_tokens(messages)
            if (
                prompt_tokens is not None
                and self.max_model_len
                and prompt_tokens + params.max_tokens > self.max_model_len
            ):
                raise PromptTooLong(prompt_tokens, params.max_tokens, self.max_model_len)
            started = time.monotonic()
            try:
                answer = await self._call(
                    "POST", f"{self.base_url}/chat/completions", body, self.config.llm.request_timeout_s
                )
            except _HttpError as exc:
                raise self._refusal(exc, params) from exc
            total = time.monotonic() - started
        completion = self._completion(answer, params, started - queued, total)
        if (
            prompt_tokens is None
            and self.max_model_len
            and completion.prompt_tokens + params.max_tokens > self.max_model_len
        ):
            raise PromptTooLong(completion.prompt_tokens, params.max_tokens, self.max_model_len)
        return completion

    def _refusal(self, exc: _HttpError, params: GenerationParams) -> EngineError:
        # vLLM answers 400 naming both lengths when the prompt alone does not fit the context window.
        for pattern, order in _TOO_LONG:
            match = pattern.search(exc.detail)
            if exc.status == 400 and match:
                numbers = dict(zip(order, map(int, match.groups()), strict=True))
                return PromptTooLong(numbers["prompt"], params.max_tokens, numbers["max_model_len"])
        return EngineError(f"remote engine refused the request (HTTP {exc.status}): {exc.detail[:500]}")

    async def _prompt_tokens(self, messages: list[ChatMessage]) -> int | None:
        """The prompt's token count from the server's /tokenize (same chat template); None if it has none."""
        body = {"model": self.model, "messages": [m.model_dump() for m in messages], "add_generation_prompt": True}
        try:
            answer = await self._call("POST", f"{self.root_url}/tokenize", body, _PROBE_TIMEOUT_S)
        except _HttpError as exc:
            if exc.status == 404:
                return None
            raise
        return int(answer["count"])

    def _completion(
        self, answer: dict[str, Any], params: GenerationParams, queued_s: float, total_s: float
    ) -> Completion:
        try:
            choice = answer["choices"][0]
            token_ids = choice.get("token_ids")
            if token_ids is None:
                raise EngineError("remote server did not return token ids (needs vLLM's return_token_ids)")
            metrics = answer.get("metrics") or {}
            spec = None
            spec_raw = metrics.get("speculative_decoding")
            if spec_raw:
                spec = spec_stats(
                    spec_raw["acceptance_histogram"], spec_raw["num_draft_tokens"], spec_raw["num_spec_tokens"]
                )
            first = metrics.get("time_to_first_token_ms")
            fingerprint = self.base_fingerprint | {
                "system_fingerprint": answer.get("system_fingerprint"),
                "sampling": params.model_dump(mode="json"),
            }
            return Completion(
                text=choice["message"]["content"] or "",
                token_ids=token_ids,
                finish_reason=choice.get("finish_reason") or "stop",
                prompt_tokens=int(answer["usage"]["prompt_tokens"]),
                timings=Timings(
                    queued_s=queued_s,
                    first_token_s=min(first / 1000.0, total_s) if first is not None else total_s,
                    total_s=total_s,
                ),
                spec=spec,
                fingerprint=fingerprint,
                fingerprint_sha256=fingerprint_sha256(fingerprint),
            )
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            raise EngineError(f"remote server answer not understood: {exc}") from exc


class _HttpError(EngineError):
    def __init__(self, status: int, detail: str) -> None:
        self.status = status
        self.detail = detail
        super().__init__(f"HTTP {status}: {detail[:200]}")


_TOO_LONG = (
    (
        re.compile(r"maximum context length is (\d+) tokens\. However, your prompt contains (?:at least )?(\d+)"),
        ("max_model_len", "prompt"),
    ),
    (
        re.compile(r"Input length \((\d+)\) exceeds model's maximum context length \((\d+)\)"),
        ("prompt", "max_model_len"),
    ),
)
