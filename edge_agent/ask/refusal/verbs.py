"""Commands known by their verbs: the acting verbs of es/en/pt in the forms people give orders in, at a sentence's
start, asked for, on a condition, after "que", or named with their object wherever they stand (folded text)."""

from __future__ import annotations

import re

# A polite or indirect opening before a command: "por favor", "can you", "você pode", ...
_POLITE = (
    # fillers a voice transcript keeps: "uh go ahead and shut down…", "eh, apaga…", "tipo, desliga…"
    r"(?:(?:uh|um|uhm|erm|er|eh|ehh|ah|este|pues|tipo|bueno|well|"
    r"por favor|please|pls|porfa|kindly|agent|agente|oye|hey|ok|okay|go ahead and|go ahead|just|dale|che|vamos|"
    # "you" said to several before the order: "Y'all publish a message…", "you guys reset…"
    r"y'?all|you guys|youse|you lot|"
    # Nigerian English's "make you…" (please): "Oga, make you publish message…"
    r"abeg|make you|ahorita|ahora|ya|now|agora|"
    r"bora|vai|aproveita e|aprovecha y|de paso|while you're at it|and then|e depois|y luego|then|y despues|"
    r"despues|luego|depois|e entao|entao|after that|afterwards)[\s,:]*)*"
    r"(?:(?:puedes|podrias|puede|podria|can you|could you|would you|will you|i want you to|quiero que|voce pode|"
    r"pode|poderia|consegue|necesito que|preciso que|tem como|da pra|da para|is it possible to|"
    r"would it be possible to|es posible|se puede|seria posible)\s+)?"
)
# Command verbs (imperative, infinitive and the Portuguese subjunctive-imperative) that act on the plant or on the
# agent's records. Only at the start of a sentence, and without the words that open questions as often as commands
# there ("para" is also "for"; "open", "close", "change", "clear", "update" also adjectives and nouns).
_COMMAND_VERBS = (
    r"arranca|arrancar|arranque|enciende|encender|prende|prender|apaga|apagar|apague|deten|detener|parar|"
    r"abre|abrir|abra|cierra|cerrar|feche|fechar|ajusta|ajustar|ajuste|cambia|cambiar|mude|mudar|altera|alterar|"
    r"altere|pon|poner|coloca|sube|subir|baja|bajar|aumenta|aumentar|aumente|reduce|reducir|reduza|diminua|"
    r"reconoce|reconocer|reconheca|reconhecer|borra|borrar|elimina|eliminar|exclua|excluir|deleta|deletar|aprueba|"
    r"aprobar|aprove|aprovar|rechaza|rechazar|rejeite|rejeitar|reinicia|reiniciar|resetea|resetear|restablece|"
    r"liga|ligar|ligue|desliga|desligar|desligue|inicia|iniciar|inicie|escribe|escribir|escreva|escrever|"
    r"zera|zerar|zere|reconhece|silencia|silenciar|silencie|cerra|abri|frena|frenar|resetar|resete|reseta|"
    # "add up every stop": a sum, asked of the records
    r"ejecuta|ejecutar|executa|executar|execute|run|corre|correr|put|add(?!\s+up\b)|anota|anotar|registra|registre|"
    r"registrar|apunta|apuntar|apunte|"
    r"adiciona|adicione|borre|apague|detenga|pare|arranque|cierre|reinicie|suba|baje|cambie|elimine|reconozca|"
    # Mexican "¿Mande?" alone is "yes?/pardon?", not "send"
    # (Spain's "¡manda huevos!", "manda narices": how outrageous, no order)
    r"silencie|encienda|prenda|amend|rewrite|corrige|corregir|corrija|modifica|modifique|edita|edite|"
    r"manda(?! (?:huevos|narices|cojones)\b)|mande(?!\s*(?:[.,?!]|$))|"
    r"envia|envie|send|email|text|call|llama|llame|telefona|detene|subi|pone|ponha|ponga|coloque|muda|"
    r"bypassea|puentea|fuerza|forzar|force|forca|forcar|wipe|purge|page|notify|ping|avisa|avise|avisale|notifica|"
    r"bump|kill|lock out|lockout|isolate|drain|vent|flush|trigger|simulate|cycle|pulse|refresh|jog|prime|trip|"
    r"inhibe|inhibir|inhiba|inibe|inibir|iniba|inhibit|shelve|suppress|suprime|suprimir|suprima|mute|"
    r"notifique|log|file|submit|export|exporta|exportar|exporte|simula|simular|simule|reclasifica|reclasificar|"
    r"registar|regista|registe|"
    # to a crew ("ustedes", "vocês"): "Reconozcan desde el sistema…", "Suban el límite…", "Desliguem a P-102"
    r"reconozcan|suban|bajen|apaguen|paren|arranquen|cierren|abran|reinicien|cambien|ajusten|borren|eliminen|"
    r"silencien|detengan|enciendan|prendan|pongan|anoten|registren|modifiquen|aprueben|rechacen|reseteen|supriman|"
    r"inhiban|exporten|envien|manden|corrijan|aumenten|reduzcan|liguem|desliguem|reiniciem|zerem|reconhecam|"
    r"apaguem|alterem|ajustem|mudem|subam|baixem|parem|silenciem|"
    r"reclasifique|reclassify|reclassifica|reclassificar|reclassifique|recategoriza|recategorize|"
    r"start|stop|shut down|shutdown|shut off|cut off|power off|power down|turn on|turn off|switch on|switch off|set|"
    r"adjust|increase|decrease|raise|"
    # parts bought or ordered: "Compra um selo mecânico reserva pra P-101", "buy a spare seal"
    r"compra|compre|comprar|buy|purchase|encomenda|encomende|encarga|encargue|"
    # a report signed for someone: "fírmame el reporte", "assina o relatório por mim", "sign off the shift report"
    r"firma|firmar|firme|assina|assinar|assine|sign|countersign|"
    # an instrument calibrated: "Go ahead and calibrate the vibration probe", "Calibra aí o medidor de vazão"
    r"calibrate|calibra|calibrar|calibre|calibrem|"
    # a note kept or added: "Agrégale un comentario al paro", "Salva essa observação", "Grava uma nota", "Guarda na
    # memória que…", "remember that…"
    r"agrega|agregale|agregar|agregue|salva|salvar|salve|grava|gravar|grave|guarda|guardar|guarde|remember|memoriza|"
    r"memorizar|memorize|"
    # a batch released or held: "Liberta o lote…", "release the batch", "bloqueia o lote"
    r"libera|liberar|libere|liberta|libertar|liberte|release|bloqueia|bloquear|bloqueie|bloquea|bloquee|quarantine|"
    r"lower|acknowledge|ack|silence|delete|remove|erase|approve|reject|reset|rst|restart|reboot|bypass|override|"
    r"write|publish|publica|publicar|publique|publiquen|publiquem|send|modify|edit|disable|enable|"
    # a message posted ("Post a message to the shift channel…"; not "post-maintenance"), a change applied ("setpoint
    # C-201 = 50 m3/h, aplicar ya"), a trip re-armed ("ação: rearmar trip")
    r"post(?!-)|aplica|aplicar|aplique|apply|rearma|rearmar|rearme|re-arm|rearm|"
    # "Já executa aí", "ejecútalo"
    r"ejecuta|ejecutar|ejecute|executa|executar|execute|"
    # "fire up P-102 again" (not "fire alarms")
    r"fire(?= (?:up|it up|'?er up|her up|them up)\b)"
)
# The command verbs as words ("mande", "pare"): what a Spanish first person's past folds into (`refusal._said_done`).
COMMAND_WORDS = frozenset(re.sub(r"\(.*", "", v) for v in _COMMAND_VERBS.split("|"))
# A command verb typed with two neighbouring letters swapped, read as the verb: "restrat the compresser",
# "shtu down P101". Only a swap (a slip of the fingers), not a letter more or less ("restar" is "to subtract"), and
# not the swaps that are words of their own.
_SWAPS_THAT_ARE_WORDS = frozenset(
    {
        "aber",
        "arise",
        "bare",
        "bari",
        "borer",
        "corer",
        "crore",
        "darin",
        "evnt",
        "ezra",
        "fiel",
        "mudra",
        "parra",
        "pules",
        "register",
        "reste",
        "sing",
    }
)
_VERB_PARTS = frozenset(part for verb in COMMAND_WORDS for part in verb.split() if len(part) >= 4)
_SWAPPED = {
    typed: word
    for word in sorted(_VERB_PARTS)
    for i in range(len(word) - 1)
    if (typed := word[:i] + word[i + 1] + word[i] + word[i + 2 :]) not in _VERB_PARTS | _SWAPS_THAT_ARE_WORDS
}
_WORD = re.compile(r"\b[a-z]{4,}\b")


def unswapped(folded: str) -> str:
    """`folded` with each command verb typed with two neighbouring letters swapped put right."""
    return _WORD.sub(lambda m: _SWAPPED.get(m.group(0), m.group(0)), folded)


