"""Offline verification: a log directory (`verify_log`, log.py) or an export bundle (`verify_bundle`, bundle.py),
over one hash-chain scan (chain.py). Each returns a VerifyResult naming the first problem; neither raises on bad
data."""

from edge_agent.audit.verify.bundle import verify_bundle
from edge_agent.audit.verify.chain import ChainResult, Problem, VerifyResult, scan_chain
from edge_agent.audit.verify.log import check_checkpoint, key_at, verify_log

__all__ = [
    "ChainResult",
    "Problem",
    "VerifyResult",
    "check_checkpoint",
    "key_at",
    "scan_chain",
    "verify_bundle",
    "verify_log",
]
