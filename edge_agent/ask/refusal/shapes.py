"""Commands known by their shape, whatever the verb: a clause that opens with a word which is no question or read
and takes what the plant runs or records, and a polite opening ("would you mind") before any verb but a read."""

from __future__ import annotations

import re

from edge_agent.ask.refusal.verbs import ANSWER_FORMAT

# "would you mind acknowledging": the request in a gerund (one in the subjunctive, "que reconozcas", is in `verbs`).
# Whatever the verb, unless it reads: "would you mind bumping…", "importa-se de aumentar…" (not "…telling me").
_SOFT_COMMAND = re.compile(
    # (not "bearing in mind that…", "keep in mind")
    r"\b(?:would you mind|do you mind|(?<!never )(?<!can't )(?<!cant )(?<!don't )(?<!dont )(?<!in )mind|"
    r"i'd like you to|i would like you to|te importaria|te importa|"
    r"le importaria|voce se importa de|se importa de|importa-se de|importas-te de|se importaria de|"
    # an order given in so many words: "I'm instructing you to trip C-201", "the least you could do is acknowledge…"
    r"(?:instructing|ordering|directing|instruct|order|direct|authori[sz]ing) you to|the least you (?:could|can) do is)"
    r"\s+(?:me\s+|nos\s+)?([a-z]+)"
)