# A pronoun may hang on a Spanish command: "bájale", "apágala", "páralo", "silenciame"; a name may be called first
# ("Tchê, muda...", "Mate, stop...").
# A clause opens at a sentence's start or after "and then", "e depois", "y luego" ("…da P-101 e depois reinicia ela").
_THEN = r"(?:and then|then|after that|y luego|luego|y despues|despues|e depois|depois|e entao|entao)"
# The answer put in a language or in words, no act: "Put it in plain words", "Put the answer in Portuguese", "ponlo en
# español", "write it in one line".
ANSWER_FORMAT = (
    r"(?:put|pon|ponlo|ponelo|ponla|poe|ponha|coloca|write|escribe|escreve)\s+(?:it|that|this|the answer|your "
    r"answer|the reply|them|lo|isso|a resposta|la respuesta)?\s*(?:in|into|en|em)\s+(?:plain|simple|words|palabras|"
    r"palavras|english|spanish|portuguese|ingles|espanol|portugues|castellano|a table|una tabla|uma tabela|a line|"
    r"one line|una linea|uma linha|numbers|numeros|short|layman)"
)
_COMMAND = re.compile(
    # a field's value too, in a message typed as a form: "P-101 -> STOP inmediato", "acción: reset alarmas T-301",
    # "cmd=publish topic=…", "SP | aplicar"; or after what is not wanted: "Not a summary, publish a message…"
    rf"(?:^|[.;!?:|]\s*|=>?\s*|->\s*|\b{_THEN},?\s+)(?:[a-z']+,\s*|(?:not|no|nao)(?:\s+[a-z']+){{1,3}},\s*)?{_POLITE}"
    rf"(?!run (?:me|us)\b)"
    # a figure asked for in the reply: "Send me the average level…", "Send over the number…", "Mándame cuántos…",
    # "Manda-me o caudal…", "Manda aí a vazão…" (sent to someone else, or by mail, it stays a command:
    # `_WRITE_PHRASES`); "Call me back on …" is an errand beside the question, not an act on the plant
    r"(?!(?:send (?:me|us|over)|shoot me|call (?:me|us)|(?:manda|mande|envia|envie)(?:me|nos|-me|-nos)|"
    r"(?:manda|envia|mande) (?:ai|aqui|ahi))\b(?![^.?!]*\b(?:e-?mail|correo|mail|whatsapp|sms|mensaje|mensagem|"
    r"excel|csv|pdf|sharepoint|teams|report|reporte|informe|relatorio|archivo|arquivo|planilla|planilha|"
    r"spreadsheet)\b))"
    # a message's sender or a record's source, not a command: "Text from the night operator: …", "Email from Ana",
    # "Log del PLC: …", "Log line: …"
    r"(?!(?:text|email|call|message|page|log)\s+(?:from|de|del|do|da)\b|log (?:line|entry|excerpt)\b)"
    # the answer put in a language or in words (`ANSWER_FORMAT`)
    rf"(?!{ANSWER_FORMAT})"
    # "ponme la 101 y la 102 lado a lado": set out for the asker, not put in a state
    r"(?!(?:pon|ponga|pone)(?:me|nos)\b(?![^.?!]*\b(?:en marcha|a andar|a funcionar|en (?:manual|automatico|auto|"
    r"bypass|servicio|espera)|(?:a|en) ceros?|al? \d)))"
    rf"(?:{_COMMAND_VERBS})(?:le|la|lo|les|las|los|me|nos)?\b"
    # a verb that is a noun here: "Stop count yesterday…", "start time of…"
    r"(?!\s+(?:count|counts|time|times|minutes|duration|durations|reasons?|events?|list|total|totals|number|data|"
    r"history|log|summary|report|rate|frequency)\b)"
)
# The verbs that act whatever stands before them once asked for: "mate, can you reset the trip", "¿me puedes
# apagar...?", "por que você não reseta...", "why don't you restart C-201" (not "run", "call", "text": they also read).
_ACTING_VERBS = "|".join(v for v in _COMMAND_VERBS.split("|") if v not in {"run", "call", "text", "corre", "correr"})
# A second clause's command after "and" with what it acts on: "Check the C-201 alarms and acknowledge all of them",
# "revisa la P-101 y reiníciala", "confere e liga a P-102".
_AND_COMMAND = re.compile(
    r"\b(?:and|y|e)\s+(?:(?:please|por favor|also|tambien|tambem|then|just|logo|ya)\s+)?"
    rf"(?:{_ACTING_VERBS})(?:le|la|lo|les|las|los|me|nos)?\s+(?:the|all|them|it|its|everything|la|lo|las|los|el|"
    r"a|o|os|as|todas?|todos?|esa|ese|esas|esos|essa|esse|this|that|those|these|every|each|"
    # "go into the store and delete yesterday's failed checks"
    r"(?:yesterday|today|tonight|last night|this morning)'?s|[a-z]{1,3}-?\d{2,5})\b"
    # a figure sent in the reply: "Kindly do the needful and send the average flow of C-201"
    r"(?!\s+(?:average|mean|max|maximum|min|minimum|highest|lowest|peak|total|number|count|figure|value|reading)\b)"
)
_ASKED_TO_ACT = re.compile(
    # "would you be able to reset…", "could you kindly…", "¿sería tan amable de anotar…?", "faz o favor de ligar…"
    # ("would you mind restarting…": `shapes.asked_to_act`)
    r"\b(?:(?:(?:can|could|would|will) you|you could)(?: (?:be able to|kindly|please|possibly|maybe|ever))?|"
    r"(?:seria|serias|fuera|fueras|seria usted) (?:tan )?amable de|tenga la (?:bondad|amabilidad) de|"
    r"(?:haz|hazme|hagame|haga|faz|faca|faz-me) (?:o |el )?favor de|(?:teria|tem) a (?:bondade|gentileza) de|"
    r"(?:me |nos )?(?:puedes|podrias|puede|podria|pueden|podes)|(?:voce |tu )?"
    r"(?:pode|poderia|podia|podes|podias|consegue|consegues|conseguias|da pra|da para|tem como)|"
    r"why (?:don'?t|do not|not) you|why not|"
    # asked leave to act: "is it OK if you reset the alarm for me?", "would it be alright for you to restart it"
    r"(?:is it|would it be|will it be|it'?s) (?:ok|okay|alright|all right|fine|possible) (?:if you|for you to)|"
    r"(?:por ?que|pq|xq) (?:no|(?:voce |tu )?nao)(?: me)?|"
    # an impersonal request: "se ruega dejar…", "se solicita apagar…", "favor de reiniciar…", "pede-se desligar…"
    r"se (?:ruega|solicita|pide|requiere)|(?:hacer el )?favor de|(?:pede|solicita|roga)-se|"
    # an order passed on: "The ops manager wants you to reset…", "O supervisor mandou zerar o contador", "el jefe
    # mandó parar la P-101"
    r"(?:wants?|wanted|needs?|needed|asked|asks|told|tells|expects?|would like|'d like) (?:you|u|ya) to|"
    r"(?:mandou|mandaram|mando|mandaron|ordenou|ordeno|ordenaron|ordenaram)(?:\s+(?:a gente|voce|vc|tu|usted|te|"
    r"le|lhe))?(?:\s+(?:a|pra|para))?|"
    # "procedé a borrar…", "proceed to delete…", "prossiga com…"
    r"proced[ae] a|procedan a|proceed (?:to|with)|prossiga com|prossiga a|procede-se a|"
    # Chilean "¿te tinca…?" (do you fancy…?)
    r"(?:te|le|les) tinca|"
    # a request passed on: "pediu para eu pedir a você, por favor, para ligar…", "to ask you to restart…"
    r"(?:pedir|pedirte|pedirle|ask)\s+(?:a\s+)?(?:voce|vc|ti|you|usted)?[\s,]*"
    r"(?:(?:if it'?s (?:okay|ok|alright|not too much trouble)|if possible|si es posible|si se puede|se possivel|"
    r"se for possivel|se der)[\s,]*)?(?:por favor[\s,]*|please[\s,]*)?(?:para|pra|que|to))"
    r"\s+(?:please\s+|por favor\s+|just\s+|logo\s+|ya\s+)?"
    # (a figure sent to the asker in the reply is a read: "Could you send me the flow reading…?", not by mail)
    r"(?!(?:send|shoot)\s+(?:me|us)\b(?![^.?!]*\b(?:e-?mail|correo|mail|whatsapp|sms)\b))"
    rf"(?:{_ACTING_VERBS})(?:le|la|lo|les|las|los|me|nos)?\b"
)
# A command on a condition or a wish: "if the vibration goes above 8, stop it", "se passar de 70, para a bomba",
# "seria ótimo se a P-102 estivesse parada", "it would be great if P-101 were off".
_CONDITIONAL_COMMAND = re.compile(
    # (not "Se faz favor, manda-me…": a "please")
    # (not a pronoun hung on a verb: "entendendo-se por turno B…")
    r"(?<!-)\b(?:si|se|if|when|whenever|cuando|quando|caso|once)\b(?! faz(?:es)? (?:o )?favor)[^.?!]{0,100},\s*"
    r"(?:then\s+|entonces\s+|entao\s+|"
    # the one addressed may be named: "…passar de 80 graus, ocê desliga ela na hora"
    r"please\s+|por favor\s+)?(?:(?:you|voce|vc|oce|ce|tu|usted|vos)\s+)?(?:(?:ja|ya|logo|luego|just|right away)\s+)?"
    rf"(?:{_ACTING_VERBS}|para(?! (?:cada|each|que|mi|ti|usted|voce)\b)|pare|shut|turn|"
    r"switch)(?:le|la|lo|me)?\b"
    # a wish in the subjunctive: "era bom que reconhecesses…", "sería bueno que apagaras…", "ojalá apagues…"
    # ... or asked for in one, formally: "os ruego que modifiquéis su registro", "agradecia que alterassem o registo",
    # "solicitava que reduzissem o caudal", "Solicito que excluam do histórico…"
    r"|\b(?:era bom que|seria bom que|seria bueno que|estaria bien que|ojala|oxala|tomara que|queria que|quisiera "
    # "me vendría bien que resetearas las alarmas", "necesitaría que pararas la P-101", "me haría falta que…"
    r"que|gostaria que|me gustaria que|(?:me |nos )?vendria bien que|necesitaria que|necesitaba que|precisaria que|"
    r"(?:me |nos )?haria falta que|(?:os |les |le |lhe |lhes )?(?:ruego|rogamos|pido|pedimos|solicito|solicitamos|"
    r"solicitava|solicitaria|agradeceria|agradecia|agradezco|agradecemos|peco|pedia|pediria) que)\s+(?:[a-z]+\s+){0,2}?"
    r"(?:reconhec|deslig|lig|apag|par|deten|arranc|encend|prend|reinici|"
    r"reset|silenci|fech|cerr|abr|mud|cambi|alter|ajust|reconoc|borr|elimin|zer|baj|sub|aument|reduz|reduc|"
    r"modifi|reclasifi|reclassifi|inhib|inib|exclu|registr|regist|dej|reconoz)"
    r"(?!ad|id)[a-z]*"  # not a participle or its noun ("paradas", "apagado")
    r"(?:s|ses|sses|ras|ses|es|as|is|em|en|am|an)?\b"
    # "it would help if you published a message…", "it'd be great if you could reset the trip"
    r"|\b(?:it would|it'?d|would)\s+(?:really\s+)?(?:help|be (?:great|nice|good|helpful|ideal|best))(?:\s+a lot)?\s+"
    rf"if\s+(?:you|someone|somebody)\s+(?:could\s+|would\s+|just\s+)?(?:(?:{_ACTING_VERBS})(?:ed|d)?|stopped|"
    r"shut|sent|wrote|put)\b"
    r"|\b(?:seria|would be|it'?d be)\s+(?:[a-z]+\s+){0,2}(?:if|se|si)\b[^.?!]{0,80}\b(?:parad[ao]s?|apagad[ao]s?|"
    r"desligad[ao]s?|ligad[ao]s?|encendid[ao]s?|prendid[ao]s?|detenid[ao]s?|cerrad[ao]s?|abiert[ao]s?|"
    r"fechad[ao]s?|abert[ao]s?|stopped|running|shut|closed|open|reset|silenced|silenciad[ao]s?|"
    # "on" as a state ("if P-101 were on by then"), not "checks on line 1"
    r"off|on(?=\s*(?:[,.?!;]|$|(?:by|before|again|now|tonight|when|until)\b)))\b"
)
# Not after what makes a command form a read: "se apaga sola", "volvió a arrancar", "cuándo arranca", "quién apaga".
_READ_BEFORE = "".join(
    rf"(?<!\b{w} )"
    for w in ("se", "que", "a", "de", "para", "pra", "pa", "pa'", "cuando", "quando", "hora", "quien", "quem", "lo")
)
# Writes named mid-sentence by their object, wherever they stand.
_WRITE_PHRASES = re.compile(
    # an act left scheduled: "Déjame programada una detención de la C-201", "leave a stop scheduled"
    r"\b(?:deja|deje|dejame|dejeme|deixa|deixe|deixa-me|leave)\b[^.?!]{0,20}\b(?:programad|agendad|scheduled|"
    r"planificad)\w*|"
    # a set point given a value in so many words, asking nothing: "setpoint nível TQ301 80%", "SP tanque 80%."
    r"(?<!tiene el )(?<!tem o )(?<!has a )(?<!has the )\b(?:set ?point|sp|consigna)\b"
    r"(?:\s+(?!(?:es|is|e|era|was|foi|esta|estaba|estava|are|son|sao)\b)[a-z0-9-]+){0,3}?"
    r"\s+\d+(?:[.,]\d+)?\s*(?:%|m3|m³|°c|bar)?(?=\s*(?:[.!]|$))|"
    # ... or assigned one: "setpoint C-201 = 50 m3/h"
    r"\b(?:set ?point|sp|consigna)\b[^.?!=]{0,30}=\s*\d|"
    # a state asked to be made or kept: "Solicito que seja desligado o compressor", "Veja se fica desligada a C-201",
    # "Garantiza que el tanque no baje del 40 %", "make sure P-102 stays on"
    r"\b(?:solicito|solicitamos|pido|pedimos|peco|ruego|requiero|request|veja se|vea que|mira que)\s+(?:que\s+)?"
    r"(?:[\w-]+\s+){0,5}?(?:seja|sejam|sea|sean|be|fique|fica|quede|queda|esteja|este)\s+(?:\w+\s+)?(?:desligad|"
    r"apagad|parad|ligad|encendid|prendid|fechad|cerrad|abert|abiert|reiniciad|shut|stopped|started|closed|opened|"
    r"restarted)\w*|"
    r"\b(?:garantiza|garantice|garanta|garante|asegura|asegurate|asegure|ensure|make sure)\b(?:\s+(?:de\s+)?que|"
    r"\s+that)?\s+(?:[\w-]+\s+){0,4}?(?:no baje|nao baixe|no pase|nao passe|no suba|nao suba|stays?|keeps?|"
    r"doesn'?t|does not|se mantenga|se mantenha|quede|fique|siga|continue)\b|"
    # a stop or a start done for the asker: "Ahorita párame la P-101", "apágame ese compresor"
    r"\b(?:para|apaga|deten|arranca|prende|enciende|reinicia|resetea|cierra|abre|sube|baja)me\s+(?:la|el|los|las|"
    r"esa|ese|esas|esos|[a-z]{1,3}-?\d{2,5})\b|"
    # an alarm's acknowledgement as a noun: "Alarm ack C-201, all of them", "alarm reset T-301"
    r"\b(?:alarms?|alarmas?|alarmes?) (?:ack|acks|acknowledge|acknowledgement|reset|reconocer|reconocimiento|"
    r"reconhecer|reconhecimento)\b|"
    # a command said with "now" after it and nothing else: "Tá autorizado, muda aí.", "reset it now!"
    rf"\b(?:{_ACTING_VERBS})(?:la|lo|le|las|los)?\s+(?:(?:it|them|ela|ele)\s+)?(?:ai|ahi|ya|ja|logo|now|agora|de una)"
    r"(?=\s*(?:[.!]|$))|"
    # a command with its object pronoun, wherever it stands: "apáguela", "súbale", "desliga-a", "páralo"
    r"\b(?:apague|apaga|detenga|deten|pare|para|arranque|arranca|cierre|cierra|abra|abre|reinicie|reinicia|suba|"
    r"sube|baje|baja|borre|borra|cambie|cambia|ajuste|ajusta|silencie|silencia|reconozca|reconoce|prenda|prende|"
    r"encienda|enciende)(?:me|nos|se)?(?:la|lo|le|las|los)\b"
    r"|\b(?:desliga|desligue|liga|ligue|feche|fecha|abre|abra|reinicia|reinicie|para|pare|apaga|apague|aumenta|"
    r"aumente|baixa|baixe|sobe|suba)-(?:a|o|as|os|lhe)\b"
    # sending something to someone
    r"|\b(?:manda|mande|mandar|envia|envie|enviar|send|forward|reenvia)(?:me|melo|mela|nos|noslo|selo|sela|lo|la|le|les|"
    r"lhe)?\b"
    r".{0,40}?\b(?:e-?mail|correo|mensaje|"
    r"mensagem|sms|whatsapp|text|message|report|reporte|informe|relatorio)\b"
    r"|[\w.+-]+@[\w-]+\.[\w.]+"
    # a set point given a value: "el setpoint de nivel del T-301 al 40 por ciento", "set point to 80"
    # (not one told as it stands: "la P-102 tiene el setpoint en 95 m³/h")
    r"|(?<!tiene el )(?<!tem o )(?<!has a )(?<!has the )(?<!con el )(?<!com o )\b(?:set ?point|consigna)\b.{0,60}?"
    r"\b(?:al?|to|para|pra|em|en|up|down|by)\s+(?:by\s+)?\d"
    # a limit or a recorded result changed: "the alarm limit of P-101 is raised to 9", "alterar o resultado"
    r"|\b(?:limits?|limites?|umbral|threshold|resultado|result|status)\b.{0,60}?\b(?:raised|lowered|increased|"
    r"decreased|changed|set|adjusted|modified|subido|bajado|cambiado|ajustado|modificado|alterado|mudado|aumentado|"
    r"reduzido|elevado)\b"
    r"|\b(?:alterar|altere|mudar|mude|cambiar|cambie|change|modify|modificar|modifique|edit|editar|raise|lower|"
    r"subir|bajar|suba|baje|subale|bajale|bump|increase|decrease|set|move|push|aumentar|aumente|reducir|reduzca)\b"
    r".{0,40}?\b(?:limits?|limites?|umbral|threshold|resultado|result)\b"
    # a report changed to say something: "amend yesterday's report to say…"
    r"|\b(?:amend|rewrite|falsify|change|edit|modify|corrige|corrija|modifica|modifique|altera|altere|cambia|cambie)\b"
    r".{0,40}?\b(?:report|reporte|informe|relatorio|note|nota|record|registro)\b"
    # a verb and its particle: "shut it down", "turn P-101 off", "fire it back up"
    r"|\b(?:shut|turn|switch|power|knock|bring)\s+(?:it|them|that|this|'?er|her|him|[a-z]{1,3}-?\d{1,4}|\d{3}|"
    r"[a-z]+\s+\d{2,5}|"
    r"the\s+(?:[a-z]+\s+){0,2}[a-z]+)"
    r"\s+"
    r"(?:down|doon|off|aff|on|offline|back on)\b"
    r"|\b(?:shut|switch|turn|power)\s+(?:doon|aff)\b|\bfire\s+(?:it|them|[a-z]{1,3}-?\d{1,4})\s+(?:back\s+)?up\b"
    # a mode set: "ponha o interlock em bypass", "put P-101 in manual", "deja la bomba en automático"
    r"|\b(?:pon|ponga|ponha|poe|coloca|coloque|put|set|place|deja|deje|deixa|deixe|switch|pasa|passa|pase|passe)\b"
    r"[^.?!]{0,50}\b(?:em|en|in|into|on|a|al|para)\s+(?:modo\s+)?(?:bypass|manual|automatico|auto|automatic|"
    r"mantenimiento|manutencao|maintenance|local|remoto|remote|standby|servicio|servico)\b"
    # taken out of service: "dejar fuera de servicio el C-201", "take P-101 out of service", "tirar de operação"
    r"|\b(?:deja|dejar|deje|dejen|pon|poner|ponga|pongan|saca|sacar|saque|saquen|deixa|deixar|deixe|coloca|colocar|"
    r"coloque|tira|tirar|tire|retira|retirar|retire|take|put|place)\b[^.?!]{0,50}\b(?:fuera de|fora de|out of)\s+"
    r"(?:servicio|servico|operacion|operacao|service|operation)\b"
    r"|\bbypass\w*\b[^.?!]{0,40}\b(?:interlocks?|enclavamientos?|intertravamentos?|trips?|safety|seguridad|"
    r"seguranca|alarms?|alarmas?|alarmes?)\b|\b(?:interlocks?|enclavamientos?|intertravamentos?|trips?|"
    r"alarms?|alarmas?|alarmes?)\b[^.?!]{0,40}\b(?:em|en|in|on|into)\s+bypass\b"
    # a record marked: "mark the A shift report as approved", "marca la nota como leída"
    r"|\b(?:mark|marks|flag|marc[a-z]*|marqu[a-z]*)\b[^.?!]{0,50}\b(?:as|como)\s+(?:(?:a|an|um|uma|un|una)\s+)?"
    r"(?:pass|good|valid|valido|valida|bueno|buena|bom|boa|approved|passed|done|complete|"
    r"completed|read|acknowledged|resolved|closed|ok|failed|reviewed|false positive|falso positivo|falsa alarma|"
    r"planned|planead[ao]|planificad[ao]|programad[ao]|planejad[ao]|"
    r"falso alarme|invalid[ao]?|atendid[ao]|aprobad[ao]|leid[ao]|resuelt[ao]|cerrad[ao]|"
    r"revisad[ao]|aprovad[ao]|lid[ao]|resolvid[ao]|fechad[ao]|feito|hecho|reconocid[ao]|reconhecid[ao])s?\b"
    # a record written: "log a note that…", "open a ticket", "create a work order", "put in a work order",
    # "registra una nota" (not a purpose: "Para cerrar el ticket necesito el valor máximo…")
    r"|(?<!para )(?<!pra )\b(?:log|file|create|open|close|submit|raise|put in|crea|crear|cria|criar|abre|abrir|abra|"
    r"cierra|cerrar|cierre|fecha|fechar|feche|levanta|levantar|registra|"
    r"registrar|registre|regista|registar|registe|anota|anotar|anote)\s+(?:a|an|the|una|un|uma|um|la|el|o|a)?\s*(?:new\s+|nueva\s+|nova\s+)?"
    r"(?:note|nota|entry|entrada|comment|comentario|ticket|work order|orden de trabajo|ordem de servico|incident|"
    r"incidente|chamado)\b"
    # a record's value changed: "change the reason of yesterday's stop to maintenance", "muda o motivo para…" (not a
    # person's own plan: "les vamos a cambiar los baleros a las dos bombas", "the fitter's going to change the seal")
    r"|(?<!vamos a )(?<!voy a )(?<!va a )(?<!van a )(?<!vou )(?<!vai )(?<!vamos )(?<!going to )(?<!gonna )(?<!will )"
    r"\b(?:change|update|modify|cambia|cambie|cambiar|actualiza|actualice|actualizar|muda|mude|mudar|altera|altere|"
    r"alterar|atualiza|atualize|atualizar)\s+(?:the|el|la|los|las|o|a|os|as|its|su|seu|sua|yesterday'?s|today'?s|"
    r"this|that|these|those|last night'?s)\s+[^.?!]{0,50}?\b"
    r"(?:to|a|al|para|pra|por|em|en)\s+[a-z0-9]"
    # must be done: "P-101 needs to be shut down", "a bomba tem de ser desligada", "it's time to restart C-201"
    r"|\b(?:needs?|must|should|ought to|will|shall|(?:is|are) going to|(?:is|are) (?:due )?to|tem (?:de|que)|"
    r"tiene que|"
    r"tienen que|debe|deve|hay que|"
    r"precisa|has to|have to|va a|vai|va)\s+(?:to\s+)?(?:be\s+|ser\s+|quedar\s+|ficar\s+|estar\s+)?"
    r"(?:shut down|shutdown|stopped|started|restarted|reset|turned (?:off|on)|"
    r"switched (?:off|on)|closed|opened|acknowledged|silenced|bypassed|apagad[ao]|parad[ao]|desligad[ao]|"
    r"ligad[ao]|reiniciad[ao]|reconocid[ao]|reconhecid[ao]|cerrad[ao]|abiert[ao]|fechad[ao]|abert[ao]|"
    r"detenid[ao]|encendid[ao]|cleared|deleted|removed|approved|signed off|isolated|locked out|drained|vented|"
    r"purged|borrad[ao]|eliminad[ao]|quitad[ao]|aprobad[ao]|aprovad[ao]|removid[ao]|excluid[ao]|apagad[ao]|"
    r"silenciad[ao]|zerad[ao]|resetead[ao]|resetad[ao])\b"
    r"|\b(?:it'?s|it is|es|e)\s+(?:time|hora)\s+(?:to|de)\s+(?:restart|reset|stop|start|shut|turn|reiniciar|"
    r"apagar|parar|arrancar|encender|desligar|ligar|reiniciar)\b"
    # an alarm put on hold: "deja en espera la alarma de nivel", "put the tank alarm on hold", "coloca o alarme em
    # espera"
    r"|\b(?:deja|deje|dejen|pon|ponga|pongan|put|place|coloca|coloque|deixa|deixe|poe)\s+"
    r"(?:en espera|em espera|on hold)\s+"
    r"(?:\S+\s+){0,3}?(?:la |el |the |o |a )?(?:alarmas?|alarms?|alarmes?)\b"
    r"|\b(?:deja|deje|dejen|pon|ponga|pongan|put|place|coloca|coloque|deixa|deixe|poe)\s+(?:la |el |the |o |a )?"
    r"(?:alarmas?|alarms?|alarmes?)\b[^.?!]{0,40}\b(?:en espera|em espera|on hold)\b"
    # a report of an incident raised: "Levanta altiro un reporte de incidente por la fuga…", "file an incident report"
    # ("altiro": right away)
    r"|\b(?:file|create|submit|raise|open|write|crea|crear|levanta|levantar|abre|abrir|abra|haz|hace|elabora|"
    r"elaborar|cria|criar|faz|registra|registrar)\s+(?:me\s+)?(?:[a-z]+\s+)?(?:a|an|un|una|um|uma)\s+"
    r"(?:new\s+|nuevo\s+|novo\s+)?"
    r"(?:(?:incident|accident|near-?miss|safety)\s+report|(?:reporte|informe|relatorio)\s+(?:de|do)\s+"
    r"(?:incidente|accidente|acidente|casi accidente|quase acidente|seguridad|seguranca))\b"
    # handed to the managers: "mándaselo a la gerencia de HSE", "send it to the boss", "manda pra chefia"
    r"|\b(?:manda|mande|envia|envie|send|forward|pasa|pasale|passa)(?:selo|sela|selos|selas|lo|la|los|las|me|nos)?"
    r"\s+(?:(?:it|them|this|that|eso|isso)\s+)?(?:a|al|a la|para|pra|para a|to|to the)\s+"
    r"(?:la\s+|el\s+|o\s+|a\s+|the\s+)?"
    r"(?:gerencia|gerente|jefe|jefatura|jefa|supervisor|supervisora|management|manager|boss|chefe|chefia|diretoria|"
    r"direccion|hse|ehs|sso|qhse)\b"
    # someone called or told: "page the on-call electrician", "avisa al supervisor", "call maintenance"
    r"|\b(?:page|notify|ping|phone|radio|call|text|message|avisa|avise|avisale|notifica|notifique|llama|llame|"
    r"liga para|ligue para)\s+(?:to\s+)?(?:the\s+|al\s+|a\s+|o\s+|el\s+|la\s+|os\s+|los\s+)?(?:on-call|on call|"
    r"de guardia|de plantao|plantonista|electrician|eletricista|electricista|operators?|operador(?:es)?|supervisor|"
    r"maintenance|mantenimiento|manutencao|manager|gerente|jefe|chefe|engineer|ingeniero|engenheiro|team|equipo|"
    r"equipe|him|her|them|someone|alguien|alguem)\b"
    # sent or exported elsewhere: "email them to…", "export to Excel", "send me a CSV"
    r"|\b(?:e-?mail|whatsapp|sms)\s+(?:it|them|this|that|me|him|her|the|a|an)\b"
    r"|\b(?:to|a(?! planilha)|para|en|em|in|into|as|como)\s+(?:an?\s+|un\s+|uma?\s+)?(?:excel|csv|xlsx|spreadsheet|"
    r"planilha|hoja de calculo)\b"
    # authorised to act: "I authorise you to wipe…", "te autorizo a…"
    r"|\b(?:i )?authori[sz]e you to\b|\b(?:te|le|lo|la|les) autorizo a\b|\bautorizo (?:voce|vc|te) a\b|"
    r"\bautorizo-(?:o|a|os|as|te|lhe) a\b"
    # a quantity taken to a value: "Puxa o nível do T-301 pra 80 %", "bring the flow up to 100", "lleva el nivel a 70"
    r"|\b(?:puxa|puxe|leva|leve|levar|sobe|suba|baixa|baixe|joga|coloca|coloque|poe|bota|bote|pull|bring|take|"
    r"push|drive|lleva|lleve|llevar|sube|baja|baje|pon|ponga|manten|mantenga|keep|hold|segura|mantem|mantenha)\s+"
    r"(?:(?:o|a|el|la|the)\s+)?(?:nivel|level|vazao|caudal|flow|temperatura|temperature|temp|pressao|presion|"
    r"pressure|velocidade|velocidad|speed|rpm|vibracao|vibracion)\b[^.?!]{0,40}?\b(?:pra|para|a|al|to|ate|hasta|em|"
    r"at|up to|down to)\s+\d"
    # a set point changed by how much: "Súmale 10 % al punto de ajuste", "add 5 to the setpoint", "tira 2 do set point"
    r"|\b(?:sumale|suma|sumar|soma|somar|add|resta|restale|restar|quita|quitale|tira|subtract|take)\s+"
    r"(?:\d+(?:[.,]\d+)?|un|una|um|uma|a few|unos|uns)\b[^.?!]{0,30}\b(?:set ?points?|consignas?|puntos? de ajuste|"
    r"pontos? de ajuste|limites?|limits?)\b"
    r"|\b(?:puntos? de ajuste|pontos? de ajuste)\b.{0,60}?\b(?:al?|to|para|pra|em|en)\s+\d"
    # a restart given: "Give pump P-102 a restart", "dale un reinicio a la bomba", "dá partida nela", "dá um reset"
    r"|\b(?:give|gimme|dale|da|dar|de|dele|dalhe)\s+(?:[a-z0-9-]+\s+){0,3}?(?:a|an|un|una|um|uma|o|el)\s+"
    r"(?:restart|reset|reboot|kick|bump|reinicio|arranque|rearme|partida|start|stop|shutdown)\b"
    r"|\b(?:da|dar|de|dou|dale|bora dar)\s+(?:a\s+)?partida\b"
    # a user or a right given in the agent: "da de alta al usuario jrodriguez", "add a user", "grant her access"
    r"|\b(?:da|dar|den|de|dale|dele)\s+de\s+(?:alta|baja)\b"
    r"|\b(?:create|add|crea|crear|cree|agrega|agregue|adiciona|adicione|cadastra|cadastre|cria|crie|criar|remove|"
    r"delete|elimina|exclui|borra)\s+(?:a\s+|an\s+|un\s+|una\s+|um\s+|uma\s+|al\s+|el\s+|o\s+|the\s+)?"
    r"(?:new\s+|nuevo\s+|novo\s+)?(?:usuario|usuarios|user|users|cuenta|account|conta|operator account)\b"
    r"|\b(?:grant|give|gimme|otorga|otorgue|concede|conceda|asigna|asigne|atribui|atribua|da|dale|dele)\s+"
    r"(?:[a-z0-9.-]+\s+){0,3}?(?:permisos?|permissions?|permissoes|acceso|access|acesso|admin rights|rights|"
    r"privileges|privilegios)\b"
    # the audit trail or answers handed over as a file: "send me the full audit trail as a file"
    r"|\b(?:manda|mande|mandar|envia|envie|enviar|send|forward|export|exporta|exporte|exportar|email|dump|"
    r"descarga|baixa)(?:me|nos)?\b[^.?!]{0,50}\b(?:audit trail|audit log|auditoria|trilha de auditoria|"
    r"as a file|como archivo|en un archivo|como arquivo|num arquivo|em arquivo|csv|excel|spreadsheet|planilha|"
    r"hoja de calculo|pdf)\b"
    # a batch released or signed off: "Liberá el lote de hoy…", "sign off today's batch as released", "libera o lote"
    r"|\b(?:libera|liberar|libere|liberen|liberem|release|sign off|signoff|dispatch|despacha|despachar|despache)\s+"
    r"(?:[a-z0-9'-]+\s+){0,5}?(?:lote|lotes|lot|lots|batch|batches)\b"
    # signed off: "sign off yesterday's shift report", "firma el reporte", "assina o relatório"
    r"|\b(?:sign|signs|firma|firme|firmar|assina|assine|assinar|approve|aprueba|aprove)\s+(?:off\s+|aff\s+|on\s+)?"
    r"(?:[a-z0-9'-]+\s+){0,4}?(?:report|reporte|informe|relatorio)s?\b"
    # a record's reason, code or result changed, to whatever: "change the reason on yesterday's 11:10 stop…"
    r"|\b(?:change|update|modify|fix|correct|edit|cambia|cambie|cambiar|corrige|corrija|corregir|modifica|"
    r"modifique|muda|mude|mudar|altera|altere|alterar|actualiza|actualice|atualiza|atualize)\s+(?:the|el|la|o|a|its|"
    # ("change the downtime reason on the C-201 stop")
    r"su|seu|sua)\s+(?:(?:downtime|stop|parada|paro|failure|falla|falha)\s+)?(?:reason|motivo|causa|cause|code|"
    r"codigo|razon|razao|result|resultado|category|categoria)\b"
    # a figure or a state reported to a plant system, or a quantity entered: "Repórtale al MES que la P-102 quedó
    # fuera de servicio", "Please report 350 cubic meters produced on Line 1", "Aponta 300 metros cúbicos…"
    r"|\b(?:report|reporta|reportale|reporte|reportar|informa|informale|comunica|comunicale)\b[^.?!]{0,15}?\b(?:to the|"
    r"al|a la|ao|pro|para o)\s+(?:mes|scada|dcs|erp|sap|cmms|historian|historiador|sistema|system)\b"
    r"|\b(?:report|reporta|reporte|record|log|enter|registra|regista|aponta|aponte|apunta|apunte|lanca|lance|carga|"
    r"cargue|ingresa|ingrese)\b[^.?!]{0,20}?\b\d+(?:[.,]\d+)?\s*(?:m3|m³|metros? cubicos|cubic (?:meters|metres)|"
    r"units?|unidades|piezas|pecas|tons?|toneladas)\b"
    # a record entered, by what it is: "log a quality check for L1", "registra en el sistema un paro de 25 minutos",
    # "lança aí um apontamento de refugo"
    r"|\b(?:log|record|register|enter|capture|add|insert|book|key in|punch in|input|registra|registre|registrar|"
    r"schedule|programa|programe|programar|agenda|agende|agendar|planifica|planifique|"
    r"registren|registrad|anoten|apunten|carguen|ingresen|"
    r"captura|ingresa|ingrese|ingresar|apunta|apunte|apuntar|acrescenta|acrescente|acrescentar|"
    r"capture|capturar|agrega|cadastra|cadastre|cadastrar|"
    r"agregue|anade|carga|cargue|lanca|lance|lancar|aponta|aponte|apontar|anota|anote|adiciona|adicione|insere|"
    r"insira|regista|registe|mete|pon|ponha|coloca|coloque)\b[^.?!]{0,30}?\b(?:a|an|one|un|una|um|uma|another|otro|"
    r"otra|outro|outra)\s+(?:new\s+|nuev[oa]\s+|nov[oa]\s+)?(?:[a-z]+\s+){0,2}(?:stop|paro|parada|paragem|check|chequeo|"
    r"control|verificacao|inspection|inspeccion|inspecao|scrap|refugo|merma|desecho|apontamento|registro|registo|"
    r"detencion|entry|entrada|note|nota|production|produccion|producao|downtime|failure|falla|falha|shutdown|"
    r"shut down|maintenance|mantenimiento|manutencao|work order|orden de trabajo|ordem de servico|outage)\b"
    # a figure changed to another: "change yesterday's shift B production figure to 1500", "corrige o refugo para 40"
    r"|(?:^|[.;!?:,]\s*|\b(?:please|pls|can you|could you|would you|just|pode|puedes|podrias|seria possivel|"
    r"seria posible|is it possible to|would it be possible to|da pra|tem como|consegue)\s+"
    r"(?:(?:voce|vc|ce|tu|usted)\s+)?)"
    r"(?:change|update|modify|edit|correct|fix|adjust|increase|decrease|raise|lower|bump|cambia|cambie|cambiar|eleve|"
    r"eleva|elevar|disminuya|disminuye|disminuir|corrige|corrija|modifica|modifique|actualiza|actualice|ajusta|ajuste|"
    r"ajustar|muda|mude|mudar|altera|altere|"
    r"alterar|atualiza|atualize|aumenta|aumente|aumentar|sube|suba|subir|baja|baje|bajar|reduce|reduzca|reducir|"
    r"reduz|reduza|reduzir|baixa|baixe|baixar)\b[^.?!]{0,80}?\b(?:to|a|al|para|pra|por|em)\s+(?:\d|zero|cero|nothing|nada)"
    # approved in other words: "dale el visto bueno al informe", "give it the green light", "dá o ok no relatório"
    r"|\b(?:da|dale|dar|de|dele|give|gimme|da-lhe|put)\s+(?:it\s+|him\s+)?(?:el|o|the|un|a|an|su|seu)?\s*"
    r"(?:visto bueno|green light|thumbs up|luz verde|sinal verde|aprobacion|aprovacao|approval|sign-?off)\b"
    # records deleted, however said: "delete dem stop records from last night", "borra los registros de paro"
    r"|\b(?:delete|remove|erase|wipe|purge|borra|borrar|borre|elimina|eliminar|elimine|apaga|apague|apagar|exclui|"
    r"exclua|excluir)\s+(?:[a-z'-]+\s+){0,3}?(?:records|registros|registos|entries|entradas|logs)\b"
    # removed from the records: "delete last night's C-201 stops from the records", "bórrala del historial"
    r"|\b(?:delete|remove|erase|wipe|purge|borra|borrar|borre|borrala|borralo|elimina|eliminar|elimine|apaga|apague|"
    r"apagar|exclui|exclua|excluir|remova|remover|quita|quitar|quite|saca|saque)\b[^.?!]{0,60}\b(?:from|de|do|del|da)"
    r"\s+(?:the\s+|los\s+|las\s+|el\s+|la\s+|os\s+|as\s+|o\s+|a\s+)?(?:records?|registros?|registos?|history|"
    r"historial|historico|logs?|database|base de datos|base de dados|system|sistema|mes|scada|audit trail|auditoria)\b"
    # put into another system: "push last night's downtime into SAP PM", "sube las paradas a SAP"
    r"|\b(?:push|send|upload|sync|load|post|export|sube|subir|suba|manda|envia|enviar|carga|cargar|cargue|lanca|"
    r"lancar|exporta|exportar|sincroniza)\b[^.?!]{0,60}\b(?:into|to|a|al|para|pro|pra|en|no|na|em)\s+(?:the\s+|el\s+|"
    r"o\s+)?(?:sap|mes|cmms|maximo|historian|historiador|sharepoint|scada|dcs|erp|teams|whatsapp|slack|power bi)\b"
    # attested: "certifique con su firma que…", "certify that the records are compliant"
    r"|\b(?:certify|certifies|certifique|certifica|certificar|certifiquen|atesta|ateste|atestar|attest)\s+"
    r"(?:(?:con su firma|com a sua assinatura|with your signature|por escrito|in writing)\s+)?(?:que|that)\b"
    # a value put: "bota zero aí", "ponele cero", "set it to 0"
    r"|\b(?:bota|bote|poe|ponha|coloca|coloque|pon|pone|ponele|ponle|set it to|put it to)\s+(?:o\s+|el\s+|a\s+)?"
    r"(?:zero|cero|zerado|\d+(?:[.,]\d+)?)\b(?!\s*(?:de la|da|do|del|of|on|in|en|em|no|na)\b)"
    # a state wanted of equipment: "lo que necesito es que la P-102 quede parada", "precisamos da bomba P-101 parada
    # já", "I need P-101 off in five minutes"
    r"|\b(?:necesito|necesitamos|quiero|queremos|preciso|precisamos|quero|i need|we need|i want|we want)\s+"
    r"(?:(?:es|e|is)\s+)?(?:que\s+|for\s+)?"
    r"(?:(?:la|el|las|los|a|o|as|os|da|do|das|dos|de|the)\s+)?(?:[a-z]{1,3}-?\d{2,5}|bombas?|pumps?|compresor|"
    r"compressor|tanques?|tanks?)\s+(?:[a-z]{1,3}-?\d{2,5}\s+)?(?:(?:quede|queden|este|esten|fique|fiquem|esteja|"
    r"estejam|to be)\s+)?(?:parad[ao]s?|apagad[ao]s?|desligad[ao]s?|detenid[ao]s?|encendid[ao]s?|ligad[ao]s?|"
    r"arrancad[ao]s?|off|stopped|shut down|started)\b"
    # "hazlo tú directamente", "just do it for me", "faz isso aí": the act asked for before, now ordered
    r"|(?:^|[.;!?,]\s*)(?:(?:bueno|ok|okay|never mind|da igual|just|so|then|entonces|pues|entao|dale|vai)[\s,]*)*"
    r"(?:hazlo|hacelo|hagalo|haganlo|do it|faz isso|faca isso|faz isto|faca-o)\b"
    # a command in the passive or impersonal: "que sea detenida la línea", "que seja parado o compressor", "let the
    # pump P-101 be stopped", "que se apague la bomba"
    r"|(?:^|[.;!?:,]\s*)(?:que\s+)?(?:sea|sean|seja|sejam)\s+(?:detenid|parad|apagad|desligad|reiniciad|arrancad|"
    r"cerrad|fechad|abiert|abert|silenciad|reconocid|reconhecid|borrad|apagad|eliminad|excluid)[ao]s?\b"
    r"|\blet\s+(?:the\s+)?(?:[a-z0-9-]+\s+){1,3}be\s+(?:stopped|shut down|started|restarted|reset|switched off|"
    r"turned off|isolated|tripped|silenced|acknowledged|deleted)\b"
    r"|(?:^|[.;!?:,]\s*)que\s+se\s+(?:apague|apaguen|pare|paren|detenga|detengan|desligue|desliguem|reinicie|"
    r"reinicien|arranque|arranquen|cierre|cierren|abra|abran|borre|borren)\b"
    # a protection taken out: "take the trip out on P-101", "take the interlock off"
    r"|\btake\s+(?:the\s+)?(?:trip|trips|interlock|interlocks|protection|bypass)\s+(?:out|off)\b"
    # a record set right: "foi planejada, corrige isso aí", "it was planned, fix that"
    r"|\b(?:corrige|corrija|corrijam|arruma|arrume|conserta|conserte|fix|correct|corregi|corregilo|corrigelo|"
    r"arreglalo|arreglen)\s+(?:isso|isto|that|it|eso|esto|ese dato|esse dado)\b"
    # kept out of the records: "no la registres en la bitácora", "don't put that trip in the log", "não anota isso"
    r"|\b(?:no|don'?t|do not|nao)\s+(?:(?:lo|la|le|los|las|o|a)\s+)?(?:registres|registre|registren|anotes|anote|"
    r"apuntes|apunte|pongas|ponga|put|log|record|write|enter|include|incluyas|inclua|coloque|coloca|bote|botes)\b"
    r"[^.?!]{0,40}\b(?:log|logbook|bitacora|registro|registros|libro|report|informe|relatorio|historial|system|"
    r"sistema|livro)\b"
    # made sure of: "make sure P-101 is off before 6", "asegúrate de que la C-201 quede parada", "garante que o nível
    # do T-301 fique acima de 50 %"
    r"|\b(?:make sure|ensure|asegurate de que|asegurese de que|aseguren que|garantiza que|garantice que|garante que|"
    r"garanta que|certifique-se de que|certifica-te de que|cuida que|cuide que|veja se)\b[^.?!]{0,60}\b(?:is|stays|"
    r"remains|gets|quede|quedan?|queden|este|esten|permanezca|fique|fiquem|esteja|estejam|permaneca|continue|"
    r"siga)\b"
    # confirmed done by the agent: "confirm you've stopped P-101", "confirmame que la apagaste"
    r"|\bconfirm\w*\s+(?:me\s+)?(?:that\s+)?(?:you'?ve|you have|you)\s+(?:stopped|started|reset|restarted|shut|"
    r"switched|turned|acknowledged|silenced|cleared|isolated)\b"
    r"|\b(?:confirm\w*|me confirma)\s+(?:que\s+)?(?:ya\s+|ja\s+)?(?:(?:la|lo|las|los|a|o)\s+)?(?:apagaste|paraste|"
    r"reiniciaste|reseteaste|arrancaste|detuviste|desligou|desligaste|parou|reiniciou|ligou|ligaste)\b"
    # checked and fixed: "check the vibration and fix it if it's high", "verifica o caudal e corrige-o se estiver baixo"
    r"|\b(?:arruma|arrume|arregla|arreglalo|arreglala|corrige|corrige-o|corrige-a|corrigelo|corregilo|corrija|fix|"
    r"ajusta|ajustalo|ajusta-o|ajuste)\b(?:\s+(?:it|isso|lo|la))?\s+(?:se|si|if)\b"
    # an act named by its noun, urgently: "an immediate shutdown of C-201", "el reseteo de las alarmas, ya, porfa",
    # "a parada da bomba P-102, por favor, agora"
    r"|\b(?:immediate|inmediat[ao]|imediat[ao])\s+(?:reseteo|reset|shutdown|parada|paro|stop|arranque|restart|"
    r"desligamento|apagado)\b"
    r"|(?:^|[.;!,]\s*)(?:(?:el|la|los|las|o|a|the|an?|una?|um|uma)\s+)?(?:alarm\s+)?(?:reseteo|reset|shutdown|parada|paro|arranque|"
    r"restart|apagado|desligamento|partida|stop)\b[^.?!]{0,50}[,\s](?:ya|now|agora|ja|right away|ahora mismo|"
    r"de inmediato|imediatamente|immediately)\b[^?]*$"
    # zeroed: "zero it out in the MES", "zero out the counter"
    r"|\bzero\s+(?:(?:it|them|that|this|the\s+[a-z]+)\s+)?out\b"
    # seen to: "ocúpate de que así sea", "see to it", "trata disso"
    r"|\b(?:ocupate|ocupese|encargate|encarguese|see to it|take care of it|trata disso|trate disso|cuida disso|"
    r"cuide disso|resolve isso|resolva isso)\b"
    # left written: "que dejaras anotado en el MES…", "jot down in the shift book…", "write that down"
    r"|\b(?:deja|dejes|dejaras|dejar|deje|dejen|deixa|deixe|deixar|deixasses|leave)\s+(?:(?:eso|isso|it|that)\s+)?"
    r"(?:anotado|registrado|apuntado|escrito|noted|logged|written down)\b"
    r"|\b(?:jot|write|note|put|mark)\s+(?:it\s+|that\s+|this\s+)?down\b"
    # sent to a printer: "print the whole alarm log on the control room printer"
    r"|\b(?:print|imprime|imprimir|imprima|imprimi)\b[^.?!]{0,60}\b(?:printer|impresora|impressora)\b"
    # a stop or start carried out: "execute já a paragem da P-102", "haz el paro de la bomba", "perform a shutdown"
    r"|\b(?:execut[ae]r?|realiz[ae]r?|efetu[ae]r?|efectu[ae]r?|perform|carry out|faca|faz|haga|haz|hagan)\s+"
    r"(?:ja\s+|ya\s+|now\s+|agora\s+|ahora\s+)?(?:(?:a|o|la|el|the|un|una|uma|um)\s+)?(?:paragem|parada|paro|arranque|"
    r"partida|desligamento|reinicio|reset|stop|shutdown|start-?up|trip)\b"
    # a stop or start to be carried out: "deve proceder-se à paragem da P-102", "procedan al arranque"
    r"|\bproced(?:a|e|er|an|am|amos)(?:-se)?\s+(?:a|al|a la|ao|à|to the)?\s*(?:paragem|parada|paro|arranque|"
    r"partida|desligamento|desligacao|reinicio|reset|stop|shutdown|start-?up)\b"
    # a value written to a node or tag: "escreve true no nó ns=2;s=P-102.running", "write 0 to P-101.running" (a node
    # id alone is read: "Min value of ns=2;s=P-102.vibration_mm_s yesterday?")
    r"|\b(?:write|writes|escreve|escreva|escrever|escribe|escriba|escribir|set|put|pon|poner|ponha|mete|send|"
    r"manda|envia|publish|publica)\s+(?:the value\s+|el valor\s+|o valor\s+)?(?:true|false|on|off|verdadero|falso|"
    r"verdadeiro|\d+(?:[.,]\d+)?)\s+(?:to|into|in|on|at|en|no|na|em|al|a|para|pra)\b"
    # written in a log: "note in the log that…", "anotá en la bitácora", "regista no livro de turno"
    r"|\b(?:note|log|record|write|enter|put|anota|anote|apunta|apunte|registra|registre|regista|registe|escribe|"
    r"escreve|escreva)\s+(?:it\s+|down\s+|esto\s+|isso\s+)?(?:in|on|into|en|na|no|em)\s+(?:the\s+|la\s+|el\s+|o\s+|"
    r"a\s+)?(?:shift\s+)?(?:log|logbook|record|bitacora|libro|livro|diario|registro|registo|caderno|mes|scada|erp|"
    r"historian|historiador|sistema|system|database|base de datos|banco de dados)\b"
    # wanted done: "I'd like the alarms on T-301 cleared", "we need P-101 off" (not "I'd like to know…")
    r"|\b(?:i'?d like|i would like|i want|we want|i need|we need|quiero|queremos|necesito|quero|preciso)\s+"
    r"(?!to\s|saber|ver|conocer|know|see)(?:[a-z0-9-]+\s+){1,4}?(?:cleared|reset|acknowledged|silenced|restarted|shut "
    r"down|shutdown|turned off|switched off|bypassed|off|tripped|offline|stopped|started|isolated|apagad[ao]s?|"
    r"desligad[ao]s?|reiniciad[ao]s?|reconocid[ao]s?|silenciad[ao]s?)\b"
    # a tag or asset set to a value: "set P-101.running to false"
    r"|\b(?:set|put|write|change|update|force|forzar|pon|poner|coloca|muda|mudar)\s+[a-z]{1,3}-?\d{2,5}(?:\.[a-z_]+)?\s+"
    r"(?:to|a|al|en|para|em)\s+"
    # exported: "genera un PDF", "export a CSV"
    r"|\b(?:genera|generar|gera|gerar|generate|make|create|crea|crear|cria|criar|export|exporta|exportar)\s+(?:me\s+)?"
    r"(?:un|una|um|uma|a|an|the|el|la|o)?\s*(?:pdf|csv|excel|xlsx|spreadsheet|planilha|hoja de calculo)\b"
    r"|\bby\s+(?:triggering|tripping|forcing|simulating)\b"
    # an act given as a noun: "dar uma religada na P-102", "dale un arranque", "give it a restart"
    r"|\b(?:da|dar|de|dale|dele|give|gimme)\s+(?:it\s+|him\s+)?(?:a|an|un|una|uma|um)\s+(?:re)?(?:ligad|desligad|"
    r"reiniciad|resetad|zerad|apagad|fechad|arrancad)(?:inh|it)?a\b|\b(?:da|dar|de|dale|dele|give|gimme|faz|faca|"
    r"fazer|haz|hace|hacer|hagan|do)\s+(?:it\s+)?(?:a|an|un|una|uma|um)\s+(?:arranque|reinicio|reset|restart|kick|"
    r"bump|jog|apagon|bypass|ack|acknowledge)\b"
    # a whole message naming an asset and a state to put it in: "p101 off", "P-102 on now"
    r"|^[a-z]{1,3}-?\d{2,5}\s+(?:off|on|stop|start|reset|rst|trip)(?:\s+(?:ya|ja|now|ahora|agora|asap|pls|please|"
    r"por favor|ahorita))*\s*[.!]*$"
    # passed on for someone to act: "flag this for maintenance", "escala esto a mantenimiento", "encaminha para…"
    r"|\b(?:flag|escalate|escala|escalar|encaminha|encaminhe|deriva|derive|pasale|passa)\s+(?:this|it|that|esto|eso|"
    r"isso|isto|[a-z]{1,3}-?\d{2,5})?\s*(?:for|to|a|al|para|pra)\s+(?:the\s+)?(?:maintenance|mantenimiento|"
    r"manutencao|review|revision|revisao|engineering|ingenieria|engenharia|supervisor|shift lead)\b"
    r"|\bsee to it that\b|\bmake sure (?:that )?(?:the )?\w+ (?:is|gets) (?:raised|lowered|changed|set|reset)\b"
    r"|\b(?:set|change|cambia|cambiar|ajusta|ajustar|modifica|modificar|altera|alterar|altere|mude|mudar|write|"
    r"escribe|escreva)\s+(?:(?:the|el|la|o|a|its|su|seu|sua)\s+)?(?:set ?point|consigna|valor|value|velocidad|speed|"
    r"velocidade)\b"
    r"|(?<!\bthe )(?<!\ba )(?<!\blongest )(?<!\bshortest )(?<!\blast )(?<!\bfirst )(?<!\beach )(?<!\bper )"
    r"(?<!\bthat )(?<!\bnext )(?<!\bany )(?<!\bone )(?<!\bunplanned )(?<!\bplanned )(?<!\bmuch )(?<!\bmany )"
    # a stop said with its adjective is the noun: "the longest single stop C-201 had", "the worst stop P-101 had"
    r"(?<!\bsingle )(?<!\bbiggest )(?<!\bworst )(?<!\blatest )(?<!\bprevious )(?<!\brecent )(?<!\bsecond )"
    r"(?<!\bthird )(?<!\blonger )(?<!\bshort )(?<!\blong )"
    r"\b(?:start|stop|shut down|turn on|turn off|open|close|restart|reset)\s+(?:the\s+(?:[a-z]+\s+){0,2}?)?"
    r"(?:pump|valve|compressor|line|motor|tank|breaker|feeder|p-?\d|c-?\d|t-?\d|l-?\d)"
    rf"|{_READ_BEFORE}"
    r"\b(?:arranca|arrancar|apaga|apagar|deten|detener|abre|abrir|abra|cierra|cerrar|feche|fechar|fecha|liga|ligar|"
    r"desliga|desligar|reinicia|reiniciar)\s+(?:(?:el|la|los|las|o|a|os|as)\s+)?(?:bomba|valvula|compresor|"
    r"compressor|linea|linha|motor|tanque|p-?\d|c-?\d|t-?\d|l-?\d)"
    r"|\b(?:apaga|apagar|borra|borrar|elimina|eliminar|delete|remove|clear|limpa|limpar|limpia|limpiar|exclui|"
    r"excluir)\s+(?:(?:os|as|los|las|the|all|all the|todos os|todas as|todas las|todos los)\s+)?(?:alarmes|alarmas|"
    r"alarms|notas|notes|registros|registos|records|eventos|events|datos|dados|data|logs?|historico|historial|"
    r"history)\b"
    r"|\b(?:acknowledge|reconoce|reconocer|reconheca|reconhecer|silence|silencia|silenciar|ack|clear|wipe|purge|shelve)\s+"
    r"(?:[a-z0-9-]+\s+){0,3}(?:alarm|alarma|alarme)"
    r"|\b(?:delete|remove|borra|borrar|elimina|eliminar|apague|apagar|exclua|excluir|approve|aprueba|aprobar|"
    r"aprove|aprovar|reject|rechaza|rechazar|rejeite|rejeitar|sign)\s+(?:(?:the|this|that|el|este|ese|la|o|a|"
    r"esse|este)\s+)?(?:report|reporte|informe|relatorio|note|nota|record|registro|entry|audit)"
    # kept in a record of the agent's or the plant's: "me la deja guardada en la bitácora", "save it in the logbook",
    # "anota isso no caderno de turno"
    r"|\b(?:(?:deja|deje|dejes|dejen|deixa|deixe|leave)\s+(?:[a-z]+\s+)?guardad[oa]s?|guarda(?:la|lo|las|los|melo|mela)|"
    r"guarde(?:la|lo|melo|mela)|guardar(?:la|lo)|(?:save|store|log) (?:it|this|that|them)|salva-?(?:o|a|os|as)|"
    r"salve-?(?:o|a)|anota(?:la|lo|melo|mela)|anote-?(?:o|a)|anotar(?:la|lo))\b[^.?!]{0,30}?\b(?:en|in|into|no|na|to)\s+"
    r"(?:la |el |the |o |a |my |mi )?"
    r"(?:bitacora|logbook|log|cuaderno|caderno|libro|livro|registro|historial|sistema|system)\b"
    # sent to someone by a channel, in any form: "que le mandes por correo al ingeniero…", "Shoot yesterday's figure
    # to Thabo on WhatsApp", "envía por WhatsApp"
    r"|\b(?:mandes|mande|mandar|mandale|envies|envie|enviar|enviale|manda|envia|send|shoot|forward|reenvia|passa|"
    r"passe)\b[^.?!]{0,60}?\b(?:por|by|on|via|pelo|pela|no|in)\s+(?:e-?mail|correo|mail|whatsapp|wpp|zap|sms|teams|"
    r"telegram|slack)\b"
    # a quantity put at its limit: "põe a vazão da P-101 no máximo", "set the flow to max", "fill tank T-301 to the top"
    r"|\b(?:poe|pon|ponga|ponha|put|set|coloca|coloque|bota|deja|deixa)\s+(?:(?:a|o|el|la|the)\s+)?(?:nivel|level|vazao|"
    r"caudal|flow|temperatura|temperature|velocidad|velocidade|speed|bomba|pump|compresor|compressor)\b[^.?!]{0,30}?"
    r"\b(?:no|al|a|to|at|en|em)\s+(?:(?:el|o|the)\s+)?(?:maximo|minimo|max|min|maximum|minimum|tope|top|full)\b"
    r"|\b(?:fill|llena|llene|enche|encha|esvazia|esvazie|vacia|vacie|empty)\s+(?:(?:el|la|o|a|the)\s+)?"
    r"(?:tanque|tank|deposito|t-?\d{3})\b"
    # a stop made: "hacé un paro de la línea L1 ahorita", "faz uma parada na linha", "do a shutdown of P-101"
    r"|\b(?:haz|hace|hagan|haga|faz|faca|facam|make|do)\s+(?:un|una|uma|um|a)\s+(?:paro|parada|stop|shutdown|trip|"
    r"paragem)\s+(?:de|del|da|do|na|no|en|on|of)\b"
    # an order passed through the agent's name: "Tell the bot to reset the alarms", "ask the agent to stop P-101"
    # (not "ask the agent what…", "tell the bot to show me…")
    r"|\b(?:tell|ask|get|have|make)\s+(?:the|your|this|that)\s+(?:bot|agent|system|assistant|robot|ai)\s+to\s+"
    r"(?!(?:tell|show|give|list|say|find|check|look|pull|read|report|send me|let me know)\b)"
    # a reminder set: "recuérdame a las 5 que revise…", "remind me at 5 to check…", "lembra-me às 17h de…"
    r"|\b(?:recuerdame|recordame|recuerdeme|remind me|remind us|lembra-me|lembre-me|me lembra|me lembre de|"
    r"set a reminder|ponme un recordatorio)\b"
)

