"""Question text folded for matching: lower case, accents and ¿¡ dropped, whitespace collapsed, so "¿Cuál es la
vibración?" and "cual es la vibracion" match the same rules; and the sentence of a message that asks."""

from __future__ import annotations

import functools
import re
import unicodedata

_SPACE = re.compile(r"\s+")
# Dropped before matching: Spanish opening marks, the quotes people paste around names and markdown's marks; ’ becomes
# ', dashes "-".
_DROPPED = str.maketrans(
    {"¿": " ", "¡": " ", "“": " ", "”": " ", '"': " ", "«": " ", "»": " ", "’": "'", "–": "-", "—": "-"}
    # markdown's emphasis and code marks: "**Reconheça e apague** todos os alarmes"
    | {"*": " ", "`": " "}
    # emoji that stand for a word ("how many 🚨 on C-201", "⛔ paradas L1 hoy"); others are dropped (`_EMOJI`)
    | {"🚨": " alarms ", "🛑": " stops ", "⛔": " stops ", "🌡": " temperature ", "💧": " flow "}
)
_EMOJI = re.compile("[\U0001f000-\U0001faff\u2600-\u27bf\ufe0f\u200d]")


@functools.lru_cache(maxsize=1 << 14)
def fold(text: str) -> str:
    """`text` in lower case without accents (NFKD, combining marks removed) and with single spaces. Remembered: a
    question folds its site's names and aliases over and over (216,000 folds for the bench's 3,530 questions)."""
    decomposed = unicodedata.normalize("NFKD", _EMOJI.sub(" ", text.translate(_DROPPED)).casefold())
    # combining marks, and format characters (zero-width spaces and joiners: "re\u200bset" is "reset")
    bare = "".join(ch for ch in decomposed if not unicodedata.combining(ch) and unicodedata.category(ch) != "Cf")
    # (spaced out before spaces are collapsed: "s h u t   d o w n" is two words)
    spaced = _SPACED_OUT.sub(lambda m: m.group(0).replace(" ", ""), bare)
    typed = _STRETCHED.sub(lambda m: m.group(1) or m.group(2), _SPACE.sub(" ", spaced))
    spoken = _DICTATED.sub(lambda m: DICTATED[m.group(1)], typed.strip())
    return _BY_EAR_WORD.sub(lambda m: BY_EAR[m.group(0)], _WON.sub("one", spoken)).strip()


# A letter held down ("cuaaal", "anteriorrr", "whaaat wassss"): three or more of a vowel, or of a consonant ending a
# word, are one (no word of es/en/pt has three; "i" and "x" are kept for roman numerals, "turno III"; "ddda" is no
# held key). A word typed letter by letter ("o n t e m"): the word, from four letters up (single-letter words, "a",
# "o", "e", "y", never run four in a row).
_STRETCHED = re.compile(r"([aeouy])\1{2,}|([b-df-hj-np-tv-wz])\2{2,}(?![a-z])")
_SPACED_OUT = re.compile(r"(?<![\w-])(?:[a-z] ){3,}[a-z](?![\w-])")


