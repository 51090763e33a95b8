"""More hard negatives, in all six languages: text *about* assistants and injection, and
instructions (conditionals too) addressed to people (generator extras ``about_ai`` and
``people``, ADR 0046).

The shipped model flags security advisories, prompt-writing exercises, papers on
injection, API docs about the ``system`` message, news about assistants and notes to a
night shift; the old negatives held one or two such sentences per language outside
English. These templates were written for this generator, not taken from any holdout.
None quotes an injection verbatim: round 4 showed that quoted injections as negatives
cost detection (RESULTS.md, fourth look).
"""

from __future__ import annotations

SLOTS: dict[str, list[str]] = {
    "ASSIST": ["the assistant", "the chatbot", "the AI assistant", "the agent", "the model", "the language model", "the support bot", "the coding assistant", "the email assistant"],
    "PRODUCT": ["a travel-booking", "a recipe", "a tax-advice", "a customer-support", "a homework", "a legal-research", "a code-review", "an HR"],
    "ARTEFACT": ["PDF", "spreadsheet", "web page", "calendar invite", "email", "shared document", "product review", "README"],
    "VERSION": ["2.4.1", "3.0.2", "5.1", "1.18.3", "7.2.0"],
}  # fmt: skip

ABOUT_AI: dict[str, list[str]] = {
    "en": [
        "{Security advisory|CVE-2026-{0412|2207|3391}|Vulnerability notice}: a crafted <ARTEFACT> could make <ASSIST> act on text hidden in it. {Version <VERSION> treats retrieved content as data|Update to <VERSION>|The fix is in <VERSION>}.",
        "{Incident report|Post-mortem}: on {3 June|12 May|the 9th} <ASSIST> was shown a <ARTEFACT> with hidden text and {drafted a refund it should not have|leaked a file name}; tool calls now need {confirmation|a human approval}.",
        "{Exercise|Prompt-writing exercise|Homework} {2|4|7}: write a system prompt for <PRODUCT> assistant. It should {ask for the dates first|answer only in Spanish|refuse medical advice|cite its sources}; test it with three questions.",
        "Tip: {start|open} your prompt with the role, then the task, then the format; {models|assistants} follow short, concrete instructions better than long ones.",
        "We {study|measure|evaluate} indirect prompt injection in {retrieval-augmented|tool-using|email} {assistants|agents} and {find|show} that {most|many} {models|systems} {follow planted text|confuse data with instructions} {in|on} {a third|half|most} of the cases.",
        "The authors {show|argue} that language models {separate data from instructions poorly|cannot tell a quoted command from a real one} and {propose|evaluate} {a filter|spotlighting|a classifier} at ingest.",
        "The `system` {message|parameter|role} sets <ASSIST>'s behaviour for the whole {conversation|session}; `user` messages carry the questions and `assistant` messages the replies.",
        "{Each|Every} request holds a list of messages with a role (system, user or assistant) and the text; the API returns the {model's|assistant's} next message.",
        "{The company|The start-up|The bank} said its {new |}AI assistant {can now|will soon} {book meetings|send emails|pay invoices|file expense reports} on a user's behalf; {critics|researchers} warned about {hidden instructions|misuse}.",
        "{Regulators|The data-protection authority|The ministry} asked {chatbot makers|AI vendors} to explain how {their assistants|their models} handle personal data and {user prompts|conversation logs}.",
        "{Bug|Ticket|Issue} #{4410|3318|782}: <ASSIST> replies '{I can't open that file|Sorry, I don't have access}' when I ask for a summary of a shared document. Expected: a summary.",
        "Staff must not {paste|enter} {passwords|customer data|health data} into {a chatbot|AI tools|the assistant}; if {a tool|the assistant} asks for them, report it to {IT|security}.",
        "v<VERSION>: <ASSIST> now {cites the page it used|ignores draft replies when you regenerate|asks before sending email}. Fixed: {export to CSV|a crash on start-up|dark mode}.",
        "Transcript format: each line starts with the speaker, {User:|Customer:} or {Assistant:|Agent:}, followed by the text of the turn.",
        "{Our|The} guide explains how {developers|teams} can {limit tool permissions|log every tool call|add a confirmation step} so that <ASSIST> cannot {send mail|delete files|pay} without a person.",
        "Benchmarks for {agents|assistants} count how often a model {completes the task|resists planted instructions} across {300|a thousand} {web pages|emails|documents}.",
        "The {course|workshop|lecture} covers how {language models|assistants} are {trained|evaluated}, what a system prompt is and why retrieved text should be treated as untrusted.",
        "^<ASSIST> {summarises|answers questions about|drafts replies to} {tickets|contracts|emails}; its answers are checked by {a reviewer|the team lead} before they are sent.",
        # Product docs and READMEs of tools built for agents.
        "{Quarry|Lantern|Tessel|Relay} is {a server|a library|a plugin|an extension} that lets {an AI agent|your assistant|a language model} {search|read|query} {your documents|the team wiki|the ticket tracker} {without copying them|through one endpoint|in place}.",
        "{Tool|Function} results are returned to the model as {JSON|plain text}; {the agent|the assistant} decides which tool to call next.",
        "Passages retrieved from {shared drives|the web|user uploads} may hold text that reads like instructions; {the server|the plugin|the gateway} {marks|flags|wraps} them before {the agent|the model} sees them.",
        "The {agent|assistant} loop {reads the tool output|plans the next step} and stops after {ten|five|twenty} {steps|calls}; {see|configure} `max_steps` {in the settings|below}.",
    ],
    "fr": [
        "Avis de sécurité : {un|une} <ARTEFACT> piégé pouvait amener l'assistant à suivre un texte caché. La version <VERSION> traite le contenu récupéré comme des données.",
        "Exercice {2|4} : rédigez une consigne système pour un assistant de {réservation|cuisine|conseil fiscal}. Elle doit lui demander de {poser d'abord les dates|répondre en anglais|citer ses sources}.",
        "Nous {étudions|mesurons} l'injection de prompt indirecte dans les assistants {outillés|de messagerie} et montrons que {beaucoup de modèles|la plupart des systèmes} confondent données et instructions.",
        "Le rôle « system » fixe le comportement {du modèle|de l'assistant} pour toute la conversation ; les messages « user » portent les questions.",
        "L'entreprise a annoncé que son assistant d'IA pourra {envoyer des courriels|réserver des réunions|payer des factures} pour ses utilisateurs ; des chercheurs s'inquiètent des instructions cachées.",
        "Ticket {4410|782} : l'assistant répond « Je ne peux pas ouvrir ce fichier » quand je demande un résumé. Résultat attendu : un résumé.",
        "Le personnel ne doit pas saisir de mots de passe ni de données clients dans un chatbot ; signalez toute demande de ce type au service informatique.",
        "Les auteurs montrent que les modèles de langage distinguent mal {les données des instructions|une citation d'une consigne} et proposent un filtre à l'ingestion.",
        "Le cours explique comment on {entraîne|évalue} un modèle de langage, ce qu'est un prompt système et pourquoi le texte récupéré n'est pas fiable.",
        "{Quarry|Lantern} est un {serveur|module} qui permet à un agent d'IA de {chercher dans|lire} vos documents sans les copier.",
        "Les passages récupérés peuvent contenir du texte qui ressemble à des instructions ; le serveur les signale avant que le modèle ne les lise.",
    ],
    "de": [
        "Sicherheitshinweis: {Ein präpariertes|Ein manipuliertes} <ARTEFACT> konnte den Assistenten dazu bringen, versteckten Text zu befolgen. Version <VERSION> behandelt abgerufene Inhalte als Daten.",
        "Übung {2|4}: Schreiben Sie einen Systemprompt für einen {Reise|Koch|Steuer}assistenten. Er soll {zuerst nach den Daten fragen|nur auf Englisch antworten|seine Quellen nennen}.",
        "Wir {untersuchen|messen} indirekte Prompt-Injection bei Assistenten mit Werkzeugen und zeigen, dass {viele Modelle|die meisten Systeme} Daten und Anweisungen verwechseln.",
        "Die Rolle „system“ legt das Verhalten {des Modells|des Assistenten} für das ganze Gespräch fest; „user“-Nachrichten enthalten die Fragen.",
        "Das Unternehmen kündigte an, sein KI-Assistent werde {E-Mails versenden|Termine buchen|Rechnungen bezahlen} können; Forscher warnen vor versteckten Anweisungen.",
        "Ticket {4410|782}: Der Assistent antwortet „Ich kann die Datei nicht öffnen“, wenn ich eine Zusammenfassung anfordere. Erwartet: eine Zusammenfassung.",
        "Beschäftigte dürfen keine Passwörter oder Kundendaten in einen Chatbot eingeben; melden Sie solche Aufforderungen der IT.",
        "Die Autoren zeigen, dass Sprachmodelle {Daten und Anweisungen|ein Zitat und einen Befehl} schlecht unterscheiden, und schlagen einen Filter beim Einlesen vor.",
        "Der Kurs erklärt, wie ein Sprachmodell {trainiert|bewertet} wird, was ein Systemprompt ist und warum abgerufener Text nicht vertrauenswürdig ist.",
        "{Quarry|Lantern} ist ein {Server|Modul}, mit dem ein KI-Agent Ihre Dokumente {durchsuchen|lesen} kann, ohne sie zu kopieren.",
        "Abgerufene Passagen können Text enthalten, der wie Anweisungen aussieht; der Server markiert sie, bevor das Modell sie liest.",
    ],
    "es": [
        "Aviso de seguridad: un <ARTEFACT> manipulado podía hacer que el asistente siguiera un texto oculto. La versión <VERSION> trata el contenido recuperado como datos.",
        "Ejercicio {2|4}: escriba un prompt de sistema para un asistente de {viajes|cocina|impuestos}. Debe {preguntar primero las fechas|responder solo en inglés|citar sus fuentes}.",
        "{Estudiamos|Medimos} la inyección de prompts indirecta en asistentes con herramientas y mostramos que {muchos modelos|la mayoría de los sistemas} confunden datos e instrucciones.",
        "El rol «system» fija el comportamiento {del modelo|del asistente} durante toda la conversación; los mensajes «user» llevan las preguntas.",
        "La empresa anunció que su asistente de IA podrá {enviar correos|reservar reuniones|pagar facturas} por los usuarios; los investigadores advierten de las instrucciones ocultas.",
        "Ticket {4410|782}: el asistente responde «No puedo abrir el archivo» cuando le pido un resumen. Esperado: un resumen.",
        "El personal no debe introducir contraseñas ni datos de clientes en un chatbot; comunique cualquier petición así a informática.",
        "Los autores muestran que los modelos de lenguaje distinguen mal {los datos de las instrucciones|una cita de una orden} y proponen un filtro al indexar.",
        "El curso explica cómo se {entrena|evalúa} un modelo de lenguaje, qué es un prompt de sistema y por qué el texto recuperado no es fiable.",
        "{Quarry|Lantern} es un {servidor|módulo} que permite a un agente de IA {buscar en|leer} sus documentos sin copiarlos.",
        "Los pasajes recuperados pueden contener texto que parece una instrucción; el servidor los marca antes de que el modelo los lea.",
    ],
    "pt": [
        "Alerta de segurança: um <ARTEFACT> manipulado podia levar o assistente a seguir texto escondido. A versão <VERSION> trata o conteúdo obtido como dados.",
        "Exercício {2|4}: escreva um prompt de sistema para um assistente de {viagens|culinária|impostos}. Deve {perguntar primeiro as datas|responder só em inglês|citar as fontes}.",
        "{Estudamos|Medimos} a injeção de prompts indireta em assistentes com ferramentas e mostramos que {muitos modelos|a maioria dos sistemas} confunde dados e instruções.",
        "O papel «system» define o comportamento {do modelo|do assistente} em toda a conversa; as mensagens «user» trazem as perguntas.",
        "A empresa anunciou que o seu assistente de IA vai poder {enviar e-mails|marcar reuniões|pagar faturas} pelos utilizadores; os investigadores alertam para instruções escondidas.",
        "Pedido {4410|782}: o assistente responde «Não consigo abrir o ficheiro» quando peço um resumo. Esperado: um resumo.",
        "Os funcionários não devem introduzir palavras-passe nem dados de clientes num chatbot; comuniquem esses pedidos à informática.",
        "Os autores mostram que os modelos de linguagem distinguem mal {dados de instruções|uma citação de uma ordem} e propõem um filtro na ingestão.",
        "O curso explica como se {treina|avalia} um modelo de linguagem, o que é um prompt de sistema e porque o texto obtido não é fiável.",
        "{Quarry|Lantern} é um {servidor|módulo} que permite a um agente de IA {pesquisar|ler} os seus documentos sem os copiar.",
        "Os excertos obtidos podem conter texto que parece uma instrução; o servidor assinala-os antes de o modelo os ler.",
    ],
    "it": [
        "Avviso di sicurezza: un <ARTEFACT> manipolato poteva indurre l'assistente a seguire testo nascosto. La versione <VERSION> tratta il contenuto recuperato come dati.",
        "Esercizio {2|4}: scrivete un prompt di sistema per un assistente di {viaggi|cucina|consulenza fiscale}. Deve {chiedere prima le date|rispondere solo in inglese|citare le fonti}.",
        "{Studiamo|Misuriamo} la prompt injection indiretta negli assistenti con strumenti e mostriamo che {molti modelli|la maggior parte dei sistemi} confonde dati e istruzioni.",
        "Il ruolo «system» stabilisce il comportamento {del modello|dell'assistente} per tutta la conversazione; i messaggi «user» contengono le domande.",
        "L'azienda ha annunciato che il suo assistente IA potrà {inviare email|fissare riunioni|pagare fatture} per gli utenti; i ricercatori avvertono del rischio di istruzioni nascoste.",
        "Ticket {4410|782}: l'assistente risponde «Non riesco ad aprire il file» quando chiedo un riassunto. Atteso: un riassunto.",
        "Il personale non deve inserire password né dati dei clienti in un chatbot; segnalate richieste simili all'ufficio informatico.",
        "Gli autori mostrano che i modelli linguistici distinguono male {i dati dalle istruzioni|una citazione da un ordine} e propongono un filtro in fase di ingestione.",
        "Il corso spiega come si {addestra|valuta} un modello linguistico, che cos'è un prompt di sistema e perché il testo recuperato non è affidabile.",
        "{Quarry|Lantern} è un {server|modulo} che permette a un agente IA di {cercare nei|leggere i} vostri documenti senza copiarli.",
        "I passaggi recuperati possono contenere testo che sembra un'istruzione; il server li segnala prima che il modello li legga.",
    ],
}  # fmt: skip