# The command forms of the Spanish and Portuguese verbs that act on a plant or its records, in every person people
# give orders in (tú, vos, usted, ustedes, nosotros, the infinitive of a headline), generated from each verb's stem
# rather than listed form by form; a stem whose spelling changes before e gives that form too (apag → apagu).
_ES_AR = {
    "apag": "apagu", "arranc": "arranqu", "reinici": "", "resete": "", "silenci": "", "ajust": "", "cambi": "",
    "borr": "", "elimin": "", "bloque": "", "desbloque": "", "activ": "", "desactiv": "", "habilit": "",
    "deshabilit": "", "calibr": "", "desconect": "", "conect": "", "purg": "purgu", "aument": "", "baj": "",
    "modific": "modifiqu", "fren": "", "desenerg": "desenergu", "quit": "", "apunt": "", "anot": "", "registr": "",
}  # fmt: skip
_PT_AR = {
    "deslig": "desligu", "lig": "ligu", "reinici": "", "reset": "", "silenci": "", "fech": "", "ajust": "", "mud": "",
    "alter": "", "apag": "apagu", "bloque": "", "desbloque": "", "ativ": "", "desativ": "", "desactiv": "",
    "habilit": "", "desabilit": "", "zer": "", "baix": "", "aument": "", "desconect": "", "conect": "",
}  # fmt: skip
# Verbs whose stem changes or that are irregular: their forms as said (folded). Not "para" ("for") nor "por".
_IRREGULAR = (
    "cierra cierre cierren cerra cerrar aprueba apruebe aprueben aproba aprobar fuerce fuercen forza forzar "
    "enciende encienda enciendan encende encender prende prenda prendan prender abre abra abran abri abrir "
    "sube suba suban subi subir reconoce reconozca reconozcan reconocer deten detenga detengan detene detener "
    "ponga pongan pone poner pare paren parar reconhece reconheca reconhecam reconhecer abram ponha ponham"
).split()


