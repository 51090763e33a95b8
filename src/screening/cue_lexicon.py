"""A multilingual lexicon of the cues an injected instruction is built from.

Each class is a set of words (in the folded view: lowercase, no accents) in English,
French, German, Spanish, Portuguese and Italian. A window's cue classes, and every
pair of them, become features of the learned layer (``window_features.py``), so the
model can learn that "addressed to an AI" together with "about the answer" or "the
user's data" together with "send" is what matters, whatever the exact wording or
language. Single classes are weak on their own: writing about models, assistants
who are people and instructions to people all use them.
"""

from __future__ import annotations

import attrs


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


CUES: dict[str, frozenset[str]] = {
    "machine": _words(
        "ai ia ki llm llms gpt chatgpt claude gemini copilot chatbot chatbots bot bots "
        "assistant assistants assistent assistenten asistente asistentes assistente "
        "assistenti agent agents agente agentes agenti model models modele modeles modell "
        "modelle modelo modelos modello modelli sprachmodell automated automatique "
        "automatiques automatische automatisch automatico automaticos automatizado "
        "automatici machine machines machinegenerated pipeline pipelines summariser "
        "summarizer bing"
    ),
    "you": _words(
        "you your yours yourself youre tu te ton ta tes toi vous votre vos du dich dir "
        "dein deine deinen deiner deines euch tus ti voce seu sua teu tua tuo tuoi"
    ),
    "user": _words(
        "user users reader readers utilisateur utilisateurs lecteur lecteurs nutzer "
        "nutzers benutzer leser usuario usuarios lector lectores usuarios utilizador "
        "leitor leitores utente utenti lettore lettori whoever"
    ),
    "rules": _words(
        "instructions instruction rules guidelines guidance directives directive prompt "
        "prompts policy policies orders brief configuration constraints consignes "
        "regles directives anweisungen anweisung regeln vorgaben richtlinien "
        "instrucciones reglas normas indicaciones instrucoes regras istruzioni regole "
        "indicazioni setup"
    ),
    "earlier": _words(
        "previous prior earlier above original initial preceding former old precedentes "
        "precedente anterieures initiales vorherigen bisherigen fruheren ursprunglichen "
        "alten obigen anteriores previas iniciales anterior iniziali precedenti "
        "originali"
    ),
    "override": _words(
        "ignore ignoring disregard forget override overrides bypass void obsolete "
        "superseded supersedes replaced replaces cancelled canceled revoked suspended "
        "expired ignorez ignore oubliez oublie remplacees ignoriere ignorieren vergiss "
        "vergessen ersetzt ignora ignore olvida olvide sustituidas esqueca esquece "
        "substituidas dimentica dimentichi sostituite"
    ),
    "answer": _words(
        "answer answers reply replies response responses respond summary summaries "
        "summarise summarize summarising summarizing output reponse reponses resume "
        "reponds repondez antwort antworte antworten zusammenfassung respuesta responde "
        "resumen resume resposta responda resumo risposta rispondi riassunto"
    ),
    "secret": _words(
        "password passwords credentials credential api token tokens secret secrets key "
        "keys confidential hidden cookie passwort passworter zugangsdaten schlussel "
        "geheim contrasena credenciales clave senha credenciais chave segredo "
        "credenziali chiave segreto cache"
    ),
    "send": _words(
        "send forward email mail post upload append attach exfiltrate leak share paste "
        "envoyez envoie envoyer transmettez transmets ajoutez sende schicke schick "
        "senden leite weiterleiten hange envia envie enviar reenvia anade invia inoltra "
        "aggiungi"
    ),
    "conversation": _words(
        "conversation conversations chat chats history messages message session "
        "historique discussion verlauf gesprach gesprachs nachrichten chatverlauf "
        "historial conversacion mensajes conversa mensagens historico conversazione "
        "cronologia messaggi"
    ),
    "secrecy": _words(
        "secretly silently quietly covertly unnoticed discreetly discretement "
        "secretement heimlich unauffallig verrate secreto discretamente segredo "
        "nascosto"
    ),
    "tool": _words(
        "tool tools function functions browser shell command commands execute run "
        "call invoke webhook outil outils fonction commande werkzeug funktion befehl "
        "herramienta funcion comando ferramenta funcao strumento funzione"
    ),
}

