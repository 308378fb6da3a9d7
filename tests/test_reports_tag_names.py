"""Tags as people name them: the grammar (`narrative.names`), the reference writer's process-values sentences, the
grounding check reading such a name back as the tag's, and a list's repeated item said once."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from edge_agent.base.quantities import quantity_of
from edge_agent.reports.facts import Fact
from edge_agent.reports.narrative import Section
from edge_agent.reports.narrative.generate import clean_narrative
from edge_agent.reports.narrative.grounding import check_bound, section_grounding, tag_named, tag_names
from edge_agent.reports.narrative.names import Grammar, said_with_names
from edge_agent.reports.narrative.phrasebook import tag_grammar
from edge_agent.reports.narrative.prose import dedupe_lists, prose_problems
from edge_agent.reports.narrative.reference import reference_text
from edge_agent.reports.request import ResolvedRequest, ResolvedWindow, Scope
from edge_agent.sim.plant import tag_names as plant_tags
from harness.shift import SHIFT_START, TZ
from tests.fixtures.reports import fact

WINDOW = Fact(
    id="F01",
    kind="window",
    subject="A",
    values={"start_at": "2026-11-29T12:00:00Z", "end_at": "2026-11-29T20:00:00Z", "duration_s": 28800},
    record_ids=[],
    record_count=0,
    record_ids_sha256="-",
)


def stats(fid: str, tag: str, low: float, high: float, mean: float, minute: int) -> Fact:
    at = f"2026-11-29T{12 + minute // 60:02d}:{minute % 60:02d}:00Z"
    values = {"min": low, "min_at": "2026-11-29T12:05:00Z", "max": high, "max_at": at, "mean": mean}
    return fact(fid, "tag_stats", tag, **values, samples_count=480, first=low, last=mean)


VIBRATION = stats("F02", "P-101.vibration_mm_s", 0.5, 9.12, 2.53, 160)
BEARING = stats("F03", "P-101.bearing_temp_c", 30.58, 57.56, 46.53, 161)
FLOW = stats("F04", "C-201.flow_m3h", 800.1, 887.86, 846.53, 162)
FACTS = [WINDOW, VIBRATION, BEARING, FLOW]


def request(language: str) -> ResolvedRequest:
    window = ResolvedWindow(start=SHIFT_START, end=SHIFT_START + timedelta(hours=8), shift="A", timezone=TZ)
    return ResolvedRequest(type="shift_summary", language=language, window=window, scope=Scope())


def offences(text: str) -> list[tuple[str, str]]:
    return [(o.text, o.kind) for o in check_bound(text, FACTS, TZ).offending]


class TestGrammar:
    @pytest.mark.parametrize(
        ("language", "tag", "said"),
        [
            ("es", "P-101.vibration_mm_s", "la vibración de la bomba P-101"),
            ("es", "C-201.vibration_mm_s", "la vibración del compresor C-201"),
            ("es", "P-101.flow_m3h", "el caudal de la bomba P-101"),
            ("es", "P-101.bearing_temp_c", "la temperatura del rodamiento de la bomba P-101"),
            ("es", "T-301.level_pct", "el nivel del tanque T-301"),
            ("es", "P-101.running", "el estado de marcha de la bomba P-101"),
            ("es", "X-9.current_a", "la corriente de X-9"),
            ("en", "P-101.vibration_mm_s", "pump P-101's vibration"),
            ("en", "C-201.flow_m3h", "compressor C-201's flow"),
            ("en", "P-101.running", "pump P-101's run state"),
            ("pt", "P-101.vibration_mm_s", "a vibração da bomba P-101"),
            ("pt", "C-201.flow_m3h", "a vazão do compressor C-201"),
            ("pt", "T-301.level_pct", "o nível do tanque T-301"),
            ("pt", "P-101.running", "o estado de funcionamento da bomba P-101"),
        ],
    )
    def test_a_tag_as_people_say_it(self, language: str, tag: str, said: str) -> None:
        """Articles agree with the quantity's gender, "de" contracts with the owner's article (del, da, do)."""
        label = tag_grammar(language).tag(tag)
        assert label is not None and label.the == said

    def test_a_key_that_names_no_quantity_of_an_asset_has_no_name(self) -> None:
        assert tag_grammar("es").tag("flow_total") is None
        assert tag_grammar("es").tag(".flow") is None

    def test_the_wording_s_exceptions_win_over_the_ending(self) -> None:
        """pt "vazão" ends like a masculine noun; the phrasebook lists it as feminine."""
        bare = Grammar("pt", {"P": "a bomba {id}"})
        assert bare.article("vazão") == "o"
        assert tag_grammar("pt").article("vazão") == "a"

    @pytest.mark.parametrize(
        ("language", "asset", "said"),
        [
            ("es", "P-101", "parada"),  # la bomba
            ("es", "V-201", "parada"),  # la válvula
            ("es", "C-201", "parado"),  # el compresor
            ("es", "T-301", "parado"),  # el tanque
            ("es", "X-9", "parado"),  # no kind: the masculine
            ("pt", "P-101", "parada"),  # a bomba
            ("pt", "C-201", "parado"),  # o compressor
            ("pt", "M-1", "parado"),  # o motor
            ("en", "P-101", "parado"),  # no gender in en: the first form
        ],
    )
    def test_a_word_agrees_with_the_asset_s_kind(self, language: str, asset: str, said: str) -> None:
        """`Grammar.agree`: the feminine form after a feminine article of the asset's kind, else the masculine."""
        grammar = tag_grammar(language)
        assert grammar.agree(grammar.asset(asset), ("parado", "parada")) == said

    def test_a_tag_s_name_agrees_by_its_own_article(self) -> None:
        """A tag agrees with its quantity's gender, not its asset's: "la corriente" of a compressor is feminine."""
        grammar = tag_grammar("es")
        current, flow = grammar.tag("C-201.current_a"), grammar.tag("P-101.flow_m3h")
        assert current is not None and flow is not None
        assert grammar.agree(current, ("activo", "activa")) == "activa"
        assert grammar.agree(flow, ("activo", "activa")) == "activo"


