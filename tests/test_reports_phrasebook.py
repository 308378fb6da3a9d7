"""The reference writer's phrasebook: its shipped language files, the loader's checks, and the loader as a boundary."""

from __future__ import annotations

import copy
import string
import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from edge_agent.base.canonical import sha256_hex
from edge_agent.reports.errors import TemplateError
from edge_agent.reports.narrative.phrasebook import (
    LANGUAGES,
    REFERENCE_PHRASEBOOK_VERSION,
    STATE_WORDS,
    WORD_FIELDS,
    PhrasebookError,
    ReferencePhrasebook,
    check_parity,
    load_phrasebooks,
    parse_phrasebook,
    phrasebook_from_data,
    placeholders,
)

WORDING = Path(__file__).parent.parent / "edge_agent" / "reports" / "narrative" / "wording"
DIR = WORDING / "phrasebook" / REFERENCE_PHRASEBOOK_VERSION


def raw(language: str) -> bytes:
    return (DIR / f"{language}.toml").read_bytes()


def data(language: str) -> dict[str, Any]:
    return tomllib.loads(raw(language).decode("utf-8"))


def named_fields(template: str) -> set[str]:
    """Written straight from `str.format`'s grammar, apart from the loader: every field, `{Name}` read as `name`."""
    names = set()
    for _, field, _, _ in string.Formatter().parse(template):
        if field is not None:
            assert field.isidentifier(), f"{{{field}}} in {template!r} is not a named field"
            names.add(field[0].lower() + field[1:])
    return names


