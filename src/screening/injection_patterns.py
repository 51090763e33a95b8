"""The injection screen's rules: one named family per kind of instruction-shaped text.

Each rule is a regex over one view of the folded text (``folding.py``):

* ``FOLDED``: lowercase, homoglyphs undone, spacing and punctuation intact. For
  phrases with word boundaries and for structure (tags, links, line starts).
* ``COMPACT``: without whitespace. For markup and JSON spaced out by an attacker
  (``< s y s t e m >``, ``{"tool" :``).
* ``SQUEEZED``: letters and digits only. For phrases broken up by punctuation or
  spelled out letter by letter (``Ignore. All. Previous.``, ``i.g.n.o.r.e``).

Gates keep clean text fast. ``words`` are groups of whole words (tokens of the folded
text); a rule runs only when every group has a token in the passage. ``marks`` are
punctuation sequences, at least one of which must appear. For folded-view rules the
words are the very alternatives the regex is built from, so the gate is exact. For
squeezed- and compact-view rules it assumes the words are separated as in ordinary
text; a passage spelled out letter by letter (four one-letter words in a row) is
gated on substrings of the squeezed view instead. Text that glues words together
("ignorepreviousinstructions") or splits them into chunks of two or more letters
("ig nore") gets past both: a known gap. ``test_gates`` checks that gated and ungated
screening agree on the evaluation set and on generated text.

What a family flags, and what it leaves alone on purpose, is said above its rules.
"""

from __future__ import annotations

import enum
import re

import attrs

from retrieval_mcp.screening.markers import IMITATION


class View(enum.Enum):
    FOLDED = "folded"
    COMPACT = "compact"
    SQUEEZED = "squeezed"


Words = frozenset[str]


@attrs.frozen
class Rule:
    """``pattern`` in ``view``, gated by ``words`` and ``marks``. A match does not count
    when the text just before it ends with one of ``not_after`` ("do not ignore"), or,
    with ``line_start``, when it does not begin a line or a sentence. (Checked in
    Python: a lookbehind at the start of a pattern doubles the regex engine's scan.)"""

    flag: str
    view: View
    pattern: re.Pattern[str]
    words: tuple[Words, ...] = ()
    marks: tuple[str, ...] = ()
    not_after: tuple[str, ...] = ()
    line_start: bool = False


AI_ADDRESS = "ai_address"
ROLE_TAG = "role_tag"
OVERRIDE = "override"
TOOL_CALL = "tool_call"
EXFIL_LINK = "exfil_link"
SECRET_REQUEST = "secret_request"
HIDDEN_TAG = "hidden_tag"
MARKER_FORGERY = "marker_forgery"
INVISIBLE_TEXT = "invisible_text"

FAMILIES: tuple[str, ...] = (
    AI_ADDRESS,
    ROLE_TAG,
    OVERRIDE,
    TOOL_CALL,
    EXFIL_LINK,
    SECRET_REQUEST,
    HIDDEN_TAG,
    MARKER_FORGERY,
    INVISIBLE_TEXT,
)

F, C, S = View.FOLDED, View.COMPACT, View.SQUEEZED


def _alt(*words: str) -> str:
    return "(?:" + "|".join(words) + ")"


def _w(*words: str) -> str:
    """Whole words, for the folded view: the gate of a rule built with it is exact."""
    return r"\b" + _alt(*words) + r"\b"


def _rule(
    flag: str,
    view: View,
    pattern: str,
    *words: tuple[str, ...],
    marks: tuple[str, ...] = (),
    not_after: tuple[str, ...] = (),
    line_start: bool = False,
    flags: int = 0,
) -> Rule:
    compiled = re.compile(pattern, flags)
    groups = tuple(frozenset(g) for g in words)
    return Rule(flag, view, compiled, groups, marks, not_after, line_start)


# -- Vocabulary: word forms, used both in the regexes and as their gates. ------------
_YOU = ("you", "your", "yours", "yourself")
_USER = ("user", "users", "human", "humans")
_AI_NAMES = (
    "ai", "llm", "llms", "chatbot", "chatbots", "assistant", "assistants", "claude",
    "chatgpt", "gpt", "gemini", "copilot", "bot", "bots",
)  # fmt: skip
_AI_GATE = (*_AI_NAMES, "language", "aiassistant")
_AI_F = (
    r"(?:ai|llms?|(?:large )?language models?|chatbots?|ai (?:assistant|agent|model|system)s?|"
    r"assistants?|claude|chatgpt|gpt|gemini|copilot|bots?)\b"
)
_AI_S = _alt(
    "chatgpt", "claude", "gemini", "copilot", "llm", "languagemodel", "aiassistant", "chatbot"
)
_AI_S_GATE = ("chatgpt", "claude", "gemini", "copilot", "llm", "llms", "language",
              "assistant", "aiassistant", "chatbot", "chatbots")  # fmt: skip