class TestGrounding:
    @pytest.mark.parametrize(
        "text",
        [
            "La vibración de la bomba P-101 alcanzó 9.12 mm/s a las 08:40, frente a una media de 2.53 mm/s.",
            "La temperatura del rodamiento de la bomba P-101 llegó a 57.56 °C.",
            "El caudal del compresor C-201 llegó a 887.86 m³/h a las 08:42.",
            "Pump P-101's vibration reached 9.12 mm/s at 08:40.",
            "The vibration of pump P-101 peaked at 9.12.",
            "A vibração da bomba P-101 atingiu 9.12 mm/s às 08:40.",
            "A vazão do compressor C-201 atingiu 887.86 m³/h.",
        ],
    )
    def test_a_tag_named_by_people_s_name_passes_with_its_own_figures(self, text: str) -> None:
        assert offences(text) == []

    @pytest.mark.parametrize(
        "text",
        [
            "La vibración de la bomba P-101 llegó a 57.56 a las 08:41.",
            "Pump P-101's vibration reached 57.56 at 08:41.",
            "The vibration of pump P-101 peaked at 57.56 at 08:41.",
            "A vibração da bomba P-101 atingiu 57.56 às 08:41.",
        ],
    )
    def test_another_tag_s_figure_after_the_name_is_refused(self, text: str) -> None:
        """57.56 and 08:41 are P-101's bearing temperature's: a fact of P-101, but not of its vibration."""
        assert offences(text) == [("57.56", "binding"), ("08:41", "binding")]

    def test_nothing_else_is_loosened(self) -> None:
        """An asset alone still binds every figure of its tags; a tag id binds its own; a name the asset has no tag
        of leaves the asset's binding as it was; another asset's figure stays refused."""
        assert offences("En P-101 se llegó a 57.56 y 9.12.") == []
        assert offences("P-101.vibration_mm_s alcanzó 57.56.") == [("57.56", "binding")]
        assert offences("La presión de la bomba P-101 llegó a 57.56.") == []
        assert offences("La vibración de la bomba P-101 llegó a 887.86.") == [("887.86", "binding")]
        assert offences("La vibración de la bomba P-101 llegó a 99.99.") == [("99.99", "number")]

    def test_a_name_far_from_the_id_is_not_joined_to_it(self) -> None:
        """Only linking words and one word (the asset's kind) may stand between the name and the id."""
        assert offences("La vibración subió mucho después en la bomba P-101, hasta 57.56.") == []

    def test_every_name_the_reference_writer_gives_binds_back_to_its_tag(self) -> None:
        """For each tag of the demo plant, in every language, the writer's name is read as that tag and no other."""
        tags = plant_tags()
        facts = [fact(f"F{i:02d}", "tag_stats", tag, max=1.0) for i, tag in enumerate(tags)]
        names = tag_names(facts)
        for language in ("es", "en", "pt"):
            grammar = tag_grammar(language)
            for tag in tags:
                label = grammar.tag(tag)
                assert label is not None
                text = f"{label.the[:1].upper()}{label.the[1:]} llegó a 1.0."
                asset = quantity_of(tag).asset
                (claim,) = [c for c in check_bound(text, facts, TZ).claims if c.kind == "id"]
                assert claim.text == asset
                assert tag_named(text, claim, names, 0) == {tag}, (language, text)


