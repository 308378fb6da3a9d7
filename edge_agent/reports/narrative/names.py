"""Assets and tags as people name them, per language (pure): "la bomba P-101", "la vibración de la bomba P-101",
"el caudal del compresor C-201" (de + el → del), "pump P-101's vibration", "a vibração da bomba P-101".

Grammar only. What a tag measures and what people call it come from `base.quantities` (the key's words, its unit,
the names in es/en/pt); the wording comes from the caller's wording file, in the shape the ask's answer wordings
already have: `kinds` (an asset id's prefix → its noun with its article, "P" = "la bomba {id}"), `feminine` and
`masculine` (the nouns whose gender the ending rule gets wrong), and `quantities` (a quantity's name in a report
where it is not the first of `base.quantities.NAMES`: "estado de marcha" for `running`).

The articles follow the ask's `Phrasing` (`ask/phrasing.py`), which names tags the same way: es la/el and pt a/o by
the first word's ending, then the wording's exceptions; es "de el" → "del", pt "de a/o" → "da/do"; en has no article
and names a tag by its owner ("pump P-101's vibration"). The grounding check reads such a name back as the tag's
(`grounding.tag_named`). A word said of a name agrees with its article's gender (`Grammar.agree`): "la bomba P-101"
seguía "parada", "el compresor C-201" "parado".
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from edge_agent.base.quantities import quantity_of

# A noun of these endings is feminine (es, pt), unless the wording says otherwise.
FEMININE_ENDINGS = {
    "es": ("a", "ción", "sión", "dad", "tad", "tud", "umbre"),
    "pt": ("a", "ção", "são", "dade", "gem", "ência"),
}
ARTICLES = ("el", "la", "los", "las", "o", "a", "os", "as")
# The articles of a feminine name (es, pt): a word said of it takes its feminine form ("la bomba P-101" → "parada").
FEMININE_ARTICLES = frozenset({"la", "las", "a", "as"})
# The word before a tag's id that its name's article replaces or joins: an article (dropped; pt "a"/"o" read as
# one), a preposition fused with one (split back), or a bare preposition (kept); each → the preposition it leaves.
_BEFORE = {
    "es": {"el": "", "la": "", "los": "", "las": "", "del": "de", "al": "a", "de": "de", "a": "a"},
    "pt": {
        "a": "",
        "o": "",
        "os": "",
        "as": "",
        "da": "de",
        "do": "de",
        "na": "em",
        "no": "em",
        "pela": "por",
        "pelo": "por",
        "à": "a",
        "ao": "a",
        "de": "de",
        "em": "em",
        "por": "por",
    },
    "en": {"the": ""},
}
# A preposition fused with the article after it: es de + el → del, a + el → al; pt de + a → da, em + o → no, ...
_FUSE = {
    "es": {("de", "el"): "del", ("a", "el"): "al"},
    "pt": {
        ("de", "a"): "da",
        ("de", "o"): "do",
        ("de", "as"): "das",
        ("de", "os"): "dos",
        ("em", "a"): "na",
        ("em", "o"): "no",
        ("por", "a"): "pela",
        ("por", "o"): "pelo",
        ("a", "a"): "à",
        ("a", "o"): "ao",
    },
}


@dataclass(frozen=True)
class Label:
    """A name with its article: ("la", "bomba P-101"); en has none ("", "pump P-101")."""

    article: str
    noun: str

    @property
    def the(self) -> str:
        return f"{self.article} {self.noun}" if self.article else self.noun


def split_label(text: str) -> Label:
    """ "la bomba P-101" → ("la", "bomba P-101"); a text without a leading article has none."""
    article, _, noun = text.partition(" ")
    return Label(article, noun) if noun and article in ARTICLES else Label("", text)


def _bare(word: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))


@dataclass(frozen=True)
class Grammar:
    """One language's way of naming assets and tags, with its wording's data."""

    language: str
    kinds: Mapping[str, str]
    feminine: frozenset[str] = frozenset()
    masculine: frozenset[str] = frozenset()
    quantities: Mapping[str, str] | None = None
    reasons: Mapping[str, str] | None = None

    def reason(self, code: str) -> Label:
        """A stop's reason code as people say it: es ("la", "cavitación"), en ("a", "mechanical seal leak"); a code
        the wording does not list, with spaces for its underscores ("seal leak")."""
        said = (self.reasons or {}).get(code)
        return split_label(said) if said else Label("", code.replace("_", " "))

    def join(self, preposition: str, label: Label) -> str:
        """ "por" and ("a", "cavitação") → "pela cavitação"; es "de"/"a" + "el" → "del"/"al"; else both words."""
        fused = _FUSE.get(self.language, {}).get((preposition, label.article))
        return f"{fused} {label.noun}" if fused else " ".join(p for p in (preposition, label.the) if p)

    def asset(self, asset: str) -> Label:
        """An asset with its article when its id's prefix names a kind: es ("la", "bomba P-101"), en ("", "pump
        P-101"); else the id alone."""
        kind = self.kinds.get(asset.split("-", 1)[0]) if "-" in asset else None
        return split_label(kind.format(id=asset)) if kind else Label("", asset)

    def article(self, noun: str) -> str:
        """es la/el, pt a/o by the first word's gender (its ending, then the wording's exceptions); en none."""
        if self.language not in FEMININE_ENDINGS:
            return ""
        word = noun.split()[0].casefold() if noun.split() else ""
        if word in self.feminine:
            feminine = True
        elif word in self.masculine:
            feminine = False
        else:
            feminine = _bare(word).endswith(tuple(_bare(e) for e in FEMININE_ENDINGS[self.language]))
        if self.language == "es":
            return "la" if feminine else "el"
        return "a" if feminine else "o"

    def agree(self, label: Label, forms: tuple[str, str]) -> str:
        """Of a word's (masculine, feminine) forms, the one said of `label`: es/pt the feminine after a feminine
        article ("la bomba P-101", "a bomba P-101" → "parada", "ella"), else the masculine (a name without an
        article, an asset of no kind, every name in en)."""
        feminine = self.language in FEMININE_ENDINGS and label.article in FEMININE_ARTICLES
        return forms[1] if feminine else forms[0]

    def of(self, label: Label) -> str:
        """ "de la bomba P-101", "del compresor C-201", "da bomba P-101", "of pump P-101"."""
        return f"of {label.noun}" if self.language == "en" else self.join("de", label)

    def quantity(self, tag: str) -> str:
        """What the tag measures, as a report calls it: the wording's name, else the first of its names."""
        q = quantity_of(tag)
        override = (self.quantities or {}).get(q.quantity)
        if override:
            return override
        names = next((v for language, v in q.names.items() if language == self.language), None)
        return names[0] if names else q.quantity.replace("_", " ")

    def tag(self, tag: str) -> Label | None:
        """ "la vibración de la bomba P-101" / "pump P-101's vibration" / "a vibração da bomba P-101"; None for a key
        that is not `<asset>.<measure>` (it names no quantity of an asset)."""
        asset, dot, measure = tag.partition(".")
        if not dot or not asset or not measure:
            return None
        name, owner = self.quantity(tag), self.asset(asset)
        if self.language == "en":
            return Label("", f"{owner.noun}'s {name}")
        return Label(self.article(name), f"{name} {self.of(owner)}")


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def said_with_names(text: str, tags: Iterable[str], grammar: Grammar, reasons: Iterable[str] = ()) -> str:
    """`text` with each of `tags` written as people name it ("P-101.vibration_mm_s alcanzó 9.12" → "La vibración de
    la bomba P-101 alcanzó 9.12"): an article before the id gives way to the name's own, a preposition fused with
    one is split and fused again with the name's ("del C-201.flow_m3h" → "del caudal del compresor C-201", "de
    P-101.vibration_mm_s" → "de la vibración de la bomba P-101"), and a name opening a sentence is capitalised.
    Each of `reasons` (stop reason codes) is said the same way: "por mechanical_seal_leak" → "por una fuga en el
    sello mecánico", pt "por cavitation" → "pela cavitação"."""
    named = {t.casefold(): label for t in set(tags) if (label := grammar.tag(t)) is not None}
    # Codes the wording names, and codes ("mechanical_seal_leak"); a reason written in words stays as written.
    named |= {c.casefold(): grammar.reason(c) for c in set(reasons) if c in (grammar.reasons or {}) or "_" in c}
    if not named:
        return text
    before = _BEFORE.get(grammar.language, {})
    words = "|".join(re.escape(w) for w in sorted(before, key=len, reverse=True))
    ids = "|".join(re.escape(t) for t in sorted(named, key=len, reverse=True))
    pattern = re.compile(rf"(?:(?<!\w)(?P<word>{words})\s+)?(?<![\w.-])(?P<tag>{ids})(?![\w-])", re.I)

    def name(match: re.Match[str]) -> str:
        label = named[match.group("tag").casefold()]
        word = match.group("word") or ""
        said = grammar.join(before.get(word.casefold(), ""), label)
        opening = re.search(r"(?:^|[.!?]\s+)$", text[: match.start()]) is not None
        return _capital(said) if opening or word[:1].isupper() else said

    return pattern.sub(name, text)


__all__ = ["ARTICLES", "FEMININE_ARTICLES", "FEMININE_ENDINGS", "Grammar", "Label", "said_with_names", "split_label"]