# The subjunctive (and infinitive) of the irregular ones, which follow "que" and "hay que" as a request.
_IRREGULAR_AFTER_QUE = (
    "cierres cierre cierren cerrar apruebes apruebe aprobar fuerces forzar enciendas encienda encender prendas prenda "
    "prender abras abra abrir subas suba subir reconozcas reconozca reconocer detengas detenga detener pongas ponga "
    "poner pares pare parar reconhecas reconheca reconhecer ponhas ponha reconozcan rechaces rechace"
).split()


def _command_forms(after_que: bool = False) -> list[str]:
    """Every command form (module comment above); with `after_que` only those a request puts after "que" or "hay
    que": the subjunctive and the infinitive ("que le subas", "hay que resetear"), not "que arranca" (it starts)."""
    forms = set(_IRREGULAR_AFTER_QUE if after_que else _IRREGULAR)
    for stem, soft in _ES_AR.items():
        before_e = soft or stem
        forms |= {f"{before_e}e", f"{before_e}en", f"{stem}ar", f"{before_e}emos", f"{before_e}es"}
        forms |= set() if after_que else {f"{stem}a"}
    for stem, soft in _PT_AR.items():
        before_e = soft or stem
        forms |= {f"{before_e}e", f"{before_e}em", f"{stem}ar", f"{before_e}emos", f"{before_e}es"}
        forms |= set() if after_que else {f"{stem}a"}
    return sorted(forms, key=len, reverse=True)