def keys(tree: Any, path: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    """Every key path of a parsed file, down to the phrase kinds and word entries (not into their lists)."""
    if not isinstance(tree, dict):
        return {path}
    return {p for k, v in tree.items() for p in keys(v, (*path, k))}


def books(**replaced: dict[str, Any]) -> dict[str, ReferencePhrasebook]:
    """The shipped files, parsed, with `replaced` content for some languages."""
    return {
        language: phrasebook_from_data(f"v1/{language}.toml", replaced.get(language, data(language)))
        for language in LANGUAGES
    }


class TestShippedFiles:
    def test_every_language_has_the_same_keys(self) -> None:
        """es, en and pt name exactly the same phrase kinds and words, nouns and topics included."""
        first, *others = LANGUAGES
        for language in others:
            assert keys(data(language)) == keys(data(first)), language

    def test_every_phrase_kind_has_the_same_placeholders_in_every_language(self) -> None:
        """Each kind's wordings name the same fields in every language (exactly, by name)."""
        first, *others = LANGUAGES
        kinds = data(first)["phrases"]
        for kind in kinds:
            want = set().union(*map(named_fields, kinds[kind]))
            for language in others:
                got = set().union(*map(named_fields, data(language)["phrases"][kind]))
                assert got == want, (language, kind)

    def test_word_templates_name_only_what_the_writer_fills(self) -> None:
        """`at`, `span`, `quote`... name only fields `phrasebook.writer.SectionWriter` passes them."""
        for language in LANGUAGES:
            words = data(language)["words"]
            for key, allowed in WORD_FIELDS.items():
                texts = [words[key]] if isinstance(words[key], str) else words[key]
                for text in texts:
                    assert named_fields(text) <= allowed, (language, key, text)

    def test_load_reads_every_language_of_the_version(self) -> None:
        """The loader gives one book a language, named and hashed like the prompt files."""
        loaded = load_phrasebooks()
        assert REFERENCE_PHRASEBOOK_VERSION == "v2"
        assert list(loaded) == list(LANGUAGES)
        for language, book in loaded.items():
            assert book.name == f"v2/{language}.toml"
            assert book.sha256 == sha256_hex(raw(language))
            assert book.phrases == {k: tuple(v) for k, v in data(language)["phrases"].items()}

    def test_the_earlier_version_still_loads(self) -> None:
        """v1 stays as it was (r8's wordings, tags by their ids): a new wording is a new directory."""
        v1 = load_phrasebooks("v1")
        assert v1["es"].phrases["pv.peak"][1] == "{tag} alcanzó {max} {max_at}, frente a una media de {mean}."
        assert v1["es"].words.kinds == {} and v1["es"].words.quantities == {}

    def test_every_language_names_the_same_asset_kinds_and_quantities(self) -> None:
        """v2's `kinds` and `quantities` (what names a tag) have the same keys everywhere, each kind naming {id}."""
        loaded = load_phrasebooks()
        assert {tuple(b.words.kinds) for b in loaded.values()} == {("P", "C", "T", "V", "M")}
        assert {tuple(b.words.quantities) for b in loaded.values()} == {("running",)}
        assert all("{id}" in kind for b in loaded.values() for kind in b.words.kinds.values())

    def test_every_language_has_the_same_agreeing_words(self) -> None:
        """`[words.agree]` (r11): the same words everywhere, the state words among them; en has one form of each, es
        and pt a masculine and a feminine that differ where the language inflects ("parado", "parada")."""
        loaded = load_phrasebooks()
        assert len({tuple(b.words.agree) for b in loaded.values()}) == 1
        assert STATE_WORDS <= loaded["es"].words.agree.keys()
        assert all(m == f for m, f in loaded["en"].words.agree.values())
        for language in ("es", "pt"):
            assert loaded[language].words.agree["stopped"] == ("parado", "parada")
        assert loaded["es"].words.agree["it"] == ("él", "ella") and loaded["pt"].words.agree["it"] == ("ele", "ela")

    def test_a_phrase_names_agreeing_words_only_beside_an_asset(self) -> None:
        """A word of `[words.agree]` in a phrase agrees with the sentence's {asset}: a phrase naming one names it."""
        for language, book in load_phrasebooks().items():
            for kind, wordings in book.phrases.items():
                named = set().union(*(placeholders(w) for w in wordings))
                if named & book.words.agree.keys():
                    assert "asset" in named, (language, kind)

    def test_a_missing_version_names_the_file(self) -> None:
        """No v0 directory: the error names the file it looked for."""
        with pytest.raises(PhrasebookError, match=r"v0/es\.toml: \(file\): missing"):
            load_phrasebooks("v0")


class TestErrors:
    def test_a_kind_missing_in_one_language(self) -> None:
        """pt without `dt.none`: the error names pt's file and the key."""
        pt = data("pt")
        del pt["phrases"]["dt.none"]
        with pytest.raises(PhrasebookError) as caught:
            check_parity(books(pt=pt))
        assert (caught.value.name, caught.value.key) == ("v1/pt.toml", "phrases.dt.none")
        assert "missing (the es file has it)" in str(caught.value)

    def test_a_kind_only_one_language_has(self) -> None:
        """An extra kind in en: named as not in the es file."""
        en = data("en")
        en["phrases"]["dt.extra"] = ["a", "b", "c"]
        with pytest.raises(PhrasebookError, match=r"v1/en\.toml: phrases\.dt\.extra: not in the es file"):
            check_parity(books(en=en))

    def test_an_agreeing_word_only_one_language_has(self) -> None:
        """A word of `[words.agree]` is a key too: one pt alone has is named, so no phrase can use it in pt only."""
        pt = data("pt")
        pt["words"]["agree"]["ligado"] = ["ligado", "ligada"]
        with pytest.raises(PhrasebookError, match=r"v1/pt\.toml: words\.agree\.ligado: not in the es file"):
            check_parity(books(pt=pt))

    def test_an_asset_kind_missing_in_one_language(self) -> None:
        """Asset kinds are keys too, and a kind must name {id}."""
        pt = data("pt")
        del pt["words"]["kinds"]["C"]
        with pytest.raises(PhrasebookError, match=r"v1/pt\.toml: words\.kinds\.C: missing"):
            check_parity(books(pt=pt))
        es = data("es")
        es["words"]["kinds"]["C"] = "el compresor"
        with pytest.raises(PhrasebookError, match=r"words\.kinds: Value error, 'el compresor' must name \{id\}"):
            phrasebook_from_data("v1/es.toml", es)

    def test_a_noun_missing_in_one_language(self) -> None:
        """Nouns and topics are keys too."""
        pt = data("pt")
        del pt["words"]["nouns"]["stop"]
        with pytest.raises(PhrasebookError, match=r"v1/pt\.toml: words\.nouns\.stop: missing"):
            check_parity(books(pt=pt))

    def test_a_renamed_placeholder(self) -> None:
        """`{stops}` translated as `{paradas}`: both sets are shown."""
        es = data("es")
        en = data("en")
        en["phrases"]["dt.total"][0] = en["phrases"]["dt.total"][0].replace("{stops}", "{paradas}")
        es["phrases"]["dt.total"] = [t.replace("{stops}", "{paradas}") for t in es["phrases"]["dt.total"]]
        with pytest.raises(PhrasebookError) as caught:
            check_parity(books(es=es, en=en))
        assert caught.value.key == "phrases.dt.total"
        assert "['dur', 'during', 'paradas', 'stops']" in str(caught.value)

    @pytest.mark.parametrize(
        ("text", "key"),
        [
            ("No hubo paradas {during.", "phrases.dt.none.1"),
            ("No hubo paradas {}.", "phrases.dt.none.1"),
            ("No hubo paradas {0}.", "phrases.dt.none.1"),
            ("No hubo paradas {during!r}.", "phrases.dt.none.1"),
            ("No hubo paradas {during:>9}.", "phrases.dt.none.1"),
            ("No hubo paradas {a[0]}.", "phrases.dt.none.1"),
        ],
    )
    def test_a_template_that_is_not_plain_named_fields(self, text: str, key: str) -> None:
        """A malformed template, or a field the writer does not fill by name, is named by its index."""
        es = data("es")
        es["phrases"]["dt.none"][1] = text
        with pytest.raises(PhrasebookError) as caught:
            phrasebook_from_data("v1/es.toml", es)
        assert caught.value.key == key

    def test_too_few_wordings(self) -> None:
        """Two wordings of a kind: at least three are asked for."""
        es = data("es")
        es["phrases"]["dt.none"] = es["phrases"]["dt.none"][:2]
        with pytest.raises(PhrasebookError, match=r"phrases\.dt\.none: .*at least 3"):
            phrasebook_from_data("v1/es.toml", es)

    def test_a_word_template_naming_a_field_the_writer_does_not_fill(self) -> None:
        """`{hora}` in a span: the writer fills a, b, at_a, at_b, clock_a, clock_b only."""
        es = data("es")
        es["words"]["span"] = "entre {hora} y {clock_b}"
        with pytest.raises(PhrasebookError, match=r"words\.span: .*\['hora'\]"):
            phrasebook_from_data("v1/es.toml", es)

    @pytest.mark.parametrize(
        ("mutate", "key"),
        [
            (lambda d: d["words"].pop("and"), "words.and"),
            (lambda d: d["words"].update(during=["solo uno"]), "words.during.1"),
            (lambda d: d.update(extra=1), "extra"),
            (lambda d: d["words"]["nouns"].update(stop="parada"), "words.nouns.stop"),
            (lambda d: d["words"]["agree"].update(it="ella"), "words.agree.it"),
            (lambda d: d["words"]["agree"].pop("running"), "words.agree"),
            (lambda d: d["words"]["agree"].update({"sobre él": ["él", "ella"]}), "words.agree"),
        ],
    )
    def test_a_word_missing_extra_or_of_the_wrong_shape(self, mutate: Any, key: str) -> None:
        """The typed words: each error names its key path."""
        es = data("es")
        mutate(es)
        with pytest.raises(PhrasebookError) as caught:
            phrasebook_from_data("v1/es.toml", es)
        assert caught.value.key == key

    @pytest.mark.parametrize("content", [b"\xff\xfe", b"[phrases\n", b'x = "unterminated'])
    def test_bytes_that_are_not_toml(self, content: bytes) -> None:
        """Not UTF-8, or not TOML: the whole file is named."""
        with pytest.raises(PhrasebookError, match=r"v1/es\.toml: \(file\): not UTF-8 TOML"):
            parse_phrasebook("v1/es.toml", content)

    def test_the_error_is_a_template_error(self) -> None:
        """Callers that handle a broken prompt file handle a broken phrasebook the same way."""
        assert issubclass(PhrasebookError, TemplateError)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=12,
)
# Text that is often a template: braces, names, the shipped fields.
template_text = st.lists(st.sampled_from(["{", "}", "a", "b", "during", "_", " ", "!", ":", "0", "."])).map("".join)


