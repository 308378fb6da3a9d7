"""The reference writer (pure, deterministic): one section's narrative as a careful shift supervisor writes it.

It is the target a small model is fine-tuned on and the text published when the model's own text for a section fails
its checks, so it must read well and always pass them. Every figure, time and duration comes from the section's
facts through the phrasebook's formatting (`format_number`, `format_duration`, `format_time`), so the grounding
check reads it back exactly; record text (alarm messages, reasons, authors, units) goes through `safe_text`, and is
left out where it would read as more than one sentence. Counts the facts do not hold (how many notes, how many state
changes) are never written as figures: a figure the check cannot trace is one the model must not learn to write.

Each kind of sentence has at least three wordings per language; the wording is chosen from a hash of the section's
content, so the same facts always give the same text and different reports read differently. Each sentence is a
list of candidates, richest first; the first that passes the grounding check on its own is kept (a reason such as
`seal_2` is an id no fact names), and a section where nothing passes still gets one figure-free sentence.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from zoneinfo import ZoneInfo

from edge_agent.canonical import CanonicalJsonError, canonical_json, sha256_hex
from edge_agent.reports.facts import Fact
from edge_agent.reports.grounding import section_grounding
from edge_agent.reports.prompts import (
    Phrasebook,
    fact_sentence,
    format_duration,
    format_number,
    format_time,
    load_phrasebook,
    safe_text,
    spans_days,
)
from edge_agent.reports.prose import prose_problems
from edge_agent.reports.request import ResolvedRequest, from_iso
from edge_agent.reports.sections import Section, left_after, note_tie

# r2: the causes sentence reads the `downtime_cause` facts (every stop of the window, not only the listed ones);
# r3: the longest stop is the `downtime_longest` fact's (likewise); r4: "{fails}" (a count with its noun, "4 controles
# fallidos") no longer followed by the noun's adjective again in es and pt ("4 controles fallidos fallidos de 16");
# r5: the notes tie is `sections.note_tie`'s, and the notes section's related facts are that one event (the same tie
# as r4's; the wording, picked by a hash over the section's facts, differs); r6: the process-values section lists its
# tag statistics peaks first (`sections.tag_peak`), and that hash reads them in that order (the same tags are named,
# some in other wordings); r7: that section holds only the `sections.TAGS_MAX` top peaks, which the hash reads (the
# same tags are named, some in other wordings).
REFERENCE_VERSION = "r7"
MAX_SENTENCES = 4
# An alarm is tied to a stop on its asset that starts from its first activation to an hour after its last: long
# enough for a vibration alarm to end in a trip, short enough not to blame an alarm for the next shift's stop.
TIE_WINDOW_S = 3600
# Three authors named, then "and others": a handover names people, it does not list a roster.
AUTHORS_MAX = 3
PRODUCTION_MAX = 4

# Wordings per language and sentence kind. Fields are filled with text already formatted for the grounding check.
_PHRASES: dict[str, dict[str, tuple[str, ...]]] = {
    "es": {
        "dt.none": (
            "No hubo paradas {during}.",
            "No se registró ninguna parada {during}.",
            "Los equipos no tuvieron paradas {during}.",
        ),
        "dt.total": (
            "Hubo {stops} {during}, con {dur} de parada en total.",
            "{During} se registraron {stops}, que suman {dur}.",
            "El tiempo de parada {during} fue de {dur}, repartido en {stops}.",
        ),
        "dt.single": (
            "Hubo una sola parada {during}: {asset}{cause}, {span} ({dur}).",
            "La única parada {during} fue la de {asset}{cause}, {span}, {dur} en total.",
            "{During} solo se detuvo {asset}{cause}, {span} ({dur}).",
        ),
        "dt.single_open": (
            "Hubo una sola parada {during}: {asset}{cause}, iniciada {start}, que seguía abierta {end_of} ({dur}).",
            "La única parada {during} fue la de {asset}{cause}: empezó {start} y {end_of} seguía abierta ({dur}).",
            "{During} solo se detuvo {asset}{cause}, desde {start_bare}, y la parada no se había cerrado {end_of} "
            "({dur}).",
        ),
        "dt.cause_same": (
            "La causa principal fue {reason}, tanto por tiempo perdido como por número de paradas.",
            "El motivo que más paradas provocó y el que más tiempo se llevó fue {reason}.",
            "Por duración y por frecuencia, la causa que más pesó fue {reason}.",
        ),
        "dt.cause_split": (
            "La causa que más tiempo se llevó fue {reason}, mientras que la más frecuente fue {frequent}.",
            "Por tiempo perdido destaca {reason}; por número de paradas, {frequent}.",
            "Ninguna causa sumó tanto tiempo de parada como {reason}, aunque {frequent} se repitió más.",
        ),
        "dt.cause_only": (
            "Todas las paradas se debieron a {reason}.",
            "El motivo de todas las paradas fue {reason}.",
            "Las paradas tuvieron una única causa: {reason}.",
        ),
        "dt.longest": (
            "La más larga fue la de {asset}{cause}, {span} ({dur}).",
            "La parada más larga la tuvo {asset}{cause}: {dur}, {span}.",
            "Destaca la parada de {asset}{cause}, la más larga, {span} ({dur}).",
        ),
        "dt.longest_open": (
            "La más larga, la de {asset}{cause}, empezó {start} y seguía abierta {end_of} ({dur}).",
            "La parada más larga la tiene {asset}{cause}: iniciada {start}, no se había cerrado {end_of} ({dur}).",
            "Destaca la parada de {asset}{cause}, la más larga, abierta desde {start_bare} y aún sin cerrar "
            "{end_of} ({dur}).",
        ),
        "dt.open": (
            "La parada de {asset}{cause}, iniciada {start}, seguía abierta {end_of} ({dur}).",
            "{asset} continuaba parado {end_of}{cause}, desde {start_bare} ({dur}).",
            "Quedó abierta la parada de {asset}{cause}, que empezó {start} ({dur} hasta el cierre).",
        ),
        "al.none": (
            "No se activó ninguna alarma {during}.",
            "No hubo alarmas {during}.",
            "{During} no saltó ninguna alarma.",
        ),
        "al.total.one": (
            "Se activó 1 alarma {during}, en {assets}.",
            "{During} saltó 1 alarma, en {assets}.",
            "Hubo 1 alarma {during}, en {assets}.",
        ),
        "al.total.other": (
            "Se activaron {alarms} {during}, en {assets}.",
            "{During} saltaron {alarms} en {assets}.",
            "Hubo {alarms} {during}, en {assets}.",
        ),
        "al.top.one": (
            "La más destacada fue la {alarm}, que saltó {times} {first}.",
            "Entre ellas, la {alarm} saltó {times}, {first}.",
            "La alarma que encabeza la lista es la {alarm}: {times}, {first}.",
        ),
        "al.top.other": (
            "La más frecuente fue la {alarm}, que saltó {times} {span}.",
            "La {alarm} fue la que más se repitió: {times}, {span}.",
            "Destaca la {alarm}, que saltó {times} {span}.",
        ),
        "al.single": (
            "Solo saltó 1 alarma {during}, {short}, {first}.",
            "Hubo 1 única alarma {during}, {short}, {first}.",
            "{During} se activó solo 1 alarma, {short}, {first}.",
        ),
        "al.tie": (
            "La {alarm} precedió a la parada de {asset} iniciada {stop}{cause}.",
            "Poco después de la {alarm}, el equipo se detuvo {stop}{cause}.",
            "La {alarm} fue el aviso previo de la parada que {asset} tuvo {stop}{cause}.",
        ),
        "nt.one": (
            "Hay una sola nota de operador, de {who}.",
            "La única nota de operador {during} es de {who}.",
            "Se registró una nota de operador, escrita por {who}.",
        ),
        "nt.many.one": (
            "Hubo varias notas de operador {during}, todas de {who}.",
            "Las notas de operador {during} son todas de {who}.",
            "Todas las notas de operador las escribió {who}.",
        ),
        "nt.many.other": (
            "Dejaron notas de operador {who}.",
            "Las notas de operador {during} son de {who}.",
            "{During} dejaron notas {who}.",
        ),
        "nt.more.one": (
            "Hay además 1 nota que no se muestra.",
            "Queda 1 nota más fuera de la lista.",
            "Otra nota, 1 más, no se muestra aquí.",
        ),
        "nt.more.other": (
            "Hay además {notes} que no se muestran.",
            "Quedan {notes} más fuera de la lista.",
            "Otras {notes} no se muestran aquí.",
        ),
        "nt.tie_after": (
            "Sobre {asset} escribió {who} {at}, después de su parada de {dur}{cause}.",
            "{At}, tras la parada de {dur} de {asset}{cause}, {who} dejó una nota sobre ese equipo.",
            "La nota que {who} escribió {at} se refiere a {asset}, que había estado parado {dur}{cause}.",
        ),
        "nt.tie_during": (
            "Sobre {asset} escribió {who} {at}, con el equipo parado{cause} desde {start_bare}.",
            "{At}, mientras {asset} seguía parado{cause}, {who} dejó una nota sobre él.",
            "La nota que {who} escribió {at} trata de {asset}, detenido{cause} desde {start_bare}.",
        ),
        "nt.tie_alarm": (
            "Sobre {asset} escribió {who} {at}, después de la {alarm}.",
            "{At}, tras la {alarm}, {who} dejó una nota sobre {asset}.",
            "La nota que {who} escribió {at} se refiere a {asset}, que había dado la {alarm}.",
        ),
        "nt.flagged.one": (
            "La nota registrada {at} queda retenida para revisión y su texto no se usa.",
            "Una nota, la registrada {at}, se retuvo para revisión: parece una instrucción.",
            "Se retuvo para revisión la nota registrada {at}, cuyo texto no se reproduce.",
        ),
        "nt.flagged.other": (
            "Varias notas, la primera registrada {at}, quedan retenidas para revisión y su texto no se usa.",
            "Se retuvieron para revisión varias notas, desde la registrada {at}: parecen instrucciones.",
            "Algunas notas, empezando por la registrada {at}, quedan retenidas para revisión.",
        ),
        "pq.prod": (
            "La producción {during} fue de {items}.",
            "{During} se produjeron {items}.",
            "En producción se contabilizaron {items}.",
        ),
        "pq.pass.one": (
            "El único control de calidad de {asset} fue correcto.",
            "{asset} pasó su único control de calidad.",
            "El control de calidad de {asset} salió bien.",
        ),
        "pq.pass.other": (
            "Los {checks} de calidad de {asset} fueron correctos.",
            "{asset} pasó sus {checks} de calidad sin fallos.",
            "Ninguno de los {checks} de calidad de {asset} falló.",
        ),
        "pq.fail_single": (
            "El único control de calidad de {asset} falló.",
            "{asset} no pasó su único control de calidad.",
            "Falló el control de calidad de {asset}, el único del periodo.",
        ),
        "pq.fail.one": (
            "De los {checks} de calidad de {asset}, falló 1.",
            "{asset} tuvo 1 control de calidad fallido de {checks_n}.",
            "Ojo con {asset}: 1 de sus {checks} de calidad falló.",
        ),
        "pq.fail.other": (
            "De los {checks} de calidad de {asset}, fallaron {fails_n}.",
            "{asset} tuvo {fails} de {checks_n}.",
            "Ojo con {asset}: {fails_n} de sus {checks} de calidad fallaron.",
        ),
        "pv.peak": (
            "El pico más marcado fue el de {tag}, que llegó a {max} {max_at} con una media de {mean}.",
            "{tag} alcanzó {max} {max_at}, frente a una media de {mean}.",
            "Destaca {tag}: máximo de {max} {max_at} y media de {mean}.",
        ),
        "pv.peaks": (
            "Otros máximos a tener en cuenta: {items}.",
            "Más abajo en la lista: {items}.",
            "Otros picos: {items}.",
        ),
        "pv.state.one": (
            "{tag} pasó de {from_} a {to} {at}.",
            "{At}, {tag} cambió de {from_} a {to}.",
            "El único cambio de estado fue el de {tag}, de {from_} a {to}, {at}.",
        ),
        "pv.state.many": (
            "Hubo varios cambios de estado: el primero, {first}, y el último, {last}.",
            "Los cambios de estado empezaron con {first} y terminaron con {last}.",
            "Se registraron varios cambios de estado: primero {first}; por último, {last}.",
        ),
        "pv.state.more": (
            "Hubo varios cambios de estado a partir de {first}, {more} de ellos no listados.",
            "Los cambios de estado empezaron con {first}; otros {more_n} no se listan.",
            "El primer cambio de estado fue {first}, y hay {more} más sin listar.",
        ),
        "fallback": (
            "El detalle de {topic} figura en la lista de hechos.",
            "Para {topic}, véase la lista de hechos.",
            "La lista de hechos recoge {topic}.",
        ),
    },
    "en": {
        "dt.none": (
            "There were no stops {during}.",
            "No downtime was recorded {during}.",
            "The equipment did not stop {during}.",
        ),
        "dt.total": (
            "There were {stops} {during}, {dur} of downtime in all.",
            "{During}, {stops} added up to {dur} of downtime.",
            "Downtime {during} came to {dur} across {stops}.",
        ),
        "dt.single": (
            "There was a single stop {during}: {asset}{cause}, {span} ({dur}).",
            "The only stop {during} was on {asset}{cause}, {span}, {dur} in all.",
            "{During}, only {asset} stopped{cause}, {span} ({dur}).",
        ),
        "dt.single_open": (
            "There was a single stop {during}: {asset}{cause}, started {start} and still open {end_of} ({dur}).",
            "The only stop {during} was {asset}{cause}: it began {start} and was still open {end_of} ({dur}).",
            "{During}, only {asset} stopped{cause}, from {start_bare}, and it had not restarted {end_of} ({dur}).",
        ),
        "dt.cause_same": (
            "The main cause was {reason}, both by time lost and by number of stops.",
            "The most stops and the most downtime both came from {reason}.",
            "By duration and by frequency alike, {reason} was the leading cause.",
        ),
        "dt.cause_split": (
            "The cause that cost the most time was {reason}, while the most frequent was {frequent}.",
            "By time lost, {reason} leads; by number of stops, {frequent}.",
            "No other cause accounted for as much downtime as {reason}, though {frequent} came up more often.",
        ),
        "dt.cause_only": (
            "Every stop was due to {reason}.",
            "All the stops had the same cause: {reason}.",
            "The reason behind all the stops was {reason}.",
        ),
        "dt.longest": (
            "The longest was {asset}{cause}, {span} ({dur}).",
            "The longest stop was on {asset}{cause}: {dur}, {span}.",
            "The stop that stands out is {asset}{cause}, the longest, {span} ({dur}).",
        ),
        "dt.longest_open": (
            "The longest, {asset}{cause}, began {start} and was still open {end_of} ({dur}).",
            "The longest stop is on {asset}{cause}: started {start}, it had not ended {end_of} ({dur}).",
            "The stop that stands out is {asset}{cause}, the longest, open since {start_bare} and not yet over "
            "{end_of} ({dur}).",
        ),
        "dt.open": (
            "The stop of {asset}{cause}, started {start}, was still open {end_of} ({dur}).",
            "{asset} was still down {end_of}{cause}, since {start_bare} ({dur}).",
            "The stop of {asset}{cause}, which began {start}, remained open ({dur} up to the close).",
        ),
        "al.none": (
            "No alarms were raised {during}.",
            "There were no alarms {during}.",
            "{During}, not a single alarm went off.",
        ),
        "al.total.one": (
            "1 alarm was raised {during}, on {assets}.",
            "{During}, 1 alarm went off, on {assets}.",
            "There was 1 alarm {during}, on {assets}.",
        ),
        "al.total.other": (
            "{Alarms} were raised {during}, on {assets}.",
            "{During}, {alarms} went off on {assets}.",
            "There were {alarms} {during}, on {assets}.",
        ),
        "al.top.one": (
            "The one heading the list was the {alarm}, with {times} {first}.",
            "Among them, the {alarm} had {times}, {first}.",
            "First on the list is the {alarm}: {times}, {first}.",
        ),
        "al.top.other": (
            "The most frequent was the {alarm}, with {times} {span}.",
            "The {alarm} repeated the most: {times}, {span}.",
            "The {alarm} stands out, with {times} {span}.",
        ),
        "al.single": (
            "Only 1 alarm went off {during}, {short}, {first}.",
            "There was just 1 alarm {during}, {short}, {first}.",
            "{During}, only 1 alarm was raised, {short}, {first}.",
        ),
        "al.tie": (
            "The {alarm} preceded the stop of {asset} that began {stop}{cause}.",
            "Shortly after the {alarm}, the asset stopped {stop}{cause}.",
            "The {alarm} was the warning before {asset} stopped {stop}{cause}.",
        ),
        "nt.one": (
            "There is a single operator note, by {who}.",
            "The only operator note {during} is by {who}.",
            "One operator note was logged, written by {who}.",
        ),
        "nt.many.one": (
            "There were several operator notes {during}, all by {who}.",
            "The operator notes {during} are all by {who}.",
            "All the operator notes were written by {who}.",
        ),
        "nt.many.other": (
            "Operator notes were left by {who}.",
            "The operator notes {during} are by {who}.",
            "Notes {during} came from {who}.",
        ),
        "nt.more.one": (
            "There is also 1 note not shown.",
            "1 more note is left off the list.",
            "One further note, 1 in all, is not shown here.",
        ),
        "nt.more.other": (
            "There are also {notes} not shown.",
            "{Notes} more are left off the list.",
            "A further {notes} are not shown here.",
        ),
        "nt.tie_after": (
            "{asset} is the subject of a note by {who} {at}, after its {dur} stop{cause}.",
            "{At}, after the {dur} stop of {asset}{cause}, {who} left a note about it.",
            "The note by {who} {at} is about {asset}, which had been down for {dur}{cause}.",
        ),
        "nt.tie_during": (
            "{asset} is the subject of a note by {who} {at}, while it was stopped{cause} since {start_bare}.",
            "{At}, with {asset} still down{cause}, {who} left a note about it.",
            "The note by {who} {at} concerns {asset}, down{cause} since {start_bare}.",
        ),
        "nt.tie_alarm": (
            "{asset} is the subject of a note by {who} {at}, after the {alarm}.",
            "{At}, following the {alarm}, {who} left a note about {asset}.",
            "The note by {who} {at} is about {asset}, which had raised the {alarm}.",
        ),
        "nt.flagged.one": (
            "The note logged {at} is held for review and its text is not used.",
            "One note, the one {at}, was held for review: it reads like an instruction.",
            "A note logged {at} was withheld for review; its text is not reproduced.",
        ),
        "nt.flagged.other": (
            "Several notes, the first {at}, are held for review and their text is not used.",
            "Several notes, starting with the one {at}, were held for review: they read like instructions.",
            "Some notes, beginning with the one logged {at}, were withheld for review.",
        ),
        "pq.prod": (
            "Production {during} came to {items}.",
            "{During}, output was {items}.",
            "The production count shows {items}.",
        ),
        "pq.pass.one": (
            "The only quality check on {asset} passed.",
            "{asset} passed its single quality check.",
            "The quality check on {asset} came out fine.",
        ),
        "pq.pass.other": (
            "All {checks} on {asset} passed.",
            "{asset} passed its {checks} without a failure.",
            "None of the {checks} on {asset} failed.",
        ),
        "pq.fail_single": (
            "The only quality check on {asset} failed.",
            "{asset} failed its single quality check.",
            "The quality check on {asset}, the only one, failed.",
        ),
        "pq.fail.one": (
            "Of the {checks} on {asset}, 1 failed.",
            "{asset} had 1 failed quality check out of {checks_n}.",
            "Watch {asset}: 1 of its {checks} failed.",
        ),
        "pq.fail.other": (
            "Of the {checks} on {asset}, {fails_n} failed.",
            "{asset} had {fails} out of {checks_n}.",
            "Watch {asset}: {fails_n} of its {checks} failed.",
        ),
        "pv.peak": (
            "The sharpest peak was on {tag}, which reached {max} {max_at} against a mean of {mean}.",
            "{tag} reached {max} {max_at}, against a mean of {mean}.",
            "{tag} stands out: a maximum of {max} {max_at} and a mean of {mean}.",
        ),
        "pv.peaks": (
            "Also notable: {items}.",
            "Other telling maxima: {items}.",
            "Other peaks: {items}.",
        ),
        "pv.state.one": (
            "{tag} went from {from_} to {to} {at}.",
            "{At}, {tag} changed from {from_} to {to}.",
            "The only state change was on {tag}, from {from_} to {to}, {at}.",
        ),
        "pv.state.many": (
            "There were several state changes: the first, {first}, and the last, {last}.",
            "The state changes began with {first} and ended with {last}.",
            "Several state changes were logged: first {first}, last {last}.",
        ),
        "pv.state.more": (
            "There were several state changes from {first} on, {more} of them not listed.",
            "The state changes began with {first}; {more_n} more are not listed.",
            "The first state change was {first}, and there are {more} more not listed.",
        ),
        "fallback": (
            "The details of {topic} are in the list of facts.",
            "For {topic}, see the list of facts.",
            "The list of facts covers {topic}.",
        ),
    },
    "pt": {
        "dt.none": (
            "Não houve paradas {during}.",
            "Nenhuma parada foi registrada {during}.",
            "Os equipamentos não pararam {during}.",
        ),
        "dt.total": (
            "Houve {stops} {during}, com {dur} de parada no total.",
            "{During} registraram-se {stops}, que somam {dur}.",
            "O tempo de parada {during} foi de {dur}, distribuído em {stops}.",
        ),
        "dt.single": (
            "Houve uma única parada {during}: {asset}{cause}, {span} ({dur}).",
            "A única parada {during} foi a de {asset}{cause}, {span}, {dur} no total.",
            "{During} só {asset} parou{cause}, {span} ({dur}).",
        ),
        "dt.single_open": (
            "Houve uma única parada {during}: {asset}{cause}, iniciada {start}, ainda aberta {end_of} ({dur}).",
            "A única parada {during} foi a de {asset}{cause}: começou {start} e seguia aberta {end_of} ({dur}).",
            "{During} só {asset} parou{cause}, desde {start_bare}, e a parada não tinha terminado {end_of} ({dur}).",
        ),
        "dt.cause_same": (
            "A causa principal foi {reason}, tanto pelo tempo perdido quanto pelo número de paradas.",
            "O motivo que mais causou paradas e o que mais tempo tomou foi {reason}.",
            "Por duração e por frequência, a causa que mais pesou foi {reason}.",
        ),
        "dt.cause_split": (
            "A causa que mais tempo tomou foi {reason}, enquanto a mais frequente foi {frequent}.",
            "Pelo tempo perdido destaca-se {reason}; pelo número de paradas, {frequent}.",
            "Nenhuma causa somou tanto tempo de parada quanto {reason}, embora {frequent} tenha se repetido mais.",
        ),
        "dt.cause_only": (
            "Todas as paradas se deveram a {reason}.",
            "O motivo de todas as paradas foi {reason}.",
            "As paradas tiveram uma única causa: {reason}.",
        ),
        "dt.longest": (
            "A mais longa foi a de {asset}{cause}, {span} ({dur}).",
            "A parada mais longa foi de {asset}{cause}: {dur}, {span}.",
            "Destaca-se a parada de {asset}{cause}, a mais longa, {span} ({dur}).",
        ),
        "dt.longest_open": (
            "A mais longa, a de {asset}{cause}, começou {start} e seguia aberta {end_of} ({dur}).",
            "A parada mais longa é a de {asset}{cause}: iniciada {start}, não tinha terminado {end_of} ({dur}).",
            "Destaca-se a parada de {asset}{cause}, a mais longa, aberta desde {start_bare} e ainda sem fim "
            "{end_of} ({dur}).",
        ),
        "dt.open": (
            "A parada de {asset}{cause}, iniciada {start}, seguia aberta {end_of} ({dur}).",
            "{asset} continuava parado {end_of}{cause}, desde {start_bare} ({dur}).",
            "Ficou aberta a parada de {asset}{cause}, que começou {start} ({dur} até o fechamento).",
        ),
        "al.none": (
            "Nenhum alarme foi ativado {during}.",
            "Não houve alarmes {during}.",
            "{During} não disparou nenhum alarme.",
        ),
        "al.total.one": (
            "Foi ativado 1 alarme {during}, em {assets}.",
            "{During} disparou 1 alarme, em {assets}.",
            "Houve 1 alarme {during}, em {assets}.",
        ),
        "al.total.other": (
            "Foram ativados {alarms} {during}, em {assets}.",
            "{During} dispararam {alarms} em {assets}.",
            "Houve {alarms} {during}, em {assets}.",
        ),
        "al.top.one": (
            "O mais destacado foi o {alarm}, que disparou {times} {first}.",
            "Entre eles, o {alarm} disparou {times}, {first}.",
            "O alarme que encabeça a lista é o {alarm}: {times}, {first}.",
        ),
        "al.top.other": (
            "O mais frequente foi o {alarm}, que disparou {times} {span}.",
            "O {alarm} foi o que mais se repetiu: {times}, {span}.",
            "Destaca-se o {alarm}, que disparou {times} {span}.",
        ),
        "al.single": (
            "Só disparou 1 alarme {during}, {short}, {first}.",
            "Houve 1 único alarme {during}, {short}, {first}.",
            "{During} foi ativado só 1 alarme, {short}, {first}.",
        ),
        "al.tie": (
            "O {alarm} precedeu a parada de {asset} iniciada {stop}{cause}.",
            "Pouco depois do {alarm}, o equipamento parou {stop}{cause}.",
            "O {alarm} foi o aviso prévio da parada que {asset} teve {stop}{cause}.",
        ),
        "nt.one": (
            "Há uma única nota de operador, de {who}.",
            "A única nota de operador {during} é de {who}.",
            "Foi registrada uma nota de operador, escrita por {who}.",
        ),
        "nt.many.one": (
            "Houve várias notas de operador {during}, todas de {who}.",
            "As notas de operador {during} são todas de {who}.",
            "Todas as notas de operador foram escritas por {who}.",
        ),
        "nt.many.other": (
            "Deixaram notas de operador {who}.",
            "As notas de operador {during} são de {who}.",
            "{During} deixaram notas {who}.",
        ),
        "nt.more.one": (
            "Há ainda 1 nota não mostrada.",
            "Fica 1 nota a mais fora da lista.",
            "Outra nota, 1 a mais, não aparece aqui.",
        ),
        "nt.more.other": (
            "Há ainda {notes} não mostradas.",
            "Ficam {notes} a mais fora da lista.",
            "Outras {notes} não aparecem aqui.",
        ),
        "nt.tie_after": (
            "Sobre {asset} escreveu {who} {at}, depois da parada de {dur}{cause}.",
            "{At}, após a parada de {dur} de {asset}{cause}, {who} deixou uma nota sobre esse equipamento.",
            "A nota que {who} escreveu {at} refere-se a {asset}, que tinha ficado parado {dur}{cause}.",
        ),
        "nt.tie_during": (
            "Sobre {asset} escreveu {who} {at}, com o equipamento parado{cause} desde {start_bare}.",
            "{At}, enquanto {asset} seguia parado{cause}, {who} deixou uma nota sobre ele.",
            "A nota que {who} escreveu {at} trata de {asset}, parado{cause} desde {start_bare}.",
        ),
        "nt.tie_alarm": (
            "Sobre {asset} escreveu {who} {at}, depois do {alarm}.",
            "{At}, após o {alarm}, {who} deixou uma nota sobre {asset}.",
            "A nota que {who} escreveu {at} refere-se a {asset}, que tinha disparado o {alarm}.",
        ),
        "nt.flagged.one": (
            "A nota registrada {at} fica retida para revisão e o seu texto não é usado.",
            "Uma nota, a registrada {at}, foi retida para revisão: parece uma instrução.",
            "Foi retida para revisão a nota registrada {at}, cujo texto não é reproduzido.",
        ),
        "nt.flagged.other": (
            "Várias notas, a primeira registrada {at}, ficam retidas para revisão e o seu texto não é usado.",
            "Foram retidas para revisão várias notas, a partir da registrada {at}: parecem instruções.",
            "Algumas notas, começando pela registrada {at}, ficam retidas para revisão.",
        ),
        "pq.prod": (
            "A produção {during} foi de {items}.",
            "{During} foram produzidos {items}.",
            "A contagem de produção registra {items}.",
        ),
        "pq.pass.one": (
            "O único controle de qualidade de {asset} foi aprovado.",
            "{asset} passou no seu único controle de qualidade.",
            "O controle de qualidade de {asset} saiu bem.",
        ),
        "pq.pass.other": (
            "Os {checks} de qualidade de {asset} foram aprovados.",
            "{asset} passou nos seus {checks} de qualidade sem falhas.",
            "Nenhum dos {checks} de qualidade de {asset} foi reprovado.",
        ),
        "pq.fail_single": (
            "O único controle de qualidade de {asset} foi reprovado.",
            "{asset} não passou no seu único controle de qualidade.",
            "Foi reprovado o controle de qualidade de {asset}, o único do período.",
        ),
        "pq.fail.one": (
            "Dos {checks} de qualidade de {asset}, 1 foi reprovado.",
            "{asset} teve 1 controle de qualidade reprovado em {checks_n}.",
            "Atenção a {asset}: 1 dos seus {checks} de qualidade foi reprovado.",
        ),
        "pq.fail.other": (
            "Dos {checks} de qualidade de {asset}, {fails_n} foram reprovados.",
            "{asset} teve {fails} em {checks_n}.",
            "Atenção a {asset}: {fails_n} dos seus {checks} de qualidade foram reprovados.",
        ),
        "pv.peak": (
            "O pico mais marcado foi o de {tag}, que chegou a {max} {max_at} com média de {mean}.",
            "{tag} atingiu {max} {max_at}, frente a uma média de {mean}.",
            "Destaca-se {tag}: máximo de {max} {max_at} e média de {mean}.",
        ),
        "pv.peaks": (
            "Outros máximos relevantes: {items}.",
            "Também a registrar: {items}.",
            "Outros picos: {items}.",
        ),
        "pv.state.one": (
            "{tag} passou de {from_} para {to} {at}.",
            "{At}, {tag} mudou de {from_} para {to}.",
            "A única mudança de estado foi a de {tag}, de {from_} para {to}, {at}.",
        ),
        "pv.state.many": (
            "Houve várias mudanças de estado: a primeira, {first}, e a última, {last}.",
            "As mudanças de estado começaram com {first} e terminaram com {last}.",
            "Foram registradas várias mudanças de estado: primeiro {first}, por último {last}.",
        ),
        "pv.state.more": (
            "Houve várias mudanças de estado a partir de {first}, {more} delas não listadas.",
            "As mudanças de estado começaram com {first}; outras {more_n} não são listadas.",
            "A primeira mudança de estado foi {first}, e há mais {more} não listadas.",
        ),
        "fallback": (
            "O detalhe de {topic} consta da lista de fatos.",
            "Para {topic}, veja a lista de fatos.",
            "A lista de fatos traz {topic}.",
        ),
    },
}

# Words that are grammar, not data: nouns with their plural, linking words, how the window and its end are named.
_WORDS: dict[str, dict[str, Any]] = {
    "es": {
        "nouns": {
            "stop": ("parada", "paradas"),
            "alarm": ("alarma", "alarmas"),
            "asset": ("equipo", "equipos"),
            "time": ("vez", "veces"),
            "check": ("control", "controles"),
            "note": ("nota", "notas"),
            "change": ("cambio", "cambios"),
            "fail": ("control fallido", "controles fallidos"),
        },
        "and": "y",
        "for": "por",
        "others": "otros",
        "an_operator": "un operador",
        "alarm": "alarma",
        "same_alarm": "misma alarma",
        "on": "de",
        "in": "en",
        "during": ("durante el turno", "en el periodo"),
        "end_of": ("al cierre del turno", "al final del periodo"),
        "topic": {
            "alarms": "las alarmas",
            "downtime": "las paradas",
            "production_quality": "la producción y la calidad",
            "notes": "las notas de operador",
            "process_values": "las variables de proceso",
        },
    },
    "en": {
        "nouns": {
            "stop": ("stop", "stops"),
            "alarm": ("alarm", "alarms"),
            "asset": ("asset", "assets"),
            "time": ("activation", "activations"),
            "check": ("quality check", "quality checks"),
            "note": ("note", "notes"),
            "change": ("change", "changes"),
            "fail": ("failed check", "failed checks"),
        },
        "and": "and",
        "for": "for",
        "others": "others",
        "an_operator": "an operator",
        "alarm": "alarm",
        "same_alarm": "same alarm",
        "on": "on",
        "in": "on",
        "during": ("during the shift", "in the period"),
        "end_of": ("at the end of the shift", "at the end of the period"),
        "topic": {
            "alarms": "the alarms",
            "downtime": "the downtime",
            "production_quality": "production and quality",
            "notes": "the operator notes",
            "process_values": "the process values",
        },
    },
    "pt": {
        "nouns": {
            "stop": ("parada", "paradas"),
            "alarm": ("alarme", "alarmes"),
            "asset": ("equipamento", "equipamentos"),
            "time": ("vez", "vezes"),
            "check": ("controle", "controles"),
            "note": ("nota", "notas"),
            "change": ("mudança", "mudanças"),
            "fail": ("controle reprovado", "controles reprovados"),
        },
        "and": "e",
        "for": "por",
        "others": "outros",
        "an_operator": "um operador",
        "alarm": "alarme",
        "same_alarm": "mesmo alarme",
        "on": "de",
        "in": "em",
        "during": ("durante o turno", "no período"),
        "end_of": ("no fim do turno", "no fim do período"),
        "topic": {
            "alarms": "os alarmes",
            "downtime": "as paradas",
            "production_quality": "a produção e a qualidade",
            "notes": "as notas de operador",
            "process_values": "as variáveis de processo",
        },
    },
}
# Units written with an exponent (m3, m2): as m³ and m², which is how they are printed, and not a token the grounding
# check would take for an id.
_UNIT_POWER = re.compile(r"([A-Za-z]+)([23])")
_SUPERSCRIPT = {"2": "²", "3": "³"}
# Record text that would read as a second sentence, or break the quoting, is left out of the prose.
_NOT_INLINE = re.compile(r"[.!?;]\s|[«»\"“”]")


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


@dataclass(frozen=True)
class _Writer:
    """Formatting for one section: language, phrasebook, time zone, and the hash that picks each wording."""

    section: Section
    request: ResolvedRequest
    book: Phrasebook
    tz: ZoneInfo
    with_date: bool
    seed: str

    @property
    def lang(self) -> str:
        return self.request.language

    @property
    def words(self) -> dict[str, Any]:
        return _WORDS[self.lang]

    def phrase(self, kind: str, **fields: str) -> str:
        """The wording of `kind` this section's hash picks, filled in; `{Name}` fields are `name` capitalised."""
        variants = _PHRASES[self.lang][kind]
        text = variants[int(sha256_hex(self.seed + kind)[:8], 16) % len(variants)]
        shift = 0 if self.section.window.subject else 1
        base = {"during": self.words["during"][shift], "end_of": self.words["end_of"][shift], **fields}
        return text.format(**base, **{_cap(k): _cap(v) for k, v in base.items()})

    def count(self, noun: str, n: float) -> str:
        singular, plural = self.words["nouns"][noun]
        return f"{format_number(n)} {singular if n == 1 else plural}"

    def listing(self, items: Sequence[str]) -> str:
        return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} {self.words['and']} {items[-1]}"

    def dur(self, seconds: int) -> str:
        return format_duration(seconds, self.book)

    def local(self, iso_utc: str) -> tuple[str, str | None]:
        """(HH:MM, YYYY-MM-DD or None): the date is written only when the window spans days."""
        text = format_time(iso_utc, self.tz, self.with_date)
        if not self.with_date:
            return text, None
        day, _, hhmm = text.rpartition(" ")
        return hhmm, day

    def at(self, iso_utc: str) -> str:
        """ "a las 06:20", "at 06:20", "às 06:20" (with the date in front when the window spans days)."""
        hhmm, day = self.local(iso_utc)
        one = hhmm.startswith("01:")  # "a la 01:15", "à 01:15": one o'clock is singular
        time = {
            "es": f"a la {hhmm}" if one else f"a las {hhmm}",
            "en": f"at {hhmm}",
            "pt": f"à {hhmm}" if one else f"às {hhmm}",
        }[self.lang]
        if day is None:
            return time
        return {"es": f"el {day} {time}", "en": f"on {day} {time}", "pt": f"em {day} {time}"}[self.lang]

    def bare(self, iso_utc: str) -> str:
        """The time alone, after a preposition the template writes: "desde 06:20", "since 06:20"."""
        hhmm, day = self.local(iso_utc)
        return hhmm if day is None else f"{day} {hhmm}"

    def span(self, start: str, end: str) -> str:
        a, b = self.bare(start), self.bare(end)
        if self.lang == "en":
            return f"from {a} to {b}"
        if self.with_date:
            return f"de {a} a {b}"
        if self.lang == "es":  # "entre las 06:20 y las 07:45": the articles of at()
            return f"entre {self.at(start).removeprefix('a ')} y {self.at(end).removeprefix('a ')}"
        article = "a" if a.startswith("01:") else "as"
        return f"d{article} {a} {self.at(end)}"  # "das 06:20 às 07:45", "da 01:10 à 01:40"

    def name(self, subject: str) -> str:
        """An asset or tag as the facts name it (ids are checked by the grounding check), cleaned like record text."""
        return safe_text(subject, self.book)

    def inline(self, value: Any, max_chars: int = 80) -> str | None:
        """Record text fit to stand inside a sentence, or None (empty, withheld, or reads as more than one)."""
        text = safe_text(str(value), self.book, max_chars).strip().rstrip(".!?;:,…").strip()
        if not text or text == self.book.label("withheld") or _NOT_INLINE.search(text):
            return None
        return text

    def cause(self, reason: Any) -> str:
        text = self.inline(reason)
        return f" {self.words['for']} {text}" if text else ""

    def alarm(self, fact: Fact, named: str | None) -> str:
        """The alarm with its noun, as the templates use it after an article: "alarma «X» de P-101"."""
        label = ""
        if named:
            label = f" “{named}”" if self.lang == "en" else f" «{named}»"
        return f"{self.words['alarm']}{label} {self.words['on']} {self.name(fact.subject)}"

    def short(self, fact: Fact, named: str | None) -> str:
        """The alarm without its noun, after one: "«X» en P-101", "en P-101"."""
        label = "" if not named else (f"“{named}” " if self.lang == "en" else f"«{named}» ")
        return f"{label}{self.words['in']} {self.name(fact.subject)}"

    def alarm_names(self, fact: Fact) -> list[str | None]:
        """The alarm's name candidates, richest first: its message, its condition, none."""
        names: list[str | None] = []
        for key in ("message", "condition"):
            text = self.inline(fact.values.get(key, ""))
            if text and text not in names:
                names.append(text)
        return [*names, None]