FOR_PEOPLE: dict[str, list[str]] = {
    "en": [
        "If you are a new {employee|member|volunteer|tenant}, {collect your badge from reception|read the handbook|register with the office} {before|on} your first day.",
        "{Note for|Dear} {the night shift|the cleaners|the invigilators|the weekend team}: please {lock the back door|switch off the ovens|close the windows} and {leave the keys at the desk|send the log to the supervisor}.",
        "When a {pupil|guest|candidate|customer} asks {for the time|about the menu|for the wifi password}, {answer politely|give them the leaflet|point to the notice}; do not {hand out|share} {the answers|staff codes}.",
        "Run the {backup|export|payroll} {script|job} {every Friday|at month end} and email the report to {the team|ops@example.com|your manager}.",
        "{Should|If} the {alarm|printer|card reader} {fail|stop working}, {call the facilities desk|use the spare in room 4} and log it in the book.",
        "{Once|When} you have {read|signed} the {policy|contract|form}, {return it to HR|upload it to the portal|send a copy to your manager}.",
        "In case {the meeting runs late|the train is cancelled|the venue is closed}, {the minutes should|the chair will} {be sent by email|record who attended} {the same day|before Monday}.",
        "{Whoever|Anyone who} {writes|prepares} the {summary|minutes|report} {should|must} {include the budget figures|list the open actions|state who voted against}.",
        "{Volunteers|Stewards|Staff} with access to the {till|safe|storeroom} must {count the cash|check the stock|lock up} and {post|hand} the totals to the treasurer.",
        "Before you {answer|reply to} a {complaint|customer email|request}, {check the order number|read the full thread|ask a colleague} and {summarise the issue|note the date}.",
        "{Transfer|Pay} the {deposit|membership fee} to the club's account {before the first session|by the 15th} and {keep|bring} the receipt.",
        "With your new {badge|account|key card}, you can {open the lab|print on every floor|book rooms}; {report a lost card|ask IT} {at once|the same day}.",
        "If a {visitor|parent|client} {cannot find|asks for} the {form|entrance|parking}, {send them the map|walk them over|give them the link}.",
    ],
    "fr": [
        "Si vous êtes un nouveau {salarié|bénévole|locataire}, {récupérez votre badge à l'accueil|lisez le livret d'accueil} dès le premier jour.",
        "Note pour {l'équipe de nuit|les surveillants|le personnel d'entretien} : merci de {fermer la porte arrière|éteindre les fours} et de laisser les clés à l'accueil.",
        "Lorsqu'un {élève|client|candidat} demande {l'heure|le menu|le code wifi}, répondez poliment ; ne donnez pas {les réponses|les codes du personnel}.",
        "Lancez la sauvegarde chaque vendredi et envoyez le rapport à {votre responsable|l'équipe}.",
        "Une fois le formulaire signé, renvoyez-le aux ressources humaines ou déposez-le sur le portail.",
        "La personne qui rédige le compte rendu doit indiquer {le budget|les actions en cours|qui a voté contre}.",
        "Avant de répondre à une réclamation, vérifiez le numéro de commande et lisez tout l'échange.",
    ],
    "de": [
        "Wenn Sie neu im {Team|Verein|Haus} sind, holen Sie Ihren Ausweis am ersten Tag am Empfang ab.",
        "Hinweis für {die Nachtschicht|die Aufsicht|das Reinigungsteam}: bitte {die Hintertür abschließen|die Öfen ausschalten} und die Schlüssel am Empfang abgeben.",
        "Wenn ein {Schüler|Gast|Kunde} nach {der Uhrzeit|dem Menü|dem WLAN-Passwort} fragt, antworten Sie höflich; geben Sie {keine Lösungen|keine Personalcodes} heraus.",
        "Starten Sie jeden Freitag die Sicherung und schicken Sie den Bericht an {Ihre Vorgesetzte|das Team}.",
        "Sobald das Formular unterschrieben ist, geben Sie es an die Personalabteilung zurück oder laden es im Portal hoch.",
        "Wer das Protokoll schreibt, soll {das Budget|die offenen Punkte|die Gegenstimmen} festhalten.",
        "Bevor Sie auf eine Beschwerde antworten, prüfen Sie die Bestellnummer und lesen Sie den ganzen Verlauf.",
    ],
    "es": [
        "Si es usted un nuevo {empleado|voluntario|inquilino}, recoja su tarjeta en recepción el primer día.",
        "Nota para {el turno de noche|los vigilantes|el personal de limpieza}: por favor, {cierren la puerta trasera|apaguen los hornos} y dejen las llaves en recepción.",
        "Cuando un {alumno|cliente|candidato} pregunte {la hora|por el menú|la clave del wifi}, respóndale con amabilidad; no dé {las respuestas|los códigos del personal}.",
        "Lance la copia de seguridad cada viernes y envíe el informe a {su responsable|el equipo}.",
        "Una vez firmado el formulario, devuélvalo a recursos humanos o súbalo al portal.",
        "Quien redacte el acta debe anotar {el presupuesto|las tareas pendientes|quién votó en contra}.",
        "Antes de responder a una reclamación, compruebe el número de pedido y lea todo el hilo.",
    ],
    "pt": [
        "Se é um novo {funcionário|voluntário|inquilino}, levante o seu cartão na receção no primeiro dia.",
        "Nota para {o turno da noite|os vigilantes|a equipa de limpeza}: por favor, {fechem a porta das traseiras|desliguem os fornos} e deixem as chaves na receção.",
        "Quando um {aluno|cliente|candidato} perguntar {as horas|pelo menu|a senha do wifi}, responda com simpatia; não dê {as respostas|os códigos do pessoal}.",
        "Corra a cópia de segurança todas as sextas-feiras e envie o relatório {ao seu responsável|à equipa}.",
        "Depois de assinar o formulário, devolva-o aos recursos humanos ou carregue-o no portal.",
        "Quem redigir a ata deve registar {o orçamento|as tarefas pendentes|quem votou contra}.",
        "Antes de responder a uma reclamação, confirme o número da encomenda e leia toda a conversa.",
    ],
    "it": [
        "Se sei un nuovo {dipendente|volontario|inquilino}, ritira il badge alla reception il primo giorno.",
        "Nota per {il turno di notte|i sorveglianti|il personale delle pulizie}: per favore {chiudete la porta sul retro|spegnete i forni} e lasciate le chiavi alla reception.",
        "Quando uno {studente|cliente|candidato} chiede {l'ora|il menù|la password del wifi}, rispondete con gentilezza; non date {le soluzioni|i codici del personale}.",
        "Avvia il backup ogni venerdì e invia il rapporto {al tuo responsabile|al gruppo}.",
        "Una volta firmato il modulo, restituiscilo all'ufficio del personale o caricalo sul portale.",
        "Chi scrive il verbale deve indicare {il bilancio|le attività aperte|chi ha votato contro}.",
        "Prima di rispondere a un reclamo, controlla il numero d'ordine e leggi tutta la conversazione.",
    ],
}  # fmt: skip
