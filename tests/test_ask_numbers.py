"""Numbers dictated in words, read as digits (edge_agent.ask.resolve.numbers), and what the planner makes of them."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from edge_agent.ask.resolve.numbers import spelled_numbers
from edge_agent.ask.resolve.text import fold


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("cuantas paradas tuvo la p ciento uno ayer", "cuantas paradas tuvo la p 101 ayer"),
        ("el tanque t trescientos uno a las diez de la manana", "el tanque t 301 a las 10 de la manana"),
        ("compresor c doscientos uno entre las seis y las doce", "compresor c 201 entre las 6 y las 12"),
        ("de once a doce", "de 11 a 12"),
        ("a bomba cento e dois", "a bomba 102"),
        ("trinta e um", "31"),
        ("veintitres horas", "23 horas"),
        ("la bomba uno cero dos", "la bomba 102"),  # digit words in a row: an id read aloud
        ("pump one oh one", "pump 101"),
        ("at twenty-five past eleven", "at 25 past 11"),  # English tens and units, hyphened or not
        ("forty five minutes", "45 minutes"),
        # articles and prepositions stay words
        ("una parada", "una parada"),
        ("vibracao dos compressores", "vibracao dos compressores"),
        ("did it stop once", "did it stop once"),
        ("P-101 a las 10", "P-101 a las 10"),
    ],
)
def test_numbers_in_words_become_digits(text: str, expected: str) -> None:
    assert spelled_numbers(fold(text)) == fold(expected)


@given(st.text(max_size=200))
def test_any_text_keeps_its_other_characters(text: str) -> None:
    """Only number words change: the text without them is the text without their digits."""
    folded = fold(text)
    out = spelled_numbers(folded)
    assert spelled_numbers(out) == out  # digits are read once
    assert len(out) <= len(folded) + 3 * folded.count(" ") + 3