# The plant's words written by ear, as people who write as they speak do ("kual fue la bibrasion mas alta de la
# bonba 101", "wat woz di avrij flo", "kual foi a vibrassaum du conpresor"): read as the words. Only spellings that
# are no word of es/en/pt ("tubo", "echo", "las", "di" are words, and stay).
BY_EAR = {
    **dict.fromkeys(("kual",), "cual"),
    **dict.fromkeys(("kuanto", "kuantu"), "cuanto"),
    **dict.fromkeys(("kuanta",), "cuanta"),
    **dict.fromkeys(("kuantos", "kuantus"), "cuantos"),
    **dict.fromkeys(("kuantas", "kuantaz"), "cuantas"),
    **dict.fromkeys(("bibrasion", "bibracion", "vibrashun", "vibrashon", "vibreshun"), "vibracion"),
    **dict.fromkeys(("vibrassaum", "vibrasaum", "vibrassao", "vibrasao"), "vibracao"),
    **dict.fromkeys(("vazaum", "vasaum", "vasao"), "vazao"),
    **dict.fromkeys(("tempracher", "temprature", "tempracha", "temprechur"), "temperature"),
    **dict.fromkeys(("tenperatura",), "temperatura"),
    **dict.fromkeys(("nibel", "nivell"), "nivel"),
    **dict.fromkeys(("bonba", "vomba"), "bomba"),
    **dict.fromkeys(("bonbas", "vombas"), "bombas"),
    **dict.fromkeys(("conpresor", "konpresor", "compresorr"), "compresor"),
    **dict.fromkeys(("conpressor", "konpressor", "conpresser"), "compressor"),
    **dict.fromkeys(("tankke", "tanke", "tanki", "tanky"), "tanque"),
    **dict.fromkeys(("tangk", "tenk"), "tank"),
    **dict.fromkeys(("paradaz",), "paradas"),
    **dict.fromkeys(("alarmi",), "alarmes"),
    **dict.fromkeys(("analizi", "analizis"), "analises"),
    **dict.fromkeys(("kualidadi", "kualidade", "calidadi"), "qualidade"),
    **dict.fromkeys(("kalidad", "kualidad"), "calidad"),
    **dict.fromkeys(("qwality", "kwality", "kuality"), "quality"),
    **dict.fromkeys(("cheks", "chekz"), "checks"),
    **dict.fromkeys(("produsio", "produciu"), "produjo"),
    **dict.fromkeys(("prodoos", "prodooce", "prodyuce"), "produce"),
    **dict.fromkeys(("scrapp",), "scrap"),
    **dict.fromkeys(("avrij", "averij", "avredge"), "average"),
    **dict.fromkeys(("hiest", "haiest", "higest"), "highest"),
    **dict.fromkeys(("lowes", "loest"), "lowest"),
    **dict.fromkeys(("minnits", "minits", "minnets"), "minutes"),
    **dict.fromkeys(("meny",), "many"),
    **dict.fromkeys(("woz", "wuz"), "was"),
    **dict.fromkeys(("wat", "wot"), "what"),
    **dict.fromkeys(("flo",), "flow"),
    **dict.fromkeys(("aktiv",), "active"),
    **dict.fromkeys(("bearin",), "bearing"),
    **dict.fromkeys(("durin",), "during"),
    **dict.fromkeys(("ke",), "que"),
    **dict.fromkeys(("kada",), "cada"),
    # English loanwords respelled as Spanish and Portuguese say them: "el estop", "el daun taim", "o escrape"
    **dict.fromkeys(("estop", "estope"), "stop"),
    **dict.fromkeys(("estops", "estopes", "estopis"), "stops"),
    **dict.fromkeys(("daun taim", "dauntaim", "dauntaime", "daun-taim", "dountaim"), "downtime"),
    **dict.fromkeys(("flou",), "flow"),
    **dict.fromkeys(("escrap", "escrape", "escrapi", "eskrap"), "scrap"),
    **dict.fromkeys(("chequinho", "chequinhos"), "checks"),
    **dict.fromkeys(("kow-dal", "kowdal", "cow-dal", "kaudal"), "caudal"),
    **dict.fromkeys(("longes",), "longest"),
    **dict.fromkeys(("yeer",), "year"),
    **dict.fromkeys(("recoinhesi", "reconhesi", "rekonhesi"), "reconhece"),
    # chat's short forms of time words ("yday", pt "ont", "hj"), "fortnight", Scots "tae"/"fae", Australian "arvo", a
    # dropped g ("mornin"), Caribbean "dis"/"dat", and time words by ear ("desde las 8 de aller asta las 6", "das 8 da
    # noiti até as 6 de oje", "anoshe", "dis mawnin", "onti di tardi"); Spanish "ay" is an interjection, not "ayer"
    **dict.fromkeys(("yday", "ystdy", "ystrdy", "yest"), "yesterday"),
    **dict.fromkeys(("ont", "onti"), "ontem"),
    **dict.fromkeys(("hj", "oje", "oji"), "hoje"),
    **dict.fromkeys(("fortnight",), "2 weeks"),
    **dict.fromkeys(("tae",), "to"),
    **dict.fromkeys(("fae",), "from"),
    **dict.fromkeys(("arvo", "aftanoon", "aftanun"), "afternoon"),
    **dict.fromkeys(("mornin", "mawnin", "mawning"), "morning"),
    **dict.fromkeys(("evenin",), "evening"),
    **dict.fromkeys(("nite", "neet"), "night"),
    **dict.fromkeys(("tonite",), "tonight"),
    **dict.fromkeys(("dis",), "this"),
    **dict.fromkeys(("dat",), "that"),
    **dict.fromkeys(("aller", "ayes"), "ayer"),  # "ayes": a phone's autocorrect of "ayer"
    **dict.fromkeys(("asta",), "hasta"),
    **dict.fromkeys(("noiti",), "noite"),
    **dict.fromkeys(("oy",), "hoy"),  # Spanish chat drops the h ("cuantas alarmas lleva oy")
    **dict.fromkeys(("anoshe",), "anoche"),
    **dict.fromkeys(("noshe",), "noche"),
    **dict.fromkeys(("medianoshe",), "medianoche"),
    **dict.fromkeys(("aorita",), "ahorita"),
    **dict.fromkeys(("tuday", "tudei"), "today"),
    **dict.fromkeys(("tardi",), "tarde"),
    **dict.fromkeys(("turnu",), "turno"),
    **dict.fromkeys(("passadu",), "passado"),
    **dict.fromkeys(("antionti",), "anteontem"),
    **dict.fromkeys(("til",), "till"),
    **dict.fromkeys(("befo",), "before"),
    **dict.fromkeys(("shif",), "shift"),
}
# Punctuation said aloud, as dictation writes it out ("abre interrogación … signo de interrogación", "comma",
# "question mark", "vírgula"): the mark.
DICTATED = {
    **dict.fromkeys(("abre interrogacion", "abrir interrogacion", "abre signo de interrogacion"), " "),
    **dict.fromkeys(("cierra interrogacion", "signo de interrogacion", "question mark", "ponto de interrogacao"), "?"),
    **dict.fromkeys(("full stop", "punto y aparte", "punto y seguido", "ponto final"), "."),
    **dict.fromkeys(("comma", "virgula"), ","),
    **dict.fromkeys(("new line", "nueva linea", "nova linha"), "."),
}
_DICTATED = re.compile(r"\s?\b(" + "|".join(sorted(DICTATED, key=len, reverse=True)) + r")\b")
# "pump won oh won": dictation's homophone of "one" said among digits.
_WON = re.compile(r"\bwon\b(?=\s+(?:oh|o|zero)\b)|(?<=\boh )won\b")
_BY_EAR_WORD = re.compile(r"(?<![\w-])(?:" + "|".join(sorted(BY_EAR, key=len, reverse=True)) + r")(?![\w-])")