TAGS = [f.subject for f in FACTS[1:]]


class TestTheModelsTextSaidWithNames:
    """A model-written section is published with the keys it copied from its prompt said as people say them
    (`names.said_with_names`, grounding rules v12)."""

    @pytest.mark.parametrize(
        ("language", "model", "published"),
        [
            (
                "es",
                "P-101.vibration_mm_s alcanzó 9.12 a las 08:40. Otros picos: C-201.flow_m3h (máximo 887.86).",
                "La vibración de la bomba P-101 alcanzó 9.12 a las 08:40. Otros picos: el caudal del compresor C-201"
                " (máximo 887.86).",
            ),
            (
                "es",
                "El pico del C-201.flow_m3h y de P-101.bearing_temp_c.",
                "El pico del caudal del compresor C-201 y de la temperatura del rodamiento de la bomba P-101.",
            ),
            (
                "es",
                "Subió al C-201.flow_m3h; la P-101.vibration_mm_s bajó.",
                "Subió al caudal del compresor C-201; la vibración de la bomba P-101 bajó.",
            ),
            (
                "en",
                "P-101.vibration_mm_s peaked at 9.12; the C-201.flow_m3h rose.",
                "Pump P-101's vibration peaked at 9.12; compressor C-201's flow rose.",
            ),
            (
                "pt",
                "A P-101.vibration_mm_s atingiu 9.12, no C-201.flow_m3h e pelo P-101.bearing_temp_c.",
                "A vibração "
                "da bomba P-101 atingiu 9.12, na vazão do compressor C-201 e pela temperatura do rolamento da bomba "
                "P-101.",
            ),
        ],
    )
    def test_each_key_is_said_by_its_name_with_the_article_it_takes(
        self, language: str, model: str, published: str
    ) -> None:
        assert said_with_names(model, TAGS, tag_grammar(language)) == published

    @pytest.mark.parametrize(
        ("language", "model", "published"),
        [
            (
                "es",
                "La más larga fue la de P-101 por mechanical_seal_leak.",
                "La más larga fue la de P-101 por una fuga en el sello mecánico.",
            ),
            (
                "es",
                "La causa principal fue cavitation; luego el bearing_wear.",
                "La causa principal fue la cavitación; luego el desgaste de un rodamiento.",
            ),
            ("en", "P-101 stopped for the mechanical_seal_leak.", "P-101 stopped for a mechanical seal leak."),
            (
                "pt",
                "A P-101 parou por cavitation e por bearing_wear.",
                "A P-101 parou pela cavitação e pelo desgaste de um rolamento.",
            ),
        ],
    )
    def test_a_stop_reason_is_said_as_people_say_it(self, language: str, model: str, published: str) -> None:
        reasons = ["mechanical_seal_leak", "cavitation", "bearing_wear"]
        assert said_with_names(model, TAGS, tag_grammar(language), reasons) == published

    def test_a_reason_written_in_words_stays_as_written(self) -> None:
        """Only codes the wording names, or codes with underscores, are renamed: a plant's own words are kept."""
        text = "La parada fue por Falla eléctrica en tablero."
        assert said_with_names(text, [], tag_grammar("es"), ["Falla eléctrica en tablero"]) == text
        assert said_with_names("por seal_blown", [], tag_grammar("es"), ["seal_blown"]) == "por seal blown"

    def test_what_is_no_tag_of_the_section_stays_as_written(self) -> None:
        """An asset alone, a key the facts do not name, a key inside a longer word: untouched."""
        text = "P-101 paró; P-102.flow_m3h y XP-101.vibration_mm_s2 no."
        assert said_with_names(text, TAGS, tag_grammar("es")) == text

    @pytest.mark.parametrize("language", ["es", "en", "pt"])
    def test_the_published_text_passes_the_check_the_model_s_did(self, language: str) -> None:
        model = "P-101.vibration_mm_s alcanzó 9.12 a las 08:40, media 2.53; C-201.flow_m3h llegó a 887.86."
        assert offences(model) == []
        assert offences(said_with_names(model, TAGS, tag_grammar(language))) == []

    @given(st.text(max_size=200), st.sampled_from(["es", "en", "pt"]))
    def test_any_text_without_a_key_is_returned_as_it_came(self, text: str, language: str) -> None:
        if not any(t.casefold() in text.casefold() for t in TAGS):
            assert said_with_names(text, TAGS, tag_grammar(language)) == text

    @given(st.lists(st.sampled_from([*TAGS, " ", "de ", "del ", "la ", "the ", ". ", "x", "no ", ","]), max_size=12))
    def test_no_key_is_left_and_every_name_is_said_once_per_key(self, parts: list[str]) -> None:
        text = " ".join(parts)  # a key glued to another is no key (`test_what_is_no_tag...`)
        for language in ("es", "en", "pt"):
            said = said_with_names(text, TAGS, tag_grammar(language))
            assert not any(t in said for t in TAGS), said
            assert said.count(" P-101") + said.count("P-101's") >= sum(text.count(t) for t in TAGS if "P-101" in t)


