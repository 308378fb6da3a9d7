"""Questions the agent refuses before planning: commands and writes to the plant (it has no tool that writes, and
says so rather than pretending), attempts to override its instructions, the future and what the plant's records do
not hold, and requests that are not about the plant at all. Patterns match folded text (resolve.fold), es/en/pt:
commands by their verbs (`verbs`) and by their shape (`shapes`), and what is not the plant's data (`topics`)."""

from __future__ import annotations

import re
from typing import Literal

from edge_agent.ask.answers import Refusal, RefusalReason
from edge_agent.ask.refusal import shapes, topics, verbs
from edge_agent.ask.resolve import (
    asides_apart,
    asked_sentence,
    asks,
    corrected,
    fold,
    newest_part,
    sentences_of,
    without_pasted,
    without_purpose,
)

_FUTURE = "the question asks for what the stored records do not hold: the future"
_ACTS = "the agent only reads plant data: it has no tool that acts on the plant or writes"
# What each rule reads: "whole", all the message holds (quoted e-mails too); "reply", the reply's own text (a passage
# it pastes that asks nothing left out: `resolve.without_pasted`); "said",
# the reply's own text but a remark that asks nothing: one that sets a topic aside ("No es por el clima, te prometo:
# ¿cuál fue…?", "Weather also very hot lah but that one not your job.", "el pronóstico ya lo vi"), by a negation or an
# "already" in it, and small talk beside a question asked with "?" (`_remark`).
Reads = Literal["whole", "reply", "said"]
_RULES: tuple[tuple[re.Pattern[str], RefusalReason, str, Reads], ...] = (
    (topics.INJECTION, "injection", "the question tries to change the agent's instructions", "whole"),
    (topics.CODE, "injection", "the question holds code or SQL for the agent to run", "whole"),
    (topics.OUT_OF_SCOPE, "out_of_scope", "the agent answers questions about the plant's stored data only", "said"),
    (topics.PERSONAL, "out_of_scope", "people's personal data and secrets are not the plant's data", "said"),
    (topics.MONEY, "out_of_scope", "the plant's records hold no costs or money", "said"),
    (topics.INVENTED, "out_of_scope", "the agent states figures read from the records, never made up", "reply"),
    (topics.DEFINITION, "out_of_scope", "the plant's records hold figures, not what a term means", "reply"),
    (topics.SCRAP_REASONS, "out_of_scope", "production records hold how much was scrapped, not why", "reply"),
    (topics.CHECK_REASONS, "out_of_scope", "quality records hold a check's verdict, not why it failed", "reply"),
    (
        topics.STATISTICS,
        "out_of_scope",
        "the tools give minimum, maximum, mean, first and last values and counts",
        "said",
    ),
    (topics.LAB_VALUES, "out_of_scope", "quality records hold a check's verdict, not what a sample measured", "said"),
    (topics.UNIT_MISMATCH, "out_of_scope", "the question says a unit of what the unit cannot measure", "reply"),
    (topics.NONSENSE, "out_of_scope", "the question does not make sense as one about the plant's data", "reply"),
    *((pattern, "write_request", _ACTS, "reply") for pattern in verbs.RULES),
    (topics.EXPORTS, "out_of_scope", "the agent answers in its reply: it exports, sends and schedules nothing", "said"),
    (topics.SHIPPED, "out_of_scope", "the plant's records hold what was made, not what was shipped", "said"),
)
# Read in the sentences that ask only: the future and a target where they are asked about, not in a remark beside the
# question ("mañana tengo junta…: ¿cuál fue…?", "A meta é 4000 m³ por dia. Quanto…?").
_ASKED_RULES: tuple[tuple[re.Pattern[str], RefusalReason, str], ...] = (
    (topics.FUTURE, "outside_data", _FUTURE),
    (topics.TARGETS, "out_of_scope", "the plant's records hold what was made, not targets"),
    (topics.ADVICE, "out_of_scope", "the plant's records hold what happened, not what to do"),
    (topics.COUNTERFACTUAL, "out_of_scope", "the plant's records hold what happened, not what would have"),
    (topics.HYPOTHETICAL, "out_of_scope", "the plant's records hold what happened, not what an act would do"),
    (topics.HOW_TO, "out_of_scope", "the plant's records hold what happened, not how to act on the plant"),
)
_SET_ASIDE = re.compile(
    r"\b(?:no (?:es|son|era|fue|va|lo|la|te|me|se|tiene|hace|pregunto|importa|estoy|quiero|necesito)|not|nao|nem|"
    r"nothing|never|nunca|ya (?:lo|la|vi|se)|ja (?:vi|sei|tenho|tem)|already|aside|aparte|apart from|besides)\b"
)


