"""The standard-tool recipes in docs/audit.md work on a real bundle, and fail on a tampered one."""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from edge_agent.audit import AuditLog
from edge_agent.audit.export import export_bundle
from tests.test_audit_bundle import build_state, export, pubkey

DOC = Path(__file__).resolve().parents[1] / "docs" / "audit.md"
ORIGIN = "edge-agent/doc-site"


def blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def block(lang: str, holding: str) -> str:
    """The first `lang` block of the doc that holds `holding`."""
    return next(b for b in blocks(lang) if holding in b)


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("doc")
    with AuditLog.open(root / "audit", ORIGIN, checkpoint_every_entries=8) as log:
        for i in range(20):
            log.append("ingest.batch", "mqtt", {"count": i, "note": "señal"})
        export_bundle(root / "audit", root / "bundle", reports_dir=None, log=log)
        key = log.verifier.key_string()
    return root / "bundle", key


def sh(script: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script], cwd=cwd, capture_output=True, text=True, timeout=60
    )


def test_python_inclusion_recipe_accepts_the_bundle(bundle: tuple[Path, str]) -> None:
    """Step 4's standard-library script verifies every entry against the signed root."""
    path, _ = bundle
    script = block("python", "root_from_proof")
    run = subprocess.run([sys.executable, "-c", script], cwd=path, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "every entry is in the signed tree of size 22"


def test_python_inclusion_recipe_rejects_an_altered_entry(bundle: tuple[Path, str], tmp_path: Path) -> None:
    """The same script fails when one entry's bytes change."""
    path, _ = bundle
    copy = tmp_path / "b"
    shutil.copytree(path, copy)
    data = (copy / "entries.jsonl").read_bytes().replace(b'"count":7', b'"count":8')
    (copy / "entries.jsonl").write_bytes(data)
    script = block("python", "root_from_proof")
    run = subprocess.run([sys.executable, "-c", script], cwd=copy, capture_output=True, text=True, timeout=60)
    assert run.returncode != 0


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")
def test_openssl_signature_recipe_verifies_the_checkpoint(bundle: tuple[Path, str], tmp_path: Path) -> None:
    """Step 2 with the real key: OpenSSL verifies the Ed25519 signature and both key hashes agree."""
    path, key = bundle
    script = block("sh", "openssl pkeyutl")
    script = re.sub(r"KEY='[^']*'", f"KEY='{key}'", script)
    shutil.copy(path / "checkpoint", tmp_path / "checkpoint")
    run = sh(script, tmp_path)
    assert run.returncode == 0, run.stderr
    out = run.stdout.split()
    assert out[:3] == ["Signature", "Verified", "Successfully"]
    assert out[3] == out[4] == key.split("+")[1]


def test_sed_entry_hash_and_leaf_recipes_match(bundle: tuple[Path, str]) -> None:
    """Steps 3 and 4: sed | sha256sum gives the entry_hash; 0x00 ‖ line gives the leaf hash in inclusion.jsonl."""
    path, _ = bundle
    entry_recipe = next(b for b in blocks("sh") if "sed 's/" in b)
    leaf_recipe = next(b for b in blocks("sh") if "printf '\\000'" in b)
    run = sh(entry_recipe + leaf_recipe, path)
    assert run.returncode == 0, run.stderr
    entry_digest, leaf_digest = (line.split()[0] for line in run.stdout.splitlines())
    line5 = (path / "entries.jsonl").read_text(encoding="utf-8").splitlines()[4]
    assert f'"entry_hash":"{entry_digest}"' in line5
    assert f'"leaf_hash":"{leaf_digest}"' in (path / "inclusion.jsonl").read_text().splitlines()[4]


def test_root_recipe_recomputes_the_signed_root(bundle: tuple[Path, str]) -> None:
    """Step 5 (whole log exported): the one-line RFC 6962 root equals line 3 of the checkpoint."""
    path, _ = bundle
    recipe = next(b for b in blocks("sh") if "def mth" in b)
    run = sh(recipe, path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == (path / "checkpoint").read_text().split("\n")[2]


@pytest.fixture(scope="module")
def report_bundle(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A bundle with an approved and a draft report (tests/test_audit_bundle.py's state), and its key."""
    state = build_state(tmp_path_factory.mktemp("state"))
    root = tmp_path_factory.mktemp("bundle") / "b"
    export(state, root)
    return root, pubkey(state).key_string()


def run_python(script: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", script], cwd=cwd, capture_output=True, text=True, timeout=60)


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")
def test_openssl_manifest_recipe_verifies_the_signature_and_hash(
    report_bundle: tuple[Path, str], tmp_path: Path
) -> None:
    """Step 7 after step 2's key set-up: OpenSSL verifies manifest.sig, and its third line is manifest.json's hash."""
    path, key = report_bundle
    shutil.copytree(path, tmp_path / "b")
    setup = re.sub(r"KEY='[^']*'", f"KEY='{key}'", block("sh", "openssl pkeyutl"))
    run = sh(setup + block("sh", "manifest.sig"), tmp_path / "b")
    assert run.returncode == 0, run.stderr
    out = run.stdout.split()
    assert out[5:8] == ["Signature", "Verified", "Successfully"]
    assert out[8] == out[9] == hashlib.sha256((path / "manifest.json").read_bytes()).hexdigest()


def test_python_manifest_recipe_accepts_the_bundle(report_bundle: tuple[Path, str]) -> None:
    """Step 7's script finds exactly the listed files, unchanged, for the bundle's checkpoint."""
    path, _ = report_bundle
    run = run_python(block("python", "manifest.json"), path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "the bundle holds exactly the 15 files the signed manifest lists"


def test_python_manifest_recipe_rejects_an_added_file(report_bundle: tuple[Path, str], tmp_path: Path) -> None:
    """The same script fails on a file the manifest does not list."""
    path, _ = report_bundle
    shutil.copytree(path, tmp_path / "b")
    (tmp_path / "b" / "extra.txt").write_text("x\n")
    run = run_python(block("python", "manifest.json"), tmp_path / "b")
    assert run.returncode != 0
    assert "('added or removed', ['extra.txt'])" in run.stderr


def test_python_report_recipe_accepts_the_bundle(report_bundle: tuple[Path, str]) -> None:
    """Step 8's script finds both reports agreeing with their entries."""
    path, _ = report_bundle
    run = run_python(block("python", "renderings_sha256"), path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [
        "rpt-1 approved agrees with entries [27, 29]",
        "rpt-2 draft agrees with entries [28]",
    ]


def test_python_report_recipe_rejects_the_assessors_case(report_bundle: tuple[Path, str], tmp_path: Path) -> None:
    """A draft edited to "approved" fails step 8, naming the report."""
    path, _ = report_bundle
    shutil.copytree(path, tmp_path / "b")
    report = tmp_path / "b" / "reports" / "rpt-2.json"
    report.write_text(report.read_text(encoding="utf-8").replace('"status": "draft"', '"status": "approved"'))
    run = run_python(block("python", "renderings_sha256"), tmp_path / "b")
    assert run.returncode != 0
    assert "('rpt-2', 'approved', 'without its decision entry')" in run.stderr


@pytest.fixture(scope="module")
def evidence_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A bundle with evidence: five reports over simulated records (tests/test_audit_recompute.py)."""
    from edge_agent.config import load_config
    from tests.test_audit_recompute import CONFIG, export, make_reports

    root = tmp_path_factory.mktemp("evidence")
    (root / "edge-agent.toml").write_text(CONFIG.format(state=root / "state"), encoding="utf-8")
    config = load_config(root / "edge-agent.toml")
    make_reports(root / "state", config)
    assert export(config, root / "bundle").without_evidence == {}
    return root / "bundle"


def test_python_recompute_recipe_agrees_with_the_facts(evidence_bundle: Path) -> None:
    """The standard-library recipe recomputes downtime, alarm count, tag statistics and availability as the facts."""
    script = block("python", "availabilities: equal")
    run = subprocess.run(
        [sys.executable, "-c", script], cwd=evidence_bundle, capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ["rpt-shift downtime, alarm count, 10 tag statistics and 1 availabilities: equal"]


def test_python_recompute_recipe_rejects_an_edited_record(evidence_bundle: Path, tmp_path: Path) -> None:
    """The same recipe fails once a sample in the window is raised far above every other."""
    copy = tmp_path / "b"
    shutil.copytree(evidence_bundle, copy)
    lines = (copy / "records.jsonl").read_bytes().splitlines()
    index = next(i for i, line in enumerate(lines) if b'"P-101.vibration_mm_s"' in line and b"2026-11-29T13" in line)
    lines[index] = re.sub(rb'"value":[-0-9.e+]+', b'"value":99.5', lines[index])
    (copy / "records.jsonl").write_bytes(b"".join(line + b"\n" for line in lines))
    script = block("python", "availabilities: equal")
    run = subprocess.run([sys.executable, "-c", script], cwd=copy, capture_output=True, text=True, timeout=60)
    assert run.returncode == 1
    assert "AssertionError: ('rpt-shift', 'F" in run.stderr


@pytest.mark.slow
def test_size_section_quotes_what_its_command_measures() -> None:
    """The "Size" section names its command, and the day's row is what `python -m tests.bundle_size` prints (20 s;
    the month's row is the same command with --days 30, 12 minutes)."""
    size = DOC.read_text(encoding="utf-8").split("### Size\n", 1)[1].split("\n## ", 1)[0]
    assert "`.venv/bin/python -m tests.bundle_size --days 30`" in size
    run = subprocess.run(
        [sys.executable, "-m", "tests.bundle_size"], cwd=DOC.parents[1], capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, run.stderr
    unpacked, xz, gz = (
        re.search(rf"^{label}: ([\d.]+ MB)", run.stdout, re.M) for label in ("unpacked", r"\.tar\.xz", r"\.tar\.gz")
    )
    assert unpacked and xz and gz, run.stdout
    assert f"| a day (3 reports; `--days 1`) | {unpacked[1]} " in size
    assert f"| **{xz[1]}** | {gz[1]} |\n| a month" in size