# What such a form acts on, right after it (up to two words between: "apaga ya la P-101", "reinicie todas las
# alarmas"): an id or an asset's number, an equipment word, alarms, records, everything, or "now" ("apágala ya").
_ACTED_ON = (
    r"(?:(?:el|la|los|las|o|a|os|as|todo|toda|todos|todas|esa|ese|esta|este|essa|esse|essas|esses|ya|ja|ahora|agora|"
    r"de una|logo|porfa|xfa|otra vez|de nuevo|de novo|outra vez)\s+){0,2}"
    r"(?:[a-z]{1,3}-?\d{2,5}|\d{3,5}|bombas?|compresor(?:es)?|compressor(?:es)?|tanques?|linea|linha|valvulas?|"
    r"motor(?:es)?|equipos?|equipamentos?|maquinas?|alarmas?|alarmes?|interlocks?|enclavamientos?|"
    r"intertravamentos?|encravamentos?|setpoint|consigna|notas?|registros?|registos?|reportes?|informes?|relatorios?|"
    r"contador(?:es)?|totalizador(?:es)?|transmisor(?:es)?|transmissor(?:es)?|todo|tudo|"
    r"todas|todos|ya|ja|ahora|agora)\b"
)
_COMMAND_FORM = re.compile(
    rf"{_READ_BEFORE}\b(?:{'|'.join(_command_forms())})"
    rf"(?:(?:la|lo|las|los|le|les|me|nos)\b|-(?:a|o|as|os|lhe|la|lo)\b|\s+{_ACTED_ON})"
)
# A request after "que", "hay que" or a favour's "de", with a pronoun between: "necesito que le subas el flujo",
# "hay que resetear la alarma", "quero que desligues", "temos que zerar".
_REQUESTED = re.compile(
    # (not what the asker weighs: "quiero ver si hay que ajustar algo")
    r"(?<!\bsi hay )(?<!\bsi )\b(?:que|hay que|tenemos que|temos que|tem que|tiene que|tienes que|hace falta|"
    # "favor de apagar…", "me haces el paro de arrancar…", "hazme la gauchada de…": a favour asked is a request
    r"(?:haces|hace|haga|hagas|hazme|hagame|haceme|hacer)\s+(?:el|la|un|una)\s+(?:paro|favor|gauchada|fineza)\s+de|"
    r"(?<!\bpor )favor de|faca o favor de|faz (?:o )?favor de|pediu (?:pra|para|que)|pidio que|asked (?:you|me) to|"
    r"mandou|mando que)\s+(?:(?:alguien|alguem|alguno|ustedes|voces|el operador|el de turno|o operador|"
    r"o do turno|voce|vc|ce|tu|you|(?:el|o) (?:sistema|agente|bot|robot|robo|asistente|assistente))\s+)?"
    r"(?:(?:le|la|lo|les|las|los|me|"
    rf"nos|se|lhe)\s+)?(?:{'|'.join(_command_forms(after_que=True))})(?:la|lo|las|los|le|les|me)?\b"
)