# A sentence slot: its candidate wordings, richest first; the first that passes the checks is written.
_Slot = list[str]


def _seed(section: Section, language: str) -> str:
    content = [[f.id, f.kind, f.subject, f.values] for f in section.grounding_facts()]
    try:
        return sha256_hex(canonical_json([language, section.name, content]))
    except CanonicalJsonError:  # a lone surrogate in record text: hash its escaped form instead
        return sha256_hex(repr([language, section.name, content]).encode("utf-8", "backslashreplace"))


def _of(facts: Sequence[Fact], kind: str) -> list[Fact]:
    return [f for f in facts if f.kind == kind]


def _seconds(iso_utc: str) -> float:
    return from_iso(iso_utc).timestamp()


# --- downtime -----------------------------------------------------------------------------------------------------


def _downtime(w: _Writer) -> list[_Slot]:
    facts = w.section.facts
    totals = _of(facts, "downtime_total")
    stops = _of(facts, "downtime")
    total = totals[0] if totals else None
    if total is not None and total.values["count"] == 0:
        return [[w.phrase("dt.none")]]
    if total is not None and total.values["count"] == 1 and len(stops) == 1:
        return [_stop(w, stops[0], "dt.single", "dt.single_open")]
    slots: list[_Slot] = []
    if total is not None:
        slots.append(
            [w.phrase("dt.total", stops=w.count("stop", total.values["count"]), dur=w.dur(total.values["duration_s"]))]
        )
    causes = _of(facts, "downtime_cause")
    if causes and (total is None or total.values["count"] >= 2):
        slots.append(_causes(w, causes, total))
    # Two stops or more have a `downtime_longest` fact (over every stop; a single stop was said above).
    named = _of(facts, "downtime_longest")
    if named:
        longest = named[0]
        slots.append(_stop(w, longest, "dt.longest", "dt.longest_open"))
        same = (longest.subject, longest.values["start_at"])
        still_open = [f for f in stops if f.values.get("open") and (f.subject, f.values["start_at"]) != same]
        if still_open:
            slots.append(_stop(w, still_open[0], None, "dt.open"))
    return slots


