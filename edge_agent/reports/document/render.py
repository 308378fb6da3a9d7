"""Markdown and HTML renderings of a report, from its body and sign-off status only (so they are deterministic).

Every string that came from a record or the model is escaped: Markdown control characters in Markdown, `html.escape`
in HTML. Nothing in a rendering is ever interpreted as markup from the data.
"""

from __future__ import annotations

import html
import re
from typing import Any

from edge_agent.reports.facts import Fact
from edge_agent.reports.narrative import (
    Phrasebook,
    Template,
    fact_sentence,
    format_time,
    load_phrasebook,
    load_template,
    safe_text,
    spans_days,
)
from edge_agent.reports.request import ResolvedRequest

# Characters that start emphasis, code, links, HTML or tables anywhere in a line; `.`, `-`, `+`, `#` only matter at
# the start of a line (lists, headings) and are escaped there only, so 7.86 and P-101 stay readable.
_MD_INLINE = re.compile(r"([\\`*_{}\[\]<>|~!])")
_MD_LINE_START = re.compile(r"^(\s*)([#+\-=]|\d+[.)])", re.M)


def md_escape(text: str) -> str:
    return _MD_LINE_START.sub(lambda m: m.group(1) + "\\" + m.group(2), _MD_INLINE.sub(r"\\\1", text))


def _status_line(book: Phrasebook, status: str, signoff: dict[str, Any] | None) -> str:
    by = (signoff or {}).get("by", "")
    return book.label(f"status.{status}", by=by)


def _lines(body: dict[str, Any]) -> tuple[Phrasebook, ResolvedRequest, list[Fact], list[tuple[Fact, str]]]:
    request = ResolvedRequest.model_validate(body["request"])
    facts = [Fact.model_validate(f) for f in body["facts"]]
    # v1 is the only phrasebook: reports written with the v1 whole-narrative prompt and with v2 sections share it.
    book = load_phrasebook(request.language)
    sentences = [(f, s) for f in facts if (s := fact_sentence(f, book, request)) is not None]
    return book, request, facts, sentences


def _sections(body: dict[str, Any], request: ResolvedRequest) -> list[tuple[str, str, str | None]]:
    """(section name, text, note) per narrative section; a v1 body (one paragraph, no sections) gives none."""
    if "sections" not in body:
        return []
    template = load_template(request.language)
    return [(template.names[s["name"]], s["text"], _note(template, s)) for s in body["sections"]]


def _note(template: Template, section: dict[str, Any]) -> str | None:
    """Under a reference-written section: why. A section with no attempts was not asked of the model (the KPI
    sections, reports.kpi.model_writes_sections); templates before v3 have only the failed-checks note."""
    if section["status"] != "reference":
        return None
    if not section["attempts"] and "reference_by_design" in template.labels:
        return template.labels["reference_by_design"]
    return template.labels["reference"]


def _notes(book: Phrasebook, request: ResolvedRequest, facts: list[Fact]) -> list[tuple[Fact, str, str, bool]]:
    from zoneinfo import ZoneInfo

    tz = ZoneInfo(request.window.timezone)
    out = []
    for f in facts:
        if f.kind == "operator_note":
            when = format_time(f.values["at"], tz, spans_days(request))
            author = safe_text(str(f.values.get("author") or "-"), book, 40)
            out.append((f, f"{when} · {author}", str(f.values["text"]), bool(f.values.get("flagged"))))
    return out


def render_markdown(body: dict[str, Any], status: str, signoff: dict[str, Any] | None = None) -> str:
    book, request, facts, sentences = _lines(body)
    title = md_escape(book.label("title." + request.type))
    out = [f"# {title}", "", f"**{md_escape(_status_line(book, status, signoff))}**", ""]
    out += [f"## {md_escape(book.label('narrative'))}", ""]
    sections = _sections(body, request)
    for name, text, note in sections:
        out += [f"### {md_escape(name)}", "", md_escape(text), ""]
        out += [f"_{md_escape(note)}_", ""] if note else []
    if not sections and body["narrative"] is not None:
        out += [md_escape(body["narrative"]), ""]
    elif not sections:
        out += [f"_{md_escape(book.label('omitted'))}_", ""]
    out += [f"## {md_escape(book.label('facts'))}", ""]
    for fact, sentence in sentences:
        ids = ", ".join(str(i) for i in fact.record_ids[:8])
        more = "…" if fact.record_count > 8 else ""
        source = f" ({book.label('records')}: {ids}{more})" if ids else ""
        out.append(f"- {md_escape(sentence)} `{fact.id}`{source}")
    notes = _notes(book, request, facts)
    if notes:
        out += ["", f"## {md_escape(book.label('notes'))}", ""]
        for fact, head, text, flagged in notes:
            flag = f" **{md_escape(book.label('flagged'))}**" if flagged else ""
            out.append(f"- {md_escape(head)}: {md_escape(text)} `{fact.id}`{flag}")
    return "\n".join(out) + "\n"


def render_html(body: dict[str, Any], status: str, signoff: dict[str, Any] | None = None) -> str:
    book, request, facts, sentences = _lines(body)
    e = html.escape
    out = [
        "<!DOCTYPE html>",
        f'<html lang="{e(request.language)}"><head><meta charset="utf-8">'
        f"<title>{e(book.label('title.' + request.type))}</title></head><body>",
        f"<h1>{e(book.label('title.' + request.type))}</h1>",
        f'<p class="status status-{e(status)}"><strong>{e(_status_line(book, status, signoff))}</strong></p>',
        f"<h2>{e(book.label('narrative'))}</h2>",
    ]
    sections = _sections(body, request)
    for name, text, note in sections:
        out += [f"<h3>{e(name)}</h3>", f'<p class="narrative">{e(text)}</p>']
        out += [f'<p class="narrative-note"><em>{e(note)}</em></p>'] if note else []
    if not sections and body["narrative"] is not None:
        out.append(f'<p class="narrative">{e(body["narrative"])}</p>')
    elif not sections:
        out.append(f'<p class="narrative omitted"><em>{e(book.label("omitted"))}</em></p>')
    out += [f"<h2>{e(book.label('facts'))}</h2>", "<ul>"]
    for fact, sentence in sentences:
        ids = " ".join(str(i) for i in fact.record_ids)
        out.append(f'<li id="{e(fact.id)}" data-records="{e(ids)}">{e(sentence)} <code>{e(fact.id)}</code></li>')
    out.append("</ul>")
    notes = _notes(book, request, facts)
    if notes:
        out += [f"<h2>{e(book.label('notes'))}</h2>", "<ul>"]
        for fact, head, text, flagged in notes:
            flag = f' <strong class="flagged">{e(book.label("flagged"))}</strong>' if flagged else ""
            out.append(f'<li id="{e(fact.id)}">{e(head)}: {e(text)} <code>{e(fact.id)}</code>{flag}</li>')
        out.append("</ul>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"
