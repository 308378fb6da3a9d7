"""The version constants the guides quote are the code's: a guide that says rules `v6` while the code enforces v9
is a stale manual. Each pattern must be found (a reworded guide fails here too, so the check cannot go quiet)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from edge_agent.reports.narrative import GROUNDING_RULES, REFERENCE_VERSION, TEMPLATE_VERSION
from edge_agent.reports.narrative.phrasebook import REFERENCE_PHRASEBOOK_VERSION

REPO = Path(__file__).resolve().parents[1]
GUIDES = sorted([REPO / "README.md", *(REPO / "docs").glob("*.md")])

# (what the guide says, the pattern that finds it with the version in group 1, the code's value)
QUOTED = [
    ("grounding rules", r"rules in force are\s+version `(v\d+)`", GROUNDING_RULES),
    ("reference writer", r"reference writer\*\* \(`reference\.py`, version `(r\d+)`\)", REFERENCE_VERSION),
    ("prompt templates", r"wording/prompts/(v\d+)/", TEMPLATE_VERSION),
    ("reference phrasebook files", r"reports/narrative/wording/phrasebook/(v\d+)/", REFERENCE_PHRASEBOOK_VERSION),
    ("reference phrasebook", r"`REFERENCE_PHRASEBOOK_VERSION` \(version `(v\d+)`\)", REFERENCE_PHRASEBOOK_VERSION),
]


def quotes(pattern: str) -> list[tuple[str, str]]:
    return [
        (path.relative_to(REPO).as_posix(), m.group(1))
        for path in GUIDES
        for m in re.finditer(pattern, path.read_text(encoding="utf-8"))
    ]


@pytest.mark.parametrize(("what", "pattern", "value"), QUOTED, ids=[q[0] for q in QUOTED])
def test_guides_quote_the_codes_version(what: str, pattern: str, value: str) -> None:
    """Every place a guide quotes this version names the code's current one, and at least one place does."""
    found = quotes(pattern)
    assert found, f"no guide quotes the {what} version any more: update QUOTED"
    assert [(path, v) for path, v in found if v != value] == [], f"the code's {what} version is {value}"


def test_a_stale_quote_is_caught(tmp_path: Path) -> None:
    """The pattern reads the version a guide would have kept from an earlier release."""
    text = "The rules in force are\nversion `v6` (`generate.GROUNDING_RULES`)"
    assert re.findall(QUOTED[0][1], text) == ["v6"] != [GROUNDING_RULES]


def test_the_changelogs_newest_release_is_the_package_version() -> None:
    """CHANGELOG.md's newest release heading names the version the package reports (and the wheel is built with:
    pyproject takes it from edge_agent.__version__)."""
    import tomllib

    import edge_agent

    newest = re.search(r"^## \[(\d+\.\d+\.\d+)\]", (REPO / "CHANGELOG.md").read_text(encoding="utf-8"), re.M)
    assert newest is not None and newest.group(1) == edge_agent.__version__
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["dynamic"] == ["version"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "edge_agent.__version__"}