def _stop(w: _Writer, fact: Fact, closed: str | None, open_: str) -> _Slot:
    v = fact.values
    kind = open_ if v.get("open") else closed
    assert kind is not None  # only open stops are asked for without a closed wording
    fields = {
        "asset": w.name(fact.subject),
        "span": w.span(v["start_at"], v["end_at"]),
        "start": w.at(v["start_at"]),
        "start_bare": w.bare(v["start_at"]),
        "dur": w.dur(v["duration_s"]),
    }
    return [w.phrase(kind, cause=cause, **fields) for cause in (w.cause(v["reason"]), "")]


def _causes(w: _Writer, causes: list[Fact], total: Fact | None) -> _Slot:
    """The cause that cost the most time (rank 1), then the most frequent (ties: the better ranked). Past
    `list_facts_max` causes the unlisted ones may hold more stops: frequency is claimed only when they cannot."""
    top = w.inline(causes[0].values["reason"])
    if top is None:
        return []
    if len(causes) == 1 and (total is None or causes[0].values["count"] == total.values["count"]):
        return [w.phrase("dt.cause_only", reason=top)]
    frequent_fact = max(causes, key=lambda f: (f.values["count"], -f.values["rank"]))
    unlisted = total.values["count"] - sum(f.values["count"] for f in causes) if total is not None else 0
    if frequent_fact.values["count"] <= unlisted:
        return []
    frequent = w.inline(frequent_fact.values["reason"])
    if frequent_fact is causes[0] or frequent is None:
        return [w.phrase("dt.cause_same", reason=top)]
    return [w.phrase("dt.cause_split", reason=top, frequent=frequent)]