def leaf_paths(tree: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(tree, dict):
        return [path, *(p for k, v in tree.items() for p in leaf_paths(v, (*path, k)))]
    if isinstance(tree, list):
        return [path, *(p for i, v in enumerate(tree) for p in leaf_paths(v, (*path, i)))]
    return [path]


def related(a: str, b: str) -> bool:
    """One dotted key path is the other or lies under it."""
    return a == b or a.startswith(b + ".") or b.startswith(a + ".")


class TestProperties:
    @given(json_values)
    def test_any_data_is_a_phrasebook_or_an_error_naming_a_key(self, value: Any) -> None:
        """Any parsed JSON/TOML value: a phrasebook, or a PhrasebookError naming the file and a key, nothing else."""
        try:
            phrasebook_from_data("v1/xx.toml", value)
        except PhrasebookError as exc:
            assert exc.key and str(exc).startswith(f"reference phrasebook v1/xx.toml: {exc.key}: ")

    @given(st.binary(max_size=200) | st.text(max_size=200).map(str.encode))
    def test_any_bytes_are_a_phrasebook_or_an_error(self, content: bytes) -> None:
        """Any file content: a phrasebook or a PhrasebookError."""
        try:
            parse_phrasebook("v1/xx.toml", content)
        except PhrasebookError as exc:
            assert exc.key

    @given(st.data())
    def test_one_change_to_a_shipped_file_is_valid_or_named_where_it_was_made(self, draw: st.DataObject) -> None:
        """One key of the Spanish file replaced or removed: the file still loads (and then the parity check either
        passes or names pt/en/es and a key), or the error names the key changed, a key under it, or one above it."""
        es = data("es")
        path = draw.draw(st.sampled_from(leaf_paths(es)[1:]), label="path")
        parent = es
        for part in path[:-1]:
            parent = parent[part]
        if isinstance(parent, dict) and draw.draw(st.booleans(), label="remove"):
            del parent[path[-1]]
        else:
            parent[path[-1]] = draw.draw(json_values | template_text, label="value")
        changed = ".".join(str(p) for p in path)
        try:
            book = phrasebook_from_data("v1/es.toml", copy.deepcopy(es))
        except PhrasebookError as exc:
            assert related(exc.key, changed), (exc.key, changed)
            return
        try:
            check_parity({"es": book, **{k: v for k, v in books().items() if k != "es"}})
        except PhrasebookError as exc:
            assert exc.name in ("v1/en.toml", "v1/pt.toml") and related(exc.key, changed), (exc, changed)
