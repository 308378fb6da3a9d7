"""The log's origin: a globally unique default for a new log, the recorded one kept, an explicit one winning."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from edge_agent.audit import AuditLog
from edge_agent.audit.component import origin_for, witness_targets
from edge_agent.audit.errors import AuditKeyError
from edge_agent.audit.files import KEYS, SIGNING_KEY
from edge_agent.audit.origin import default_origin, log_origin, recorded_origin
from edge_agent.config import AgentConfig
from edge_agent.signing import check_name

SITE_IDS = st.from_regex(r"^[A-Za-z0-9_.-]{1,40}$", fullmatch=True)


def config(tmp_path: Path, origin: str | None = None) -> AgentConfig:
    audit = {"origin": origin} if origin is not None else {}
    paths = {"state_dir": str(tmp_path)}
    return AgentConfig.model_validate({"site": {"id": "planta-1"}, "paths": paths, "audit": audit})


class TestDefaultOrigin:
    def test_known_answer(self) -> None:
        """32 zero bytes: `python3 -c "import hashlib; print(hashlib.sha256(bytes(32)).hexdigest()[:16])"`."""
        assert default_origin("planta-1", bytes(32)) == "edge-agent/planta-1/66687aadf862bd77"

    def test_two_plants_with_one_site_id_get_two_origins(self, tmp_path: Path) -> None:
        """Two customers' "planta-1" logs: the witness keeps two states, not one."""
        first = origin_for(config(tmp_path / "a"))
        second = origin_for(config(tmp_path / "b"))
        assert first != second
        assert first.startswith("edge-agent/planta-1/") and second.startswith("edge-agent/planta-1/")

    def test_a_new_logs_origin_names_its_own_key(self, tmp_path: Path) -> None:
        """The key made for the origin is the one the log opens with, recorded in keys.txt under that name."""
        cfg = config(tmp_path)
        origin = origin_for(cfg)
        with AuditLog.open(cfg.paths.audit_dir, origin) as log:
            assert origin == default_origin("planta-1", log.verifier.public)
        assert (cfg.paths.audit_dir / KEYS).read_text().startswith(origin + "+")
        assert origin_for(cfg) == origin  # read back, not made again

    @given(SITE_IDS, st.binary(min_size=32, max_size=32))
    def test_every_site_id_gives_a_valid_key_name(self, site_id: str, public: bytes) -> None:
        """Any site id the config accepts gives a C2SP key name ending in the key's 16 hex digits."""
        origin = default_origin(site_id, public)
        assert check_name(origin) == origin
        assert origin.rsplit("/", 1) == [f"edge-agent/{site_id}", hashlib.sha256(public).hexdigest()[:16]]


class TestRecordedOrigin:
    def test_an_existing_log_keeps_its_origin_on_upgrade(self, tmp_path: Path) -> None:
        """A log made as edge-agent/<site id> (before the key's hash was in the default) reopens as that."""
        cfg = config(tmp_path)
        with AuditLog.open(cfg.paths.audit_dir, "edge-agent/planta-1") as log:
            log.append("agent.start", "agent", {})
        assert origin_for(cfg) == "edge-agent/planta-1"
        with AuditLog.open(cfg.paths.audit_dir, origin_for(cfg)) as log:
            assert log.size == 2

    def test_a_key_without_keys_txt_is_read_back(self, tmp_path: Path) -> None:
        """A crash between writing signing.key and keys.txt: the key's name is the origin."""
        directory = tmp_path / "audit"
        made = log_origin(directory, "planta-1", None)
        assert not (directory / KEYS).exists()
        assert recorded_origin(directory) == made
        assert log_origin(directory, "planta-1", None) == made

    def test_no_log_records_nothing_and_makes_no_key(self, tmp_path: Path) -> None:
        assert recorded_origin(tmp_path / "audit") is None
        assert not (tmp_path / "audit").exists()

    def test_an_explicit_origin_wins(self, tmp_path: Path) -> None:
        """`[audit] origin` is used as it is, and makes no key before the log's open."""
        cfg = config(tmp_path, origin="acme.example/planta-1")
        assert origin_for(cfg) == "acme.example/planta-1"
        assert not (cfg.paths.audit_dir / SIGNING_KEY).exists()
        assert witness_targets(cfg) == []

    def test_an_explicit_origin_other_than_the_logs_is_refused_on_open(self, tmp_path: Path) -> None:
        """The origin cannot change once the log has a key."""
        with AuditLog.open(tmp_path / "audit", origin_for(config(tmp_path))):
            pass
        cfg = config(tmp_path, origin="acme.example/planta-1")
        with pytest.raises(AuditKeyError, match="the log's origin is 'acme.example/planta-1'"):
            AuditLog.open(cfg.paths.audit_dir, origin_for(cfg))
