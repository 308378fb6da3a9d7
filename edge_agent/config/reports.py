"""Report service: topics, queue, authorisation, shifts and the limits on what a prompt may carry."""

from __future__ import annotations

from pydantic import Field, field_validator, model_validator

from edge_agent.config.base import Section
from edge_agent.config.kpi import KpiConfig
from edge_agent.signing.approver_key import parse_public_key


class ShiftConfig(Section):
    name: str = Field(min_length=1)
    start: str = Field(pattern=r"^\d{2}:\d{2}$", description="local time HH:MM in site.timezone")
    end: str = Field(pattern=r"^\d{2}:\d{2}$", description="HH:MM; an end at or before start crosses midnight")


class ApproverKeyConfig(Section):
    """One approver's public key, the older form of `[[identities]]` approver_keys (edge_agent/config/identities.py):
    it joins the identity of its name."""

    name: str = Field(min_length=1, max_length=256, description="the approver, as listed in reports.approvers")
    key: str = Field(description="Ed25519: `ssh-ed25519 AAAA…`, a PEM PUBLIC KEY, or 32 bytes in base64/hex")

    @field_validator("key")
    @classmethod
    def _ed25519(cls, value: str) -> str:
        parse_public_key(value)  # ValueError names what is wrong with it
        return value


class ReportsConfig(Section):
    enabled: bool = True
    # None → edge/<site>/reports/request; the service subscribes to <topic>/# and reads the level after it as the
    # authenticated MQTT user (the broker ACL `pattern write .../request/%u` makes that level the user name).
    request_topic: str | None = None
    # None → edge/<site>/reports/signoff (same rule: <topic>/<user>).
    signoff_topic: str | None = None
    # None → edge/<site>/reports/reply. Replies go only to <reply_topic>/<user>[/...] (`anonymous` for requests
    # without a user level); any other reply topic gets no reply (docs/reports.md, "Reply topics").
    reply_topic: str | None = Field(None, pattern=r"^[^$/+#\x00][^/+#\x00]*(/[^/+#\x00]+)*$")
    queue_max: int = Field(8, ge=1)
    # None → half of queue_max, rounded up: no one requester holds more than half the queue (with 1, the one slot).
    queue_max_per_requester: int | None = Field(None, ge=1)
    concurrency: int = Field(1, ge=1)
    rate_limit_per_min: int = Field(6, ge=1, description="per requesting client; repeats and joins count too")
    # Per broker user: beyond this many invalid requests and refused sign-offs within throttle_window_s, that user's
    # requests and sign-offs are dropped unread until the window ends (one log line and audit entry per window, and
    # one `report.signoff_refused` for the window's dropped sign-offs). 10 in 600 s: a person fixing a typo or a
    # clock needs a handful; each refused sign-off is an audit entry, so a flood adds at most 12 entries per user
    # per 10 minutes.
    throttle_invalid_max: int = Field(10, ge=1)
    throttle_window_s: float = Field(600.0, gt=0, le=86400)
    # 4: a requester and a retry or two; each target gets every reply, so more only amplifies one request.
    max_reply_targets: int = Field(4, ge=1)
    # Empty list = anyone authenticated on the broker may request; sign-off always needs a listed user.
    requesters: list[str] = Field(default_factory=list)
    approvers: list[str] = Field(default_factory=list)
    # True: the identity behind a request may not approve its report, and a report requested by no identity
    # (anonymous, the agent's own broker user) cannot be approved (MQTT and `edge-agent report approve`).
    four_eyes: bool = True
    # Approver keys by name; `[[identities]]` approver_keys is the documented place. Each joins the identity of its
    # name: a sign-off counts only when signed by a key of its approver's identity.
    approver_keys: list[ApproverKeyConfig] = Field(default_factory=list)
    # True: MQTT and local sign-offs without a signature are accepted as before (the approver is the broker user
    # of the topic level): a security warning (`reports_unsigned_signoff`), recorded in every audit bundle.
    allow_unsigned_signoff: bool = False
    # A signed sign-off older than this is refused as stale: 600 s is time to review, sign and publish from a
    # workstation, and a captured sign-off cannot be held back for longer.
    signoff_max_age_s: float = Field(600.0, gt=0)
    # ...and one signed this far ahead of the agent's clock: two NTP-synced hosts agree to well under a second;
    # 120 s tolerates a workstation without NTP.
    signoff_max_skew_s: float = Field(120.0, ge=0)
    default_language: str = Field("es", pattern=r"^(es|en|pt)$")
    shifts: list[ShiftConfig] = Field(default_factory=list)
    # Per narrative section. 160 tokens: four sentences with room to spare; a section that runs into the limit is cut
    # at its last full sentence, and more only lengthens the wait on a CPU box.
    narrative_max_tokens: int = Field(160, ge=16)
    # 280 characters: a long operator note; anything longer is cut so untrusted text cannot crowd out the facts.
    note_max_chars: int = Field(280, ge=16)
    # Windows larger than these are refused (`failed`, naming both) before anything is loaded: a report holds its
    # window's records in memory and computes facts over all of them. Measured on 2 cores: 100 000 tag records take
    # 182 MB loaded (~1.8 KB each), 4.2 s to load and 1.2 s for the facts; 250 000 is ~450 MB and ~15 s, what a
    # 4 GB edge box can spare beside the engine. The demo plant (13 tags every 10 s) writes ~37 000 a shift, ~112 000
    # a day: two days fit, a month does not — raise it on a bigger box.
    max_window_rows: int = Field(250_000, ge=1)
    # 64 MiB of stored values and raw payloads: long log lines and MES documents grow 2-3x as Python objects.
    max_window_bytes: int = Field(64 * 1024 * 1024, ge=1)
    # The newest 12 notes and 24 facts of each list kind are listed, the rest counted: the notes prompt stays under
    # ~1,500 tokens (every listed note is shown to the model), every prompt well inside a 4096-token context.
    notes_max: int = Field(12, ge=0)
    list_facts_max: int = Field(24, ge=1)
    # Drafts and rejected reports older than this many days are deleted by the agent's hourly retention pass and by
    # `edge-agent store retention` (row, file, record holds); approved reports never are. 0 (the default) keeps
    # every report: what a draft is worth after its shift is the plant's call (docs/deployment.md, "Disk").
    retention_days: float = Field(0.0, ge=0)
    # The plant KPIs' inputs (OEE, MTBF/MTTR, alarm performance): docs/kpis.md.
    kpi: KpiConfig = Field(default_factory=KpiConfig)

    @model_validator(mode="after")
    def _keys_belong_to_approvers(self) -> ReportsConfig:
        strangers = sorted({k.name for k in self.approver_keys} - set(self.approvers))
        if strangers:
            raise ValueError(f"reports.approver_keys names {strangers}, who are not in reports.approvers")
        return self

    @property
    def requester_share(self) -> int:
        """Waiting requests one requester may have (`queue_max_per_requester`, by default half the queue)."""
        return self.queue_max_per_requester or -(-self.queue_max // 2)
