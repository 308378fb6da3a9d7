"""The hostile stream's bad inputs (`hostile`): seeded garbage, class by class, for the ingest routes (JSON and plain
text), the report request topic and the sign-off topic. Each function returns (class name, payload) pairs."""

from __future__ import annotations

import json
import random


def _deep(depth: int, rng: random.Random) -> bytes:
    if rng.random() < 0.5:
        return b"[" * depth + b"]" * depth
    return b'{"a":' * depth + b"1" + b"}" * depth


def _time_text(rng: random.Random) -> str:
    return rng.choice(
        [
            "0001-01-01T00:00:00+01:00",  # the assessor's: converting it to UTC leaves the datetime range
            "9999-12-31T23:59:59-01:00",
            "0001-01-01T00:00:00",
            "9999-12-31T23:59:59.999999Z",
            "1900-01-01T00:00:00Z",
            f"{rng.randint(2200, 9999)}-01-01T00:00:00Z",
            f"{rng.randint(1, 1969):04d}-06-15T12:00:00+14:00",
        ]
    )


def bad_json_payloads(rng: random.Random, max_payload_bytes: int) -> list[tuple[str, bytes]]:
    """(class, payload) pairs a JSON route must quarantine, one per class, drawn afresh from `rng` on every call."""
    event = {"id": f"bad-{rng.getrandbits(32):08x}", "asset": "P-101"}
    noise = bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 512)))
    return [
        ("time_out_of_range", json.dumps(event | {"ts": _time_text(rng)}).encode()),
        (
            "non_finite_number",
            rng.choice(
                [
                    b'{"id":"n","v":1e400}',
                    b'{"id":"n","v":-1e999}',
                    b'{"id":"n","v":NaN}',
                    b'{"id":"n","v":Infinity}',
                    b'{"id":"n","v":' + b"9" * 400 + b"}",
                ]
            ),
        ),
        ("integer_out_of_range", json.dumps(event | {"v": rng.choice([2**63, -(2**63) - 1, 10**30])}).encode()),
        ("deep_nesting", _deep(rng.choice([64, 1_000, 100_000]), rng)),
        ("lone_surrogate", rng.choice([b'{"id":"s","text":"\\ud800"}', b'{"\\udfff":1}', b'{"id":"\\ud83d"}'])),
        ("huge_string", json.dumps(event | {"text": "a" * min(max_payload_bytes - 100, 200_000)}).encode()),
        ("invalid_utf8", b'{"id":"u","text":"\xff\xfe\xc3\x28"}'),
        ("invalid_json", rng.choice([b'{"id":', b"", b"   ", b"{'id': 1}", b"[1,2", b'{"a":1}}'])),
        (
            "wrong_types",
            rng.choice(
                [
                    b"[]",
                    b"42",
                    b'"text"',
                    b"null",
                    b'{"id":true}',
                    b'{"id":{}}',
                    b'{"ts":5}',
                    b'{"asset":""}',
                    b'{"id":1.5}',
                ]
            ),
        ),
        ("oversize", b"{" + b" " * max_payload_bytes + b"}"),
        # The first byte is never '{' or white space, so whatever follows, this is no JSON object.
        ("random_bytes", bytes([rng.choice([b for b in range(256) if b not in b"{ \t\r\n"])]) + noise),
    ]


def bad_text_payloads(rng: random.Random, max_payload_bytes: int) -> list[tuple[str, bytes]]:
    """(class, payload) pairs a text (log line) route must quarantine."""
    return [
        ("invalid_utf8", rng.choice([b"\xff\xfeoperator: pump tripped", b"P-101 \xc3\x28 trip", b"\xed\xa0\x80"])),
        ("empty_line", rng.choice([b"", b"   ", b"\n\t", b"2026-11-29T06:00:00Z ana:   ", b"ana:   "])),
        ("oversize", b"x" * (max_payload_bytes + 1)),
    ]


def bad_requests(rng: random.Random) -> list[tuple[str, bytes]]:
    """(class, payload) pairs of report requests the service must answer with an error, never act on."""
    window = {"start": "2026-11-29T06:00:00Z", "end": "2026-11-29T14:00:00Z"}
    base = {"request_id": f"h-{rng.getrandbits(32):08x}", "type": "shift_summary", "window": window}
    return [
        ("deep_nesting", _deep(rng.choice([1_000, 100_000]), rng)),
        ("invalid_utf8", b'{"request_id":"\xff"}'),
        ("not_an_object", rng.choice([b"[]", b"1", b'"x"', b"null", b""])),
        ("lone_surrogate", b'{"request_id":"\\ud800","type":"shift_summary","window":{"shift":"A"}}'),
        ("wrong_types", json.dumps(base | {"type": rng.choice([1, None, "sabotage", ["shift_summary"]])}).encode()),
        (
            "window_out_of_range",
            json.dumps(
                base
                | {
                    "window": rng.choice(
                        [
                            {"start": "0001-01-01T00:00:00+01:00", "end": "0001-01-02T00:00:00+01:00"},
                            {"start": "9999-12-31T00:00:00-01:00", "end": "9999-12-31T23:59:59-01:00"},
                            {"shift": "A", "date": "0000-12-31"},
                            {"shift": "A", "date": "10000-01-01"},
                            {"start": "2026-11-29T14:00:00Z", "end": "2026-11-29T06:00:00Z"},
                            {"shift": "no-such-shift"},
                        ]
                    )
                }
            ).encode(),
        ),
        ("huge_fields", json.dumps(base | {"request_id": "r" * 10_000, "scope": {"assets": ["P"] * 10_000}}).encode()),
        ("random_bytes", bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 256)))),
    ]


def bad_signoffs(rng: random.Random) -> list[tuple[str, bytes]]:
    """(class, payload) pairs of sign-offs the service must answer with an error or a refusal."""
    return [
        ("deep_nesting", _deep(rng.choice([1_000, 100_000]), rng)),
        ("not_an_object", rng.choice([b"[]", b"1", b"", b"\xff"])),
        (
            "unknown_report",
            json.dumps(
                {"report_id": f"rpt-{rng.getrandbits(64):016x}", "decision": "approve", "by": "mallory"}
            ).encode(),
        ),
        ("wrong_types", json.dumps({"report_id": rng.choice([1, None, {}]), "decision": "approve"}).encode()),
        ("lone_surrogate", b'{"report_id":"\\ud800","decision":"approve"}'),
    ]
