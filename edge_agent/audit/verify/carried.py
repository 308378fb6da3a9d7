"""The entries before the window a bundle carries (config in force, enrolments), checked against the signed
manifest's seqs and the checkpoint (edge_agent/audit/carried.py); bundle.py uses them for the approvals check."""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

from pydantic import TypeAdapter, ValidationError

from edge_agent.audit import bundle
from edge_agent.audit.approvals import ENROLLED_EVENT
from edge_agent.audit.bundle import BundleError
from edge_agent.audit.carried import CarriedEntry, CarriedError, check_carried
from edge_agent.audit.checkpoint import Checkpoint
from edge_agent.audit.manifest import BundleManifest

_T = TypeVar("_T")
_ONE, _MANY = TypeAdapter(CarriedEntry), TypeAdapter(list[CarriedEntry])


def _carried_config(root: Path, manifest: BundleManifest, checkpoint: Checkpoint) -> list[tuple[int, bytes]]:
    """The config.loaded entry in force at the window's start that the bundle carries (carried.py), at the seq the
    signed manifest names, with that seq; none when it names none."""
    path = root / bundle.CONFIG_IN_FORCE
    seq = manifest.config_in_force
    if seq is None:
        if path.exists():
            raise BundleError(f"{bundle.CONFIG_IN_FORCE} is present but {bundle.MANIFEST} names no entry")
        return []
    where = f"{bundle.CONFIG_IN_FORCE} (entry {seq})"
    if not path.exists():
        raise CarriedError(seq, f"{bundle.MANIFEST} names the config.loaded entry {seq}, but {where} is missing")
    record = _read_carried(path, _ONE)
    line = check_carried(
        record, seq=seq, event="config.loaded", first_seq=manifest.first_seq, checkpoint=checkpoint, where=where
    )
    return [(seq, line)]


def _carried_enrolments(root: Path, manifest: BundleManifest, checkpoint: Checkpoint) -> list[tuple[int, bytes]]:
    """Every console.enrolled entry before the window that the bundle carries (carried.py), one for each seq the
    signed manifest names, with its seq; none when it names none."""
    path = root / bundle.ENROLMENTS_IN_FORCE
    seqs = manifest.enrolments_in_force
    if not seqs:
        if path.exists():
            raise BundleError(f"{bundle.ENROLMENTS_IN_FORCE} is present but {bundle.MANIFEST} names no entry")
        return []
    if not path.exists():
        raise CarriedError(
            seqs[0], f"{bundle.MANIFEST} names the console.enrolled entries {seqs}, but {path.name} is missing"
        )
    records = _read_carried(path, _MANY)
    if len(records) != len(seqs):
        raise CarriedError(seqs[0], f"{path.name} holds {len(records)} entries, {bundle.MANIFEST} names {len(seqs)}")
    return [
        (
            seq,
            check_carried(
                record,
                seq=seq,
                event=ENROLLED_EVENT,
                first_seq=manifest.first_seq,
                checkpoint=checkpoint,
                where=f"{path.name} (entry {seq})",
            ),
        )
        for record, seq in zip(records, seqs, strict=True)
    ]


def _read_carried(path: Path, shape: TypeAdapter[_T]) -> _T:
    try:
        return shape.validate_json(path.read_bytes())
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise BundleError(f"{path.name} is malformed: {where}: {err['msg']}") from exc