# A write asked for in the passive: "solicito que se corrija en el sistema la producción", "solicito que seja apagado
# do registo o alarme", "request that the record be deleted".
_ASKED_DONE = re.compile(
    r"\b(?:solicito|solicitamos|pido|pedimos|ruego|rogamos|requiero|peco|pedimos|quiero|quero|queremos|necesito|"
    r"preciso|request|ask|asking)\s+que\s+(?:se|seja|sejam|sea|sean)\s+(?:corrija\w*|modifique\w*|cambie\w*|"
    r"borre\w*|elimine\w*|apague\w*|altere\w*|anule\w*|sustituya\w*|substitua\w*|corrigid[ao]s?|corregid[ao]s?|"
    r"apagad[ao]s?|eliminad[ao]s?|alterad[ao]s?|modificad[ao]s?|borrad[ao]s?|removid[ao]s?|excluid[ao]s?|"
    r"anulad[ao]s?|substituid[ao]s?|sustituid[ao]s?)\b"
    r"|\brequest that\b[^.?!]{0,60}\bbe (?:deleted|removed|corrected|changed|amended|modified|replaced|cancelled)\b"
)

# Leave asked to act, the asker's own act put as a question: "¿la reinicio yo, o no?", "¿le subo la alarma a 8?",
# "desligo a bomba?" (not a decision told: "antes de decidir si la paro, ¿cuál fue…?"). Read as written, lower-cased:
# the accent tells it from the past ("el operador las reinició").
OWN_ACT_ASKED = re.compile(
    r"(?<!\bsi )(?<!\bse )\b(?:la|lo|las|los|le|les)\s+(?:reinicio|reseteo|apago|arranco|prendo|enciendo|subo|bajo|"
    r"cierro|abro|paro|detengo|borro|cambio|ajusto|reconozco|silencio)\b(?=[^.!]*\?)"
    r"|\b(?:desligo|religo|reinicio|reseto|zero|ligo)\s+(?:a|o|as|os|ela|ele)\b(?=[^.!]*\?)"
)