_CANCEL = (
    "ignore", "ignores", "ignored", "ignoring", "disregard", "disregards", "disregarded",
    "disregarding", "forget", "forgets", "forgetting", "forgot", "forgotten", "bypass",
    "bypasses", "bypassed", "bypassing", "overlook", "overlooks", "overlooked",
    "overlooking", "disobey", "disobeys", "disobeyed", "disobeying",
)  # fmt: skip
# "override" is not a cancelling verb on its own: "this policy overrides the previous
# policy" is ordinary prose. It counts with "all" or "your".
_OVERRIDE = (
    "override", "overrides", "overriding", "overridden", "overrode", "circumvent",
    "circumvents", "circumvented", "circumventing",
)  # fmt: skip
_CANCEL_S = "(?:ignor|disregard|forget|forgot|bypass|overlook|disobey)"
_OVERRIDE_S = "(?:overrid|overrode|circumvent)"
_ORDERS = (
    "instruction", "instructions", "prompt", "prompts", "directive", "directives",
    "guideline", "guidelines", "guardrail", "guardrails", "safeguard", "safeguards",
)  # fmt: skip
_ORDERS_WIDE = (
    *_ORDERS, "rule", "rules", "policy", "policies", "constraint", "constraints",
    "restriction", "restrictions", "programming", "training", "context",
)  # fmt: skip
_ORDERS_S = "(?:instruction|prompt|directive|guideline|guardrail|safeguard)"
_PREV = (
    "previous", "prior", "above", "earlier", "preceding", "foregoing", "original",
    "initial", "former", "system", "developer", "safety", "operator",
)  # fmt: skip
_PREV_S = _alt(*_PREV)
_PROMPTS_S = _alt(
    "systemprompt", "systemmessage", "systeminstruction", "initialprompt", "hiddenprompt",
    "originalprompt", "initialinstruction", "hiddeninstruction", "secretinstruction",
    "developerprompt", "developermessage", "preprompt", "metaprompt",
)  # fmt: skip
_PROMPTS_GATE = ("prompt", "prompts", "message", "instruction", "instructions",
                 "systemprompt", "preprompt", "metaprompt")  # fmt: skip
_SECRETS_S = (
    _alt(
        "apikey", "secretkey", "accesskey", "accesstoken", "bearertoken", "authtoken",
        "authenticationtoken", "sessiontoken", "refreshtoken", "oauthtoken", "password",
        "passphrase", "credential", "privatekey", "sshkey", "signingkey",
        "environmentvariable", "envvar", "envfile", "dotenv", "sessioncookie", "secrets",
    )
    # "send the password reset email", "show the password field": not a request.
    + "(?!reset|field|polic|manager|hash|strength|length|rule|requirement|protect|change|"
    "expir|input|box|form|prompt|rotation)"
)  # fmt: skip
_SECRETS_GATE = (
    "key", "keys", "apikey", "apikeys", "token", "tokens", "password", "passwords",
    "passphrase", "credential", "credentials", "secret", "secrets", "env", "envvar",
    "environment", "dotenv", "cookie", "cookies", "secretkey", "privatekey", "sshkey",
    "accesstoken", "envfile",
)  # fmt: skip
_SECRET_F = (
    r"(?:api keys?|secret keys?|access keys?|access tokens?|bearer tokens?|auth tokens?|"
    r"passwords?|credentials|private keys?|ssh keys?|session cookies?|secrets|"
    r"system prompt|env file|\.env\b|environment variables?|"
    r"[a-z0-9]+(?:_[a-z0-9]+)*_(?:api_key|key|token|secret|password|pwd|credentials?)\b)"
)
_SECRET_F_GATE = (
    "key", "keys", "token", "tokens", "password", "passwords", "pwd", "credentials",
    "credential", "cookie", "cookies", "secrets", "secret", "prompt", "env", "environment",
)  # fmt: skip
_SECRET_FILES_S = _alt(
    "sshidrsa(?!pub)", "sshided25519(?!pub)", "etcshadow", "etcpasswd", "awscredentials",
    "gitcredentials", "netrc", "kubeconfig", "cursormcpjson", "claudemcpjson",
)  # fmt: skip
_SECRET_FILES_GATE = ("ssh", "rsa", "ed25519", "shadow", "passwd", "credentials", "netrc",
                      "kubeconfig", "kube", "cursor", "claude", "cursormcpjson",
                      "claudemcpjson")  # fmt: skip
_ADJ_S = _alt(
    "full", "entire", "complete", "exact", "whole", "hidden", "secret", "original", "initial",
    "current", "verbatim", "internal", "confidential", "private", "first", "underlying",
    "actual", "real", "raw", "stored", "saved", "configured",
)  # fmt: skip
_READING = (
    "reading", "processing", "summarising", "summarizing", "parsing", "analysing",
    "analyzing", "browsing", "crawling", "indexing", "ingesting", "viewing", "seeing",
    "scanning",
)  # fmt: skip
_EXFIL_VERBS = (
    "append", "add", "attach", "include", "insert", "encode", "put", "embed", "concatenate",
    "send", "forward", "post", "upload", "submit", "transmit", "exfiltrate", "leak", "copy",
)  # fmt: skip
_STRONG_VERBS = ("reveal", "leak", "disclose", "dump", "divulge", "exfiltrate", "expose",
                 "print", "printout", "spell", "spellout", "recite")  # fmt: skip