#: Cues of two or three words (folded words joined by one space) and their class.
PHRASE_CUES: dict[str, str] = {
    "system prompt": "secret",
    "mot de passe": "secret",
    "language model": "machine",
    "modele de langage": "machine",
    "modelo de lenguaje": "machine",
    "modello linguistico": "machine",
    "without telling": "secrecy",
    "dont tell": "secrecy",
    "do not tell": "secrecy",
    "from now": "override",
    "a partir": "override",
    "ab jetzt": "override",
}

NAMES: tuple[str, ...] = tuple(CUES)

#: A window can flag only if it holds one of these classes (the learned layer's gate):
#: every class but "earlier", which ordinary technical prose is full of.
GATE_MASK: int = sum(1 << bit for bit, name in enumerate(NAMES) if name != "earlier")

#: Cue set 2 (ADR 0046), used only by a model trained with it: four more classes, so a
#: window can tell an instruction *to* the machine reading it from writing *about*
#: machines or an instruction to people. ``reader`` names the machine roundabout ("the
#: program condensing this", "software", "generated"); ``modal`` is the obligation an
#: instruction carries ("must", "soll", "deberá"); ``meta`` is the vocabulary of writing
#: about attacks and models (advisory, researchers, exercise, example); ``people`` is a
#: human addressee (staff, volunteers, the night shift). Their pairs with the first
#: twelve ("machine & meta", "modal & people") are what the linear model can weigh.
EXTRA_CUES: dict[str, frozenset[str]] = {
    "reader": _words(
        "program programs programme programmes software logiciel logiciels programm "
        "programms programa programas programma programmi generator generated generiert "
        "generierte generee generees generada generado gerada gerado generata generato "
        "automation automatisiert nonhuman"
    ),
    "modal": _words(
        "must should ought shall required expected asked needs doit doivent devra "
        "devrait prie soll sollte sollen muss mussen musst sollst debe deben debera "
        "deberia tiene tendra deve devem devera deveria tem tera dovra dovrebbe devono "
        "pregato tenuto"
    ),
    "meta": _words(
        "attack attacks attacker attackers injection jailbreak jailbreaks vulnerability "
        "vulnerabilities advisory cve researchers research study studies paper authors "
        "exercise tutorial example examples benchmark benchmarks incident bug ticket "
        "changelog transcript critics attaque attaques attaquant attaquants "
        "vulnerabilite chercheurs etude auteurs exercice exemple angriff angriffe "
        "angreifer sicherheitshinweis sicherheitslucke forscher studie autoren ubung "
        "beispiel ataque ataques atacante atacantes inyeccion vulnerabilidad "
        "investigadores estudio autores ejercicio ejemplo injecao estudo exercicio "
        "exemplo attacco attacchi attaccante attaccanti iniezione vulnerabilita "
        "ricercatori studio autori esercizio esempio"
    ),
    "people": _words(
        "employee employees staff volunteer volunteers students pupils pupil candidates "
        "invigilators shift colleagues guests visitors tenants newcomers stewards "
        "salarie salaries employes personnel benevoles eleves candidats surveillants "
        "visiteurs locataires mitarbeitende mitarbeiter beschaftigte schuler gaste "
        "besucher mieter aufsicht nachtschicht empleados empleado voluntarios alumnos "
        "alumno candidatos vigilantes turno visitantes inquilinos funcionarios "
        "colaboradores alunos dipendenti volontari studenti candidati sorveglianti "
        "visitatori inquilini"
    ),
}


@attrs.frozen
class CueSet:
    """The cue classes a model was trained with, and which of them open its gate."""

    cues: dict[str, frozenset[str]]
    phrases: dict[str, str]
    gate_mask: int

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.cues)


def _cue_set(cues: dict[str, frozenset[str]], closed: frozenset[str]) -> CueSet:
    names = tuple(cues)
    gate = sum(1 << bit for bit, name in enumerate(names) if name not in closed)
    return CueSet(cues, PHRASE_CUES, gate)


#: Set 1 is what the shipped model uses; set 2 adds ``EXTRA_CUES`` (``reader`` opens
#: the gate like ``machine``; ``modal``, ``meta`` and ``people`` do not).
CUE_SETS: dict[int, CueSet] = {
    1: _cue_set(CUES, frozenset({"earlier"})),
    2: _cue_set(CUES | EXTRA_CUES, frozenset({"earlier", "modal", "meta", "people"})),
}