# A greeting opening a message, with what follows it up to its punctuation ("Afternoon all.", "Buenas, acá cerrando
# el turno:", "Bom dia, caros."): "afternoon" there is no window.
_GREETING = re.compile(
    r"^\s*[¡¿]?(?:(?:good\s+)?(?:morning|afternoon|evening|day)|buen(?:os|as)?\s+(?:d[ií]as?|tardes|noches)|buenas|"
    r"bom\s+dia|boa\s+(?:tarde|noite)|hola|ol[aá]|hello|hi|hey|"
    # the agent called by what it is: "Robô, quantos…", "Asistente, ¿cuál…?"
    r"rob[oô]t?|bot|asistente|assistente|agente|agent)\b[^.!?,:;]{0,30}[.!?,:;]\s*",
    re.IGNORECASE,
)
# a colon too ("O João acha que …: qual era…?"), and a line break (an e-mail's lines); not after "a.m.", "p.m."
# ("at 4:30 p.m. yesterday?"), nor inside a reference ("Ref.ª: OT-4471", "(ref. ALM-2084)")
_SENTENCE_END = re.compile(
    r"(?<=[.!?:;])(?<![ap]\.m\.)(?<![AP]\.M\.)(?<![Rr]ef\.)(?<![Rr]ef:)(?<![Rr]ef\.:)(?<![Rr]ef\.ª)(?<![Rr]ef\.ª:)"
    r"\s+|\s*\n\s*"
)


# A sentence that asks without a "?": a question word or a request for a figure ("Para el informe necesito el caudal
# medio de la P-102…", "Before I forget, the boss wants to know how many times…", "preciso de saber qual era…").
_ASKS = re.compile(
    r"\b(?:cual|cuales|cuanto|cuanta|cuantos|cuantas|qual|quais|quanto|quanta|quantos|quantas|what|which|how many|"
    r"how much|how long|necesito|necesitamos|preciso|precisamos|quiero saber|quero saber|wants? to know|"
    r"want to know|need to know|i need|we need|quiere saber|quer saber|tell me|dime|digame|me diz|me dice|queria|"
    r"quisiera|gostaria|i'?d like|i would like|could you|can you|podria|poderia|podrias|give me|give us|gimme|dame|"
    r"danos|deme|me da|me passa|me das|"
    # "Kindly share the average…", "let me know how many…", "pásame el máximo…", "me manda a média…"
    r"kindly|please (?:share|provide|send)|share with me|let me know|let us know|pasame|mandame|muestrame|me manda|"
    r"me mostra|me fala)\b"
)

