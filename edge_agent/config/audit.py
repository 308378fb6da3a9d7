"""Audit trail: checkpoint cadence, origin and the witnesses that cosign its checkpoints."""

from __future__ import annotations

import base64
import binascii
import hashlib

from pydantic import Field, field_validator, model_validator

from edge_agent.config.base import Section


class WitnessConfig(Section):
    """A C2SP tlog-witness: its submission URL prefix and its cosignature/v1 public key (name+id+base64, type 0x04)."""

    url: str = Field(pattern=r"^https?://[^\s]+$")
    key: str

    @field_validator("key")
    @classmethod
    def _cosigner_key(cls, value: str) -> str:
        try:
            name, id_hex, encoded = value.strip().split("+", 2)
            raw = base64.b64decode(encoded, validate=True)
            claimed = int(id_hex, 16)
        except (ValueError, binascii.Error) as exc:
            raise ValueError(f"witness key {value!r} is not name+id+base64") from exc
        if not name or any(c.isspace() for c in name) or len(raw) != 33 or raw[0] != 0x04:
            raise ValueError(f"witness key {value!r} is not an Ed25519 cosignature/v1 key (type 0x04)")
        computed = int.from_bytes(hashlib.sha256(name.encode() + b"\n" + raw).digest()[:4], "big")
        if computed != claimed:
            raise ValueError(f"witness key {value!r}: key ID {id_hex} != computed {computed:08x}")
        return value.strip()


class AuditConfig(Section):
    # None → the log's recorded origin, or for a new log "edge-agent/<site id>/<16 hex of SHA-256 of its public key>",
    # globally unique so one witness can serve many plants (audit/origin.py; docs/audit.md, "What a witness operator
    # registers"). Set before the first start: it cannot change once the log has a key.
    # The origin is the checkpoint's first line and the signing key's name, so it
    # follows C2SP note key-name rules: no spaces, no "+".
    origin: str | None = Field(None, min_length=1, pattern=r"^[^\s+]+$")
    # 256 entries: a checkpoint costs three fsyncs (~10 ms on a slow disk), so signing every 256 appends keeps that
    # under 5 % of append time even at fsync-per-entry rates, while bounding the unsigned tail.
    checkpoint_every_entries: int = Field(256, ge=1)
    # 300 s: a quiet plant still gets its newest entries signed within five minutes.
    checkpoint_every_s: float = Field(300.0, gt=0)
    # Witnesses that cosign every checkpoint (docs/audit.md, "Rollback and witnesses"); none by default.
    witnesses: list[WitnessConfig] = Field(default_factory=list)
    # True for validated installations: signing waits at start until a witness has answered (the retained MQTT
    # checkpoint alone is not enough: anyone with the broker's credentials can delete it), and qualify's IQ fails
    # without a reachable witness. False by default: a plant without a witness still starts.
    require_witness: bool = False

    @model_validator(mode="after")
    def _witness_to_require(self) -> AuditConfig:
        if self.require_witness and not self.witnesses:
            raise ValueError("audit.require_witness = true needs at least one [[audit.witnesses]]")
        return self
