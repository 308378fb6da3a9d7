"""The standard-tool recipes in docs/audit.md work on a real bundle, and fail on a tampered one."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from edge_agent.audit import AuditLog
from edge_agent.audit.export import export_bundle

DOC = Path(__file__).resolve().parents[1] / "docs" / "audit.md"
ORIGIN = "edge-agent/doc-site"


def blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


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
    return subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=cwd, capture_output=True, text=True, timeout=60)


def test_python_inclusion_recipe_accepts_the_bundle(bundle: tuple[Path, str]) -> None:
    """Step 4's standard-library script verifies every entry against the signed root."""
    path, _ = bundle
    (script,) = blocks("python")
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
    (script,) = blocks("python")
    run = subprocess.run([sys.executable, "-c", script], cwd=copy, capture_output=True, text=True, timeout=60)
    assert run.returncode != 0


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")
def test_openssl_signature_recipe_verifies_the_checkpoint(bundle: tuple[Path, str], tmp_path: Path) -> None:
    """Step 2 with the real key: OpenSSL verifies the Ed25519 signature and both key hashes agree."""
    path, key = bundle
    script = next(b for b in blocks("sh") if "openssl pkeyutl" in b)
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