# --- alarms -------------------------------------------------------------------------------------------------------


def _alarms(w: _Writer) -> list[_Slot]:
    totals = _of(w.section.facts, "alarm_total")
    tops = sorted(_of(w.section.facts, "top_alarm"), key=lambda f: f.values["rank"])
    total = totals[0] if totals else None
    if total is not None and total.values["count"] == 0:
        return [[w.phrase("al.none")]]
    slots: list[_Slot] = []
    top = tops[0] if tops else None
    if total is not None and total.values["count"] == 1 and top is not None:
        slots.append(
            [
                w.phrase("al.single", short=w.short(top, n), first=w.at(top.values["first_at"]))
                for n in w.alarm_names(top)
            ]
        )
    else:
        if total is not None:
            n = total.values["count"]
            assets = w.count("asset", total.values["assets_count"])
            slots.append(
                [w.phrase(f"al.total.{'one' if n == 1 else 'other'}", alarms=w.count("alarm", n), assets=assets)]
            )
        if top is not None:
            slots.append(_top_alarm(w, top))
    tie = _tie(w, tops)
    if tie is not None:
        slots.append(tie)
    return slots


def _top_alarm(w: _Writer, top: Fact) -> _Slot:
    v = top.values
    kind = "al.top.one" if v["count"] == 1 else "al.top.other"
    return [
        w.phrase(
            kind,
            alarm=w.alarm(top, name),
            times=w.count("time", v["count"]),
            first=w.at(v["first_at"]),
            span=w.span(v["first_at"], v["last_at"]),
        )
        for name in w.alarm_names(top)
    ]


