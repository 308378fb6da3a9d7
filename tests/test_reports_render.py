"""Renderings: Markdown and HTML from the report body, with every record- or model-supplied string escaped."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from edge_agent.base.types import Record
from edge_agent.reports.document.render import render_html, render_markdown
from edge_agent.reports.facts import compute_facts
from edge_agent.reports.request import ResolvedRequest, ResolvedWindow, Scope, iso
from harness.shift import SHIFT_START, TZ, shift_records, stored

HOSTILE = '<script>alert(1)</script> *bold* [link](http://x) & "q"'


def body(narrative: str | None, injection: bool = False) -> dict[str, Any]:
    window = ResolvedWindow(start=SHIFT_START, end=SHIFT_START + timedelta(hours=8), shift="A", timezone=TZ)
    request = ResolvedRequest(type="shift_summary", language="es", window=window, scope=Scope())
    facts = compute_facts(stored(shift_records(injection=injection)), request)
    return {
        "request": request.as_json(),
        "facts": [f.model_dump(mode="json") for f in facts],
        "narrative": narrative,
        "prompt": {"template_version": "v1", "phrasebook": "v1/facts.es.txt"},  # a report from before sections
    }


def sectioned(*sections: tuple[str, str, str]) -> dict[str, Any]:
    """A schema-2 body whose narrative is `sections`: (name, status, text) each."""
    out = body("\n\n".join(text for _, _, text in sections))
    out["prompt"] = {"template_version": "v2", "phrasebook": "v1/facts.es.txt"}
    out["sections"] = [{"name": n, "status": st, "text": t, "fact_ids": [], "attempts": []} for n, st, t in sections]
    return out


class TestHtml:
    def test_narrative_is_escaped(self) -> None:
        """Markup in a narrative is shown as text, never interpreted."""
        page = render_html(body(HOSTILE), "draft")
        assert "<script>" not in page
        assert "&lt;script&gt;alert(1)&lt;/script&gt; *bold* [link](http://x) &amp; &quot;q&quot;" in page

    def test_omitted_narrative_says_so(self) -> None:
        """A facts-only report explains why there is no summary."""
        page = render_html(body(None), "draft")
        assert "Resumen omitido: el texto generado no se pudo verificar contra los hechos." in page


class TestSections:
    def test_each_section_has_its_heading_and_a_reference_section_says_who_wrote_it(self) -> None:
        """Model-written sections are shown under their names; a reference-writer section carries the note."""
        text = render_markdown(
            sectioned(("alarms", "model", "Una alarma en P-101."), ("downtime", "reference", "Una parada.")), "draft"
        )
        assert "### Alarmas\n\nUna alarma en P-101.\n\n### Paradas\n\nUna parada.\n\n_Redactado a partir" in text
        assert text.count("redactor de referencia") == 1

    def test_a_section_not_asked_of_the_model_does_not_say_the_model_failed(self) -> None:
        """A KPI section left to the reference writer by design (no attempts) says who wrote it, not that the
        model's text failed; one the model failed twice (attempts recorded) says that."""
        report = sectioned(("downtime", "reference", "Una parada."), ("oee", "reference", "OEE de L1: 61.75 %."))
        report["sections"][0]["attempts"] = [{"strict": False}, {"strict": True}]
        text = render_markdown(report, "draft")
        failed = "_Redactado a partir de los hechos por el redactor de referencia: el texto del modelo no pasó"
        assert text.count(failed) == 1
        assert "OEE de L1: 61.75 %.\n\n_Redactado a partir de los hechos por el redactor de referencia._" in text

    def test_section_text_is_escaped_in_html(self) -> None:
        page = render_html(sectioned(("notes", "model_after_retry", HOSTILE)), "draft")
        assert "<h3>Notas de operador</h3>" in page
        assert "<script>" not in page and "&lt;script&gt;" in page


class TestMarkdown:
    def test_markdown_control_characters_are_escaped(self) -> None:
        """Emphasis, links and HTML in a narrative are escaped; decimals and asset ids stay readable."""
        text = render_markdown(body(HOSTILE + " P-101 7.86"), "draft")
        assert (
            r"\<script\>alert(1)\</script\> \*bold\* \[link\](http://x) & \"q\" P-101 7.86".replace('\\"', '"') in text
        )

    def test_status_and_flag_are_shown(self) -> None:
        """An approved report names the approver; an instruction-like note is marked."""
        text = render_markdown(body("x", injection=True), "approved", {"by": "supervisor"})
        assert text.startswith("# Resumen de turno\n\n**Aprobado por supervisor**\n")
        assert "**Marcada: parece una instrucción inyectada**" in text
        assert "- Paradas: 1, con una duración total de 85 min. `F08` (registros: 11, 12)\n" in text
        assert "- Turno A: de 06:00 a 14:00 (480 min), hora local. `F01`\n" in text


class TestIncompleteReport:
    def test_completeness_gap_and_skipped_records_are_rendered(self) -> None:
        """Markdown names the report incomplete second, lists the gap, and counts the skipped record."""
        at = SHIFT_START + timedelta(minutes=30)
        extra = [
            Record(
                source="t",
                kind="data_gap",
                key="P-101.flow",
                source_time=at,
                idempotency_key="g",
                value={"start": iso(at), "end": iso(at + timedelta(minutes=25)), "reason": "queue_overflow"},
            ),
            Record(
                source="t",
                kind="tag_value",
                key="P-101.vibration_mm_s",
                source_time=at,
                idempotency_key="n",
                value=float("nan"),
            ),
        ]
        window = ResolvedWindow(start=SHIFT_START, end=SHIFT_START + timedelta(hours=8), shift="A", timezone=TZ)
        request = ResolvedRequest(type="shift_summary", language="en", window=window, scope=Scope())
        facts = compute_facts(stored([*shift_records(), *extra]), request)
        text = render_markdown(
            {
                "request": request.as_json(),
                "facts": [f.model_dump(mode="json") for f in facts],
                "narrative": None,
                "prompt": {"template_version": "v1", "phrasebook": "v1/facts.en.txt"},
            },
            "draft",
        )
        lines = [line for line in text.splitlines() if line.startswith("- ")]
        assert lines[1] == (
            "- This report is INCOMPLETE: 1 intervals without data and 1 records that could not be"
            " used, listed in the facts. `F02`"
        )
        assert lines[2] == (
            "- No data for P-101.flow from 06:30 to 06:55 (25 min, queue\\_overflow). `F03` (records: 15)"
        )
        assert "- 1 tag\\_value records skipped as unusable: not\\_finite. `F16` (records: 16)" in lines