_DATA_S = _alt(
    "conversation", "chathistory", "chatlog", "chat", "messagehistory", "previousmessage",
    "priormessage", "usersmessage", "usermessage", "usersdata", "userdata", "userinfo",
    "usersemail", "useremail", "emailaddress", "memory", "memories", "history",
    "credentials", "secrets", "apikey", "password", "systemprompt", "transcript",
    "sessiondata", "cookie",
)  # fmt: skip
_DATA_GATE = (
    "conversation", "conversations", "chat", "chats", "chathistory", "history", "histories",
    "message", "messages", "data", "info", "email", "emails", "address", "memory",
    "memories", "credentials", "secrets", "api", "apikey", "password", "passwords", "prompt",
    "systemprompt", "transcript", "transcripts", "session", "cookie", "cookies",
)  # fmt: skip
_URL_GATE = ("http", "https", "www", "url", "urls", "link", "links")
_JAILBROKEN = ("unrestricted", "unfiltered", "uncensored", "jailbroken")
_NEG_S = ("not", "never", "dont")  # squeezed: "do not ignore", "never print"
_NEG_F = ("not ", "never ", "n't ", "n t ")
_NOT_F = r"(?<!not )(?<!never )(?<!n't )(?<!n t )"  # inside a pattern, not at its start
_STEER = (
    "you", "always", "never", "say", "state", "include", "add", "mention", "tell", "write",
    "recommend", "describe", "claim", "report", "conclude", "respond", "reply", "answer",
    "call", "append", "praise", "insist", "refer",
)  # fmt: skip
_SUMMARISE = ("summarise", "summarize", "summarising", "summarizing", "summarised",
              "summarized", "summarises", "summarizes")  # fmt: skip