def _tie(w: _Writer, tops: list[Fact]) -> _Slot | None:
    """The first alarm, by rank, followed by a stop on its asset: from its first activation to an hour past its
    last (the earliest such stop)."""
    stops = _of(w.section.related, "downtime")
    for alarm in tops:
        first, last = _seconds(alarm.values["first_at"]), _seconds(alarm.values["last_at"])
        tied = [
            s
            for s in stops
            if s.subject == alarm.subject and first <= _seconds(s.values["start_at"]) <= last + TIE_WINDOW_S
        ]
        if tied:
            stop = min(tied, key=lambda s: _seconds(s.values["start_at"]))
            # The most frequent alarm was named in the sentence before: "the same alarm" refers back to it.
            names = [w.words["same_alarm"]] if alarm is tops[0] else [w.alarm(alarm, n) for n in w.alarm_names(alarm)]
            return [
                w.phrase(
                    "al.tie",
                    alarm=name,
                    asset=w.name(stop.subject),
                    stop=w.at(stop.values["start_at"]),
                    cause=cause,
                )
                for cause in (w.cause(stop.values["reason"]), "")
                for name in names
            ]
    return None


# --- notes --------------------------------------------------------------------------------------------------------


def _author(w: _Writer, note: Fact) -> str:
    """The author's name, or "an operator" when the name holds a digit (an id, not a name) or cannot be shown."""
    name = w.inline(note.values.get("author", ""), 40)
    return name if name and not any(c.isdigit() for c in name) else w.words["an_operator"]