class TestReferenceWriter:
    SECTION = Section("process_values", WINDOW, (VIBRATION, BEARING, FLOW), ())

    @pytest.mark.parametrize(
        ("language", "opening", "named"),
        [
            ("es", "la vibración de la bomba P-101", ("el caudal del compresor C-201", "9.12 mm/s", "57.56 °C")),
            ("en", "pump P-101's vibration", ("compressor C-201's flow", "9.12 mm/s", "887.86 m³/h")),
            ("pt", "a vibração da bomba P-101", ("a vazão do compressor C-201", "9.12 mm/s", "46.53 °C")),
        ],
    )
    def test_tags_are_named_as_people_say_them_with_units(
        self, language: str, opening: str, named: tuple[str, ...]
    ) -> None:
        text = reference_text(self.SECTION, request(language))
        assert ".vibration_mm_s" not in text and "_c " not in text and ".flow_m3h" not in text, text
        assert opening.casefold() in text.casefold(), text
        assert all(n in text for n in named), text
        assert text[:1].isupper()
        assert section_grounding(text, self.SECTION, TZ).ok

    @pytest.mark.parametrize(
        ("language", "tag", "from_", "to", "wordings"),
        [
            (
                "es",
                "P-101.running",
                "on",
                "off",
                (
                    "La bomba P-101 pasó de en marcha a parada a las 08:41.",
                    "A las 08:41, la bomba P-101 cambió de en marcha a parada.",
                    "Solo la bomba P-101 cambió de estado: de en marcha a parada, a las 08:41.",
                ),
            ),
            (
                "es",
                "C-201.running",
                "false",
                "true",
                (
                    "El compresor C-201 pasó de parado a en marcha a las 08:41.",
                    "A las 08:41, el compresor C-201 cambió de parado a en marcha.",
                    "Solo el compresor C-201 cambió de estado: de parado a en marcha, a las 08:41.",
                ),
            ),
            (
                "pt",
                "P-101.running",
                "True",
                "False",
                (
                    "A bomba P-101 passou de em funcionamento para parada às 08:41.",
                    "Às 08:41, a bomba P-101 mudou de em funcionamento para parada.",
                    "Só a bomba P-101 mudou de estado: de em funcionamento para parada, às 08:41.",
                ),
            ),
            (
                "pt",
                "C-201.running",
                "off",
                "on",
                (
                    "O compressor C-201 passou de parado para em funcionamento às 08:41.",
                    "Às 08:41, o compressor C-201 mudou de parado para em funcionamento.",
                    "Só o compressor C-201 mudou de estado: de parado para em funcionamento, às 08:41.",
                ),
            ),
            (
                "en",
                "P-101.running",
                "on",
                "off",
                (
                    "Pump P-101 went from running to stopped at 08:41.",
                    "At 08:41, pump P-101 changed from running to stopped.",
                    "Only pump P-101 changed state: from running to stopped, at 08:41.",
                ),
            ),
            (
                "es",
                "C-201.current_a",
                "true",
                "false",
                (
                    "La corriente del compresor C-201 pasó de activa a inactiva a las 08:41.",
                    "A las 08:41, la corriente del compresor C-201 cambió de activa a inactiva.",
                    "Solo la corriente del compresor C-201 cambió de estado: de activa a inactiva, a las 08:41.",
                ),
            ),
            (
                "pt",
                "P-101.flow_m3h",
                "off",
                "on",
                (
                    "A vazão da bomba P-101 passou de inativa para ativa às 08:41.",
                    "Às 08:41, a vazão da bomba P-101 mudou de inativa para ativa.",
                    "Só a vazão da bomba P-101 mudou de estado: de inativa para ativa, às 08:41.",
                ),
            ),
        ],
    )
    def test_a_two_state_change_is_said_in_words(
        self, language: str, tag: str, from_: str, to: str, wordings: tuple[str, ...]
    ) -> None:
        """A run state's on/off (or true/false) is said of its asset, in words agreeing with it ("la bomba P-101 pasó
        de en marcha a parada"), any other two-state tag's as active or not, agreeing with the tag's name: never "de
        on a off" or "de true a false"."""
        change = fact("F05", "state_change", tag, **{"from": from_, "to": to}, at="2026-11-29T14:41:00Z")
        section = Section("process_values", WINDOW, (change,), ())
        text = reference_text(section, request(language))
        assert text in wordings
        assert section_grounding(text, section, TZ).ok

    @pytest.mark.parametrize("language", ["es", "en", "pt"])
    def test_several_run_state_changes_are_said_in_words(self, language: str) -> None:
        """The first and last of several changes, in the list wording (`words.change`), each agreeing with its own
        asset; no raw value is left."""
        changes = tuple(
            fact(f"F0{i}", "state_change", tag, **{"from": a, "to": b}, at=f"2026-11-29T{h}:00:00Z")
            for i, (tag, a, b, h) in enumerate(
                [
                    ("P-101.running", "on", "off", 13),
                    ("C-201.running", "on", "off", 14),
                    ("P-101.running", "off", "on", 15),
                ],
                start=5,
            )
        )
        section = Section("process_values", WINDOW, changes, ())
        text = reference_text(section, request(language))
        first, last = {
            "es": ("la bomba P-101 de en marcha a parada", "la bomba P-101 de parada a en marcha"),
            "en": ("pump P-101 from running to stopped", "pump P-101 from stopped to running"),
            "pt": ("a bomba P-101 de em funcionamento para parada", "a bomba P-101 de parada para em funcionamento"),
        }[language]
        assert first in text and last in text, text
        assert not re.search(r"\b(?:on|off|true|false)\b", text, re.I), text
        assert section_grounding(text, section, TZ).ok

    @pytest.mark.parametrize(("from_", "to"), [("AUTO", "MAN"), ("on", "fault"), ("on", "true")])
    def test_other_states_are_written_as_the_facts_hold_them(self, from_: str, to: str) -> None:
        """A state that is not two-state (a mode), a change to one, or "on" to "true" (the same state twice): its
        values as recorded."""
        change = fact("F05", "state_change", "P-101.mode", **{"from": from_, "to": to}, at="2026-11-29T14:41:00Z")
        section = Section("process_values", WINDOW, (change,), ())
        text = reference_text(section, request("es"))
        assert f"de {from_} a {to}" in text, text