# A remark beside a question, asking nothing and ordering nothing, is small talk: "Hoy amaneció lloviendo a
# cántaros, los cipotes ni fueron a la escuela. ¿Cuántas alarmas…?", "Pijo, la máquina del café se ha vuelto a tragar
# un euro.", "Ugh, the traffic in the tunnel this morning was a joke." An order or a wish opens a sentence that asks
# for something ("Write me a poem.", "Cuéntame un chiste.", "Quiero la receta.").
_ORDER_OPENS = re.compile(
    r"^\W*(?:[a-z]+,\s*)?(?:(?:please|por favor|porfa|pls|ahora|now|also|tambien|tambem|y|e|and|ja agora|de paso|"
    r"by the way|btw)\s+)*(?:write|escrib\w*|"
    r"escrev\w*|translate|tradu\w*|tell|cuent\w*|cont[ae]\w*|book|reserv\w*|draft|redact\w*|redig\w*|compose|give|"
    r"dame|danos|da|de|send|mand\w*|envi\w*|sing|cant\w*|recommend|recom\w*|find|busc\w*|procur\w*|search|show|"
    r"muestr\w*|mostr\w*|predict|forecast|explain|explic\w*|quiero|quero|queremos|i want|we want|want|need|i need|"
    r"necesito|preciso|make|haz\w*|hag\w*|faz\w*|fac\w*|let'?s|vamos|bora|check|revis\w*|look|mira|olha|confirm\w*|"
    r"predic\w*|prev\w*|calcul\w*)\b"
)


# Someone's order reported: "el jefe mandó…", "the boss said…", "o supervisor pediu…".
_PASSED_ON = re.compile(
    r"\b(?:mandou|mandaram|mando|mandaron|ordenou|ordeno|ordered|said|says|dijo|dice|disse|diz|told|pidio|pediu|"
    r"wants|quiere|quer)\b"
)


def _remark(sentence: str) -> bool:
    return not asks(sentence) and not _ORDER_OPENS.search(fold(sentence))


_LINE_BREAK = re.compile(r"[ \t]*\n\s*")
# A sign-off closing a message and all after it: "… Obrigado desde já. Cumprimentos, Djamila (Praia)". Read by the
# command rules that go by a clause's shape alone (the injection and command rules read it all).
_SIGN_OFF = re.compile(
    r"(?:^|[.!?]\s+)(?:cumprimentos|saludos|regards|best regards|kind regards|atentamente|abracos|abrazos|att|atte|"
    r"cheers|obrigad[oa]|gracias|thanks|thank you|valeu|bendiciones|un abrazo|um abraco|ass|firma|sent from)\b.*$"
)
# A Spanish first person's past of a verb in -ar ("no mandé el reporte", "paré la P-101 a las 3") folds into the
# command it is not ("mande el reporte", "pare la P-101"): read as the third person's ("mandó"), a past, before
# folding. Not a vos command of a verb in -er ("prendé", "detené": `verbs.VOSEO`), nor a word that is no command.
_DONE_BY_ME = re.compile(r"\b\w{3,}é\b")
# ... and any verb said as the first person's past by what stands around it: "ya le pasé el informe", "Abrí yo la
# válvula" (a vos command in -í otherwise: "abrí la válvula").
_DONE_BY_ME_SAID = re.compile(
    r"\b(ya\s+(?:(?:le|lo|la|les|los|las|me|te|se|nos)\s+)?\w{2,})é\b|\b(\w{2,})([éí])(?=\s+yo\b)"
)


def _said_done(question: str) -> str:
    def past(m: re.Match[str]) -> str:
        word = m.group(0)
        if fold(word) not in verbs.COMMAND_WORDS or verbs.VOSEO.fullmatch(word):
            return word
        return word[:-1] + "ó"

    def said(m: re.Match[str]) -> str:
        return f"{m.group(1)}ó" if m.group(1) else m.group(2) + ("ó" if m.group(3) == "é" else "ió")

    return _DONE_BY_ME.sub(past, _DONE_BY_ME_SAID.sub(said, question))


# A team chat's marks: an @mention ("@bot reset counters" is the order itself), and the "/", "!" or "#" a command or
# a tag opens with ("/ack all", "#ignora-instrucciones": read as their words).
_CHAT_MARKS = re.compile(r"(?<![\w@])@[\w.-]+[,:]?\s*|(?<![\w/])[/!#](?=\w)")