# A command by its shape rather than its verb: a clause opening with a word that is neither a question nor a read,
# followed by what such a verb acts on ("bounce the P-101", "silenciame esa alarma", "bota a bomba P-101 pra rodar").
# One shape, no list of acting verbs: in the question files it finds 138 of the 266 commands the verb lists find and
# refuses none of the 1,173 answerable questions. Spanish and Portuguese words ending as a past tense ("paró",
# "arrancó", "desligou") are reads; so are gerunds ("contando", "somando").
_CLAUSE = re.compile(
    r"[.;!?,:()\[\]«»\"]+|\b(?:and then|then|y luego|luego|y despues|despues|e depois|depois|e entao|entao|"
    r"after that|and|y|e)\b"
)
_OPENER = (
    r"(?:(?:please|pls|plz|kindly|por favor|porfa|xfa|just|only|solo|apenas|ok|okay|so|now|ahora|agora|ya|ja|also|"
    r"tambien|tambem|tb|tbm|"
    r"de paso|by the way|btw|while you'?re at it|ja agora|e ja agora|aproveita e|aprovecha y|abeg|"
    r"oye|oiga|hey|can you|could you|would you|will you|can u|would you mind|why don'?t you|why not|let'?s|"
    r"i need you to|i want you to|i'?d like you to|we need you to|go ahead and|puedes|podrias|puede|podria|podes|"
    r"pueden|quiero que|necesito que|voce pode|vc pode|pode|poderia|podia|consegue|da pra|tem como|quero que|"
    r"preciso que|me|nos|le|lhe|you|u|vos|usted|ustedes|tu|voce|vc|(?:por ?que|pq|xq) (?:no|(?:voce |vc |tu )?nao)|"
    # an order put before the answer: "Antes de contestarme silencia la sirena…", "before you answer, reset…"
    r"antes de (?:me )?(?:contestar|responder)(?:me|le)?|before (?:you )?(?:answer|reply)(?:ing)?"
    r")\s+)*"
)
_DETERMINER = (
    r"(?:the|this|that|these|those|my|our|its|their|all|all the|every|both|a|an|el|la|los|las|ese|esa|esos|esas|"
    r"este|esta|su|sus|seu|sua|seus|suas|"
    r"estos|estas|mi|mis|nuestra|nuestro|todo|toda|todos|todas|todos los|todas las|un|una|o|os|as|esse|essa|esses|"
    r"essas|isso|isto|meu|minha|nossa|nosso|todos os|todas as|um|uma|aquela|aquele|aquella|aquel)"
)
_ACTED_UPON = (
    r"(?:[a-z]{1,3}-?\d{2,5}|bombas?|pumps?|compresor(?:es|a)?|compressor(?:es|s)?|tanques?|tanks?|valvulas?|"
    r"valves?|motor(?:es|s)?|lineas?|linhas?|lines?|alarm(?:a|e)?s?|sirenas?|sirenes?|sirens?|horns?|interlocks?|"
    r"enclavamientos?|intertravamentos?|"
    r"set ?points?|consignas?|reports?|reportes?|informes?|relatorios?|notas?|notes?|registros?|registos?|records?|"
    r"logs?|tickets?|trips?|breakers?|disjuntor(?:es)?|interruptor(?:es)?|equipment|equipamentos?|maquinas?|"
    r"machines?|agitador(?:es)?|ventilador(?:es)?|fans?|conveyors?|bandas?|esteiras?|caldeiras?|calderas?|"
    r"boilers?|chillers?|sensor(?:es|s)?|variador(?:es)?|vfds?|drives?|feeders?|mixers?|misturador(?:es)?|"
    r"mezclador(?:es)?|historico|historial|history|counters?|contador(?:es)?|totali[sz]ers?|totalizador(?:es)?|"
    r"transmitters?|transmisor(?:es)?|transmissor(?:es)?|instrumentos?|instruments?|lazos?|loops?|malhas?|speed|velocidad|velocidade|rpm|frequency|frecuencia|frequencia|"
    # what is scheduled or booked: "agenda uma inspeção", "book a vibration survey"
    r"inspections?|inspeccion(?:es)?|inspecao|inspecoes|surveys?|calibrations?|calibracion|calibracao|"
    r"work orders?|ordem|ordens|orden(?:es)?|mantenimientos?|manutencao|manutencoes|maintenance|meetings?|"
    r"reunion(?:es)?|reuniao|visitas?|visits?)\b"
)
# A word between the determiner and what is acted on ("the A shift report"), never a preposition: in "el caudal de
# la bomba" the verb takes the flow, not the pump.
_MODIFIER = r"(?!(?:de|del|da|do|das|dos|of|on|in|en|em|no|na|at|for|para|por|from)\b)[a-z0-9-]+"
_VERB_ON_EQUIPMENT = re.compile(
    rf"^{_OPENER}([a-z][a-z'-]*)\s+(?:(?:up|down|out|off|on|back|logo|ya|ja|ahora|ahorita|agora|now|right now|ai|ahi|"
    rf"de una|de novo|again|otra vez)\s+)?(?:(?:it|them|ela|ele|elas|eles)\b(?!'|\s+(?:was|is|were|are|had|has|did|"
    rf"does|will|would|read|reads|reading|went|got|been|estava|esta|era|foi|tinha|teve|ficou|tava|short|brief|simple|"
    rf"quick|concise))|{_DETERMINER}\s+(?:{_MODIFIER}\s+){{0,2}}"
    rf"{_ACTED_UPON})"
)
# The same verb with its object hung on it, alone: "y después detenela", "apágala ya" (not "hola", "vale", nor
# "dímelo", "pásamelo": given to the asker, read).
_VERB_WITH_OBJECT = re.compile(rf"^{_OPENER}([a-z]{{3,}}[aei]d?(?<!me|te|se)(?<!nos)(?:la|lo|las|los))\b")
# The words that open such a clause as a question or a read: question words, prepositions, copulas and auxiliaries,
# the verbs that ask for a figure ("dame la", "show the", "me passa a", "scan the alarm log") and an instrument's ISA
# letters ("FT on the compressor: …").
_READS = frozenset(
    """
    what whats how which who when where why is are was were do does did has have had any show tell give wha whit wot
    wat given considering seeing regalas regala regale regalame regalenme
    highest lowest peak max min average mean
    need needs want wants got take make mean now ahora ahorita agora also then luego so ok okay just y e
    across around over through throughout within among along beside behind near past via versus vs plus
    including excluding except like toward towards upon into onto inside outside against beyond below above
    underneath till tras segun segundo mediante excepto incluyendo incluindo contra bajo sob ante pra pro pras
    pros pa pal dentro fuera fora cerca perto junto antes mientras enquanto
    ayer hoy anoche antier anteayer antenoche ontem hoje anteontem yesterday today tonight tdy
    maybe perhaps probably possibly only still already even quizas quiza talvez tal vez probablemente solo
    todavia aun ya ainda apenas provavelmente mesmo tambien tambem luego after afterwards later earlier
    gimme get list count check look pull fetch grab print display find share pass bring let know see read
    summarize summarise compare report scan query search review audit monitor lookup confere confira checar chequear
    scrap production output downtime throughput flow temperature alarms stops level vibration
    mandame enviame enumera enumerame enumeralas enumeralos enumerar enumere listame lista-me listalas listalos liste
    ft fit fic lt lit lic tt tit tic vt pt pit pic
    que qual quais quanto quanta quantos quantas como cual cuales cuanto cuanta cuantos cuantas cuando donde quien
    quem onde porque por para de del da do das dos en em no na nos nas a al con com sin sem sobre entre desde ate
    hasta hacia durante on in at of for from with about by to during since until between after before over under
    per es son fue fueron era eran esta estan estuvo foi foram estava estavam ficou ficaram tem tiene tienen tenia
    tinha teve tiveram tuvo tuvieron hubo habia houve hay ha han has deu dio dieron deram sigue siguen segue
    funciona funcionan opera anda roda trabaja
    dime dame decime deme damelo muestrame mostrame ensename pasame traeme regalame sacame listame cuentame digame
    diga muestra mostra mostre lista listar dize diz informa informe informar indica indique indicar verifica
    verifique verificar regala regale revisar consultar mostrar decir dizer dar pasar passar traer trazer revisa
    revise chequea checa consulta consulte busca procura puxa puxe fijate fijese mira mire ve ver olha olhe veja
    manda passa traz da me-diz da-me traz-me passa-me mostra-me diz-me manda-me
    conta cuenta suma incluye inclui cuentame contame sumame
    note nota but mas pero porem however aunque embora though although leave if when as use usa usar utiliza utilize
    reckon reckoned think thought guess suppose believe bet wonder feel felt seems seemed looks looked heard hear
    noticed saw seen creo pienso acho imagino supongo sospecho parece parecia
    ni nor neither nem tampoco up down out off back away here there not no nao
    si se if unless caso lleva llevan llevamos llevaba leva levam levamos levava
    ignora ignore ignorar olvida forget esquece skip quer querem quiere quieren quiero quero queremos
    settle answer solve clarify explain help appreciate thank thanks cheers shot ta provide share
    siempre sempre always never nunca again otra row rows ask pregunta preguntale preguntele pergunta pergunte
    """.split()
)
# The reads after "would you mind": "telling me", "checking", "dizer-me".
_READ_GERUNDS = frozenset(
    "telling showing giving checking looking pulling fetching getting finding listing counting reading sharing "
    "confirming explaining summarizing summarising comparing dizer mostrar dar passar informar indicar "
    "verificar confirmar explicar decir decirme informarme".split()
)
# A past tense, a gerund or an English contraction: "arrancó la", "desligou a", "engraxei o", "contando as",
# "tripped the", "what'd that P-102". A verb with its object hung on it ("déjelo") is none of them, unless a
# gerund's ("revisándola").
_NOT_A_COMMAND = re.compile(r"(?:o|ou|eu|iu|ei|aba|ava|ias|ando|endo|indo|aram|eram|iram|aron|ieron|(?<!e)ed|ing)$|'")
_GERUND_WITH_OBJECT = re.compile(r"(?:a|e|ie)nd[oa](?:la|lo|las|los)$")
# "ya reconocí la alarma": "ya" before a verb in the first person's past (-í, folded "i") tells what was done.
_DONE_ALREADY = re.compile(r"(?:ya|ja)\s+[a-z]+i\b")
# Names that end as a verb with its object ("Oi, Camila!", "Gracias, Daniela"): a greeting, not "detenela".
_GIVEN_NAMES = frozenset(
    "camila daniela gabriela manuela marcela micaela graciela angela adela estela carmela rafaela isabela mariela "
    "fabiola pamela marcelo consuelo".split()
)
# ... and adjectives that do: "é tranquila", "está tranquilo" (a state, not "tranquilízala").
_NOT_VERBS = _GIVEN_NAMES | frozenset(
    "tranquila tranquilo tranquilas tranquilos daquela daquele daquelas daqueles naquela naquele naquelas naqueles "
    "aquela aquele aquelas aqueles aquilo daquilo naquilo".split()
)