# The table is laid out by hand: one rule per block, regex first, then its gates.
# fmt: off
RULES: tuple[Rule, ...] = (
    # -- ai_address: text that speaks to the model, or tells it who it now is. Needs an
    # AI noun or a construction only a model is addressed with; "you are now logged
    # in", "as an AI researcher, I" and "from now on you will be billed" are left alone.
    _rule(AI_ADDRESS, S, "youarenow" + _alt(
        "dan", "chatbot", "llm", "character", "persona", *_JAILBROKEN, "evil", "hacker",
        "nolonger(?:an?)?(?:ai|bound|restricted|limited|claude|chatgpt|assistant)",
        "an?(?:ai|chatbot|llm|languagemodel|evil)", "an?" + _alt(*_JAILBROKEN),
        "in(?:developer|dan|god|jailbreak|unrestricted)mode",
    ), ("you",), ("now",)),
    _rule(AI_ADDRESS, S, "(?:fromnowon|henceforth|fromthispointon|fromhereon)"
          "(?:you(?:will|must|shall|should|are)|your)(?:only|always|never|now)?" + _alt(
              "respond", "reply", "answer", "act", "behave", "pretend", "obey", "ignore",
              "refuse", "speak", "talk", "roleplay", "persona"),
          ("you", "your"), ("now", "henceforth", "point", "here")),
    _rule(AI_ADDRESS, S, "(?:act|behave|roleplay|pose)(?:as|like)(?:an?|the|my)?"
          + _alt(*_JAILBROKEN), _JAILBROKEN, not_after=("re",)),
    _rule(AI_ADDRESS, S, "pretend(?:tobe|thatyou|youare|youre|youhave)", ("pretend",)),
    _rule(AI_ADDRESS, S, "(?:enable|enter|activate|switchto|turnon|unlock)(?:the)?"
          "(?:dan|god|sudo)mode", ("mode",), ("dan", "god", "sudo")),
    _rule(AI_ADDRESS, S, "your(?:real|true|actual|hidden|secret)" + _alt(
        "task", "goal", "objective", "purpose", "mission", "directive", "instruction",
        "orders"), ("your",), ("real", "true", "actual", "hidden", "secret")),
    _rule(AI_ADDRESS, S, "yournew" + _alt(
        "persona", "identity", "instructions", "directive", "orders", "programming",
        "personality"), ("your",), ("new",)),
    _rule(AI_ADDRESS, S, "(?:iamyour|imyour|thisisyour)" + _alt(
        "developer", "creator", "admin", "administrator", "owner", "operator", "master",
        "programmer", "maker", "trainer", "systemadministrator"),
        ("your",), ("developer", "creator", "admin", "administrator", "owner", "operator",
                    "master", "programmer", "maker", "trainer")),
    _rule(AI_ADDRESS, S, "(?:donot|dont|never)(?:tell|inform|mention|reveal|alert|notify|warn|"
          "disclose|let)(?:this|it|anything|that|these)?(?:to)?(?:the|your)?(?:user|human)"
          "(?!s?(?:guide|manual|name|interface|account|id))",
          _USER, ("not", "dont", "don", "never")),
    _rule(AI_ADDRESS, S, "without(?:telling|informing|alerting|letting)(?:this|it|anything|"
          "that)?(?:to)?(?:the|your)?(?:user|human)", _USER, ("without",)),
    _rule(AI_ADDRESS, S, "(?:theuser|thehuman)(?:must|should|will|shall)(?:not|never)"
          "(?:know|see|notice|find|learn|betold)", _USER, ("not", "never")),
    _rule(AI_ADDRESS, S, "keep(?:this|it)(?:secret|hidden|confidential|private)from(?:the)?"
          "(?:user|human)", _USER, ("keep",)),
    _rule(AI_ADDRESS, S, "(?:dear|hello|noteto|messagefor|messageto|anotefor)(?:the|all|any|"
          "my|our)?" + _AI_S, _AI_S_GATE, ("dear", "hello", "note", "message")),
    _rule(AI_ADDRESS, S, "ifyou(?:are|re)an?(?:ai)?" + _AI_S + "|ifyou(?:are|re)anai(?:reading|"
          "processing|summari|parsing|you|please|then|ignore|model|agent|system)",
          ("you",), (*_AI_S_GATE, "ai")),
    _rule(AI_ADDRESS, S, "asan?" + _AI_S + "[a-z]{0,40}?you(?:must|should|will|shall)",
          _AI_S_GATE, ("you",)),
    _rule(AI_ADDRESS, F, _w("dear", "hello", "hi", "hey", "note to", "message to",
                            "message for", "a note for", "instructions for", "psst")
          + rf"(?:\W+(?:the|all|any|my|our))?\W+{_AI_F}", _AI_GATE,
          ("dear", "hello", "hi", "hey", "note", "message", "instructions", "psst")),
    _rule(AI_ADDRESS, F, rf"\battention\W+(?:(?:all|any)\W+)?{_AI_F}\s*[:,!]",
          _AI_GATE, ("attention",)),
    _rule(AI_ADDRESS, F, r"\bif you(?: are|'re| re)\W+(?:an?|the)\W+(?:ai|llm|(?:large )?"
          r"language model|chatbot|ai (?:assistant|agent|model|system)|automated (?:agent|"
          r"assistant|system|tool)|assistant)\b",
          ("if",), ("you",), ("ai", "llm", "language", "chatbot", "assistant", "automated")),
    _rule(AI_ADDRESS, F, r"\b(?:ai|llm|assistant|agent|chatbot|language model|bot)s?"
          r"\W+" + _w(*_READING) + r"\W+this\b",
          (*_AI_GATE, "agent", "agents", "ais"), _READING, ("this",),
          not_after=("-",)),
    _rule(AI_ADDRESS, F, r"\bas an?\W+(?:ai|llm|(?:large )?language model|ai (?:assistant|model|"
          r"agent|system)|chatbot)\b[^.!?\n]{0,60}\byou\b",
          ("as",), ("you",), ("ai", "llm", "language", "chatbot")),
    _rule(AI_ADDRESS, F, _w("ai", "llm", "assistant", "claude", "chatgpt", "gpt", "gemini",
                            "copilot", "chatbot")
          + r"\s*(?:[,:\u2013\u2014]|--?)\s*(?:please\W+|quick\W+|now\W+)?" + _w(
              "you", "ignore", "disregard", "forget", "now", "stop", "always", "never",
              "do not", "don't", "reply", "respond", "answer", "say", "tell", "send", "email",
              "forward", "print", "output", "include", "append", "call", "remember",
              "summarise", "summarize", "recommend", "write", "remove", "delete", "approve",
              "switch", "list", "mark", "rate", "give", "show", "open", "run", "execute",
              "fetch", "visit", "click", "post", "upload", "read", "share", "reveal",
              "new task", "new instructions", "from now on"),
          ("ai", "llm", "assistant", "claude", "chatgpt", "gpt", "gemini", "copilot",
           "chatbot"), marks=(",", ":", "-", "\u2013", "\u2014")),
    _rule(AI_ADDRESS, F, r"\byou(?:'re| re| are)\W+(?:now\W+)?no longer\W+(?:bound|restricted|"
          r"limited|constrained|required|obliged)\W+(?:by|to)\W+(?:follow\W+)?(?:your|the|"
          r"any|these|those)?\W*(?:\w+\W+)?(?:rules|instructions|guidelines|restrictions|"
          r"policies|programming|training|filters|guardrails)\b",
          ("you",), ("longer",)),
    _rule(AI_ADDRESS, F, r"\b(?:agent|model|bot),\s*(?:please\W+)?you\b",
          ("agent", "model", "bot"), ("you",), marks=(",",)),
    _rule(AI_ADDRESS, F, r"\b(?:when|whenever|while|if)\W+(?:you\W+)?(?:are\W+)?"
          + _w(*_SUMMARISE) + r"\W+(?:this|these|the)\W+(?:\w+\W+){0,2}?(?:page|document|"
          r"file|email|text|passage|article|content|message|section|site|website|record|"
          r"product|company|vendor)s?\b\W+(?:you (?:must|should|will|shall|need to|have to)"
          r"|" + _w(*_STEER[1:]) + ")", _SUMMARISE),
    _rule(AI_ADDRESS, F, r"\byou\W+(?:will|must|shall|should)\W+(?:now\W+)?(?:act|behave|"
          r"respond|pose|roleplay)\W+(?:as|like)\W+(?:an?\W+|the\W+)?(?:unrestricted|"
          r"unfiltered|uncensored|jailbroken|evil|rogue|different|ai|assistant|chatbot|"
          r"hacker)\b", ("you",), ("act", "behave", "respond", "pose", "roleplay")),
    _rule(AI_ADDRESS, F, r"\byou (?:must|will|shall) now\W+(?:obey|follow|comply|ignore|only|"
          r"act|behave|respond|answer|reply)\b", ("you",), ("now",)),
    # -- role_tag: chat-template and role markup, fake conversation turns. "System:
    # Ubuntu 22.04" and an ini file's "[system]" section are left alone.
    # "_?": spelled-out text loses the underscores between letters.
    _rule(ROLE_TAG, C, (r"<\|" + _alt(
        "im_start", "im_end", "im_sep", "endoftext", "eot_id", "eom_id", "start_header_id",
        "end_header_id", "begin_of_text", "end_of_text", "system", "user", "assistant", "end",
        "python_tag", "tool", "context", "fim_", "channel", "message", "start", "return",
    ) + r"|</?(?:system|assistant|human|sys|system_prompt|system_message|developer|"
        r"im_start|start_of_turn|end_of_turn)>|<</?sys>>").replace("_", "_?"),
        marks=("<",)),
    _rule(ROLE_TAG, C, r"\[/?(?:inst|sys)\]|\[(?:system|sys|admin|developer|operator)"
          r"(?:message|note|prompt|override|instruction|update|alert|directive)[\]:]",
          marks=("[",)),
    _rule(ROLE_TAG, F, r"\[\s*(?:system|sys|admin|developer|operator)(?:\s+(?:message|note|"
          r"prompt|override|instructions?|update|alert|directive))?\s*(?:\]|:)[ \t]*(?=\S)",
          ("system", "sys", "admin", "developer", "operator"), marks=("[",)),
    _rule(ROLE_TAG, C, r"#{2,}(?:system|instructions?|assistant|human)(?:prompt|message)?:",
          marks=("##",)),
    _rule(ROLE_TAG, F, r"(?:assistant|human|chatgpt|claude)\s*:",
          ("assistant", "human", "chatgpt", "claude"), marks=(":",), line_start=True),
    _rule(ROLE_TAG, F, r"(?:system|developer|admin|administrator|operator)"
          r"(?:\s+(?:message|prompt|note|override|instructions?|update|notice|directive))?"
          r"\s*:(?=[^\n]{0,160}\b(?:you|your|ignore|disregard|forget|must|always|never|"
          r"do not|don't|new instructions?|override|assistant|ai|model)\b)",
          ("system", "developer", "admin", "administrator", "operator"),
          marks=(":",), line_start=True),
    _rule(ROLE_TAG, F, r"(?:^|[\n=#*~_-]{2,}|[.!?]\s)\s*(?:new|updated|revised|real|actual|"
          r"true|override|secret|hidden)\s+system\s+(?:prompt|message|instructions?)\s*"
          r"(?::|[=#*~_-]{2,}|\n)", ("system",), ("prompt", "message", "instruction",
                                                 "instructions")),
    # -- override: attempts to cancel the orders a model already has. Needs a cancelling
    # verb and "previous/above/system/your/all" orders; "users ignore the instructions
    # on the box" and "this policy overrides the previous policy" are left alone.
    _rule(OVERRIDE, S, _CANCEL_S + r"\w{0,3}?(?:all|any|every|each)?(?:of)?"
          r"(?:the|your|my|these|those|our|its|this)?" + _PREV_S + "+" + _alt(
              _ORDERS_S, "context", "constraint", "restriction", "programming", "training",
              "direction"),
          _CANCEL, _PREV, (*_ORDERS_WIDE, "direction", "directions"),
          not_after=_NEG_S),
    _rule(OVERRIDE, S, _alt(_CANCEL_S, _OVERRIDE_S) + r"\w{0,3}?(?:all|any|every)"
          r"(?:of)?(?:the|your|my|these|those)?" + _alt(
              _ORDERS_S, "rule", "constraint", "restriction", "polic"),
          (*_CANCEL, *_OVERRIDE), ("all", "any", "every"), _ORDERS_WIDE,
          not_after=_NEG_S),
    _rule(OVERRIDE, S, _alt(_CANCEL_S, _OVERRIDE_S) + r"\w{0,3}?your(?:own)?" + _alt(
        _ORDERS_S, "rule", "programming", "training", "constraint", "polic", "safety",
        "restriction", "developer", "creator", "filter", "system"),
        (*_CANCEL, *_OVERRIDE), ("your",), not_after=_NEG_S),
    _rule(OVERRIDE, S, "(?:forget|disregard|ignore)(?:about)?(?:everything|allthat|whatever|"
          "anything|allofthat|itall)" + _alt(
              "you", "above", "before", "previously", "earlier", "prior", "said", "written",
              "stated", "sofar", "uptonow", "uptothis"),
          ("forget", "disregard", "ignore"),
          ("everything", "all", "whatever", "anything", "it")),
    _rule(OVERRIDE, S, "(?:previous|prior|above|earlier|original|initial|former|your)"
          r"(?:system)?(?:instruction|prompt|directive)s?(?:are|is|were|was|havebeen|hasbeen|"
          r"shallbe|shouldbe|mustbe|willbe)?(?:now|hereby|henceforth|all)?" + _alt(
              "void", "null", "cancel", "revoked", "invalid", "overridden", "overwritten",
              "nolonger", "rescinded", "amistake", "fake", "atest", "irrelevant",
              "tobeignored"),
          ("previous", "prior", "above", "earlier", "original", "initial", "former", "your"),
          ("instruction", "instructions", "prompt", "prompts", "directive",
           "directives")),
    _rule(OVERRIDE, S, "(?:stop|quit|cease)(?:following|obeying|adheringto|applying|"
          "listeningto)(?:all|any)?(?:the|your|of)?" + _PREV_S + "*" + _ORDERS_S,
          ("stop", "quit", "cease"), _ORDERS),
    _rule(OVERRIDE, S, "(?:donot|dont|nolonger)(?:follow|obey|adhereto|listento)(?:the|your|"
          "any|all)?(?:previous|prior|above|earlier|original|initial|system|users?|"
          "developers?|operators?)" + _ORDERS_S,
          ("not", "dont", "don", "longer"), ("follow", "obey", "adhere", "listen"),
          _ORDERS),
    _rule(OVERRIDE, C, "(?:new|real|actual|true|secret|hidden|override|priority)(?:system)?"
          "(?:instructions?|directives?|systemprompt):", ("instruction", "instructions",
          "directive", "directives", "systemprompt", "prompt"), marks=(":",)),
    _rule(OVERRIDE, F, _w(*_CANCEL) + r"(?:\W+\w+){0,6}?\W+"
          + _w(*_PREV) + r"\W+(?:\w+\W+)?" + _w(*_ORDERS, "rules", "directions",
                                                "constraints"),
          _CANCEL, _PREV, (*_ORDERS, "rules", "directions", "constraints"),
          not_after=_NEG_F),
    _rule(OVERRIDE, F, _w(*_PREV) + r"\W+(?:\w+\W+)?" + _w(*_ORDERS, "rules")
          + r"(?:\W+\w+){0,8}?\W+" + _NOT_F + _w("ignore", "disregard", "forget", "bypass",
                                                 "overlook")
          + r"\W+(?:them|it|those|these|all)\b",
          _PREV, (*_ORDERS, "rules"),
          ("ignore", "disregard", "forget", "bypass", "overlook")),
    _rule(OVERRIDE, F, _w(*_CANCEL, *_OVERRIDE) + r"\W+(?:the|all|any|your)\W+"
          + _w(*_ORDERS, "rules") + r"\W+(?:(?:that\W+)?you|that)\W+(?:were|have been|"
          r"had been|got|received)\W+(?:given|told|shown|sent|provided)\b",
          (*_CANCEL, *_OVERRIDE), (*_ORDERS, "rules")),
    _rule(OVERRIDE, F, _w(*_CANCEL) + r"(?:\W+\w+){0,5}?\W+(?:you\W+"
          r"(?:were|have been|ve been|had been|got)\W+(?:told|given|instructed|asked)|"
          r"(?:you|that)\W+(?:received|got|were given|read)\W+(?:\w+\W+)?(?:earlier|before|"
          r"previously|prior|first|so far|until now))\b",
          _CANCEL, ("you", "that"), not_after=_NEG_F),
    _rule(OVERRIDE, F, r"\byour\W+(?:\w+\W+)?(?:instructions|rules|guidelines|directives|"
          r"restrictions|guardrails|safeguards|policies|prompt|programming)\W+(?:are|is|"
          r"have been|has been)\W+(?:now\W+)?(?:suspended|lifted|revoked|void|cancell?ed|"
          r"canceled|disabled|removed|paused|overridden|no longer (?:valid|active|apply|"
          r"applicable|in effect))\b",
          ("your",), ("instructions", "rules", "guidelines", "directives", "restrictions",
                      "guardrails", "safeguards", "policies", "prompt",
                      "programming")),
    # -- tool_call: text shaped like a tool invocation, in JSON or in a model's own tool
    # syntax. JSON without tool-call keys, and prose about functions, are left alone.
    _rule(TOOL_CALL, C, r'"(?:tool|tool_?name|function|function_?call|tool_?calls?|tool_?use|'
          r'tool_?code|recipient_?name|tool_?input)":|"arguments":[\[{"]', marks=('"',)),
    _rule(TOOL_CALL, C, r"<(?:tool_?calls?|function_?calls?|tool_?use|tool_?code|invoke|"
          r"use_mcp_tool|function=|tool=)", marks=("<",)),
    _rule(TOOL_CALL, C, r"\[(?:tool_?calls?|function_?calls?)\]", marks=("[",)),
    _rule(TOOL_CALL, F, r"functions\.[a-z_]\w*\(", ("functions",), marks=("(",)),
    _rule(TOOL_CALL, F, r"default_api\.[a-z_]\w*\(", ("default",), marks=("(",)),
    _rule(TOOL_CALL, C, r"mcp__[a-z0-9_-]+__[a-z0-9_]+", marks=("__",)),
    _rule(TOOL_CALL, F, _w("call", "calls", "calling", "invoke", "invokes", "invoking", "run",
                           "runs", "running", "execute", "executes", "executing", "use",
                           "uses", "using", "trigger", "triggers", "fire")
          + r"\W+(?:the\W+)?[`'\"]?[a-z][a-z0-9]*_[a-z0-9_]+[`'\"]?\W+tool\b",
          ("tool",), marks=("_",)),
    _rule(TOOL_CALL, F, _w("call", "invoke", "run", "execute", "use", "trigger")
          + r"\W+(?:the\W+)?[`'\"]?[a-z][a-z0-9.]*_[\w.]*[`'\"]?\W+(?:tool|function)\W+"
          r"with\W+(?:the\W+)?(?:arguments?|parameters?|params|input|payload)\b",
          ("tool", "function"), ("with",), marks=("_",)),
    # -- exfil_link: a link or image whose URL carries a query string, which a renderer
    # or a click sends to its host, and instructions to put data into a URL. Links
    # without a query string and bare URLs in prose are left alone.
    _rule(EXFIL_LINK, C, r"\]\(<?(?:[a-z][a-z0-9+.-]*:)?//[^)]*\?", marks=("](",)),
    # A reference definition ("[x]: url") is only a link at the start of a line, but a
    # model reads one anywhere, so a sentence start counts too.
    _rule(EXFIL_LINK, F, r"\[[^\]\n]+\]:[ \t]*<?(?:https?:)?//\S*\?\S", marks=("]:",),
          line_start=True),
    _rule(EXFIL_LINK, C, r"<(?:img|image|iframe|script|link|source|video|audio|embed|object|"
          r"a|form)[^>]*?(?:src|href|data|srcset|poster|action)=[\"']?(?:https?:)?//"
          r"[^\"'>]*\?", marks=("<",)),
    _rule(EXFIL_LINK, S, "(?:append|add|attach|include|insert|encode|put|embed|"
          "concatenate|send|forward|post|upload|submit|transmit|exfiltrate|leak|copy)"
          "(?:all|the|this|your|our|my|users?)*(?:entire|full|whole|previous|prior|current|"
          r"last)*" + _DATA_S + r"\w{0,60}?(?:https?|www|url|link)",
          _URL_GATE, _DATA_GATE, _EXFIL_VERBS, not_after=_NEG_S),
    _rule(EXFIL_LINK, F, _w("append", "appends", "appending", "add", "adds", "adding", "attach",
                            "include", "insert", "encode", "put", "concatenate")
          + r"\W+(?:it|them|this|that|everything|all of it)\W+(?:to|into|in|onto)\W+"
          r"(?:the\W+)?(?:(?:url|link|query|image)\W+)?(?:https?://|www\.)\S*\?",
          ("http", "https", "www"), ("append", "appends", "appending", "add", "adds", "adding",
                                     "attach", "include", "insert", "encode", "put",
                                     "concatenate")),
    # -- secret_request: asks to reveal the prompt, credentials or secret files. "Never
    # print your API key", "list the API keys of a project" and "send the password
    # reset email" are left alone.
    _rule(SECRET_REQUEST, S, "(?:reveal|print|output|repeat|show|display|tell|give|"
          "leak|disclose|dump|divulge|recite|spellout|writeout|echo|share|copy|paste|expose|"
          "list|provide|send|email|post)(?:me|us|theuser|tothe(?:user|reader))?(?:back)?"
          "(?:all|any|every)?(?:of)?(?:the)?(?:text|contents?|wording|words)?(?:of)?"
          "(?:your|the|its|this)?" + _ADJ_S + "*" + _PROMPTS_S, _PROMPTS_GATE,
          not_after=_NEG_S),
    _rule(SECRET_REQUEST, S, "(?:reveal|print|output|repeat|show|display|tellme|"
          "tellus|leak|disclose|dump|divulge|recite|spellout|writeout|expose|copy)"
          "(?:me|us|theuser)?(?:back)?(?:all|any|every)?(?:of)?(?:the)?(?:text|contents?|"
          "wording|words)?(?:of)?your" + _ADJ_S + "*(?:instructions|prompt|rules|"
          "guidelines|directives)", ("your",),
          ("instructions", "prompt", "prompts", "rules", "guidelines", "directives"),
          not_after=_NEG_S),
    _rule(SECRET_REQUEST, S, "(?:reveal|leak|disclose|dump|divulge|exfiltrate|expose|"
          "printout|spellout|recite)(?:me|us|theuser|tome|tous)?(?:all|any|every)?(?:of)?"
          "(?:the|your|its|my|their)?(?:contents?|values?|text)?(?:of)?(?:the|your|its|all)?"
          + _ADJ_S + "*" + _SECRETS_S, _SECRETS_GATE, _STRONG_VERBS,
          not_after=_NEG_S),
    _rule(SECRET_REQUEST, S, "(?:print|output|echo|writeout|post|upload)(?:me|us)?"
          "(?:all|any|every)?(?:of)?(?:your|(?:the)?(?:contents?|values?)of(?:the|your|all)?|"
          "all|any)" + _ADJ_S + "*" + _SECRETS_S, _SECRETS_GATE,
          ("print", "output", "echo", "write", "writeout", "post", "upload"),
          not_after=_NEG_S),
    _rule(SECRET_REQUEST, S, "(?:tell|give|send|email|forward|transmit|show|display|"
          "provide|share|list)(?:me|us|theuser|tome|tous)(?:all|any|every)?(?:of)?"
          "(?:the|your|its|all)?" + _ADJ_S + "*" + _SECRETS_S, _SECRETS_GATE,
          ("me", "us", "user", "tome", "tous"), not_after=_NEG_S),
    _rule(SECRET_REQUEST, S, "(?:apikey|secretkey|accesstoken|bearertoken|password|credential|"
          r"privatekey|secrets)\w{0,40}?(?:inyourcontext|yourcontextwindow|inyourmemory|"
          "inthisconversation|inyoursystemprompt|youhaveaccessto|youareconfigured|"
          "youwereconfigured|youweregiven)", _SECRETS_GATE,
          ("your", "you", "this")),
    _rule(SECRET_REQUEST, S, "(?:read|cat|print|open|send|upload|dump|output|leak|exfiltrate|"
          "include|copy|paste|show|display|email|post|load)(?:me|us)?(?:the)?(?:contents?|"
          "file)?(?:of)?(?:the|your|my)?(?:home)?" + _SECRET_FILES_S,
          _SECRET_FILES_GATE),
    _rule(SECRET_REQUEST, S, "(?:repeat|print|output|copy|recite|reproduce|dump|echo)"
          "(?:back|out)?(?:verbatim)?(?:everything|all(?:of)?(?:the)?(?:text|content|words)|"
          "the(?:text|content|words))(?:above|before|prior|priorto|preceding|fromthebeginning|"
          "fromthestart|sofar)",
          ("repeat", "print", "output", "copy", "recite", "reproduce", "dump", "echo"),
          ("everything", "text", "content", "words")),
    _rule(SECRET_REQUEST, F, _w("email", "emails", "emailing", "send", "sends", "sending",
                                "forward", "post", "upload", "transmit", "mail")
          + r"\W+(?:(?:the|your|all|any|our|my)\W+)?(?:\w+\W+){0,2}?(?:api keys?|secret keys?|"
          r"access tokens?|bearer tokens?|auth tokens?|passwords?|credentials|private keys?|"
          r"ssh keys?|session cookies?|secrets|system prompt)\W+to\W+(?:https?://|www\.|"
          r"[\w.+-]+@[\w-]+\.)",
          ("key", "keys", "token", "tokens", "password", "passwords", "credentials",
           "cookie", "cookies", "secrets", "prompt"), ("to",), marks=("@", "//")),
    _rule(SECRET_REQUEST, F, _w("print", "output", "echo", "reveal", "dump", "give", "tell",
                                "send", "email", "share", "paste")
          + r"\W+(?:(?:me|us)\W+)?(?:(?:the|your|its)\W+)?(?:(?:values?|contents?)\W+of\W+"
          r"(?:the\W+|your\W+|its\W+|all\W+)?)?(?:\w+\W+){0,2}?" + _SECRET_F,
          ("print", "output", "echo", "reveal", "dump", "give", "tell", "send", "email",
           "share", "paste"), _SECRET_F_GATE,
          not_after=_NEG_F),
    _rule(SECRET_REQUEST, F, _SECRET_F + r"\W+(?:\w+\W+){0,4}?in\W+(?:every|each|your|the|all|"
          r"any)\W+(?:answer|response|reply|output|summary|message)s?\b",
          _SECRET_F_GATE, ("answer", "answers", "response", "responses", "reply", "replies",
                           "output", "summary", "message", "messages")),
    _rule(SECRET_REQUEST, F, r"\b(?:before|above|preceding|prior to)\W+this\W+(?:passage|"
          r"message|document|text|prompt|conversation|point|line)\b[^.!?\n]{0,80}?"
          + _w("print", "repeat", "output", "reproduce", "recite", "echo", "copy", "write",
               "type", "show", "reveal", "tell")
          + r"[^.!?\n]{0,40}?\b(?:word for word|verbatim|character for character)\b",
          ("before", "above", "preceding", "prior"), ("verbatim", "word", "character")),
    _rule(SECRET_REQUEST, F, r"\bwhat(?:'s|\s+is|\s+are|\s+were)\s+your\s+(?:\w+\s+){0,2}?"
          r"(?:system\s+prompt|system\s+message|initial\s+prompt|hidden\s+prompt|"
          r"instructions|rules|api\s+keys?|secret\s+keys?|access\s+tokens?|private\s+keys?|"
          r"password)\b", ("what",), ("your",)),
    # -- hidden_tag: markup whose purpose is to carry words a human reader will not see,
    # or to shout priority at a model: <IMPORTANT>, <secret>, invisible styling, HTML
    # comments that talk to an AI. GitHub's "> [!IMPORTANT]" is left alone.
    _rule(HIDDEN_TAG, C, r"</?(?:important|secret|hidden|instructions?|admin|critical|urgent|"
          r"system_?notes?|system_?messages?|ai_?notes?|ai_?instructions?|note_?to_?(?:ai|"
          r"assistant|llm|model)|override|priority|mandatory|confidential|do_?not_?show|"
          r"invisible|private_?instructions?)>", marks=("<",)),
    _rule(HIDDEN_TAG, F, r"<!--(?:(?!-->).){0,500}?\b(?:ai|a\.i\.|llms?|assistants?|(?:large )?"
          r"language models?|chatbots?|gpt|claude|ignore|disregard|instructions?|"
          r"system prompt|you must|you should|do not mention)\b", marks=("<!--",),
          flags=re.DOTALL),
    _rule(HIDDEN_TAG, C, r"\[/?(?:hidden|secret|ai_?notes?|ai_?instructions?|"
          r"hidden_?instructions?)\](?!\()", marks=("[",)),
    _rule(HIDDEN_TAG, C, r"\{\{(?:system|instructions?|assistant|important|prompt)\}\}",
          marks=("{{",)),
    _rule(HIDDEN_TAG, C, r"style=[\"'][^\"'>]*(?:display:none|visibility:hidden|"
          r"font-?size:0(?![.\d]*[1-9])|opacity:0(?![.\d]*[1-9])|color:(?:white|#fff\b|"
          r"#ffffff|transparent)|left:-\d{3,})", marks=("=",)),
    # -- marker_forgery: imitations of our own markers, or prose claiming the untrusted
    # passage has ended. sanitise escapes the bracketed forms one way.
    Rule(MARKER_FORGERY, F, IMITATION, (frozenset({"untrusted"}),)),
    _rule(MARKER_FORGERY, F, _w("end", "ends", "ending", "close", "closes", "closing", "exit",
                                "stop", "finish", "terminate", "escape")
          + r"\W+(?:of\W+)?(?:the\W+)?untrusted\W+" + _w(
              "data", "text", "content", "input", "block", "section", "passage", "zone",
              "region", "marker", "part", "area", "segment"), ("untrusted",)),
    _rule(MARKER_FORGERY, F, _w("begin", "begins", "beginning", "start", "starts", "starting",
                                "opening")
          + r"\W+(?:of\W+)?(?:the\W+)?trusted\W+(?:\w+\W+)?" + _w(
              "data", "text", "content", "instructions?", "section", "zone", "region",
              "block", "part", "notes?", "commands?", "system", "operator"),
          ("trusted",)),
    _rule(MARKER_FORGERY, S, "(?:end|close|exit|stop|finish|terminate|escape)(?:s|ed|ing)?"
          "(?:of)?(?:the)?untrusted" + _alt(
              "data", "text", "content", "input", "block", "section", "passage", "zone",
              "region", "marker", "part", "area", "segment"),
          ("untrusted",), ("end", "ends", "ending", "close", "closes", "closing", "exit",
                           "stop", "finish", "terminate", "escape")),
    _rule(MARKER_FORGERY, S, "(?:begin|start)(?:s|ning|ing)?(?:of)?(?:the)?trusted" + _alt(
        "data", "text", "content", "instruction", "section", "zone", "region", "block",
        "part", "note", "command", "system", "operator"),
        ("trusted",), ("begin", "begins", "beginning", "start", "starts", "starting")),
)
# fmt: on