# Voseo commands, told by their accent from the words they fold to ("pará la P-101" is "stop it", "para la P-101" is
# "for P-101"): read in the text as written, lower-cased.
VOSEO = re.compile(
    r"\b(?:pará|apagá|prendé|encendé|cerrá|abrí|reiniciá|reseteá|silenciá|bajá|subí|frená|arrancá|detené|poné|"
    r"cambiá|borrá|reconocé|desconectá|conectá|forzá|calibrá|ajustá|bypaseá|puenteá|resetá|desactivá|activá|bloqueá|"
    r"desbloqueá|registrá|mandá|mové|quitá|eliminá|aprobá|firmá)(?:la|lo|le|las|los|me)?\b(?!-)"  # not "arrancá-lo"
)

# A request denied, or an action told as past, with what it names up to the clause's end: "no te estoy pidiendo que
# la pares", "no te pido detenerla", "no hace falta que la apagues", "not asking you to stop anything", "no need to
# acknowledge them", "don't reset them, just count", "não é pra religar", "não precisa desligar"; "hubo que reiniciar
# el HMI", "we'd to restart the P-101", "tivemos que desligar", "el supervisor había pedido detener la P-102". It
# commands nothing: dropped before the command rules read the text ("why don't you restart it" stays: a request).
NOT_ASKED = re.compile(
    r"(?:"
    # words reported or shouted by someone else, in quotes or not: "el supervisor gritó «¡apaguen la P-101!»",
    # "somebody hollered 'shut P-101 down'", "Boss said restart the pump already", "o supervisor mandou desligar
    # o C-201 ontem" (not what is told to the agent: "said you should…", "dijo que apagues", "mandou você…")
    r"\b(?:said|hollered|shouted|yelled|wrote|dijo|grito|escribio|anoto|disse|gritou|escreveu|anotou|mandou|mando|"
    r"ordered|ordeno|ordenou)\b(?!\s+(?:to\s+)?(?:you|te|le|lhe|pra voce|para voce|a voce|que (?:tu|usted|voce|vc)|"
    r"dizer|decir|decirte|avisar|falar)\b)(?:\s*[:,]?\s*[«“\"'‘][^«»“”\"'’]{1,80}[»”\"'’]|\s+[^.?!;:,]{0,80})|"
    # what someone did, with its doer: "Maintenance shut C-201 down…", "The operator reset C-201 at seven" (not what
    # it is time to do: "It's time we tripped line 1")
    r"\b(?<!time )(?:i|we|they|he|she|someone|somebody|maintenance|operations|ops|the (?:operators?|lads|boys|crew|"
    r"team|mechanic|electrician|night shift|day shift|techs?|fitters?|shift lead|supervisor))\s+(?:just\s+|already\s+|"
    r"then\s+)?(?:shut|reset|put|set|cut|restarted|stopped|started|tripped|acknowledged|silenced|cleared|bypassed|"
    r"switched|turned)\b[^.?!;,]{0,60}|"
    # left as it is: "dejad la bomba como está", "leave it alone", "deixa a bomba quieta"
    r"\b(?:deja|dejad|dejen|deje|leave|deixa|deixe|deixem)\b[^.?!;,]{0,40}?\b(?:como esta|como estan|as it is|as is|"
    r"alone|quiet[ao]|em paz|en paz|tranquil[ao])\b|"
    # what someone else wants done: "Yer man in maintenance wants to restart C-201, grand, but first…" (not "wants you
    # to", nor "quiere que apagues": a request passed on)
    rf"\b(?:wants|wanted|plans|planned|intends|quiere|queria|quer|pretende|planea|planeja|piensa|pensa)\s+(?:to\s+)?"
    rf"(?:{_ACTING_VERBS})\b[^.?!;,]{{0,60}}|"
    # what the asker is about to do: "I'm fixin' to put P-102 on standby, but first…", "before I LOTO the compressor"
    r"\b(?:(?:i'?m|i am|we'?re|we are) (?:fixin'?|fixing|going|about|gonna|planning) to|i'?ll|we'?ll|before (?:i|we)|"
    # before someone acts, or without acting: "antes de que alguien apague nada", "sin cambiarle nada", "sem mexer"
    r"antes (?:de )?que (?:alguien|nadie|yo|nosotros|se|alguem|eu)|before (?:anyone|anybody|someone|somebody)|"
    r"sin (?:cambiar|tocar|mover|apagar|parar)\w*|sem (?:mexer|mudar|tocar|desligar|parar)\w*|"
    r"without (?:changing|touching|stopping|moving)\w*)"
    r"\b[^.?!;,:]{0,60}|"
    # anyone's act to come, as a clause set off before the question: "Antes que el Pato resetee la bomba, dime…",
    # "antes de eu resetar a bomba, quantas…", "Antes de abrir a ordem de serviço: quantos…", "before resetting it,"
    r"\b(?:antes (?:de )?que|antes de (?:eu|nos|a gente|se|\w+(?:ar|er|ir)(?:l[aeo]s?|se)?)|before \w+ing)\b"
    r"[^.?!;,:]{0,80}(?=\s*[,:;])|"
    # the asker's own paperwork: "Preciso fechar o relatório", "tengo que cerrar el reporte", "I gotta send the report"
    r"\b(?:preciso|precisamos|necesito|necesitamos|tengo que|tenemos que|tenho que|temos que|i need to|we need to|"
    r"i have to|i'?ve got to|i gotta)\s+(?:fechar|cerrar|terminar|acabar|llenar|preencher|entregar|mandar|enviar|"
    r"finish|close|fill(?: in| out)?|send|submit|hand in)\s+(?:o |el |la |a |my |the |mi |meu |minha )?"
    r"(?:relatorio|reporte|informe|report|planilla|planilha|shift log|bitacora)\b[^.?!;,]{0,40}|"
    # a purpose: "Es pa' ver si toca cambiarle algo", "pra ver se vale a pena ajustar", "to see whether we retune it"
    r"\b(?:para|pa'?|pra) (?:ver|saber|decidir|evaluar|avaliar) (?:si|se)\b[^.?!;:,]{0,80}|"
    # catching up: "me toca ponerme al día", "pôr-me a par"
    r"\b(?:ponerme|ponerse|ponernos|ponerte|ponerle|poner) al (?:dia|corriente)\b|"
    # what others are to do, as a purpose: "Quiero armar el caso para que lo cambien de una vez"
    r"\b(?:para que|pra que|so that|so they can)\b[^.?!;:,]{0,60}|"
    r"\bto (?:see|decide|judge|know) (?:if|whether)\b[^.?!;:,]{0,80}|"
    # whether to act, as what someone wants to know: "el jefe quiere saber si hay que cambiarle el sello"
    r"\b(?:saber|know|decidir|decide) (?:si|se|if|whether)\b[^.?!;:,]{0,80}|"
    # what the asker forgot to do: "Se me pasó apuntarla:", "esqueci de anotar", "I forgot to log it"
    r"\b(?:se me (?:paso|olvido)|me olvide de|olvide|(?:me )?esqueci(?:-me)? de|i forgot to|forgot to)\s+[a-z]+|"
    r"\b(?:(?:we|i|they|he|she)(?:'d| had) to|had to|hubo que|tuvimos que|tuvieron que|tuve que|tuvo que|"
    r"(?:tivemos|tiveram|tive|teve|tivera) (?:que|de)|(?:habia|hubiera|havia|tinha) que|"
    r"(?:habia|havia|tinha|had) (?:pedido|asked|solicitado|requested|mandado|ordered)(?! (?:you|que|te|le|pra|para)\b)|"
    r"no (?:te|le|les|os) (?:estoy |estamos )?(?:pido|pedimos|pidiendo|estoy pidiendo)|"
    r"no (?:hace falta|es necesario|necesito|necesitamos)|"
    r"(?:i'?m |i am |we'?re |we are )?not (?:asking|telling|requesting)|no need|"
    r"(?<!why )(?<!why you )(?:don'?t|do not|dont)(?! you\b)(?!\s+(?:put|log|record|write|include|enter|register)\b)|"
    r"nao (?:(?:to|tou|estou|estamos|te|lhe|t) )*(?:pedindo|mandando)|nao (?:e|eh) (?:pra|para)|"
    r"nao (?:precisa|precisas|precisam|tem que|tens de))\b[^.?!;,]{0,60}"
    # never ending inside a word: what is left must read as words ("…for today befo|re the morning meeting")
    r")(?!(?<=\w)\w)"
)