# A gloss of a word or three in parentheses goes with the word before it: "¿Cuánto rechazo (scrap) lleva la línea 1…?"
# is one clause, not one opening "lleva la línea".
# A short gloss in brackets ("(the tank)"), or the answer's form asked for ("put it in plain words, …"): no act.
_GLOSS = re.compile(rf"\((?:\s*[^()\s]+){{1,3}}\s*\)|\b{ANSWER_FORMAT}[^.?!:]*")


def acts_on_equipment(folded: str) -> bool:
    """Whether a clause of `folded` opens with an acting verb on what the plant runs or records."""
    for clause in _CLAUSE.split(_GLOSS.sub(" ", folded)):
        if (match := _VERB_ON_EQUIPMENT.match(clause.strip())) is not None:
            verb = match.group(1)
            if (
                verb not in _READS
                and not re.fullmatch(_DETERMINER, verb)
                and not _NOT_A_COMMAND.search(verb)
                and not _DONE_ALREADY.match(clause.strip())
            ):
                return True
        if (hung := _VERB_WITH_OBJECT.match(clause.strip())) is not None and hung.group(1) not in _NOT_VERBS:
            verb = hung.group(1)
            stem = re.sub(r"(?:la|lo|las|los)$", "", verb)  # "contalos todos": count them, a read
            if verb not in _READS and stem not in _READS and not _GERUND_WITH_OBJECT.search(verb):
                return True
    return False


def asked_to_act(folded: str) -> bool:
    """ "Would you mind bumping…", "importa-se de aumentar…": a verb after a polite opening that is not a read."""
    return any(m.group(1) not in _READS and m.group(1) not in _READ_GERUNDS for m in _SOFT_COMMAND.finditer(folded))