def _notes(w: _Writer) -> list[_Slot]:
    notes = list(w.section.notes)
    slots: list[_Slot] = []
    if notes:
        slots.append(_who(w, notes))
    tie = _note_tie(w, [n for n in notes if not n.values.get("flagged")])
    if tie:
        slots.append(tie)
    flagged = [n for n in notes if n.values.get("flagged")]
    if flagged:
        kind = "nt.flagged.one" if len(flagged) == 1 else "nt.flagged.other"
        at = flagged[0].values["at"]
        slots.append([w.phrase(kind, at=w.at(at), at_bare=w.bare(at))])
    for more in _of(w.section.facts, "operator_notes_not_listed"):
        n = more.values["count"]
        slots.append([w.phrase(f"nt.more.{'one' if n == 1 else 'other'}", notes=w.count("note", n))])
    if not slots:
        slots.append([w.phrase("fallback", topic=w.words["topic"]["notes"])])
    return slots


def _who(w: _Writer, notes: list[Fact]) -> _Slot:
    authors: list[str] = []
    for note in notes:
        name = _author(w, note)
        if name not in authors:
            authors.append(name)
    named = [a for a in authors if a != w.words["an_operator"]]
    if len(notes) == 1:
        return [w.phrase("nt.one", who=authors[0])]
    if len(authors) == 1:
        return [w.phrase("nt.many.one", who=authors[0])]
    shown = named[:AUTHORS_MAX]
    if len(shown) < len(authors):
        shown.append(w.words["others"])
    return [w.phrase("nt.many.other", who=w.listing(shown))]


