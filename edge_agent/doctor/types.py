"""What every doctor check returns: one `Check` per line of the table and per object of `--json`."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Status = Literal["ok", "warn", "fail"]


class Check(BaseModel):
    """One finding: a stable id to filter on, ok / warn / fail, what was found, and for anything not ok the fix."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1, description='e.g. "model", "opcua.plc1", "security.mqtt_anonymous"')
    status: Status
    detail: str
    fix: str | None = None

    @model_validator(mode="after")
    def _fix_for_every_problem(self) -> Check:
        # A warning or failure without a fix leaves the operator where they started; an ok needs none.
        if self.status != "ok" and not self.fix:
            raise ValueError(f"check {self.id}: a {self.status} needs a fix")
        return self

    @classmethod
    def ok(cls, id: str, detail: str) -> Check:
        return cls(id=id, status="ok", detail=detail)

    @classmethod
    def warn(cls, id: str, detail: str, fix: str) -> Check:
        return cls(id=id, status="warn", detail=detail, fix=fix)

    @classmethod
    def fail(cls, id: str, detail: str, fix: str) -> Check:
        return cls(id=id, status="fail", detail=detail, fix=fix)


def worst(checks: list[Check]) -> Status:
    """The most serious status among `checks` ("ok" for none)."""
    order: dict[Status, int] = {"ok": 0, "warn": 1, "fail": 2}
    return max((c.status for c in checks), key=order.__getitem__, default="ok")
