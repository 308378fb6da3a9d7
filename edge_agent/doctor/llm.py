"""The engine's files and tools: the model against its manifest, the draft head against its manifest and the model,
and what a compiled CPU engine needs (a writable kernel cache, a C++ compiler). Nothing here starts an engine.

The model is hashed once per run: `target_shape` verifies it and `LlmChecks` keeps the result for the draft check.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

from edge_agent.config import AgentConfig
from edge_agent.config.urls import redact_url
from edge_agent.doctor.types import Check
from edge_agent.llm import launcher
from edge_agent.llm.head_import import TargetShape, inspect_head, parse_head_config, target_shape
from edge_agent.llm.importer import ModelImportError, read_json
from edge_agent.llm.manifest import Manifest, manifest_sha256, read_manifest, verify
from edge_agent.llm.prepare import SOURCE_PACKAGE, default_draft_dir
from edge_agent.llm.types import EngineStartError, ModelVerificationError

AS_AGENT = "as the agent's user, e.g. runuser -u edge-agent --"


def prepare_fix(model_dir: Path) -> str:
    return f"{AS_AGENT} edge-agent model prepare --out {model_dir}"


def _on_off(flag: bool) -> str:
    return "on" if flag else "off"


def _engine_unused(config: AgentConfig) -> str | None:
    """Why there is no local engine to check, or None when there is one."""
    if not config.llm.enabled:
        return "no engine: llm.enabled = false (report requests are refused)"
    if config.llm.backend != "vllm":
        return f"no local engine: llm.backend = {config.llm.backend} ({redact_url(config.llm.remote_url or '')})"
    return None


class LlmChecks:
    """`model` then `draft` (the draft is checked against the target the model check verified)."""

    def __init__(self, config: AgentConfig) -> None:
        self.config = config
        self.model_dir = launcher.model_dir(config)
        self.target: TargetShape | None = None
        self.model_name: str | None = None

    def model(self) -> Check:
        unused = _engine_unused(self.config)
        if unused is not None:
            return Check.ok("model", unused)
        directory = self.model_dir
        if not directory.is_dir():
            return Check.fail("model", f"model directory {directory} is missing", self._model_fix(None))
        try:
            target = target_shape(directory)  # every file hashed against the manifest, then config.json read
        except (ModelVerificationError, ModelImportError) as exc:
            return Check.fail("model", str(exc), self._model_fix(_readable_manifest(directory)))
        manifest = read_manifest(directory)
        self.target, self.model_name = target, manifest.name
        found = f"{manifest.name} in {directory}, manifest sha256 {target.manifest_sha256}"
        if manifest.adapter is not None:
            return Check.ok("model", f"{found}; narrator {manifest.adapter.name} merged")
        if _is_default_model(manifest):
            return Check.warn(
                "model",
                f"{found}; plain base model, prepared with --no-narrator: reports lean on the reference writer",
                f"merge the shipped report narrator: {prepare_fix(directory)} (without --no-narrator)",
            )
        return Check.ok("model", f"{found}; no narrator adapter (a model the plant brought)")

    def _model_fix(self, manifest: Manifest | None) -> str:
        if manifest is None or _is_default_model(manifest):
            return f"prepare it again (deterministic): {prepare_fix(self.model_dir)}"
        return f"import it again from its source: {AS_AGENT} edge-agent model import SRC --out {self.model_dir}"

    def draft(self) -> Check:
        unused = _engine_unused(self.config)
        if unused is not None:
            return Check.ok("draft", unused)
        try:
            head = launcher.draft_dir(self.config)
        except EngineStartError as exc:
            return Check.fail(
                "draft",
                str(exc),
                "set llm.speculative.draft to a head made for this model (edge-agent draft import), or"
                " llm.speculative.enabled = false",
            )
        if head is None:
            return Check.warn(
                "draft",
                "speculative decoding off (llm.speculative.enabled = false)",
                "set llm.speculative.enabled = true: the shipped EAGLE 3.1 head writes the same tokens about twice"
                " as fast (BENCHMARKS.md)",
            )
        fix = self._draft_fix(head)
        if not head.is_dir():
            return Check.fail("draft", f"draft head {head} is missing", fix)
        try:
            manifest = verify(head)
        except ModelVerificationError as exc:
            return Check.fail("draft", str(exc), fix)
        found = f"{manifest.name} in {head}, manifest sha256 {manifest_sha256(head)}"
        try:
            if self.target is None:
                spec = parse_head_config(read_json(head / "config.json"), f"{head}/config.json")
                problems = None
            else:
                spec, problems = inspect_head(head, self.target)
        except ModelImportError as exc:
            return Check.fail("draft", f"{found}, but it cannot be read: {exc}", fix)
        s = spec.switches
        found += (
            f"; {s.variant} (fc_norm {_on_off(s.fc_norm)}, norm_output {_on_off(s.norm_output)},"
            f" norm_before_fc {_on_off(s.norm_before_fc)})"
        )
        if problems is None:
            return Check.warn(
                "draft",
                f"{found}; not checked against the model, which did not verify (see model)",
                "fix the model first, then run doctor again",
            )
        if problems:
            listing = "\n".join(f"  {p}" for p in problems)
            return Check.fail("draft", f"{found}; it does not fit the model {self.model_dir}:\n{listing}", fix)
        return Check.ok("draft", f"{found}; fits {self.model_name}")

    def _draft_fix(self, head: Path) -> str:
        if head == default_draft_dir(self.model_dir):
            return f"copy the shipped head there again: {prepare_fix(self.model_dir)}"
        return (
            f"import a head made for this model: {AS_AGENT} edge-agent draft import SRC --for {self.model_dir}"
            f" --out {head}"
        )


def _readable_manifest(directory: Path) -> Manifest | None:
    try:
        return read_manifest(directory)
    except ModelVerificationError:
        return None


def _is_default_model(manifest: Manifest) -> bool:
    """Prepared by `edge-agent model prepare` from the wheel (an imported model's source says "imported")."""
    return manifest.source.get("package") == SOURCE_PACKAGE


def check_compile(config: AgentConfig, environ: Mapping[str, str]) -> Check:
    """A compiled CPU engine needs its kernel cache writable and a C++ compiler; the engine refuses to start
    without the compiler, and without a writable cache it compiles in full (~100 s on 2 cores) at every start."""
    unused = _engine_unused(config)
    if unused is not None:
        return Check.ok("compile", unused)
    if config.llm.enforce_eager:
        return Check.ok("compile", "not needed: llm.enforce_eager = true (no torch.compile)")
    device = launcher.resolve_device(config.llm.device)
    if device != "cpu":
        return Check.ok("compile", f"device {device}: the C++ compiler and kernel cache checked here are a CPU's")
    cache = launcher.compile_cache_dir(config)
    compiler = launcher.cxx_compiler(environ)
    problems: list[str] = []
    fixes: list[str] = []
    unwritable = _unwritable(cache)
    if unwritable is not None:
        problems.append(unwritable)
        fixes.append(f"make {cache} writable by the agent's user, or set llm.compile_cache_dir")
    if compiler is None:
        problems.append(f"no C++ compiler ({environ.get('CXX') or 'g++'} on PATH): the engine refuses to start")
        fixes.append("apt-get install g++ (or set CXX), or set llm.enforce_eager = true")
    if problems:
        return Check.fail("compile", "; ".join(problems), "; ".join(fixes))
    return Check.ok("compile", f"torch.compile on cpu: kernel cache {cache} writable, C++ compiler {compiler}")


def _unwritable(directory: Path) -> str | None:
    """None when a file can be created in `directory`, or in its nearest existing parent (inductor creates the
    rest); else what went wrong."""
    existing = directory
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        return f"kernel cache {directory}: {existing} is not a directory"
    try:
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as exc:
        return f"kernel cache {directory}: cannot create a file in {existing} ({os.strerror(exc.errno or 0)})"
    return None