def _note_tie(w: _Writer, notes: list[Fact]) -> _Slot:
    """The note tie (`note_tie`): after (or during) the stop, else after the alarm."""
    tie = note_tie(tuple(notes), w.section.related)
    if tie is None:
        return []
    note, v = tie.note, tie.event.values
    fields = {
        "who": _author(w, note),
        "asset": tie.asset,
        "at": w.at(note.values["at"]),
        "at_bare": w.bare(note.values["at"]),
    }
    if tie.event.kind == "downtime":
        kind = "nt.tie_after" if left_after(note, tie.event) else "nt.tie_during"
        extra = {"dur": w.dur(v["duration_s"]), "start_bare": w.bare(v["start_at"])}
        return [w.phrase(kind, cause=c, **fields, **extra) for c in (w.cause(v["reason"]), "")]
    return [w.phrase("nt.tie_alarm", alarm=w.alarm(tie.event, n), **fields) for n in w.alarm_names(tie.event)]


# --- production and quality ---------------------------------------------------------------------------------------


def _unit(w: _Writer, value: Any) -> str | None:
    text = w.inline(value, 20)
    if text is None:
        return None
    return (
        _UNIT_POWER.sub(lambda m: m.group(1) + _SUPERSCRIPT[m.group(2)], text) if _UNIT_POWER.fullmatch(text) else text
    )


