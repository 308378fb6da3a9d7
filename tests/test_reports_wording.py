"""The wording's one home: every wording file is read by kind, language and version, under the name reports record."""

from __future__ import annotations

import hashlib
import re
import tomllib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from edge_agent.reports.errors import TemplateError
from edge_agent.reports.narrative import WordingMissing, read_wording
from edge_agent.reports.narrative.wording import KINDS, LANGUAGES, wording_name

HOME = Path(__file__).resolve().parents[1] / "edge_agent" / "reports" / "narrative" / "wording"
FOLDERS = {"section": "prompts", "facts": "prompts", "reference": "phrasebook", "ask": "ask", "planner": "ask"}


def every_file() -> list[tuple[str, str, str | None, Path]]:
    """(kind, version, language, path) for each data file in the home, found by walking it."""
    found: list[tuple[str, str, str | None, Path]] = []
    for path in sorted(HOME.rglob("*")):
        if not path.is_file() or path.suffix not in (".txt", ".toml"):
            continue
        folder, version, name = path.relative_to(HOME).parts
        if folder == "ask":
            found.append(("planner" if name == "planner.txt" else "ask", version, None, path))
        elif folder == "phrasebook":
            found.append(("reference", version, path.stem, path))
        else:
            kind, language, _ = name.split(".")
            found.append((kind, version, language, path))
    return found


class TestTheHome:
    def test_it_holds_the_prompts_the_phrasebook_and_the_ask_wording(self) -> None:
        """Templates v2 and v3, the reference phrasebook v1 and v2, the ask answers v1 and the model planner's
        instructions v1, nothing in the old places."""
        versions = {(kind, version) for kind, version, _, _ in every_file()}
        assert versions == {
            ("section", "v2"),
            ("section", "v3"),
            ("facts", "v2"),
            ("facts", "v3"),
            ("reference", "v1"),
            ("reference", "v2"),
            ("ask", "v1"),
            ("planner", "v1"),
        }
        narrative = HOME.parent
        assert not list((narrative / "prompts").rglob("*.txt"))
        assert not list((narrative / "phrasebook").rglob("*.toml"))
        assert not (narrative.parents[1] / "ask" / "wording.toml").exists()

    @pytest.mark.parametrize(("kind", "version", "language", "path"), every_file(), ids=lambda v: str(v))
    def test_every_file_reads_under_the_name_reports_record(
        self, kind: str, version: str, language: str | None, path: Path
    ) -> None:
        """The name is the path below the kind's folder ("v3/facts.es.txt", as `report.generated` records it), the
        bytes are the file's, the hash their SHA-256."""
        file = read_wording(kind, version, language)  # type: ignore[arg-type]
        assert file.name == path.relative_to(HOME / FOLDERS[kind]).as_posix()
        assert file.raw == path.read_bytes()
        assert file.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()

    def test_a_recorded_name_is_unchanged(self) -> None:
        assert read_wording("facts", "v3", "es").name == "v3/facts.es.txt"
        assert read_wording("section", "v2", "pt").name == "v2/section.pt.txt"
        assert read_wording("reference", "v1", "en").name == "v1/en.toml"
        assert read_wording("ask", "v1").name == "v1/answers.toml"

    def test_the_ask_file_holds_every_language(self) -> None:
        assert set(tomllib.loads(read_wording("ask", "v1").raw.decode("utf-8"))) >= set(LANGUAGES)


class TestRefusals:
    def test_a_missing_version_names_the_file(self) -> None:
        """A missing file is a TemplateError naming the kind and the file looked for."""
        with pytest.raises(WordingMissing, match=r"^facts wording v0/facts\.es\.txt is missing$") as caught:
            read_wording("facts", "v0", "es")
        assert isinstance(caught.value, TemplateError)
        assert caught.value.name == "v0/facts.es.txt"

    @pytest.mark.parametrize(
        ("kind", "version", "language", "reason"),
        [
            ("glossary", "v1", "es", "kind 'glossary' is not one of"),
            ("facts", "3", "es", "version '3' is not v<number>"),
            ("facts", "v3/../v2", "es", "is not v<number>"),
            ("facts", "v3", "fr", "needs a language of"),
            ("facts", "v3", None, "needs a language of"),
            ("ask", "v1", "es", "takes none"),
        ],
    )
    def test_a_malformed_request_is_refused(self, kind: str, version: str, language: str | None, reason: str) -> None:
        with pytest.raises(ValueError, match=re.escape(reason)):
            wording_name(kind, version, language)


@given(kind=st.sampled_from(KINDS) | st.text(max_size=12), version=st.text(max_size=12), language=st.text(max_size=6))
def test_a_name_never_leaves_its_version_folder(kind: str, version: str, language: str) -> None:
    """Whatever is asked for, the name is `v<number>/<file>` with no other separator, or a ValueError."""
    try:
        name = wording_name(kind, version, language if kind != "ask" else None)
    except ValueError:
        return
    folder, _, file = name.partition("/")
    assert re.fullmatch(r"v\d+", folder)
    assert "/" not in file and "\\" not in file and file not in ("", ".", "..")
