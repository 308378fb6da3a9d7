"""Signing: the keys, signatures and signed statements the agent's trust rests on, below the config and the audit
log that use them. Pure apart from key files; imports only `edge_agent.base`.

* `keys`: C2SP signed-note Ed25519 keys (the audit log's signer and verifier keys, a witness's key);
* `note`: a signed-note signature line; `cosignature`: C2SP tlog-cosignature (witnesses);
* `approval`: signed sign-offs (`statement`, `sshsig`, `approver_key`), re-checkable offline.
"""

from edge_agent.signing.approval import VerifiedApproval, sign, verify_approval, verify_recorded_approval
from edge_agent.signing.approver_key import (
    ApproverKey,
    Format,
    fingerprint,
    load_signing_key,
    parse_public_key,
    public_raw,
)
from edge_agent.signing.cosignature import CosignatureError, Cosigner, CosignerKey, cosigned_by, require_cosignatures
from edge_agent.signing.errors import ApprovalError, SigningError
from edge_agent.signing.keys import Signer, SigningKeyError, Verifier, check_name, fsync_dir, write_durably
from edge_agent.signing.note import Note, NoteSignature
from edge_agent.signing.passkey import PasskeyKey, statement_challenge, verify_passkey
from edge_agent.signing.sshsig import NAMESPACE, sshsig_check, sshsig_sign
from edge_agent.signing.statement import STATEMENT_TYPE, Statement, format_time, parse_statement, statement_bytes

__all__ = [
    "NAMESPACE",
    "STATEMENT_TYPE",
    "ApprovalError",
    "ApproverKey",
    "CosignatureError",
    "Cosigner",
    "CosignerKey",
    "Format",
    "Note",
    "NoteSignature",
    "PasskeyKey",
    "Signer",
    "SigningError",
    "SigningKeyError",
    "Statement",
    "VerifiedApproval",
    "Verifier",
    "check_name",
    "cosigned_by",
    "fingerprint",
    "format_time",
    "fsync_dir",
    "load_signing_key",
    "parse_public_key",
    "parse_statement",
    "public_raw",
    "require_cosignatures",
    "sign",
    "statement_challenge",
    "sshsig_check",
    "sshsig_sign",
    "statement_bytes",
    "verify_approval",
    "verify_passkey",
    "verify_recorded_approval",
    "write_durably",
]
