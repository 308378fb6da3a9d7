"""Properties of bundle reading and verification: any archive is read safely or refused with a BundleError, any
single changed byte in a real bundle is detected, and no report document but the real one binds to its entries."""

from __future__ import annotations

import json
import shutil
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

import pytest
from hypothesis import assume, given, reject, settings
from hypothesis import strategies as st

from edge_agent.audit.archive import extract_bundle
from edge_agent.audit.binding import ReportTrail, bind_document, report_trails
from edge_agent.audit.bundle import BundleError
from edge_agent.audit.verify import verify_bundle
from edge_agent.signing import Verifier
from tests.test_audit_bundle import build_state, export, pubkey

OUTSIDE = "<outside>"  # replaced by an absolute path next to the extraction directory, which must stay empty
COMPONENTS = st.one_of(
    st.sampled_from(["b", "reports", "x.json", "..", ".", "", "é", "a\x01b", "x" * 300, OUTSIDE]),
    st.text(max_size=12),
)
KINDS = st.sampled_from(
    [tarfile.REGTYPE, tarfile.DIRTYPE, tarfile.SYMTYPE, tarfile.LNKTYPE, tarfile.CHRTYPE, tarfile.FIFOTYPE]
)
MEMBERS = st.lists(
    st.tuples(
        st.lists(COMPONENTS, min_size=1, max_size=4),
        KINDS,
        st.sampled_from(["x", "b/x", "../../outside/pwned", "/etc/passwd", OUTSIDE + "/pwned"]),
        st.binary(max_size=64),
    ),
    max_size=6,
)


def build_archive(path: Path, members: list[tuple[list[str], bytes, str, bytes]], outside: Path, gz: bool) -> None:
    with tarfile.open(path, "w:gz" if gz else "w", format=tarfile.PAX_FORMAT) as tar:
        for parts, kind, linkname, data in members:
            info = tarfile.TarInfo("/".join(parts).replace(OUTSIDE, str(outside)))
            info.type, info.linkname = kind, linkname.replace(OUTSIDE, str(outside))
            info.size = len(data) if kind == tarfile.REGTYPE else 0
            tar.addfile(info, BytesIO(data) if kind == tarfile.REGTYPE else None)


def outside_dest(sandbox: Path, dest: Path) -> list[str]:
    return sorted(p.relative_to(sandbox).as_posix() for p in sandbox.rglob("*") if not p.is_relative_to(dest))


class TestArchiveReaderProperties:
    @given(members=MEMBERS, gz=st.booleans())
    def test_generated_archives_are_read_safely_or_refused(
        self, members: list[tuple[list[str], bytes, str, bytes]], gz: bool
    ) -> None:
        """Names with `..`, absolute, unicode or long parts, any member type, any contents: only BundleError, and
        nothing is written outside the extraction directory; what is written is plain files and directories."""
        with tempfile.TemporaryDirectory() as tmp:
            sandbox = Path(tmp)
            (sandbox / "outside").mkdir()
            dest = sandbox / "dest"
            dest.mkdir()
            try:
                build_archive(sandbox / "a.tar", members, sandbox / "outside", gz)
            except (UnicodeEncodeError, ValueError):
                reject()  # a name tarfile cannot write: nothing to read
            try:
                root = extract_bundle(sandbox / "a.tar", dest)
                assert root.parent == dest
            except BundleError:
                pass
            assert outside_dest(sandbox, dest) == ["a.tar", "outside"]
            assert all(p.is_dir() or (p.is_file() and not p.is_symlink()) for p in dest.rglob("*"))
            assert not verify_bundle(sandbox / "a.tar").ok  # never raises, never passes

    @given(data=st.binary(max_size=2048), gz_magic=st.booleans())
    def test_arbitrary_bytes_are_refused_with_a_bundle_error(self, data: bytes, gz_magic: bool) -> None:
        """Any bytes, with or without the gzip magic in front: a BundleError, never another exception."""
        with tempfile.TemporaryDirectory() as tmp:
            archive = Path(tmp) / "a.tar.gz"
            archive.write_bytes((b"\x1f\x8b" if gz_magic else b"") + data)
            (Path(tmp) / "dest").mkdir()
            with pytest.raises(BundleError):
                extract_bundle(archive, Path(tmp) / "dest")


@pytest.fixture(scope="module")
def real_bundle(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Verifier]:
    state = build_state(tmp_path_factory.mktemp("state"))
    root = tmp_path_factory.mktemp("bundle") / "b1"
    export(state, root)
    return root, pubkey(state)


class TestTamperDetectionProperties:
    # Each example copies and verifies a whole bundle (~30 ms): 200 cover every file many times over.
    @settings(max_examples=200)
    @given(data=st.data())
    def test_any_single_byte_change_is_detected(self, real_bundle: tuple[Path, Verifier], data: st.DataObject) -> None:
        """XOR-ing any one byte of any file in a real bundle makes verification fail."""
        root, key = real_bundle
        files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
        rel = data.draw(st.sampled_from(files), label="file")
        offset = data.draw(st.integers(0, (root / rel).stat().st_size - 1), label="offset")
        mask = data.draw(st.integers(1, 255), label="xor")
        with tempfile.TemporaryDirectory() as tmp:
            copy = Path(tmp) / "b1"
            shutil.copytree(root, copy)
            changed = bytearray((copy / rel).read_bytes())
            changed[offset] ^= mask
            (copy / rel).write_bytes(bytes(changed))
            check = verify_bundle(copy, key)
        assert not check.ok, f"{rel} byte {offset} ^ {mask} went unnoticed"


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)
DOCUMENT_KEYS = st.sampled_from(
    ["report_id", "request_id", "body", "body_sha256", "renderings", "renderings_sha256", "audit", "status", "signoff"]
)


class TestBindingProperties:
    @given(value=JSON)
    def test_any_json_value_is_answered_with_a_reason(self, value: object) -> None:
        """bind_document on any JSON value returns a reason, never raises."""
        trail = ReportTrail()
        assert isinstance(bind_document("rpt-1", value, trail), str)

    @settings(max_examples=200)  # each example parses a whole bundle's entries and a real document
    @given(key=DOCUMENT_KEYS, value=JSON)
    def test_any_changed_member_of_a_real_report_is_refused(
        self, real_bundle: tuple[Path, Verifier], key: str, value: object
    ) -> None:
        """Replacing any bound member of the approved report with another JSON value never binds, never raises."""
        root, _ = real_bundle
        document = json.loads((root / "reports" / "rpt-1.json").read_bytes())
        assume(document[key] != value)
        trails = report_trails((root / "entries.jsonl").read_bytes().splitlines())
        assert bind_document("rpt-1", document, trails["rpt-1"]) is None
        assert isinstance(bind_document("rpt-1", document | {key: value}, trails["rpt-1"]), str)