# A question that is small talk ("Hola, Cata, ¿cómo estái?", "How are you?", "Tudo bem?"): it asks nothing of the data.
_SMALL_TALK = re.compile(
    r"^\W*(?:\w+\W+){0,3}(?:como (?:esta|estas|estai|estan|andas|anda|va|vai|vao|le va|te va)|que tal|"
    r"how are (?:you|things)|how'?s it going|how (?:have you been|you doing)|tudo (?:bem|bom|certo)|"
    r"todo bien|all good)\W*(?:\w+\W*){0,2}$"
)


_REQUEST_WORDS = 4
# After a question, a wish to judge its answer asks nothing more: "Quero saber se hoje em dia tá pior", "I want to
# know whether it got worse"; nor does a need to know ending the message ("…e preciso de saber.").
_WHETHER = re.compile(r"\b(?:saber|know|ver|see|check) (?:se|si|if|whether)\b|\b(?:saber|know)\W*$")


# Where an e-mail's quoted part begins: a quoted line ("> …"), an attribution ("On Mon, Ana wrote:", "El lun., Jorge
# Soto <js@x.cl> escribió:", "Gustavo Rech escreveu:"), an original-message rule, or a header block ("De: …",
# "From: …") after the reply.
_QUOTED = re.compile(
    r"^[ \t]*(?:>|.{0,160}\b(?:wrote|escribi[oó]|escreveu|a [ée]crit|schrieb)\s*:[ \t]*$|-{2,}\s*(?:original message|"
    r"mensaje original|mensagem original)|(?:de|from|von|enviado|sent)\s*:\s)",
    re.IGNORECASE | re.MULTILINE,
)


# An e-mail's trailer, a line of it: a confidentiality notice ("Este mensaje es confidencial; si no es usted el
# destinatario, bórrelo y notifique al remitente", "If you received this message in error, please delete it…") and
# the mail program's "Sent from my iPhone", "Enviado desde Outlook": the sender's lawyers and software speak there,
# not the asker (a notice names a recipient or confidentiality and what to do about an error).
_TRAILER = re.compile(
    r"^(?=[^\n]*\b(?:confidencial\w*|confidential\w*|destinat[aá]ri[oa]s?|recipients?|addressee|remitente|remetente|"
    r"sender)\b)(?=[^\n]*\b(?:error|erro|engano|delete|b[oó]rr\w*|elim[ií]n\w*|apag\w*|notif\w*|avis\w*|"
    r"prohib\w*|proib\w*|destroy\w*|destru\w*)\b)[^\n]*$"
    r"|^[ \t]*(?:sent from (?:my|outlook|mail)|enviado desde|enviado do|enviado de|get outlook for|obtener outlook)\b"
    r"[^\n]*$",
    re.IGNORECASE | re.MULTILINE,
)


# An e-mail's sign-off on a line of its own ("Kind regards,", "Saludos cordiales,", "Atte.", "Fico no aguardo."):
# the signature below it (a name, a title, a phone, an address: "Ship Channel site, Pasadena, TX") names no subject
# or site of the question's. (The refusal rules still read it: "Nota para o assistente: … liga a P-102" below a
# signature is an order.)
_SIGN_OFF_LINE = re.compile(
    r"^[ \t]*(?:thanks|thank you|many thanks|cheers|regards|kind regards|best regards|warm regards|best|sincerely|"
    r"saludos(?: cordiales)?|un saludo|atte|atentamente|cordialmente|gracias|muchas gracias|quedo atent[oa]|"
    r"obrigad[oa]|muito obrigad[oa]|att|atenciosamente|abra[cç]os?|cumprimentos|com os melhores cumprimentos|"
    r"melhores cumprimentos|fico no aguardo)[ \t]*[,.!]?[ \t]*$",
    re.IGNORECASE | re.MULTILINE,
)


