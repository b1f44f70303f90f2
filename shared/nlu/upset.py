"""Whether a customer is upset: a measurable signal, so a handoff for it can be tested.

An upset customer gets a person (issue 29's handoff policy), but typing style alone is not anger:
people write in capitals out of habit ("BOA TARDE QUERO AGENDAR") and double a question mark
to be quick ("oi??"). So the signal counts words first and uses the style only to weigh them:

- an *insult* or swear word ("lixo", "incompetentes", "porra") is enough alone;
- a *complaint* word or phrase ("absurdo", "falta de respeito", "perdi meu tempo", "procon")
  is enough when there are two of them, or one said with emphasis;
- *emphasis* is shouting (at least ``SHOUT_SHARE`` of the letters upper case, in a message of
  ``SHOUT_MIN_LETTERS`` letters or more) or punctuation repeated ("!!", "?!", "???").

Words are matched on the normalized message (``shared.nlu.normalize``), whole words or phrases,
a trailing ``*`` matching any ending ("revoltad*" for revoltado, revoltada...).

A complaint of the service said calmly (:func:`complains`: "que demora", "que descaso") is not
upset: the customer is said sorry to, not handed to a person.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from shared.nlu.normalize import normalize

# Complaints about being served (kept waiting, ignored, let down): said calmly they are still
# about the business (:func:`complains`), unlike "péssimo" or "nunca mais", which a player may
# say of their own game. Waiting is said of the business ("vocês demoram", "que demora"), not
# the customer's own delay ("desculpa a demora") nor a duration asked ("demora quanto tempo?").
SERVICE_COMPLAINTS = (
    "descaso",
    "desrespeito",
    "falta de respeito",
    "perdi meu tempo",
    "perdi o meu tempo",
    "perda de tempo",
    "ninguem me atendeu",
    "ninguem responde",
    "ninguem me responde",
    "nao tinha ninguem",
    "me deixaram esperando",
    "que demora",
    "quanta demora",
    "tanta demora",
    "voce demora*",
    "voces demora*",
    "demora demais",
    "demoram demais",
    "demoraram demais",
    "demorou demais",
    "demora tanto",
    "demoram tanto",
    "demorou tanto",
    "demora para responder",
    "demoram para responder",
    "demorou para responder",
    "esta demorando",
    "estao demorando",
    "sem resposta",
)
COMPLAINTS = (
    "absurdo*",
    "ridiculo*",
    "pessimo*",
    "horrivel",
    "horriveis",
    "lamentavel",
    "inadmissivel",
    "inaceitavel",
    "vergonha*",
    "palhacada",
    "sacanagem",
    "revoltad*",
    "indignad*",
    "irritad*",
    "decepcionad*",
    "decepcao",
    "reclamacao",
    "reclamar",
    "procon",
    "reclame aqui",
    "enganad*",
    "propaganda enganosa",
    "nunca mais",
    "que raiva",
    "cansei",
    "desorganizad*",
    "amador*",
    *SERVICE_COMPLAINTS,
)
INSULTS = (
    "idiota*",
    "burro*",
    "burra*",
    "imbecil*",
    "lixo",
    "merda",
    "porra",
    "caralho",
    "bosta",
    "inutil",
    "inuteis",
    "incompetente*",
    "otario*",
    "babaca*",
    "vagabund*",
    "pqp",
    "vsf",
    "tnc",
    "fdp",
)
SHOUT_SHARE = 0.7
SHOUT_MIN_LETTERS = 12
_REPEATED_MARKS = re.compile(r"[!?]{2,}")


def _pattern(words: tuple[str, ...]) -> re.Pattern[str]:
    alternatives = (
        re.escape(w[:-1]) + r"\w*" if w.endswith("*") else re.escape(w)
        for w in sorted(words, key=len, reverse=True)
    )
    return re.compile(r"\b(?:" + "|".join(alternatives) + r")\b")


_COMPLAINT = _pattern(COMPLAINTS)
_SERVICE_COMPLAINT = _pattern(SERVICE_COMPLAINTS)
_INSULT = _pattern(INSULTS)


@dataclass(frozen=True)
class UpsetSignal:
    """What the message shows, each part counted, and the verdict drawn from them."""

    complaints: int
    insults: int
    shouting: bool
    repeated_marks: bool

    @property
    def upset(self) -> bool:
        emphatic = self.shouting or self.repeated_marks
        return self.insults > 0 or self.complaints >= 2 or (self.complaints == 1 and emphatic)


def upset_signal(text: str) -> UpsetSignal:
    """The upset signal of one message (the rules are in the module doc)."""
    normalized = normalize(text)
    letters = [ch for ch in text if ch.isalpha()]
    upper = sum(ch.isupper() for ch in letters)
    return UpsetSignal(
        complaints=len(_COMPLAINT.findall(normalized)),
        insults=len(_INSULT.findall(normalized)),
        shouting=len(letters) >= SHOUT_MIN_LETTERS and upper >= SHOUT_SHARE * len(letters),
        repeated_marks=bool(_REPEATED_MARKS.search(text)),
    )


def is_upset(text: str) -> bool:
    """Whether the message shows an upset customer."""
    return upset_signal(text).upset


def complains(text: str) -> bool:
    """Whether the message complains calmly of the service (``SERVICE_COMPLAINTS``), not
    upset."""
    return bool(_SERVICE_COMPLAINT.search(normalize(text))) and not is_upset(text)