def _production_quality(w: _Writer) -> list[_Slot]:
    slots: list[_Slot] = []
    produced = _of(w.section.facts, "production")[:PRODUCTION_MAX]
    if produced:
        on = {"es": "en", "en": "on", "pt": "em"}[w.lang]
        items = []
        for f in produced:
            unit = _unit(w, f.values["unit"])
            amount = format_number(f.values["count"]) + (f" {unit}" if unit else "")
            items.append(f"{amount} {on} {w.name(f.subject)}")
        slots.append([w.phrase("pq.prod", items=w.listing(items))])
    checks = _of(w.section.facts, "quality_checks")
    # Failures first: they are what the next shift must act on.
    for f in sorted(checks, key=lambda f: f.values["fail_count"] == 0)[: 4 - len(slots)]:
        v = f.values
        n, fails = v["checks_count"], v["fail_count"]
        fields = {
            "asset": w.name(f.subject),
            "checks": w.count("check", n),
            "checks_n": format_number(n),
            "fails": w.count("fail", fails),
            "fails_n": format_number(fails),
        }
        if fails == 0:
            kind = "pq.pass.one" if n == 1 else "pq.pass.other"
        elif n == 1:
            kind = "pq.fail_single"
        else:
            kind = "pq.fail.one" if fails == 1 else "pq.fail.other"
        slots.append([w.phrase(kind, **fields)])
    return slots


# --- process values -----------------------------------------------------------------------------------------------


def _process_values(w: _Writer) -> list[_Slot]:
    slots: list[_Slot] = []
    stats = _of(w.section.facts, "tag_stats")  # `split_sections` keeps the top peaks, highest first (`tag_peak`)
    if stats:
        top = stats[0].values
        slots.append(
            [
                w.phrase(
                    "pv.peak",
                    tag=w.name(stats[0].subject),
                    max=format_number(top["max"]),
                    max_at=w.at(top["max_at"]),
                    mean=format_number(top["mean"]),
                )
            ]
        )
    if len(stats) > 1:
        item = {
            "es": "{tag} (máximo {max} {at}, media {mean})",
            "en": "{tag} (maximum {max} {at}, mean {mean})",
            "pt": "{tag} (máximo {max} {at}, média {mean})",
        }[w.lang]
        items = [
            item.format(
                tag=w.name(f.subject),
                max=format_number(f.values["max"]),
                at=w.at(f.values["max_at"]),
                mean=format_number(f.values["mean"]),
            )
            for f in stats[1:]
        ]
        slots.append([w.phrase("pv.peaks", items=w.listing(items))])
    slots.append(_states(w))
    return slots


def _change(w: _Writer, f: Fact, with_values: bool) -> str:
    v, tag = f.values, w.name(f.subject)
    from_, to = w.inline(v["from"], 40), w.inline(v["to"], 40)
    values = with_values and from_ is not None and to is not None
    words = {
        "es": (f"{tag} de {from_} a {to} {w.at(v['at'])}", f"el de {tag} {w.at(v['at'])}"),
        "en": (f"{tag} from {from_} to {to} {w.at(v['at'])}", f"{tag} {w.at(v['at'])}"),
        "pt": (f"{tag} de {from_} para {to} {w.at(v['at'])}", f"a de {tag} {w.at(v['at'])}"),
    }[w.lang]
    return words[0] if values else words[1]


def _states(w: _Writer) -> _Slot:
    changes = _of(w.section.facts, "state_change")
    more = _of(w.section.facts, "state_changes_not_listed")
    if not changes:
        return []
    if more:
        n = more[0].values["count"]
        return [
            w.phrase(
                "pv.state.more", first=_change(w, changes[0], full), more=format_number(n), more_n=format_number(n)
            )
            for full in (True, False)
        ]
    if len(changes) == 1:
        v = changes[0].values
        from_, to = w.inline(v["from"], 40), w.inline(v["to"], 40)
        if from_ is None or to is None:
            return []
        return [w.phrase("pv.state.one", tag=w.name(changes[0].subject), from_=from_, to=to, at=w.at(v["at"]))]
    return [
        w.phrase("pv.state.many", first=_change(w, changes[0], full), last=_change(w, changes[-1], full))
        for full in (True, False)
    ]


_BUILDERS: dict[str, Callable[[_Writer], list[_Slot]]] = {
    "alarms": _alarms,
    "downtime": _downtime,
    "production_quality": _production_quality,
    "notes": _notes,
    "process_values": _process_values,
}


def reference_sentences(section: Section, request: ResolvedRequest) -> list[str]:
    """The section's narrative as 1 to 4 sentences, each grounded in the section's facts on its own, none repeated,
    none a phrasebook fact sentence, none holding prompt text; the same section and request always give the same."""
    book = load_phrasebook(request.language)
    tz_name = request.window.timezone
    writer = _Writer(section, request, book, ZoneInfo(tz_name), spans_days(request), _seed(section, request.language))
    facts = section.grounding_facts()
    fact_lines = {s for f in facts if (s := fact_sentence(f, book, request)) is not None}

    def fit(sentence: str, kept: list[str]) -> bool:
        # The same prose rules a model's section must pass, on the text as it would be published.
        return (
            not prose_problems(" ".join([*kept, sentence]), fact_lines)
            and section_grounding(sentence, section, tz_name).ok
        )

    builder = _BUILDERS.get(section.name)
    kept: list[str] = []
    for slot in builder(writer) if builder is not None else []:
        chosen = next((sentence for sentence in slot if fit(sentence, kept)), None)
        if chosen is not None:
            kept.append(chosen)
        if len(kept) == MAX_SENTENCES:
            break
    if not kept:  # figure-free, so it always passes: the net under the net
        kept.append(writer.phrase("fallback", topic=writer.words["topic"].get(section.name, section.name)))
    return kept


def reference_text(section: Section, request: ResolvedRequest) -> str:
    """The section's narrative: `reference_sentences` joined into one paragraph."""
    return " ".join(reference_sentences(section, request))