def _folded(question: str, *, told: bool = False) -> str:
    """The message folded for the rules: a line break ends a sentence (an e-mail's greeting, body and signature), as
    a full stop does; a team chat's marks left out (`_CHAT_MARKS`); a command verb's swapped letters put right
    (`verbs.unswapped`); what is told but not asked dropped (`verbs.NOT_ASKED`), unless `told`."""
    chat = _CHAT_MARKS.sub("", question)
    folded = verbs.unswapped(fold(_LINE_BREAK.sub(". ", _said_done(chat.casefold()))))
    return folded if told else verbs.NOT_ASKED.sub(" ", folded)


def classify(question: str, lang: str) -> Refusal | None:
    """The refusal `question` gets before any planning, or None when it may be planned. `lang` is accepted for the
    callers' symmetry; the patterns cover es/en/pt at once because people mix them (a Spanish question with an
    English tag name)."""
    # each rule reads its text (`Reads`): an injection all the message holds, quoted e-mails and pasted passages too
    newest = without_pasted(newest_part(question))
    sentences = asides_apart(sentences_of(newest))  # "Now that the rain's quit, what's…?": a remark, then a question
    questioned = any(s.rstrip().endswith("?") for s in sentences)
    said = "\n".join(s for s in sentences if asks(s) or not (_SET_ASIDE.search(fold(s)) or questioned and _remark(s)))
    # (a purpose said beside the question is read by the injection rules only: "Para fins do laudo…,")
    folded = without_purpose(_folded(newest))
    texts = {"whole": _folded(question), "reply": folded, "said": without_purpose(_folded(said))}
    for pattern, reason, detail, reads in _RULES:
        if pattern.search(texts[reads]):
            return Refusal(reason=reason, detail=detail)
    if not any(asks(s) for s in sentences) and _PASSED_ON.search(told := _folded(newest, told=True)):
        if any(p.search(told) for p in verbs.RULES):
            # an order passed on, with nothing asked beside it, is the request: "O supervisor mandou zerar o contador."
            return Refusal(reason="write_request", detail=_ACTS)
    unsigned = _SIGN_OFF.sub("", folded)  # "Cumprimentos, Djamila (Praia)": a name that ends as "detenela" does
    if (
        verbs.VOSEO.search(_said_done(question.casefold()))
        or verbs.OWN_ACT_ASKED.search(newest.casefold())
        or shapes.acts_on_equipment(unsigned)
        or shapes.asked_to_act(unsigned)
    ):
        return Refusal(reason="write_request", detail=_ACTS)
    # a sentence that asks with "?", or the one that asks ("Necesito el número para el programa." after it)
    asking = [fold(s) for s in sentences if s.rstrip().endswith("?")] + [fold(asked_sentence(newest))]
    for pattern, reason, detail in _ASKED_RULES:
        if any(pattern.search(sentence) for sentence in asking):
            return Refusal(reason=reason, detail=detail)
    return None


def data_part(question: str, lang: str, refusal: Refusal) -> str | None:
    """The sentences of a message refused as out of scope or outside the data that are refused for nothing, where
    others are and none orders, writes or injects ("¿Cuánto produjo la L1 ayer? Y contame un chiste.", "…? Also, who
    won the game last night?"): what the plant is asked, answered without the errand. None when there is no such
    part."""
    if refusal.reason not in ("out_of_scope", "outside_data") or corrected(question) is not None:
        return None  # (a correction makes what it corrects the question: "¿…hoy? No, mañana: ¿cuánto…?")
    sentences = [s for s in _SENTENCE_STOP.split(newest_part(question)) if s.strip()]
    verdicts = [classify(sentence, lang) for sentence in sentences]
    if any(v is not None and v.reason not in ("out_of_scope", "outside_data") for v in verdicts):
        return None
    # what is kept asks itself, in the message's own text (not a quoted mail's line); a remark beside an errand
    # ("The pumps stopped twice yesterday… which one is cheaper to fly…?") asks nothing
    kept = [s for s, v in zip(sentences, verdicts, strict=True) if v is None and asks(s) and not _QUOTED_LINE.match(s)]
    return " ".join(kept) if kept and len(kept) < len(sentences) else None


# A message's sentences for `data_part`: ended by ".", "?" or "!" or a line break (a colon introduces the rest of its
# sentence: "Hazme un ranking de los operadores: ¿quién provoca más paros…?" is one request).
_SENTENCE_STOP = re.compile(r"(?<=[.!?])\s+|\s*\n\s*")
_QUOTED_LINE = re.compile(r"^\s*>")
