"""Canonical JSON (edge_agent.base.canonical): exact bytes for each rule of the form, refusals, and properties."""

from __future__ import annotations

import json
import math
import random
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from edge_agent.audit.entry import GENESIS_HASH, AuditEntry
from edge_agent.base.canonical import CanonicalJsonError, ascii_json, canonical_json, sha256_hex


class TestCanonicalJson:
    def test_keys_are_sorted_at_every_level(self) -> None:
        """Object keys in code point order, however the object was built, nested objects too."""
        value = {"z": {"y": [3, {"b": None, "a": True}]}, "a": False, "B": 1}
        assert canonical_json(value) == b'{"B":1,"a":false,"z":{"y":[3,{"a":true,"b":null}]}}'

    def test_key_order_is_code_point_order(self) -> None:
        """z < é < U+E000 < U+1F3ED: code points, not UTF-16 units (RFC 8785 would put U+1F3ED before U+E000)."""
        value = {"\U0001f3ed": 4, "\ue000": 3, "é": 2, "z": 1}
        assert canonical_json(value) == b'{"z":1,"\xc3\xa9":2,"\xee\x80\x80":3,"\xf0\x9f\x8f\xad":4}'

    def test_non_ascii_is_written_as_utf8_not_escaped(self) -> None:
        """Línea — 🏭 as its UTF-8 bytes: no \\u escapes."""
        assert canonical_json({"ñ": "Línea — 🏭"}) == (b'{"\xc3\xb1":"L\xc3\xadnea \xe2\x80\x94 \xf0\x9f\x8f\xad"}')

    def test_only_quote_backslash_and_controls_are_escaped(self) -> None:
        """`"` and `\\` escaped, U+0000..U+001F as short escapes or lowercase \\u00XX; DEL and U+2028 as themselves."""
        text = '"\\\n\t\r\b\f\x01\x1f\x7f\u2028'
        assert canonical_json(text) == b'"\\"\\\\\\n\\t\\r\\b\\f\\u0001\\u001f\x7f\xe2\x80\xa8"'

    def test_no_whitespace_and_no_trailing_newline(self) -> None:
        assert canonical_json({"a": [1, 2], "b": {}}) == b'{"a":[1,2],"b":{}}'

    def test_integers_in_decimal_of_any_size(self) -> None:
        assert canonical_json([0, -1, 2**64, -(10**30)]) == (
            b"[0,-1,18446744073709551616,-1000000000000000000000000000000]"
        )

    def test_booleans_and_null_are_not_numbers(self) -> None:
        assert canonical_json([True, False, None]) == b"[true,false,null]"

    def test_floats_as_shortest_round_trip_repr(self) -> None:
        """Python's repr: 1.0 keeps its point, exponents carry a sign and two digits at least."""
        value = [0.1, 1.0, -0.0, 1e16, 1e-07, 123456789.125, 5e-324, 1.7976931348623157e308]
        assert canonical_json(value) == b"[0.1,1.0,-0.0,1e+16,1e-07,123456789.125,5e-324,1.7976931348623157e+308]"

    def test_tuples_are_arrays(self) -> None:
        assert canonical_json({"t": (1, "a")}) == b'{"t":[1,"a"]}'

    @pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
    def test_non_finite_floats_are_refused(self, bad: float) -> None:
        """NaN and infinities are not JSON: refused, not written as NaN/Infinity."""
        with pytest.raises(CanonicalJsonError, match="not JSON compliant"):
            canonical_json({"v": [1, bad]})

    def test_lone_surrogate_is_refused(self) -> None:
        """A lone surrogate has no UTF-8 form."""
        with pytest.raises(CanonicalJsonError, match="surrogates not allowed"):
            canonical_json({"v": "a\ud800b"})

    @pytest.mark.parametrize("bad", [{1, 2}, b"bytes", datetime(2026, 1, 1, tzinfo=UTC)])
    def test_non_json_types_are_refused(self, bad: object) -> None:
        """No `default=str`: a value that is not JSON is an error, not its str()."""
        with pytest.raises(CanonicalJsonError, match="is not JSON serializable"):
            canonical_json({"v": bad})

    def test_the_error_is_a_value_error(self) -> None:
        """Callers that catch ValueError for bad data keep catching it."""
        assert issubclass(CanonicalJsonError, ValueError)

    def test_audit_entries_are_hashed_over_it(self) -> None:
        """An audit entry's hashed body is canonical_json of its members, and entry_hash its SHA-256."""
        time = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)
        payload = {"note": "señal", "n": 1.5}
        entry, line = AuditEntry.create_with_line(0, time, "mqtt", "ingest.batch", payload, GENESIS_HASH)
        body = canonical_json(
            {
                "actor": "mqtt",
                "event": "ingest.batch",
                "payload": payload,
                "prev_hash": GENESIS_HASH,
                "seq": 0,
                "time": "2026-01-02T03:04:05.678901Z",
            }
        )
        assert entry.entry_hash == sha256_hex(body)
        assert line == body.replace(b',"event":', b',"entry_hash":"' + entry.entry_hash.encode() + b'","event":', 1)


class TestAsciiJson:
    def test_non_ascii_as_escapes_and_non_finite_as_words(self) -> None:
        """The older form: \\uXXXX escapes (a surrogate pair above U+FFFF) and NaN/Infinity as Python writes them."""
        value = {"ñ": "🏭", "b": math.inf, "a": [1.0, "x"]}
        assert ascii_json(value) == b'{"a":[1.0,"x"],"b":Infinity,"\\u00f1":"\\ud83c\\udfed"}'

    def test_ascii_only_values_have_the_same_bytes_as_canonical(self) -> None:
        value = {"request_id": "r-1", "scope": {"assets": ["P-101"], "line": None}, "formats": ["json"]}
        assert ascii_json(value) == canonical_json(value)

    def test_non_json_types_are_refused(self) -> None:
        with pytest.raises(CanonicalJsonError, match="is not JSON serializable"):
            ascii_json({"v": {1}})


class TestSha256Hex:
    def test_known_answers(self) -> None:
        """SHA-256 of the empty string, and of `abc` (FIPS 180-2 appendix B.1)."""
        assert sha256_hex(b"") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        assert sha256_hex(b"abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"

    def test_text_is_hashed_as_utf8(self) -> None:
        assert sha256_hex("Línea") == sha256_hex("Línea".encode())


# Any JSON value canonical_json accepts: finite floats, text without lone surrogates (Hypothesis's default alphabet).
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(), children, max_size=5),
    max_leaves=30,
)


def reordered(value: Any, rng: random.Random) -> Any:
    """The same value with every object's keys inserted in another order."""
    if isinstance(value, dict):
        items = list(value.items())
        rng.shuffle(items)
        return {k: reordered(v, rng) for k, v in items}
    if isinstance(value, list):
        return [reordered(v, rng) for v in value]
    return value


class TestProperties:
    @given(JSON, st.randoms(use_true_random=False))
    def test_equal_values_give_equal_bytes(self, value: Any, rng: random.Random) -> None:
        """Building the same value with keys in another order changes nothing."""
        assert canonical_json(reordered(value, rng)) == canonical_json(value)

    @given(JSON)
    def test_bytes_parse_back_to_an_equal_value_and_re_encode_identically(self, value: Any) -> None:
        """Strict UTF-8 JSON that parses back to the value (NaN-free, so == holds) and is a fixed point."""
        data = canonical_json(value)
        parsed = json.loads(data.decode("utf-8"))
        assert parsed == value
        assert canonical_json(parsed) == data