class TestRepeatedListItems:
    @pytest.mark.parametrize(
        ("text", "once"),
        [
            (
                "Durante el turno dejaron notas juan.perez, juan.perez, john.smith y otros.",
                "Durante el turno dejaron notas juan.perez, john.smith y otros.",
            ),
            (
                "No período deixaram notas john.smith, juan.perez, juan.perez e outros.",
                "No período deixaram notas john.smith, juan.perez e outros.",
            ),
            ("Notes were left by ana.silva and ana.silva.", "Notes were left by ana.silva."),
            ("Paradas en P-101, C-201 y P-101.", "Paradas en P-101 y C-201."),
        ],
    )
    def test_an_item_said_twice_in_a_list_is_said_once(self, text: str, once: str) -> None:
        assert dedupe_lists(text) == once
        assert clean_narrative(text) == once
        assert prose_problems(once, []) == []

    @pytest.mark.parametrize(
        "text",
        [
            "Dejaron notas juan.perez, john.smith y otros.",
            "Fallaron 2, 2 y 3 controles.",  # figures are never touched
            "P-101.vibration_mm_s alcanzó 9.12, y P-101.vibration_mm_s bajó.",
        ],
    )
    def test_anything_else_is_left_as_written(self, text: str) -> None:
        assert dedupe_lists(text) == text