def without_signature(question: str) -> str:
    """`question` without its signature (`_SIGN_OFF_LINE` on), where what is above asks and what is below does not (a
    forwarded mail below a sign-off asks its own question)."""
    sign_off = _SIGN_OFF_LINE.search(question)
    if sign_off is None or not _asks_itself(question[: sign_off.start()]) or _asks_itself(question[sign_off.end() :]):
        return question
    return question[: sign_off.start()].rstrip()


def newest_part(question: str) -> str:
    """A reply's own text, the quoted e-mails below it left out ("Re: Re: turno B … > ¿Quieres que revise…?"): only
    where that text asks something itself (a forward's note, "Mira esto:", asks nothing; the forwarded mail does).
    An e-mail's trailer (`_TRAILER`) is left out too, where the rest asks (a notice alone asks nothing)."""
    if _asks_itself(untrailed := _TRAILER.sub("", question).strip()):
        question = untrailed
    for match in _QUOTED.finditer(question):
        head = question[: match.start()]
        if match.start() > 0 and _asks_itself(head):
            return head.rstrip()
    return question


# A passage pasted after a colon in quotation marks: "Log del PLC: «10:02:14 P-102 RUN CMD OK src=HMI-03»", "From
# the CMMS: 'WO 4471902 - P-102 - realign coupling'". 400 characters: a log line, a ticket's or a note's text.
_PASTED = re.compile(r":\s*(?:«([^»]{3,400})»|“([^”]{3,400})”|\"([^\"]{3,400})\"|'([^']{3,400})'(?=[\s.,;:!?]|$))")


# ... or a block of lines after a colon, ended by a blank line: "Captura del HMI:\nT-301 NIVEL 56.8 %   SP 55 %\n\n¿Cuál
# ha sido…?". 8 lines: a screen's or a log's few lines.
_PASTED_BLOCK = re.compile(r":[ \t]*\n((?:[ \t]*\S[^\n]*\n){1,8})[ \t]*\n")


def without_pasted(question: str) -> str:
    """`question` without the passages it pastes (`_PASTED`, `_PASTED_BLOCK`) that ask nothing themselves, where
    the rest asks a question of its own with "?" ("Log del PLC: «… RUN CMD OK …». ¿Cuál fue…?"); a question relayed
    in quotes stays ("Boss wants to know: "what was the highest…?""), and so does an order the rest passes on ("…:
    "Shut down C-201 now." Go ahead and do what he says.")."""

    def told(match: re.Match[str]) -> str:
        return match.group(0) if _asks_itself(next(g for g in match.groups() if g)) else ":"

    rest = _PASTED_BLOCK.sub(lambda m: m.group(0) if "?" in m.group(1) else ":\n\n", _PASTED.sub(told, question))
    return rest if "?" in rest else question


def _asks_itself(text: str) -> bool:
    return "?" in text or _ASKS.search(fold(text)) is not None


def sentences_of(question: str) -> list[str]:
    """The message's sentences as written, a greeting opening it left out."""
    return [s for s in _SENTENCE_END.split(_GREETING.sub("", question, count=1)) if s.strip()]


# A document's reference, folded: "Ref.ª: OT-4471", "(ref. ALM-2084)", "com referência ao chamado CH-4471", "incident
# INC-6634", a work order's "OT-5520", "OS-2290", "WO-118". Its code names no equipment and no clock time.
_REFERENCE = re.compile(
    r"\b(?:(?:ref(?:erence|erencia|\.?a|\.?o)?s?|ticket|chamado|incidente?|incident|incidencia|ocurrencia|ocorrencia|"
    r"caso|case|request|"
    r"solicitud|solicitacao|pedido|folio|expediente|protocolo)\b[\s.:#-]*(?:(?:ao|al|a|do|de|del|to|the|el|o)\s+)?"
    r"(?:(?:chamado|ticket|incidente?|incident|caso|case|pedido|orden|ordem|work order)\s+)?[a-z]{0,4}-?\d{2,7}|"
    r"(?:ot|os|wo|inc|sr|ch|nc|ncr|req)-?\d{3,7})\b"
)


# An aside opening a question, set off by a comma: "Con la P-102 en mantención, …", "Now that the rain's quit, …",
# "Given the compressor tripped earlier on, …", "Uai, já que o compressor tá parado, …". 60 characters: a clause.
_OPENING_ASIDE = re.compile(
    r"^\W*(?:\w+,\s*)?(?:con|with|com|estando|given(?: that)?|now that|ahora que|ya que|j[aá] que|agora que)\b"
    r"[^,;:?!.]{1,60},\s*",
    re.IGNORECASE,
)


