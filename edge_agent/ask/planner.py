"""The reference planner: a question in es/en/pt turned into tool calls by keyword, in code, so the ask works before
(and beside) a model planner producing the same `Plan` under structured outputs.

Steps: refuse what `refusal.classify` refuses; find the intents by keyword (several give several calls, in the
order of `_INTENTS`, at most `plan.MAX_CALLS`); resolve the window (`resolve_window`: the current shift so far when
the question names no time; reports: no window) and the subject (`resolve_subject`); fill in each tool's arguments.
MTBF/MTTR asked with no time are over the last RELIABILITY_DAYS days (a shift holds too few failures). A plural
equipment word ("las bombas", "the pumps") asks the question of each asset of that kind, when the calls are at
most PLURAL_MAX (PLURAL_ASKED_MAX when it asks several things). A question naming no intent but asking how things
went ("¿qué pasó con la P-101 ayer?") gets the stops and alarms. A question with no intent it knows is refused as
out of scope; a window wholly in the future, a name that is ambiguous or unknown, or a tag question naming no one
tag, asks back (with the candidates).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import TypeAdapter

from edge_agent.ask.answers import Clarification, Refusal
from edge_agent.ask.plan import MAX_CALLS, Plan, ToolCall
from edge_agent.ask.refusal import classify
from edge_agent.ask.resolve import (
    Subject,
    as_asset,
    asked_sentence,
    corrected,
    each_said,
    find_instant,
    find_window,
    fold,
    kinds_apart,
    listed,
    newest_part,
    one_of,
    only_asset,
    other_equipment,
    plural_assets,
    resolve_subject,
    resolve_window,
    respelled,
    sentences_of,
    too_few,
    without_aside,
    without_circumstance,
    without_left_out,
    without_pasted,
    without_purpose,
    without_signature,
    without_unwanted,
)
from edge_agent.ask.tools import Namespace, Window
from edge_agent.config import ShiftConfig

# 7 days: at the demo's mean of 3 h between faults a week holds ~50 failures of its worst pump, and the reports'
# weekly window is as long; the current shift so far (the default of every other question) holds one or none.
RELIABILITY_DAYS = 7
# 4: the plant's four assets each ("cada equipo: las dos bombas, el compresor y el tanque"), one call each
# (plan.MAX_CALLS); the writer puts the answers for more than three in its three sentences. Asked several things
# ("paradas y alarmas de las bombas"), a plural is answered in at most 3 calls, a sentence each.
PLURAL_MAX = 4
PLURAL_ASKED_MAX = 3
# 1000 characters: the longest of the planning examples is under 120; a longer text is a paste, not a question.
MAX_QUESTION_CHARS = 1000

_STATS = re.compile(
    r"\b(?:highest|max|maximum|maxima|maximo|peak|pico|lowest|min|minimum|minima|minimo|average|mean|avg|promedio|"
    r"media|medio|stats|statistics|estadisticas?|estatisticas?|range|rango|faixa|mas alt[oa]|mas baj[oa]|"
    r"mais alt[oa]|mais baix[oa]|mayor|menor|maior|prom|hottest|coldest|warmest|mas caliente|mas fri[oa]|"
    r"mais quente|mais fri[oa]|"
    # how far a reading went: "How low did the tank get?", "¿qué tan alto llegó?", "até onde subiu"
    r"as (?:low|high) as|tan (?:alt|baj)[oa] como|how (?:low|high)|how far (?:up|down|did|has|had|does|do|would)|"
    r"que tan (?:alt|baj)[oa]|quao (?:alt|baix)[oa]|"
    r"hasta donde|ate onde|"
    # "the top flow P-102 put out", "top reading": the highest
    r"top(?= (?:flow|vib\w*|temp\w*|level|reading|value|bearing|caudal|vazao|nivel)))\b"
)
_NOW = re.compile(
    # (not "so far": "até agora", "hasta ahora", "up to now")
    r"(?<!ate )(?<!hasta )(?<!until )(?<!till )(?<!up to )"
    r"\b(?:now|right now|ahora|agora|current|currently|actual|actualmente|atual|atualmente|en este momento|"
    r"neste momento|latest|last value|ultimo valor)\b"
)
_ACTIVE = re.compile(
    r"\b(?:active|actives|activas?|activos?|ativas?|ativos?|sonando|open alarms|alarmas abiertas|standing|vigentes?|"
    r"en curso|em aberto|abertos|in alarm|unacknowledged|sin reconocer|abiert[ao]s|still open|were open|"
    r"remained open|seguian abiert[ao]s|en pantalla|on screen|na tela|sin normalizar|not normali[sz]ed|were up|"
    r"was up|pending|pendientes?|pendentes?|live|"
    # lit or still on: "¿cuántas alarmas había encendidas a las 11?", "alarms still on at 2 this morning"
    r"encendidas|encendidos|prendidas|prendidos|acesas|acesos|still on|still going|still sounding)\b"
)
# Alarms said to stand, beside a flood or a rate: the count standing is asked ("en curso" is a shift's too).
_STANDING = re.compile(r"\b(?:active|activas|activos|ativas|ativos|standing|simultane\w*|at the same time|a la vez)\b")
# An asset failing, said as a verb ("did P-101 fail", "ha fallado", "avariou"): its stops, when nothing else is asked.
_FAILED = re.compile(
    r"\b(?:fail|fails|failed|failing|fallo|fallado|fallaron|falla|fallan|falhou|falharam|falha|avariou|avariaram|"
    r"averio|averiado|se averio|quebrou|se rompio)\b"
)
# "how long was P-101 out": out of service.
_OUT = re.compile(r"\b(?:was|were|been|it)\s+(?:[a-z0-9-]+\s+)?out\b(?!\s+of\s+(?:range|spec|limits?|tolerance))")
# What falls as a stop: equipment, by its word or its id ("se cayó el compresor", "la P-102 se ha caído"); not a
# quantity ("la rata de flujo se cayó").
_FALLEN = r"(?:bombas?|compresor(?:es)?|tanques?|lineas?|equipos?|maquinas?|sistema|planta|[a-z]{0,3}[- ]?\d{2,5})"
_INTENTS: dict[str, re.Pattern[str]] = {
    "stops": re.compile(
        r"\b(?:stops?|stopped|stoppages?|downtime|paradas?|paros?|detencion(?:es)?|se paro|se detuvo|parou|pararam|"
        r"pararon|detuvieron|se detuvieron|shutdowns?|shut downs?|tiempos? muertos?|indisponibilidad|tempo morto|"
        # "how many minutes did she sit dead": a machine stopped, said of it
        r"(?:sit|sat|sits|was|were|been|lay|laid|went)\s+dead|dead time|"
        # tripped: "se disparó la P-101", "quantos disparos teve"; fallen: "¿cuántas caídas tuvo?"
        # (how far a quantity fell is its minimum: "até onde caiu a vazão")
        r"se disparo|se dispararon|disparos|disparou|dispararam|disparo|desarmou|desarmaram|desarmes?|"
        # Venezuela's "botadas" ("¿cuántas botadas ha tenido el compresor?")
        r"botadas?|"
        r"(?<!onde )(?:caiu|cairam)|"
        # the English trip as a Spanish or Portuguese verb: "tripeó", "tripearon", "tripou"
        r"trip(?:e[oa]\w*|ou|aram|aron|ar)|"
        r"caidas?(?! de (?:presion|pressao|tension|tensao|voltaje|nivel|temperatura|caudal|vazao))|"
        r"indisponibilidade|tempo parad[oa]|tempo indisponivel|tiempo indisponible|"
        # "cuánto tiempo estuvo caída la P-101": down, of equipment
        r"(?:estuvo|estaba|estuvieron|quedo|ficou|esteve) caid[oa]s?|"
        # fallen, of equipment: "se ha caído la P-102", "se cayó el compresor"; pt "a queda mais longa da P-101",
        # "quantas quedas" (not a fall of a quantity: "queda de pressão")
        rf"(?:se (?:ha |han |habia )?(?:cayo|cayeron|caido|cae|caen) (?:el |la |los |las )?{_FALLEN}|"
        rf"{_FALLEN} (?:ya )?se (?:ha |han |habia )?(?:cayo|cayeron|caido|cae|caen))|"
        # slang for a machine giving out: "se clavó la bomba", "P-101 packed up", "conked out", "deu pau", "pifou",
        # "o compressor arriou"
        # ... "packed in"; Yorkshire "stood" for idle ("the longest P-101 has been stood in one go")
        r"se (?:le )?(?:clavo|clavaron)|(?:pack|packs|packed|pack(?:ing)?) (?:up|in)|(?:conk|conks|conked) out|"
        r"(?:been|was|were) stood\b|"
        r"(?:deu|deram|dar|da) pau|pifou|pifaram|arriou|arriaram|went belly up|"
        # Colombia's "se varó" (broke down), of a machine
        r"se (?:ha |han |le )?(?:varo|varado|varan|vararon)|varad[ao]s?|"
        r"(?:quedas|(?:a|uma|cada|da|na|ultima|maior) queda)(?! de (?:pressao|tensao|temperatura|vazao|nivel))|"
        r"roturas?|rupturas?|fuera de servicio|fora de servico|out of service|parao|paraos|"
        # "how many times did the big compressor drop out"
        r"(?:drop|drops|dropped|dropping) out|"
        # switched off, said of a machine: "¿cuántas veces se apagó la 101?", "se botó" (Venezuela), "estuvo apagada",
        # "how many times did 101 shut off", "quantas vezes a 102 desligou", "ficou desligada"
        r"se (?:apago|apagaron)|se (?:boto|botaron) (?:la |el )?(?:bomba|compresor|tanque|linea|[a-z]{1,3}-?\d{3})|"
        r"apagad[ao]s?|desligou|desligaram|desligad[ao]s?|"
        r"(?:did|has|have|had)\s+(?:[a-z0-9,-]+\s+){0,5}?(?:shut|switch|turn)(?:ed)? off|(?:shut|switched|turned) off|"
        # "how long was the compressor out of action", "quanto tempo a 102 ficou fora" (not "fora de especificação")
        r"out of (?:action|commission)|(?:ficou|ficaram|esteve|estiveram|estuvo|estuvieron|quedo|quedaron) "
        r"(?:fuera|fora)(?! de (?:espec|spec|rango|faixa|limite|linea|linha))|"
        r"failures?|fallas?|fallos?|falhas?|averias?|avarias?|paragens?|paragem|trips?|tripped|"
        # (not "down the drain", nor where a person goes: "I'll be down the floor now")
        r"down(?! to\b| the (?:drain|floor|shop|road|hall|stairs|corridor)\b)|doon(?! the drain)|parados?|"
        # "quebra" is a breakdown, but a loss of output where it is said so: "a quebra, ou seja o volume de refugo"
        r"detenid[oa]s?|outages?|breakdowns?|broke down|quebras?(?!,?\s+(?:ou seja|isto e|ou melhor|de producao|"
        r"de produto|do volume|de volume))|panes?|interrupciones|interrupcoes)\b"
        # "how many minutes was it off" (Scots "aff"): off as stopped, after what is or was
        r"|\b(?:was|were|been|stayed|it)\s+(?:[a-z0-9-]+\s+)?(?:off|aff)\b"
        # "how many times has pump P-101 gone off" (alarms go off too: `_ALARM_TRIP`)
        r"|\b(?:gone|went|go|goes|going) (?:off|aff)\b"
    ),
    "production": re.compile(
        # what a line made, said as such: "line 1 made how much", "how much did we make" (not "who made the most runs")
        r"\b(?:(?:line|linea|linha|l ?\d|\d|plant|planta|we|they|it|shift)\s+made|made\s+(?:how much|how many))\b|"
        r"\b(?:production|produced|produce|make|output|produccion|produjo|producido|producida|fabrico|"
        r"producao|produziu|produzido|scrap|scrapped|rejects|desecho|desechos|desperdicios?|mermas?|refugos?|"
        r"sucata|rechazos?|rejeitos?|descartes?|good parts|piezas buenas|pecas boas|bad parts|piezas malas|"
        r"pecas ruins|defective parts|piezas defectuosas|pecas defeituosas|saco|sacaron|sacamos|"
        # (what a pump "put out" is its flow: "the top flow P-102 put out"; a line's is its production)
        r"(?<!\d{3} )put out|product|throughput|prod|producidos|producidas|produzidos|produzidas|"
        # water said of a line is what it made: "¿cuánta agua de la L1…?", "quanta água a linha 1 entregou"
        r"(?:cuanta|how much|quanta) (?:agua|water)\b[^.?!]{0,30}\b(?:linea|line|linha|l)[\s-]?\d|"
        # off-spec sent down the drain or dumped: "se fue al drenaje", "got dumped as off-spec", "foi pro dreno"
        r"(?:al|a el|a|pro|para o|ao|down the|doon the) (?:drenaje|desague|dreno|ralo|drain)|dumped|"
        # water said with no equipment named is the plant's output: "¿Cuánta agua se bombeó desde ayer…?", "how much
        # water went out the gate", "quanto de água saiu pro cliente" (a pump's water is its flow: `names`)
        r"(?:cuanta|how much|quanta|quanto de) (?:agua|water)\b(?![^.?!]*\b(?:[a-z]{1,3}-?\d{3}|(?:la|el|a|o|the) "
        r"\d{3}|bombas?|pumps?|compres\w*|tanques?|tanks?)\b)|"
        # "quanto a linha já botou pra fora"
        r"(?:botou|botaram|botamos|pos|pusemos) (?:pra|para) fora|"
        # the verb in the person who asks: "¿cuánto producimos hoy?", "quanto produzimos", "what did we produce"
        r"produ(?:cimos|jimos|jeron|cen|zimos|ziram|zem)|fabric(?:amos|aron|ou|aram)|"
        # "how much water did line 1 put through", "total m³ out of Line 1"
        r"(?:put|pushed|got|ran)\s+through|(?:m3|cubic (?:meters|metres)|units|pieces|tons|tonnes)\s+out\b|"
        # what a plant sends out: "how much water'd we push out", "pumped out", "turned out"
        r"(?:push|pushed|pump|pumped|turn|turned|ship|shipped|send|sent)\s+out|"
        r"(?:cuantos|how many|quantos) (?:metros cubicos|cubic meters|m3)(?!\s*(?:/\s*h|por hora|per hour|an hour))|"
        # pieces counted or said to come off: "cuántas piezas salieron", "how many units came off", "peças saíram"
        r"(?:cuantas|cuantos|how many|quantas|quantos) (?:piezas|unidades|uds|units|pieces|pcs|parts|pecas)|"
        r"(?:piezas|unidades|units|pieces|parts|pecas) (?:salieron|came off|came out|sairam|saiu)|"
        # product off its specification, as scrap: "how much off-spec water did line 1 send to drain"
        r"(?:off[- ]spec|out[- ]of[- ]spec|fuera de especificacion|fora de especificacao) (?:water|product|producto|"
        r"produto|agua|volume|volumen|material|m3)|"
        # product thrown out, as scrap: "quanto produto foi rejeitado", "how much product was rejected"
        r"(?:produto|producto|product|material|pecas|piezas|unidades|units|parts) (?:\w+ )?(?:rejeitad|rechazad|"
        r"rejected|descartad|discarded)\w*|"
        # what came out, and off-spec sent to drain: "quanto saiu ontem na linha 1", "how much off-spec went to drain"
        r"(?:quanto|quantos m3|quantos metros cubicos) (?:ja )?(?:saiu|sairam)|"
        r"off[- ]spec (?:went|was sent|sent|going)|(?:went|sent|go|goes) to (?:the )?drain)\b"
    ),
    "quality_checks": re.compile(
        r"\b(?:quality|calidad|qualidade|inspections?|inspeccion|inspecciones|inspecao|inspecoes|quality checks?|"
        r"analisis|analises|analyses|ensayos|ensaios|checks|chequeos|verificaciones|verificacoes|lab tests?|"
        r"controles? de calidad|pruebas de calidad|qc|qa|controle de qualidade|controles de qualidade|"
        # checks by their verdict: "controles reprobados", "controlos reprovaram", "análisis fuera de especificación",
        # "out-of-spec results" (off-spec product alone is scrap)
        r"(?:controles|controlos|analisis|analises?|pruebas?|testes?|tests?|resultados?|results?|muestras?|amostras?|"
        r"samples?) "
        r"(?:reprobad|reprovad|rechazad|fallid|fallad|falhad|failed|reprovaram|reprobaron|fallaron|falharam|"
        r"fuera de espec|fora de espec|out[- ]of[- ]spec|off[- ]spec|no conforme|nao conforme)\w*|"
        r"(?:out[- ]of[- ]spec|off[- ]spec|failed|failing) (?:results|checks|tests|samples|analyses)|"
        # a check's verdict a few words on: "controles que salieron fuera de especificación", "análisis … dieron fuera
        # de especificación", "de los controles de ayer, ¿cuántos salieron fallidos?"; non-conformities, "OOS
        # results", "reprovações", Portugal's "controlos"
        r"(?:controles|controlos|analisis|analises?|pruebas?|testes?|tests?|muestras?|amostras?)\b[^.?!]{0,60}"
        r"\b(?:fuera de espec|fora de espec|out[- ]of[- ]spec|reprovad|reprobad|rechazad|fallid|fallaron|falhad|"
        r"falharam|reprobaron|reprovaram)\w*|"
        r"no conformidades|nao conformidades|non-?conformit(?:y|ies)|"
        r"nonconformances?|oos results?|oos|reprovacoes|reprovacao|controlos|"
        # samples counted, or failed a few words on: "how many samples have we pulled", "¿cuántas muestras se han
        # tomado?", "how many samples have failed"
        r"(?:how many|cuantas|quantas) (?:\w+ )?(?:samples|muestras|amostras)|"
        # "how many of the line's water samples came back failed", "quantas das amostras voltaram reprovadas"
        r"(?:how many|cuantas|quantas) (?:of|de|das|dos) (?:the |las |los |as |os )?(?:[\w']+ ){0,2}"
        r"(?:samples|muestras|amostras|checks|tests|analyses|analisis|analises|ensayos|ensaios)|"
        r"(?:samples?|muestras?|amostras?|checks?|tests?|results?|resultados?) (?:came back|volvieron|voltaram|"
        r"vieram|salieron|sairam)|lab results?|resultados? de laboratorio|"
        r"(?:samples?|muestras?|amostras?|checks?|tests?) (?:have|has|had|were|was) (?:failed|been rejected))\b"
    ),
    "alarm_performance": re.compile(
        r"\b(?:alarm (?:performance|rate|floods?|kpis?)|desempeno de (?:las )?alarmas|inundacion de alarmas|"
        r"avalancha de alarmas|tasa de alarmas|desempenho (?:de|dos) alarmes|inundacao de alarmes|taxa de alarmes)\b"
    ),
    # ("how many times did the horn go off": the alarm's horn)
    "alarms": re.compile(r"\b(?:alarms?|alarmas?|alarmes?|alerts?|alertas?|horns?|sirens?|sirenas?|sirenes?)\b"),
    # (the log a figure is wanted for is no note asked: "¿cuál ha sido el caudal más alto? Lo necesito pa' la
    # bitácora")
    "notes": re.compile(
        r"(?<!\bpa la )(?<!\bpa' la )(?<!\bpara la )(?<!\bfor the )(?<!\bfor my )(?<!\bpro )(?<!\bpara o )"
        r"\b(?:notes?|notas?|comments?|comentarios?|bitacora|logbook|anotaciones|anotacoes|observaciones|"
        r"observacoes|dejaron|deixaram|wrote|escribieron|escreveram)\b"
    ),
    "oee": re.compile(r"\b(?:oee|overall equipment effectiveness|eficiencia global)\b"),
    "reliability": re.compile(
        # (not "an MTTR-style number": a figure like it)
        r"\b(?:mtbf|mttr|reliability|confiabilidad|fiabilidad|confiabilidade|mean time between failures?|"
        r"tiempo medio entre fallas|tempo medio entre falhas)\b(?!-?\s?(?:style|like|type|esque|tipo)\b)"
    ),
    # "me informe", "le reporte": the verbs (inform me), not the documents
    "reports": re.compile(
        r"(?<!\bme )(?<!\ble )(?<!\bnos )(?<!\bse )(?<!please )(?<!kindly )"
        r"\b(?:reports?|reportes?|informes?|relatorios?)\b"
        r"(?!\s+(?:the|a|an|on|how|what|which|back)\b)"  # "please report the flow": the verb
    ),
    "tag": _STATS,
}
_REPORT_STATUS: dict[str, re.Pattern[str]] = {
    "draft": re.compile(r"\b(?:drafts?|borrador|borradores|rascunhos?|pending|pendientes?|pendentes?)\b"),
    "approved": re.compile(r"\b(?:approved|aprobados?|aprobadas?|aprovados?|aprovadas?|signed|firmados?)\b"),
    "rejected": re.compile(r"\b(?:rejected|rechazados?|rechazadas?|rejeitados?|rejeitadas?)\b"),
}
# "What happened with P-101 yesterday?": a question naming no intent but asking how a thing went is answered with
# its stops and alarms, the two things a shift hands over first.
_OVERVIEW = re.compile(
    r"\b(?:que (?:paso|ha pasado|sucedio|ocurrio|hubo)|novedades|como (?:estuvo|le fue|fue|anduvo|ha ido)|resumen|"
    r"what happened|what went on|how (?:did|was|were|has)\b.*\b(?:do|doing|going|go)\b|how was|summary|summari[sz]e|"
    r"overview|status|estado|situacion|situacao|o que (?:aconteceu|houve|rolou)|como (?:foi|esteve|andou)|resumo|"
    r"novidades)\b"
)
OVERVIEW_INTENTS = ("stops", "alarms")
# A reading asked without its quantity: "¿En cuánto estaba el T-301 a las 8?", "What was the tank at 8?", "Where was
# T-301 sitting at 8?", "the least the tank had in it": the asset's one tag, or the asker is asked which of its tags.
_READING_ASKED = re.compile(
    r"\b(?:en cuanto (?:estaba|estuvo|esta|andaba|quedo)|cuanto (?:marcaba|marco|marca|tenia|tiene)|"
    r"em quanto (?:estava|tava|ficou|esta|ta)|quanto (?:marcava|marcou|marca|tinha|tem)|"
    # the asset's own reading ("the tank reading", "la lectura del T-301"; not "the flux capacitor reading")
    r"(?:the|its|la|su|sua|a|o|tank|tanque|pump|bomba|compressor|compresor|[a-z]{1,2}-?\d{3})\s+"
    r"(?:readings?|lecturas?|leituras?)|(?:had|have|has) in it|"
    r"what (?:was|is|were)\s+(?:the\s+)?[a-z0-9-]+(?:\s+[a-z0-9-]+)?\s+at|"
    r"where (?:was|is|were)\b[^.?!]{1,30}\b(?:sitting|sat|at)|como (?:estaba|estava|tava|taba))\b"
)
# What a figure is wanted for, not what is asked: "for the reliability report", "for the quality review", "pra fechar o
# relatório", "para la reunión de calidad": its words name no intent.
_FOR_A_PURPOSE = re.compile(
    # a figure to set beside another: "To put next to the pump stops, …", "Pa' ponerlo al lado de las paradas…"
    r"\b(?:to put (?:it |them )?|pa'? ponerlo |para ponerlo |para poner |pra colocar |para colocar |pra por )"
    r"(?:next to|beside|alongside|al lado de|junto a|ao lado de|junto de)\s+(?:[a-z'-]+\s+){0,4}?"
    r"(?:stops|paradas|paros|alarms|alarmas|alarmes|figures|numeros|numeros)\b(?:\s+(?:of|de|das|dos|del)\s+"
    r"(?:the |las |los |as |os )?[a-z'-]+)?|"
    r"\b(?:for|para|pra|pro|pal|pa'?|to close|to finish|fechar|cerrar|terminar|llenar|preencher|a efectos del?|"
    r"para efeitos d[eoa]s?|for the purposes? of)\s+"
    r"(?:the|my|our|this|el|la|mi|nuestro|este|o|a|meu|nosso|esse)?\s*(?:[a-z'-]+\s+){0,3}?(?:reports?|reportes?|informes?|relatorios?|"
    r"reviews?|revision|revisao|meetings?|reunion|reuniao|audits?|auditoria|presentation|presentacion|apresentacao|"
    # a KPI worked out from the figure: "para el cálculo del MTBF", "for the MTBF calc", "para sacar el MTTR"
    r"calculos?|calculations?|calcs?|analisis|analise|analysis|estudios?|estudos?|studies|study)"
    r"(?:\s+(?:del?|do|da|of(?: the)?)\s+(?:mtbf|mttr|oee|kpis?|indicadores?|fiabilidad|confiabilidad|fiabilidade|"
    r"confiabilidade|reliability|calidad|qualidade|quality))?\b"
    r"|\b(?:for|para|pra|to)\s+(?:sacar|calcular|computar|work out|calculate|compute|figure out|tirar)\s+"
    r"(?:el|la|los|o|a|os|the|my|our|mi|meu)?\s*(?:mtbf|mttr|oee|kpis?|indicadores?)\b"
)
# A purpose with all it says up to its clause's end, in any case: "for the Houston plant's report" (not "For the audit
# file, how much did the Houston plant produce?").
_PURPOSE_SAID = re.compile(f"(?:{_FOR_A_PURPOSE.pattern})" + r"[^.?!;,]*", re.IGNORECASE)
# Who the asker is, not what is asked: "sou estagiária de confiabilidade", "I'm the summer student in production",
# "the reliability engineer", "ingeniero de calidad": its words name no intent.
_ROLE = re.compile(
    r"\b(?:estagiari[ao]|ingenier[ao]|engenheir[ao]|engineer|analista|analyst|tecnic[ao]|technician|team|equipo|"
    r"equipe|area|departamento|department|jefe|chefe|head|manager|gerente|intern|student|practicante|pasante|lead|"
    r"supervisor|coordinador|coordenador|coordinator)\s+(?:de|da|do|of|in|en|em|from)\s+(?:la\s+|el\s+|a\s+|o\s+|"
    r"the\s+)?(?:reliability|confiabilidad|confiabilidade|quality|calidad|qualidade|produccion|producao|production|"
    r"mantenimiento|manutencao|maintenance|reports?|reportes?)\b"
    r"|\b(?:reliability|quality|production|maintenance)\s+(?:engineer|intern|student|team|lead|manager|analyst|tech|"
    r"department|guy|person)s?\b"
)
# The whole plant, named: "en toda la planta", "across the whole plant", "na planta toda".
_WHOLE_PLANT = re.compile(
    r"\b(?:toda la planta|la planta entera|toda a planta|a planta toda|planta inteira|the whole plant|the entire plant|"
    r"across the plant|plant-?wide|site-?wide|whole site|en toda la planta|na planta toda|em toda a planta)\b"
)
# A time the asking sentence points back to ("en ese turno", "that day", "naquela noite"): the message names it.
_THAT_TIME = re.compile(
    r"\b(?:ese|esa|aquel|aquella|mismo|misma|that|the same|esse|essa|aquele|aquela|mesmo|mesma|nesse|nessa|"
    r"naquele|naquela)\s+(?:[a-c]\s+)?(?:turno|shift|dia|day|noche|night|noite|periodo|period|rato|horario|tarde|manana|"
    r"morning|afternoon|manha|hora|hour|time|momento|moment|instante|instant)\b"
)
_MONTH = (
    r"(?:enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|setiembre|octubre|noviembre|diciembre|janeiro|"
    r"fevereiro|marco|maio|junho|julho|setembro|outubro|novembro|dezembro|january|february|march|april|may|june|"
    r"july|august|september|october|november|december)"
)
# A day said in words: the day a shift named without one belongs to, where the message says it elsewhere.
_DAY_SAID = re.compile(
    r"\b(?:yesterday|today|ayer|hoy|ontem|hoje|anteayer|antier|anteontem|the day before yesterday|last night|"
    r"anoche|antenoche|tonight|esta noche|esta noite|this morning|this afternoon|esta manana|esta manha|esta tarde|"
    r"hoy de madrugada|hoje de madrugada)\b"
    # a day counted back: "hace dos semanas", "two weeks ago", "há dez dias", "a fortnight ago"
    r"|\b(?:hace|ha|faz)\s+(?:\w+\s+)?(?:dias?|semanas?|meses|mes|anos?)\b|\b(?:days?|weeks?|months?|years?)\s+ago\b"
    # a date by its month: "el 5 de diciembre", "December 5th", "5 de dezembro"
    rf"|\b\d{{1,2}} de {_MONTH}\b|\b{_MONTH} \d{{1,2}}(?:st|nd|rd|th)?\b"
)


def _when(question: str, asked: str, lang: str, *, tz: str, shifts: list[ShiftConfig], now: datetime) -> str:
    """The words naming a question's time: the asking sentence's own; where it points back to one ("…los tiempos
    muertos del turno A de ayer. ¿Cuántos minutos sumó en ese turno, de 6 a 2?"), the nearest sentence before it that
    names a time of that kind, with it ("…seal work last month. I'm only after last night, 20:00 to 06:00. How many
    stops … over that night?" is last night's; "…the day shift yesterday, A shift. P-101 went doon aboot eleven. Whit
    was the stop time over that A shift?" is the shift's, not eleven's); else the whole message. A time only compared
    with ("comparado con el turno A", "para ver si vamos mejor que ayer") is not the question's."""
    question, asked = _COMPARED.sub(" ", question), _COMPARED.sub(" ", asked)
    if asked == question:
        return question
    own = find_window(asked, lang, tz=tz, shifts=shifts, now=now) is not None
    pointed = _THAT_TIME.search(fold(asked))
    if own and pointed is not None and _DAY_SAID.search(fold(asked)):  # "¿Y hace dos meses, ese mismo día…?"
        return asked
    if not own and (wanted := _wanted_time(question, asked, lang, tz=tz, shifts=shifts, now=now)) is not None:
        return f"{wanted} {asked}"
    if own and pointed is None:
        # "P-101 got stopped … yesterday; what was its longest stop during shift A?": yesterday's
        return question if _shift_without_its_day(fold(asked), fold(question)) else asked
    if pointed is not None:
        kind = next((k for k in _TIME_KINDS.values() if k.search(pointed.group(0))), None)
        told = sentences_of(question)
        before = told[: told.index(asked)] if asked in told else told
        for sentence in reversed(before):
            said = _THAT_TIME.sub(" ", fold(sentence))  # "el supervisor de esa noche…" names no night itself
            if (kind is None or kind.search(said)) and _names_time(sentence, lang, tz, shifts, now):
                return f"{sentence} {asked}"  # a window, or an instant ("…ayer a las 11 de la noche. ¿…a esa hora?")
    return asked if own else question


def _wanted_time(
    question: str, asked: str, lang: str, *, tz: str, shifts: list[ShiftConfig], now: datetime
) -> str | None:
    """The time a sentence before the asking one says is the one wanted, from its marker on ("…fue un quilombo, pero
    eso ya lo tengo. Lo que necesito es el turno B de ayer: ¿cuántas paradas…?", "I'm asking about A shift yesterday,
    6 to 2: how many…?"): the nearest such, or None."""
    told = sentences_of(question)
    before = told[: told.index(asked)] if asked in told else []
    for sentence in reversed(before):
        if (marker := _WANTED.search(sentence)) is not None:
            said = sentence[marker.start() :]
            if find_window(said, lang, tz=tz, shifts=shifts, now=now) is not None:
                return said
    return None


# Equipment pointed back to ("esa bomba", "that pump", "essa máquina"): named in a sentence before the asking one.
_POINTED_EQUIPMENT = re.compile(
    r"\b(?:esa|ese|essa|esse|dessa|desse|daquela|daquele|that|dicha|dicho|la misma|el mismo|a mesma|o mesmo|the same)"
    r"\s+(?:bomba|pump|compresor|"
    r"compressor|tanque|tank|maquina|machine|equipo|equipamento|equipment)\b"
)
# What marks the time wanted among others told ("lo que necesito es…", "me interesa…", "I'm asking about…", "me diga
# do…", "quero saber de…").
_WANTED = re.compile(
    r"\b(?:lo que (?:necesito|quiero|le pregunto|te pregunto|pregunto|me interesa)|(?:a mi )?me interesa|"
    r"i'?m asking (?:about|for)|i'?m after|what i (?:need|want)|i need|i want|quero saber|queria saber|quiero saber|"
    r"me diga|me diz|me fala|o que (?:eu )?(?:preciso|quero)|preciso (?:de|do|da)|necesito (?:el|la|lo)|"
    r"but (?:for|about)|pero (?:de|del|lo del)|mas (?:de|do|da))\b",
    re.IGNORECASE,
)


# The kind of time a back-reference points to ("that shift", "esa noche", "naquele dia"), and the words naming one.
_TIME_KINDS = {
    "shift": re.compile(r"\b(?:turno|shift)\b"),
    "night": re.compile(r"\b(?:noche|night|noite|anoche|antenoche|overnight)\b"),
    "day": re.compile(r"\b(?:dia|day|ayer|yesterday|ontem|hoy|today|hoje|anteayer|anteontem)\b"),
}


# A time only compared with: "comparado con el turno A", "compared to the A shift", "para ver si vamos mejor que
# ayer", "que eu comparo com a semana passada", "más que de costumbre".
_COMPARED = re.compile(
    r"\b(?:para ver si|to see if|pra ver se|para ver se|que (?:eu )?comparo|to compare|para compar\w*|pra compar\w*)"
    r"\b[^.?!]*"
    r"|\b(?:compared (?:to|with)|comparado (?:con|com)|comparada (?:con|com)|en comparacion con|em comparacao com|"
    r"frente a|versus|vs\.?)\s+"
    # not an asset compared with, and the time after it ("P-101 vs P-102 for yesterday's B shift")
    r"(?!(?:the |la |el |a |o |los |las |os |as )?(?:[a-z]{1,3}-?\d{2,5}\b|\d{3}\b|bombas?\b|pumps?\b|compres|"
    r"tanques?\b|tanks?\b|lineas?\b|lines?\b|linhas?\b|other\b|otr[ao]\b|outr[ao]\b))[^,.?!]{0,40}"
    # (a "que" said after a verb of saying is no comparison: "la Chayito dice que ayer entre las 6 y las 12…")
    r"|\b(?<!dice )(?<!dicen )(?<!dijo )(?<!digo )(?<!jura )(?<!diz )(?<!disse )(?<!acho )(?<!creo )(?<!cree )"
    r"(?:que|than|do que|de lo que)\s+(?:de costumbre|usual|normal|siempre|sempre|normalmente|ayer|yesterday|"
    r"ontem|la semana pasada|last week|a semana passada|semana passada)\b",
    re.IGNORECASE,
)
# The shift under way said: "este turno", "this shift", "en lo que va", "so far" (no day to take from elsewhere).
_THIS_SHIFT_SAID = re.compile(
    r"\b(?:this|dis|current|este|esta|neste|nesse|deste|desse)\s+(?:shift|turno)\b|\bturno (?:actual|atual)\b|"
    r"\bso far\b|\blo que va\b|\bo que vai\b"
)
# A time of day: a shift, a clock or a range of hours ("during shift A", "between 10:00 and 12:00", "de 6 a 12").
_TIME_OF_DAY_SAID = re.compile(
    r"\b(?:shift|turno)\b|\b\d{1,2}[:h]\d{2}\b|\b\d{1,2}\s*(?:am|pm|a\.m\.|p\.m\.)|"
    r"\b(?:between|from|entre|de|desde|das|from)\s+(?:las\s+|as\s+)?\d{1,2}\b"
    # a clock at which: "às 11h em ponto", "a las 11", "at 11 sharp"
    r"|\b(?:a las|a la|as|at|ao|around)\s+\d{1,2}(?:[:h]\d{2}|h)?\b|\b\d{1,2}h\b"
)


def _shift_without_its_day(asked: str, question: str) -> bool:
    """The asking sentence names a shift or hours but no day, and the rest of the message names a day ("P-101 was
    running hot yesterday. What was its peak between 10:00 and 12:00?")."""
    return (
        bool(_TIME_OF_DAY_SAID.search(asked))
        and not _DAY_SAID.search(asked)
        and not _THIS_SHIFT_SAID.search(asked)
        and bool(_DAY_SAID.search(question))
    )


# An alarm's trip: "alarms tripped", "alarmas que se dispararon", "alarmes que dispararam" go off, no stop.
_ALARM_TRIP = re.compile(
    r"\b(?:trip|trips|tripped|went off|gone off|go off|goes off|going off|fired|se disparo|se dispararon|disparo|"
    r"dispararon|disparou|dispararam|disparos)\b"
)
# The intents answered by the kpis tool, and the kind each asks for.
_KPI_KIND = {"oee": "oee", "reliability": "reliability", "alarm_performance": "alarm_performance"}


# The intents a planner may name, in the order their calls are made (the model planner's schema lists them).
INTENTS: tuple[str, ...] = tuple(_INTENTS)


@dataclass(frozen=True)
class Reading:
    """What a planner read in a question: the intents it asks about, the words naming its subject and the words
    naming its time. The reference planner reads the whole question for both; a model planner names the spans."""

    intents: list[str]
    subject: str
    time: str


def keyword_intents(question: str, *, failing: bool = True) -> list[str]:
    """The intents the question's keywords name (module docstring), in `INTENTS` order; with `failing`, an asset said
    to fail is its stops when nothing else is named. An id's underscores part its words ("quality_check")."""
    folded = fold(question).replace("_", " ")
    intents = [name for name, pattern in _INTENTS.items() if pattern.search(folded)]
    if "alarm_performance" in intents and "alarms" in intents:
        # "¿cuántas alarmas se encontraban activas … durante la avalancha de alarmas?": those standing, not the rate
        intents.remove("alarm_performance" if _STANDING.search(folded) else "alarms")
    unpurposed = _ROLE.sub(" ", _FOR_A_PURPOSE.sub(" ", without_purpose(folded)))
    if unpurposed != folded:  # "for the reliability report, the bearing temperature of…": the temperature
        intents = [name for name, pattern in _INTENTS.items() if pattern.search(unpurposed)]
    if "alarms" in intents and "stops" in intents and not _INTENTS["stops"].search(_ALARM_TRIP.sub(" ", folded)):
        intents.remove("stops")  # "how many alarms tripped on each pump": the alarms went off, not the pumps
    if failing and not intents and (_FAILED.search(folded) or _OUT.search(folded)):  # "did P-101 fail", "was it out"
        intents = ["stops"]  # (a check fails too: not when checks are asked about)
    return intents


def reference_plan(
    question: str,
    lang: str,
    namespace: Namespace,
    *,
    aliases: dict[str, str],
    tz: str,
    shifts: list[ShiftConfig],
    now: datetime,
) -> Plan | Clarification | Refusal:
    """The plan that answers `question`, or what to tell the asker instead (module docstring)."""
    if len(question) > MAX_QUESTION_CHARS:
        return Refusal(reason="out_of_scope", detail=f"a question is at most {MAX_QUESTION_CHARS} characters")
    refusal = classify(question, lang)
    if refusal is not None:
        return refusal
    question = without_signature(newest_part(question))  # a reply's own text, not the e-mails it quotes
    if (rest := without_aside(question)) != question and _names_own_subject(rest, namespace, aliases):
        # "Con la P-102 en mantención, ¿cuántos m3 produjo la línea 1 ayer?": the line's; "Já que o turno da noite
        # reclamou, quanto tempo … ontem entre 6h e meio-dia?": that time's (but "With yesterday's B shift in mind,
        # how many stops did P-101 have?" keeps the aside's)
        aside = question[: len(question) - len(rest)]
        if find_window(aside, lang, tz=tz, shifts=shifts, now=now) is None or _names_time(rest, lang, tz, shifts, now):
            question = rest
    if (rest := without_pasted(question)) != question and _names_own_subject(rest, namespace, aliases):
        question = rest  # "Pasting your previous reply: 'P-101 flow at 07:00 was 118.9 m³/h.' What was…?"
    if (rest := without_circumstance(question)) != question and _names_own_subject(rest, namespace, aliases):
        # "¿Qué temperatura marcaba el C-201 a las 9:30, cuando estaba parado por la falla?": the temperature, the
        # stop only told (its time too, where the rest names none of its own)
        circumstance = question[len(rest) :] if question.startswith(rest) else question
        if find_window(circumstance, lang, tz=tz, shifts=shifts, now=now) is None or _names_time(
            rest, lang, tz, shifts, now
        ):
            question = rest
    question = without_unwanted(question)  # "Not the max, just the reading at half eleven"
    # A correction ("¿…la P-101 ayer? No, perdón, de la P-102.", "ayer a las 8, no, a las 9 de la noche") puts right
    # the subject or the time it names where one was said before it ("Sorry to bother you, how many stops…?" corrects
    # nothing); the rest is read in what was said before it.
    fix = corrected(question)
    before = None if fix is None else resolve_subject(fix[0], namespace, aliases)
    quantity_before = before.quantity if isinstance(before, Subject) else None
    if fix is not None and not (
        keyword_intents(fix[0]) or quantity_before or isinstance(before, Subject) and before.tag
    ):
        fix = None  # nothing asked before it: "Good evening! Sorry, … What was the lowest level…?"
    fixes_subject = fix is not None and all(_names_own_subject(part, namespace, aliases) for part in fix)
    fixes_time = fix is not None and all(_names_time(part, lang, tz, shifts, now) for part in fix)
    if fix is not None and (fixes_subject or fixes_time):
        question = fix[0]
    # What is asked and when come from the sentence that asks, where a message has others beside it ("Luis dice que
    # estaba a 80% toda la tarde. ¿Cuál fue el mínimo ayer?"); the subject from the whole message.
    asked = plant_sentence(question, namespace, aliases)
    intents = keyword_intents(asked, failing=False)
    asked_subject = resolve_subject(asked, namespace, aliases)  # a resolve: once
    names_a_quantity = isinstance(asked_subject, Subject) and (
        asked_subject.tag is not None or asked_subject.quantity is not None
    )
    # "¿y ayer?": what the message asked before; "…: quantos minutos durou a maior de cada um?" (a figure's word
    # alone, "maior", naming nothing, after "a paragem mais longa"): the message's
    trips_only = intents == ["stops"] and not _INTENTS["stops"].search(_ALARM_TRIP.sub(" ", fold(asked)))
    if trips_only and "alarms" in keyword_intents(question):
        # "…hubo un montón de alarmas; decime solo las de la P-101: ¿cuántas se dispararon ayer?": alarms went off
        intents = ["alarms"]
    if not intents and not names_a_quantity or intents == ["tag"] and asked_subject == Subject():
        # ("Siento que fallaron más controles que de costumbre. ¿Cuántos fallaron ayer?": the checks)
        intents = keyword_intents(question, failing=False) or keyword_intents(question)
    # (a quantity named is no overview: "…hasta cuánto llegó la vibración? El pico máximo en mm/s, … pasó de 9.")
    overview = not intents and not names_a_quantity and _OVERVIEW.search(fold(question)) is not None
    if overview and _names_plant(question, lang, namespace, aliases, tz, now):
        intents = list(OVERVIEW_INTENTS)
    timed = _when(question, asked, lang, tz=tz, shifts=shifts, now=now)
    # The subject too, where the asking sentence names one and asks its own thing ("…las dos bombas se pararon.
    # ¿Cuántas alarmas había activas en toda la planta?"); else the message's ("¿y ayer?" after a question about
    # P-101; "La P-101 hizo ruido. ¿Cuál fue la vibración máxima?"; "How far with P-101? I want the highest…").
    asks_itself = bool(keyword_intents(asked)) or names_a_quantity
    own_subject = (
        asks_itself and _names_subject(asked, namespace, aliases) and not _POINTED_EQUIPMENT.search(fold(asked))
    )
    if own_subject and isinstance(asked_subject, Clarification) and asked_subject.reason == "ambiguous_name":
        # "Foram 6 alarmes na P-101 ontem? Quantas ativações teve a bomba ontem?": the pump named before
        before = resolve_subject(question, namespace, aliases)
        own_subject = not (isinstance(before, Subject) and before.asset in asked_subject.candidates)
    subject = asked if asked != question and own_subject else question
    if subject == asked != question and not (isinstance(asked_subject, Subject) and asked_subject.quantity):
        # the quantity told before it: "Me dicen que las bombas pasaron los 60 °C de temperatura de rodamiento.
        # ¿Cuál fue la máxima de cada bomba?"
        quantity_told = _quantity_told(question, namespace, aliases)
        subject = asked if quantity_told is None else f"{asked} {quantity_told.replace('_', ' ')}"
    if fix is not None and fixes_subject:
        # with the quantity said before where the correction names none: "¿…la vibración máxima de la P-101 ayer? No,
        # perdón, de la P-102."
        put_right = resolve_subject(fix[1], namespace, aliases)
        named = isinstance(put_right, Subject) and (put_right.tag or put_right.quantity)
        subject = fix[1] if named or quantity_before is None else f"{fix[1]} {quantity_before.replace('_', ' ')}"
    if fix is not None and fixes_time:
        # the day said before stays where the correction names none: "ayer a las 8, no, a las 9 de la noche"
        day = _DAY_SAID.search(fold(question))
        timed = fix[1] if day is None or _DAY_SAID.search(fold(fix[1])) else f"{fix[1]} {day.group(0)}"
    unpurposed = without_purpose(_PURPOSE_SAID.sub(" ", fold(subject)))
    if unpurposed != fold(subject) and isinstance(resolve_subject(subject, namespace, aliases), Clarification):
        # "To put next to the pump stops, how much scrap did line L1 make…?": the line's, not a pump to ask about
        subject = unpurposed if isinstance(resolve_subject(unpurposed, namespace, aliases), Subject) else subject
    reading = Reading(intents=intents, subject=subject, time=timed)
    plan = plan_for(question, lang, namespace, reading, aliases=aliases, tz=tz, shifts=shifts, now=now)
    if _names_nothing_known(plan) and (fixed := respelled(question)) != question:
        # "oye cuantas parads tubo el compresr ayer": read again put right, and taken where it names its subject
        # ("how many steps…" is no plant's stops) or where each word put right is a slip of no other word ("cuánto
        # desperdisio hubo ayer", "refuggo")
        again = reference_plan(fixed, lang, namespace, aliases=aliases, tz=tz, shifts=shifts, now=now)
        if isinstance(again, Plan) and (
            all(has_subject(call) for call in again.calls) or respelled(question, sure=True) == fixed
        ):
            return again
    return plan


def _names_nothing_known(plan: Plan | Clarification | Refusal) -> bool:
    """No intent found, or a name or tag not known: what a word typed a letter off gives (`resolve.respelled`)."""
    if isinstance(plan, Refusal):
        return plan.reason == "out_of_scope" and plan.detail == _NOT_PLANT_DATA
    return isinstance(plan, Clarification) and plan.reason in ("which_tag", "unknown_tag", "unknown_name")


def has_subject(call: ToolCall) -> bool:
    """Whether `call` is about an asset, a line or a tag named (not the whole plant)."""
    return any(call.args.get(key) for key in ("asset", "line", "tag"))


# "the Houston plant", "the plant in Pune", "la planta de Lima", "a fábrica de Campinas": a site by its name
# (capitalised in English, where "plant stops in shift A" is no site; after a preposition in Spanish and Portuguese,
# after up to two describing words: "la planta potabilizadora de Guayaquil"). Describing words are not a name.
_SITE_NAMED_EN = re.compile(
    r"\b([A-Z][\w-]{2,})\s+(?:[Pp]lant|[Ss]ite|[Ff]actory|[Mm]ill|[Ff]acility)\b"
    r"|\b(?:[Pp]lant|[Ss]ite|[Ff]actory|[Mm]ill|[Ff]acility)\s+(?:in|at|of)\s+([A-Z][\w-]{2,})\b"
    # a mine's or plant's name right after its word, capitalised: "la faena Escondida", "a usina Cubatão"
    r"|\b(?:[Ff]aena|[Mm]ina|[Uu]sina|[Rr]efiner[ií]a|[Rr]efinaria|[Ii]ngenio)\s+([A-Z][\w-]{2,})\b"
)
_NOT_A_SITE_NAME = frozenset(
    "the this that our whole entire main other same treatment water power pumping process production bottling "
    "what which my your its their all every chemical steel paper pulp cement brewing food dairy mining oil gas "
    "desalination wastewater sewage packaging filling old new big small north south east west upper lower "
    "esta este toda entera nuestra nossa essa inteira principal agua tratamiento tratamento bombeo producao "
    "produccion proceso processo energia potable todo inteiro misma mesma las los una uno ayer hoy hoje ontem "
    "embotellado envasado envase engarrafamento celulosa celulose papel cemento cimento cerveza cervejaria bebidas "
    "alimentos lacteos laticinios acero aco quimicos quimica fibra concentradora fundicion fundicao refinacion "
    "refino azucar acucar etanol mineria mineracao pulpa "
    "manana manha tarde noche noite turno semana zona area sector linea linha line hoje today yesterday dia "
    "empresa compania companhia casa ciudad cidade region regiao general geral global completa completo entera inteira "
    "enero febrero marzo abril mayo junio julio agosto septiembre setiembre octubre noviembre diciembre janeiro "
    "fevereiro marco maio junho julho setembro outubro novembro dezembro january february march april may june "
    "july august september october november december shift night morning madrugada anteayer anteontem antier total "
    "antenoche mediodia meio-dia "
    # a clock after "de": "toda la planta ayer de cinco a seis de la tarde"
    "una uno dos tres cuatro cinco seis siete ocho nueve diez once doce trece catorce quince veinte um dois duas "
    "quatro sete oito nove dez onze doze treze quatorze catorze quinze vinte meia medianoche meia-noite".split()
)


_SITE_NAMED = re.compile(
    r"\b(?:planta|fabrica|sitio|usina|unidad|unidade|sede|central|estacion|estacao|refineria|refinaria|mina|"
    r"ingenio|complejo|complexo)(?:\s+[a-z]+){0,2}?\s+"
    # after "de" an article may come first: "la planta de la Coca-Cola en San Pedro Sula"
    r"(?:(?:de|da|do)\s+(?:(?:la|el|los|las|a|o|os|as)\s+)?|del\s+|en\s+|em\s+)"
    # the name past its describing words: "a estação de tratamento do Kikuxi" is Kikuxi's
    rf"(?!(?:{'|'.join(sorted(_NOT_A_SITE_NAME))})\b)([a-z][a-z0-9-]{{2,}})\b"
    # dictated or typed in lower case, after "the": "how many alarms did the lagos plant have"
    r"|\bthe ([a-z][a-z0-9-]{2,}) (?:plant|site|factory|mill|facility)\b"
)


# Whom the answer is for, not what it is about: "for the guys at the plant in Mexico", "pro pessoal da usina de
# Cubatão".
_RECIPIENT = re.compile(
    r"\b(?:for|para|pra|pro)\s+(?:(?:the|los|las|el|la|o|a|os|as|our|nuestros|nossos)\s+)?(?:guys|team|people|folks|crew|"
    r"colleagues|lads|muchachos|chicos|compas|companeros|gente|equipo|pessoal|galera|equipe|colegas)\s+"
    r"(?:at|in|of|from|de|del|da|do|en|em|na|no)\b[^,.;:?!]*",
    re.IGNORECASE,
)


def other_site(question: str, site: str) -> str | None:
    """The name of a site other than `site` (its id, word by word) that the question asks about, or None."""
    own = set(re.findall(r"[a-z0-9]+", fold(site)))
    # a signature's "Kim\nPlant Superintendent" names no "Kim plant"; what the figure is for names no site asked
    # about ("Es para el reporte de la planta de Arequipa")
    lines = _RECIPIENT.sub(" ", question).splitlines()
    named = [
        m.group(1) or m.group(2) or m.group(3)
        for line in lines
        for m in _SITE_NAMED_EN.finditer(_PURPOSE_SAID.sub(" ", line))
    ]
    named += [
        m.group(1) or m.group(2) for line in lines for m in _SITE_NAMED.finditer(_PURPOSE_SAID.sub(" ", fold(line)))
    ]
    for name in (fold(n) for n in named):
        if name not in _NOT_A_SITE_NAME and not set(re.findall(r"[a-z0-9]+", name)) & own:
            return name
    return None


def _names_time(text: str, lang: str, tz: str, shifts: list[ShiftConfig], now: datetime) -> bool:
    return find_window(text, lang, tz=tz, shifts=shifts, now=now) is not None or isinstance(
        find_instant(text, lang, tz=tz, now=now, shifts=shifts), datetime
    )


def _names_own_subject(text: str, namespace: Namespace, aliases: dict[str, str]) -> bool:
    """The text names an asset, a line, a tag or the whole plant: no name to ask back about."""
    subject = resolve_subject(text, namespace, aliases)
    named = isinstance(subject, Subject) and any((subject.asset, subject.line, subject.tag))
    return named or _WHOLE_PLANT.search(fold(text)) is not None


def _quantity_told(question: str, namespace: Namespace, aliases: dict[str, str]) -> str | None:
    """The quantity a sentence of `question` names, whoever's it is ("las dos bombas pasaron los 60 °C de temperatura
    de rodamiento": bearing_temperature), or None."""
    one = namespace.assets[0].asset if namespace.assets else None
    for sentence in sentences_of(question):
        said = resolve_subject(sentence if one is None else as_asset(sentence, one), namespace, aliases)
        if isinstance(said, Subject) and said.quantity:
            return said.quantity
    return None


def plant_sentence(question: str, namespace: Namespace, aliases: dict[str, str]) -> str:
    """The sentence `question` asks in (`resolve.asked_sentence`); where that one names nothing of the plant (no
    intent, no asset, line or tag) and an earlier sentence asking with "?" does, that one: "¿Cuál fue el nivel
    promedio del T-301 ayer? Y che, ¿viene viento fuerte esta semana?"."""
    asked = asked_sentence(question)
    if keyword_intents(asked):
        return asked
    subject = resolve_subject(asked, namespace, aliases)
    if isinstance(subject, Subject) and any((subject.asset, subject.line, subject.tag)):
        return asked
    about_plant = [
        s
        for s in sentences_of(question)
        if s.rstrip().endswith("?") and keyword_intents(s) and _names_subject(s, namespace, aliases)
    ]
    return about_plant[-1] if about_plant else asked


def _names_subject(text: str, namespace: Namespace, aliases: dict[str, str]) -> bool:
    """The text names an asset, a line or a tag (a quantity alone is no subject: whose?), or the whole plant ("en
    toda la planta"), or a name to ask back about."""
    if _WHOLE_PLANT.search(fold(text)):
        return True
    subject = resolve_subject(text, namespace, aliases)
    return not isinstance(subject, Subject) or any((subject.asset, subject.line, subject.tag))


def _names_plant(
    question: str, lang: str, namespace: Namespace, aliases: dict[str, str], tz: str, now: datetime
) -> bool:
    """The question names an asset or a line, or a time: "what happened" is then about the plant, not the news."""
    subject = resolve_subject(question, namespace, aliases)
    if not isinstance(subject, Subject) or subject.asset is not None or subject.line is not None:
        return True  # a name to ask back about counts as naming the plant
    return find_window(question, lang, tz=tz, shifts=[], now=now) is not None


_NOT_PLANT_DATA = "not a question about the plant's stored data"


def plan_for(
    question: str,
    lang: str,
    namespace: Namespace,
    reading: Reading,
    *,
    aliases: dict[str, str],
    tz: str,
    shifts: list[ShiftConfig],
    now: datetime,
) -> Plan | Clarification | Refusal:
    """The tool calls for what `reading` found in `question`: its window and subject resolved in code."""
    folded = fold(question)
    if (site := other_site(question, namespace.site)) is not None:
        return Refusal(reason="out_of_scope", detail=f"the agent answers for its own site only, not {site!r}")
    intents = [name for name in INTENTS if name in reading.intents]
    window = find_window(reading.time, lang, tz=tz, shifts=shifts, now=now)
    if isinstance(window, Clarification):  # a shift the site lacks, or a window wholly in the future
        return window
    if intents == ["reports"]:
        return Plan(calls=[_reports_call(folded, window)])
    subjects = _subjects(reading.subject, namespace, aliases)
    if isinstance(subjects, Clarification):
        return subjects
    if all(s.asset is None and s.tag is None for s in subjects) and other_equipment(asked_sentence(question)):
        # "¿Cuántas paradas tuvo el digestor? El de la línea de fibra": equipment the plant has none of, asked about
        return Clarification(reason="unknown_name", candidates=sorted(a.asset for a in namespace.assets))
    if not intents and all(s.tag is not None or s.quantity is not None for s in subjects):
        intents = ["tag"]
    if not intents and _READING_ASKED.search(folded) and all(s.asset is not None for s in subjects):
        intents = ["tag"]
    if "tag" in intents and len(intents) > 1 and all(s.tag is None and s.quantity is None for s in subjects):
        intents.remove("tag")  # "controles fuera de rango": the range is the checks', no tag is named
    if not intents:
        return Refusal(reason="out_of_scope", detail=_NOT_PLANT_DATA)
    if len(subjects) > 1 and len(subjects) * len(intents) > (PLURAL_MAX if len(intents) == 1 else PLURAL_ASKED_MAX):
        return Clarification(reason="ambiguous_name", candidates=sorted(str(s.asset) for s in subjects))
    span = window if window is not None else resolve_window(reading.time, lang, tz=tz, shifts=shifts, now=now)
    if isinstance(span, Clarification):  # the current shift at its first instant: nothing stored yet
        return span
    instant = find_instant(reading.time, lang, tz=tz, now=now, shifts=shifts)
    at = instant if isinstance(instant, datetime) else None  # in the future: the window above already asked back
    calls: list[ToolCall] = []
    for subject in subjects:
        for intent in intents:
            length = timedelta(days=RELIABILITY_DAYS)
            wide = intent == "reliability" and window is None and span.end - span.start < length
            scope = Window(start=span.end - length, end=span.end) if wide else span
            call = _call(intent, folded, subject, namespace, scope, explicit=window is not None, at=at, now=now)
            if isinstance(call, Clarification):
                return call
            calls.append(call)
    return Plan(calls=calls[:MAX_CALLS])


def _subjects(question: str, namespace: Namespace, aliases: dict[str, str]) -> list[Subject] | Clarification:
    """The one subject the question names; or, for a plural equipment word ("las bombas"), the subject of each
    asset of that kind (the question asked with the asset's id in the word's place)."""
    if (fewer := too_few(question, namespace)) is not None:
        return fewer
    kept = without_left_out(question, namespace)
    if kept is None:  # "todas las bombas menos la 101 y la 102": none left to ask about
        return Clarification(reason="unknown_name", candidates=sorted(a.asset for a in namespace.assets))
    question = kept
    subject = resolve_subject(question, namespace, aliases)
    plural = plural_assets(question, namespace)
    if plural is not None and one_of(question) and not each_said(question):
        return Clarification(reason="ambiguous_name", candidates=plural[1])  # "una de las bombas, no sé cuál"
    if isinstance(subject, Subject):
        if plural is not None and subject.asset in plural[1] and each_said(question):
            # "each of the pumps yesterday, 101 and 102", "each of the two pumps, 101 and 102": every one of the kind
            # (not "las bombas andan bien, pero ¿cuántas alarmas levantó la P-102?")
            return _every(_each_in_place(question, *plural, namespace, aliases)) or [subject]
        if subject.asset is None or plural is None or subject.asset in plural[1]:
            return [subject]
        # "el compresor C-201 y las dos bombas": the asset named and each of the kind's, when that is few enough
        word, of_kind = plural
        named = [subject.asset, *of_kind]
        if len(named) > PLURAL_MAX:
            return [subject]
        texts = [only_asset(question, subject.asset, named)]
        texts += [re.sub(rf"\b{word}\b", asset, only_asset(question, asset, named)) for asset in of_kind]
        return _every([resolve_subject(text, namespace, aliases) for text in texts]) or [subject]
    several = subject.reason == "several_subjects"
    if several and (plural is not None or listed(question)):
        # "cada bomba, la P-101 y la P-102", "P-101, P-102 and C-201": the assets it names, each
        assets = {a.asset for a in namespace.assets}
        named = [c for c in subject.candidates if c in assets]
        if len(named) != len(subject.candidates) or len(named) > PLURAL_MAX:
            return subject
        each = [resolve_subject(only_asset(question, asset, named), namespace, aliases) for asset in named]
    elif (
        subject.reason == "ambiguous_name"
        and plural is None
        and each_said(question)
        and kinds_apart(subject.candidates)
    ):
        # "Del compresor y el tanque nomás, ¿cuántas alarmas… cada uno?": each asset its kind's word names
        if len(subject.candidates) > PLURAL_MAX:
            return subject
        each = [resolve_subject(as_asset(question, asset), namespace, aliases) for asset in subject.candidates]
    elif plural is None or subject.reason != "ambiguous_name":
        return subject
    elif set(plural[1]) < set(subject.candidates) and len(subject.candidates) <= PLURAL_MAX:
        # "las bombas y el compresor": each pump and the one compressor
        each = [resolve_subject(as_asset(question, asset), namespace, aliases) for asset in subject.candidates]
    else:  # "each pump … P-101 and P-102 separately"
        each = _each_in_place(question, *plural, namespace, aliases)
    return _every(each) or subject


def _each_in_place(
    question: str, word: str, assets: list[str], namespace: Namespace, aliases: dict[str, str]
) -> list[Subject | Clarification]:
    """The subject of each of `assets` asked with its id in the plural word's place, the others named taken out."""
    return [
        resolve_subject(re.sub(rf"\b{word}\b", asset, only_asset(question, asset, assets)), namespace, aliases)
        for asset in assets
    ]


def _every(each: list[Subject | Clarification]) -> list[Subject] | None:
    """The subjects, when every one resolved; None when any was asked back."""
    return None if any(isinstance(s, Clarification) for s in each) else [s for s in each if isinstance(s, Subject)]


def _iso(moment: datetime) -> Any:
    """`moment` in UTC as the plan's JSON holds it (pydantic's form, as `Window` dumps its ends)."""
    return TypeAdapter(datetime).dump_python(moment.astimezone(UTC), mode="json")


def _reports_call(folded: str, window: Window | None) -> ToolCall:
    status = next((name for name, pattern in _REPORT_STATUS.items() if pattern.search(folded)), None)
    span = window.model_dump(mode="json") if window is not None else None
    return ToolCall(tool="reports_list", args={"window": span, "status": status})


def _call(
    intent: str,
    folded: str,
    subject: Subject,
    namespace: Namespace,
    window: Window,
    *,
    explicit: bool,
    at: datetime | None,
    now: datetime,
) -> ToolCall | Clarification:
    span = window.model_dump(mode="json")
    scoped = {"asset": subject.asset, "line": subject.line, "window": span}
    builders: dict[str, Callable[[], ToolCall | Clarification]] = {
        "stops": lambda: ToolCall(tool="stops", args=scoped),
        "production": lambda: ToolCall(tool="production", args=scoped),
        "quality_checks": lambda: ToolCall(tool="quality_checks", args=scoped),
        "alarms": lambda: ToolCall(
            tool="alarms",
            args={"asset": subject.asset, "window": span, "active_at": _active_at(folded, at, now)},
        ),
        "notes": lambda: ToolCall(tool="notes", args={"asset": subject.asset, "window": span}),
        "reports": lambda: _reports_call(folded, window if explicit else None),
        "tag": lambda: _tag_call(folded, subject, namespace, span, explicit=explicit, at=at, now=now),
    }
    if intent in _KPI_KIND:
        return ToolCall(tool="kpis", args={"kind": _KPI_KIND[intent], **scoped})
    return builders[intent]()


def _active_at(folded: str, at: datetime | None, now: datetime) -> Any:
    """For "which alarms were active": the one clock time the question names ("a las 06:16"), else now."""
    return _iso(at if at is not None else now) if _ACTIVE.search(folded) else None


def _tag_call(
    folded: str,
    subject: Subject,
    namespace: Namespace,
    span: dict[str, Any],
    *,
    explicit: bool,
    at: datetime | None,
    now: datetime,
) -> ToolCall | Clarification:
    """tag_stats for a statistic or a window; tag_value_at at the one clock time named ("a las 10"), or now for
    "now" or a question naming no time."""
    tag = subject.tag
    if tag is None and len(subject.tag_candidates) == 1 and subject.asset is None:
        tag = subject.tag_candidates[0]
    own = [t for t in namespace.tags if subject.asset is None or t.asset == subject.asset]
    if tag is None and not subject.tag_candidates and subject.asset is not None and len(own) == 1:
        tag = own[0].tag  # "the lowest T-301 got": the tank's one tag
    if tag is None:
        if subject.tag_candidates:
            named = {t.tag for t in own if t.quantity == subject.quantity}
            reason = "which_tag" if named & set(subject.tag_candidates) else "unknown_tag"
            return Clarification(reason=reason, candidates=subject.tag_candidates)
        return Clarification(reason="which_tag", candidates=sorted(t.tag for t in own))
    # "a las diez y media", "hace media hora": the half of an hour, not a mean ("media")
    stats = _STATS.search(re.sub(r"\b(?:y|e) (?:media|meia)\b|\b(?:media|meia) hora\b", " ", folded))
    if stats or (explicit and at is None and not _NOW.search(folded)):
        return ToolCall(tool="tag_stats", args={"tag": tag, "window": span})
    return ToolCall(tool="tag_value_at", args={"tag": tag, "at": _iso(at if at is not None else now)})