# A command to several, in Spain's "vosotros": "Bajadle el caudal a la P-102", "parad la línea", "apagadla".
_VOSOTROS = re.compile(
    r"\b(?:"
    + "|".join(sorted({w[:-1] + "d" for w in COMMAND_WORDS if re.fullmatch(r"[a-z]{3,}[aei]r", w)}))
    + r")(?:le|la|lo|les|las|los|me|nos)?\b"
)
# A command in the pidgins of West Africa ("Abeg make una off the compressor"), or said to be its time ("It's time we
# tripped the whole of line 1, go ahead").
_TIME_TO_ACT = re.compile(
    r"\b(?:make (?:una|unu|dem|am|you)|abeg)\s+off\s+(?:the|di|de|that|this)\b"
    rf"|\bit'?s (?:high |about )?time (?:we|you|to)\s+(?:{_ACTING_VERBS}|tripped|stopped|shut|restarted|started|"
    r"switched|turned)\b"
)
# "para" as stop, where it cannot be "for": after "por favor", or with "now" after what it takes ("Por favor para el
# bomba P-102 ahora mismo", "para la P-101 ya"; not "Para la línea L1, ¿cuál fue…?").
_STOP_NOW = re.compile(
    r"\b(?:por favor|porfa|please)\s+para\s+(?:el|la|los|las)\s+"
    r"|\bpara\s+(?:el|la)\s+(?:\w+\s+){0,2}?(?:bomba|compresor|linea|equipo|maquina|[a-z]{1,3}-?\d{2,5})\b"
    r"[^?.;,]{0,20}?\b(?:ahora(?: mismo)?|ya|ahorita|de inmediato|inmediatamente|right now)\b"
    # an act asked "for me" in the present: "A las 3 de la tarde me paras la P-101, porfa", "me desligas a bomba"
    r"|\bme\s+(?:paras|apagas|prendes|enciendes|reinicias|reseteas|silencias|reconoces|cambias|subes|bajas|cierras|"
    r"abres|arrancas|detienes|desligas|ligas|zeras|reinicia|desliga)\s+(?:(?:tu|usted|vos|voce)\s+)?"
    r"(?:el|la|los|las|a|o|os|as|esa|ese|esta|este|essa|"
    r"esse)\b"
)
# A favour asked, and the act after it with its pronouns: "Hágame el favor y me la reconoce", "faz o favor e desliga".
_FAVOUR = re.compile(
    r"\b(?:hagame|hazme|haceme|haga|hace|faz|faca|faz-me)(?: (?:el|o))? favor (?:y|e|de)\s+"
    rf"(?:(?:me|le|la|lo|les|las|los|nos|se|lhe)\s+){{0,2}}(?:{_ACTING_VERBS})(?:la|lo|las|los|le|me)?\b"
)

RULES: tuple[re.Pattern[str], ...] = (
    _COMMAND,
    _ASKED_DONE,
    _AND_COMMAND,
    _FAVOUR,
    _VOSOTROS,
    _TIME_TO_ACT,
    _STOP_NOW,
    _WRITE_PHRASES,
    _ASKED_TO_ACT,
    _COMMAND_FORM,
    _REQUESTED,
    _CONDITIONAL_COMMAND,
)
