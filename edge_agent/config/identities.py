"""One identity per person: `[[identities]]` ties a person's name to their broker user and their approver keys.

Four-eyes (`reports.four_eyes`) compares identities: the requester's is the identity of the broker user that sent the
request, the approver's the identity whose key signed the sign-off (unsigned: whose broker user sent it). A broker
user no `[[identities]]` entry names is a person of that name, as `reports.approvers` has always read it; a request
from no broker user (anonymous) or from the agent's own (`mqtt.username`) is from no identity.

`[[reports.approver_keys]]` (name, key) still loads: each key joins the identity of that name, or one of its own
without a broker user.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import AfterValidator, Field, ValidationInfo, field_validator

from edge_agent.config.base import Section
from edge_agent.signing.approver_key import ApproverKey, fingerprint, parse_public_key

if TYPE_CHECKING:
    from edge_agent.config import AgentConfig


class IdentityConfig(Section):
    """One person: `name` is what a signed statement's `by` and `reports.approvers` say."""

    name: str = Field(min_length=1, max_length=256)
    # The MQTT user this person connects as (the level after the request and sign-off topics); None: signs only.
    broker_user: str | None = Field(None, min_length=1, max_length=256, pattern=r"^[^/+#\x00]+$")
    # Ed25519: `ssh-ed25519 AAAA…`, a PEM PUBLIC KEY, or 32 bytes in base64/hex; one per device (a laptop, a token).
    approver_keys: list[str] = Field(default_factory=list)

    @field_validator("approver_keys")
    @classmethod
    def _ed25519(cls, keys: list[str]) -> list[str]:
        for i, key in enumerate(keys):
            try:
                parse_public_key(key)
            except ValueError as exc:
                raise ValueError(f"approver_keys[{i}]: {exc}") from exc
        return keys


@dataclass(frozen=True)
class Identity:
    name: str
    broker_user: str | None
    keys: tuple[ApproverKey, ...]

    def as_audit(self) -> dict[str, Any]:
        """The `config.loaded` entry's form (read by `audit verify-bundle`)."""
        return {"name": self.name, "broker_user": self.broker_user, "approver_keys": [k.openssh for k in self.keys]}


@dataclass(frozen=True)
class IdentityTable:
    identities: tuple[Identity, ...]
    # The agent's own broker user (mqtt.username): whoever holds its credentials, so no one person.
    agent_user: str | None = None

    @classmethod
    def build(
        cls, identities: Sequence[IdentityConfig], legacy_keys: Iterable[tuple[str, str]], agent_user: str | None
    ) -> IdentityTable:
        """`[[identities]]` with the `(name, key)` pairs of `[[reports.approver_keys]]` merged in by name."""
        keys: dict[str, list[ApproverKey]] = {i.name: [] for i in identities}
        users: dict[str, str | None] = {i.name: i.broker_user for i in identities}
        for identity in identities:
            keys[identity.name] += [ApproverKey(identity.name, parse_public_key(k)) for k in identity.approver_keys]
        for name, key in legacy_keys:
            keys.setdefault(name, []).append(ApproverKey(name, parse_public_key(key)))
            users.setdefault(name, None)
        # A key listed twice for one person (in both tables, say) is one key.
        unique = {name: tuple({k.raw: k for k in found}.values()) for name, found in keys.items()}
        table = tuple(Identity(name, users[name], found) for name, found in unique.items())
        return cls(table, agent_user)

    def keys(self) -> list[ApproverKey]:
        return [k for identity in self.identities for k in identity.keys]

    def of_broker_user(self, user: str | None) -> str | None:
        """The identity behind a broker user; None for none: anonymous, or the agent's own user."""
        if not user or user == self.agent_user:
            return None
        return next((i.name for i in self.identities if i.broker_user == user), user)

    def broker_user_of(self, name: str) -> str | None:
        return next((i.broker_user for i in self.identities if i.name == name), None)

    def as_audit(self) -> list[dict[str, Any]]:
        return [identity.as_audit() for identity in self.identities]


# No table: every broker user is a person of that name, no user is the agent's (library callers and tests).
NO_IDENTITIES = IdentityTable(())


def _unique(identities: list[IdentityConfig], info: ValidationInfo) -> list[IdentityConfig]:
    """Names, broker users and keys each belong to one identity; the agent's own broker user to none. Declared after
    `mqtt` and `reports` in AgentConfig, so both are in `info.data` when they validated."""
    problems: list[str] = []
    for what, values in (
        ("name", [i.name for i in identities]),
        ("broker_user", [i.broker_user for i in identities if i.broker_user is not None]),
    ):
        twice = sorted(v for v, n in Counter(values).items() if n > 1)
        if twice:
            problems.append(f"{what} {twice} is given to more than one identity")
    mqtt, reports = info.data.get("mqtt"), info.data.get("reports")
    agent_user = getattr(mqtt, "username", None)
    if agent_user is not None and agent_user in {i.broker_user for i in identities}:
        problems.append(
            f"broker_user {agent_user!r} is the agent's own (mqtt.username): whoever holds its credentials is no one"
            " person, so it is no identity's"
        )
    legacy = [(k.name, k.key) for k in reports.approver_keys] if reports is not None else []
    broker_users = {i.broker_user: i.name for i in identities if i.broker_user is not None}
    for name, _ in legacy:
        if broker_users.get(name, name) != name:
            problems.append(
                f"reports.approver_keys names {name!r}, the broker user of identity {broker_users[name]!r}:"
                " put the key in that identity's approver_keys"
            )
    owners: dict[bytes, set[str]] = {}
    for name, key in [(i.name, k) for i in identities for k in i.approver_keys] + legacy:
        owners.setdefault(parse_public_key(key), set()).add(name)
    shared = sorted(f"{fingerprint(raw)} ({', '.join(sorted(n))})" for raw, n in owners.items() if len(n) > 1)
    if shared:
        problems.append(f"a key belongs to one identity; these are registered for several: {shared}")
    if problems:
        raise ValueError("; ".join(problems))
    return identities


# The `[[identities]]` table as AgentConfig declares it.
Identities = Annotated[list[IdentityConfig], AfterValidator(_unique)]


def identity_table(config: AgentConfig) -> IdentityTable:
    """The table of an AgentConfig: `[[identities]]`, the legacy `[[reports.approver_keys]]`, the agent's user."""
    legacy = [(k.name, k.key) for k in config.reports.approver_keys]
    return IdentityTable.build(config.identities, legacy, config.mqtt.username)