def without_aside(question: str) -> str:
    """`question` without its opening aside (`_OPENING_ASIDE`)."""
    return _OPENING_ASIDE.sub("", question, count=1)


def asides_apart(sentences: list[str]) -> list[str]:
    """`sentences` with each one's opening aside (`_OPENING_ASIDE`) set apart as a sentence of its own."""
    return [part for s in sentences for part in _split_aside(s)]


def _split_aside(sentence: str) -> list[str]:
    match = _OPENING_ASIDE.match(sentence)
    return [sentence] if match is None else [match.group(0).rstrip(" ,") + ".", sentence[match.end() :]]


# A correction made mid-message: "¿…la P-101 ayer? No, perdón, de la P-102.", "ayer a las 8, no, a las 9 de la
# noche", "yesterday — I mean today —", "no turno B, digo, no turno C", "hoje às 7, não, às 8". After a mark or a
# dash; a bare "no"/"não" only with its comma.
_CORRECTION = re.compile(
    r"(?:[,.;:?!…]|\s[—–-])\s*(?:(?:no|n[aã]o)\s*[,.!]?\s+)?(?:(?:chico|compadre|hombre|pues),?\s+)?"
    r"(?:perd[oó]n|perd[aã]o|desculp[ae]|sorry|i mean|i meant|no wait|wait|esp[eé]rate|espera|digo|quise decir|"
    r"quer dizer|quero dizer|ali[aá]s|mejor dicho|ou melhor|er,? i mean)\b"
    # (an apology is none: "Sorry to bother you", "desculpe a amolação", "perdón por la molestia")
    r"(?!\s+(?:to|for|about|a|o|as|os|pela|pelo|por|la|el|que|if|si|se|i'?m|ma'?am|sir|senhor|senhora)\b)[,:.]?\s*"
    r"|(?:[,;?!…]|\.\.\.|\s[—–-])\s*(?:no|n[aã]o),\s+(?:(?:chico|compadre|hombre|pues),?\s+)?",
    re.IGNORECASE,
)


# What the correction takes back, said beside it: "Perdão, no compressor, não no tanque.", "Perdón, anoche no: en el
# turno A de ayer".
_TAKEN_BACK = re.compile(
    r",?\s*\b(?:n[aã]o|not|no)\s+(?:n[oa]s?|the|el|la|del|de la|do|da|en el|on)\s+\w+(?:[\s-]+\d+)?\s*(?=[.!?]|$)"
    r"|^[^:.;,]{1,30}\s+(?:no|n[aã]o)\s*[:,]\s*",
    re.IGNORECASE,
)


def corrected(question: str) -> tuple[str, str] | None:
    """`question` split at its last correction (`_CORRECTION`): what was said, and what puts it right (what it takes
    back left out, `_TAKEN_BACK`); None when it makes none."""
    marks = list(_CORRECTION.finditer(question))
    if not marks or not question[marks[-1].end() :].strip():
        return None
    return question[: marks[-1].start()], _TAKEN_BACK.sub(" ", question[marks[-1].end() :]).strip()


def without_references(folded: str) -> str:
    """`folded` with each document reference (`_REFERENCE`) left out."""
    return _REFERENCE.sub(" ", folded)


def asks(sentence: str) -> bool:
    """Whether `sentence` asks: it ends in "?" or asks in other words (`_ASKS`)."""
    return sentence.rstrip().endswith("?") or _ASKS.search(fold(sentence)) is not None


def asked_sentence(question: str) -> str:
    """The sentence a message asks in, as written: the last one ending in "?" where the message has several, else the
    last one asking in other words (`_ASKS`), else the message without a greeting opening it (its case kept: "in A
    shift" is the shift, "in a shift" the article)."""
    sentences = sentences_of(question)
    text = _GREETING.sub("", question, count=1)
    asking = [s for s in sentences if s.rstrip().endswith("?") and not _SMALL_TALK.search(fold(s))]
    # a request after the last question is what is asked ("Tá pior que semana passada? Só me diz quantas paradas…"),
    # when it says more than four words ("Give me the date.", "Give us a number." only ask for the answer of what
    # was asked before them)
    after = sentences[sentences.index(asking[-1]) + 1 :] if asking else sentences
    requests = [s for s in after if _ASKS.search(fold(s)) and not (asking and _WHETHER.search(fold(s)))]
    longer = [s for s in requests if len(s.split()) > _REQUEST_WORDS]
    asking += longer if asking or longer else requests
    return asking[-1] if len(sentences) > 1 and asking else text


# A purpose said before or beside the question, up to its clause's end: "Con el fin de completar el informe…,", "Para
# fins do laudo de análise de vibração…,", "For the purposes of the overnight review…,", "com a finalidade de
# atualizar o indicador…": what the figure is for, neither asked of the records nor ordered (folded text).
PURPOSE_CLAUSE = re.compile(
    r"\b(?:con el fin de|con la finalidad de|con el proposito de|a fin de|a efectos de(?:l)?|para efectos de(?:l)?|"
    r"en el marco de(?:l)?|com a finalidade de|com o objetivo de|com o proposito de|com o intuito de|"
    r"para (?:fins|efeitos) d[eoa]s?|no ambito d[eoa]s?|para o apuramento d[ao]s?|para que conste|"
    r"for the purposes? of|in order to|so as to|with a view to|in preparing|in preparation for|in the context of|"
    r"no contexto d[ao]s?|en el contexto de(?:l)?)\b[^,.;:?!()]*"
)


def without_purpose(folded: str) -> str:
    """`folded` without the purposes it says (`PURPOSE_CLAUSE`)."""
    return PURPOSE_CLAUSE.sub(" ", folded)


# A circumstance told after the question, set off by a comma: "¿Qué temperatura marcaba el C-201 a las 9:30, cuando
# estaba parado por la falla?", "Qual era o nível do tanque às 12h40, com a P-101 parada?", "…between 11 and 12, when
# both pumps had stopped?".
_CIRCUMSTANCE = re.compile(r",\s*(?:cuando|when|quando|while|mientras|enquanto|com|con|with)\b[^?.!;]*")


def without_circumstance(question: str) -> str:
    """`question` without the circumstances it tells after a comma (`_CIRCUMSTANCE`)."""
    return _CIRCUMSTANCE.sub("", question)


# What the asker says they do not want, beside what they do: a figure ("Not the max, just the reading at half eleven",
# "no quiero el promedio, decime el máximo", "não a média") is left out; a shift turned down for the one before it is
# that one ("Not this shift, the last one"; "no este turno, el anterior"). A bare "no" takes its article: Portuguese
# "no total", "no máximo" are "in all", "at most".
_UNWANTED_FIGURE = re.compile(
    r"\b(?:(?:(?:i )?(?:don'?t|do not) (?:want|need)|(?:yo )?no (?:quiero|necesito|me interesa)|"
    r"(?:eu )?n[aã]o (?:quero|preciso)(?: de)?) (?:the |el |la |lo |o |a |its |su |sua )?|"
    r"(?:not|no|n[aã]o) (?:the|el|la|lo|o|a|its|su|sua) )"
    r"(?:max(?:imum)?|m[aá]xim[oa]|min(?:imum)?|m[ií]nim[oa]|average|mean|promedio|m[eé]dia|peak|pico|total|"
    r"range|rango|faixa)\b(?:\s+(?:one|value|valor|reading))?[,.;:]?",
    re.IGNORECASE,
)
_UNWANTED_SHIFT = re.compile(
    r"\b(?:not|no|n[aã]o)\s+(?:this|today'?s|the current|the|este|el|esse|o)\s+(shift|turno)"
    # "Not the shift we're on now, the one before it", "no el turno en el que estamos, el anterior"
    r"(?:\s+(?:we'?re|we are|i'?m|i am)\s+(?:on|in)(?:\s+now)?|\s+(?:en el )?que (?:estamos|estoy)|\s+em que estamos)?"
    r"\s*[,;:]\s*(?:but\s+|sino\s+|mas\s+|sen[aã]o\s+)?(?:the|el|o)\s+(?:last|previous|one before|anterior)"
    r"(?:\s+(?:one|it|this one))?\b",
    re.IGNORECASE,
)


def without_unwanted(question: str) -> str:
    """`question` with the figure it turns down left out and the shift it turns down put as the one before it
    (`_UNWANTED_FIGURE`, `_UNWANTED_SHIFT`)."""
    shift = _UNWANTED_SHIFT.sub(
        lambda m: "the previous shift" if m.group(1).lower() == "shift" else "turno anterior", question
    )
    return _UNWANTED_FIGURE.sub(" ", shift)
