"""A tourist's English or Spanish, read in the Portuguese words the rules are written against.

Beach-tennis towns get visitors: "could I book a lesson?", "¿cuánto cuesta la clase de
prueba?". The rules (triage keywords, the FAQ's terms, the date parser) are written in
Portuguese, so :func:`shared.nlu.normalize.normalize` rewrites the words of a small-business
conversation — asking a price, a place, a class, a booking, days and months — to the
Portuguese ones, and the same rules read both. It is a glossary, not a translator: only words
and phrases that cannot be Portuguese in that conversation are listed ("do", "pago", "may",
"march" are Portuguese or English verbs too, and stay out), so a Portuguese message is never
changed by it. Phrases run on the normalized text (lower case, no accents, punctuation gone).
"""

from __future__ import annotations

import re

# Days and months ("next friday, the 3rd" → "proxima sexta, dia 3"; "el jueves 4 de marzo"):
# a weekday read as a date is then never taken for a name either.
CALENDAR = {
    "monday": "segunda",
    "tuesday": "terca",
    "wednesday": "quarta",
    "thursday": "quinta",
    "friday": "sexta",
    "saturday": "sabado",
    "sunday": "domingo",
    "lunes": "segunda",
    "martes": "terca",
    "miercoles": "quarta",
    "jueves": "quinta",
    "viernes": "sexta",
    "january": "janeiro",
    "february": "fevereiro",
    "april": "abril",
    "june": "junho",
    "july": "julho",
    "august": "agosto",
    "september": "setembro",
    "october": "outubro",
    "november": "novembro",
    "december": "dezembro",
    "enero": "janeiro",
    "febrero": "fevereiro",
    "marzo": "marco",
    "mayo": "maio",
    "junio": "junho",
    "julio": "julho",
    "septiembre": "setembro",
    "setiembre": "setembro",
    "octubre": "outubro",
    "noviembre": "novembro",
    "diciembre": "dezembro",
    # A weekly habit ("tuesdays and thursdays").
    "mondays": "segundas",
    "tuesdays": "tercas",
    "wednesdays": "quartas",
    "thursdays": "quintas",
    "fridays": "sextas",
    "saturdays": "sabados",
    "today": "hoje",
    "hoy": "hoje",
    "tomorrow": "amanha",
    "next": "proxima",
}

# Single words of a service conversation.
WORDS = {
    "hi": "oi",
    "hello": "oi",
    "class": "aula",
    "classes": "aulas",
    "lesson": "aula",
    "lessons": "aulas",
    "clase": "aula",
    "clases": "aulas",
    "price": "preco",
    "prices": "precos",
    "precio": "preco",
    "precios": "precos",
    "cost": "custa",
    "costs": "custa",
    "cuesta": "custa",
    "cuestan": "custam",
    "where": "onde",
    "donde": "onde",
    "address": "endereco",
    "direccion": "endereco",
    "parking": "estacionamento",
    "estacionamiento": "estacionamento",
    "kids": "criancas",
    "children": "criancas",
    "child": "crianca",
    "ninos": "criancas",
    "ninas": "criancas",
    # "nino" and "nina" are left out: Nina is a name.
    "racket": "raquete",
    "rackets": "raquetes",
    "raqueta": "raquete",
    "raquetas": "raquetes",
    "shower": "chuveiro",
    "showers": "chuveiros",
    "ducha": "chuveiro",
    "duchas": "chuveiros",
    "payment": "pagamento",
    "payments": "pagamento",
    "plan": "plano",
    "plans": "planos",
    "monthly": "mensal",
    "mensual": "mensal",
    "mensuales": "mensais",
    "tarjeta": "cartao",
    "beginner": "iniciante",
    "beginners": "iniciantes",
    "intermediate": "intermediario",
    "advanced": "avancado",
    "and": "e",
    # After a booking: cancelling, moving, enrolling.
    "cancel": "cancelar",
    "reschedule": "remarcar",
    "enroll": "matricular",
    "enrol": "matricular",
    "cambiar": "mudar",
    "inscribirme": "me inscrever",
    "matricularme": "me matricular",
    "card": "cartao",
    "veces": "vezes",
    "twice": "duas vezes",
    "two": "dois",
    "three": "tres",
    "book": "marcar",
    "rent": "aluga",
    "lend": "empresta",
    "reservar": "marcar",
    "puedo": "posso",
    "quiero": "quero",
    "quisiera": "queria",
    "hay": "tem",
    "tienen": "tem",
    "ustedes": "voces",
}

# Phrases, before the words: a trial class in either language is the pack's "aula
# experimental"; a price question is "quanto custa"; "do you have" is "voces tem".
PHRASES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\b(?:trial|free|test|taster) (?:class|lesson)(?:es|s)?\b"), "aula experimental"),
    (
        re.compile(r"\bclases? (?:de prueba|gratis|gratuitas?|de muestra)\b"),
        "aula experimental",
    ),
    (
        re.compile(r"\bhow much(?: (?:is|are|does|do))?(?: (?:it|the|a|one))?(?: cost)?\b"),
        "quanto custa",
    ),
    (re.compile(r"\bcuanto (?:cuesta|cuestan|sale|vale|es)\b"), "quanto custa"),
    (re.compile(r"\b(?:do|does) you (?:guys )?have\b"), "voces tem"),
    (re.compile(r"\bis there\b|\bare there\b"), "tem"),
    (re.compile(r"\bwhere (?:are you|is it|is the place)(?: located)?\b"), "onde fica"),
    (re.compile(r"\bcan i\b"), "posso"),
    # Not making it to the booked class, asking whether it stands, signing up for a plan.
    (
        re.compile(
            r"\b(?:i|we) (?:can t|cannot|won t be able to|will not be able to|am not able to|"
            r"are not able to) (?:make it|come|go|attend)\b"
        ),
        "nao vou poder ir",
    ),
    (
        re.compile(
            r"\bno (?:voy a poder|vamos a poder|puedo|podemos|podre|podremos) (?:ir|asistir)\b"
        ),
        "nao vou poder ir",
    ),
    (
        re.compile(
            r"\b(?:is|are) (?:my|our|the) (?:class|lesson|booking|reservation)(?: still)? "
            r"(?:confirmed|booked|on)\b"
        ),
        "minha aula esta confirmada",
    ),
    (re.compile(r"\bsign(?:ing)? (?:me |us )?up\b"), "me inscrever"),
    (re.compile(r"\bhow do (?:i|we)\b"), "como faco para"),
    (re.compile(r"\bque viene\b"), "que vem"),
    # How often: "three times a week", "dos veces a la semana".
    (re.compile(r"\btimes? (?:a|per|each) week\b"), "vezes por semana"),
    (re.compile(r"\bdays? (?:a|per|each) week\b"), "dias por semana"),
    (re.compile(r"\bdos veces\b"), "duas vezes"),
    (re.compile(r"\ba la semana\b"), "por semana"),
    (re.compile(r"\bi(?: would| d)? (?:like|want)(?: to)?\b"), "quero"),
    (re.compile(r"\bformas? de pago\b"), "formas de pagamento"),
    (re.compile(r"\bopening hours\b|\bwhat time do you open\b"), "horario de funcionamento"),
    # "I'm 35", "I am 35": an age.
    (re.compile(r"\bi a?m (\d{1,2})\b(?! ?(?:am|pm|h)\b)"), r"tenho \1"),
    # "30 years old" → "30 anos"; an English ordinal day ("the 3rd") → "dia 3"; "a las 18".
    (re.compile(r"\b(\d{1,3}) years? old\b"), r"\1 anos"),
    (re.compile(r"\b(?:the\s+)?(\d{1,2})(?:st|nd|rd|th)\b"), r"dia \1"),
    (re.compile(r"\ba las\b"), "as"),
    # "de la tarde", "por la noche": the part of the day the hour is in.
    (re.compile(r"\b(?:de|en) la (tarde|noche|manana)\b"), r"da \1"),
    (re.compile(r"\bpor la (tarde|noche|manana)\b"), r"pela \1"),
    (re.compile(r"\b(da|pela) noche\b"), r"\1 noite"),
    (re.compile(r"\b(da|pela) manana\b"), r"\1 manha"),
)


def rewrite_words(words: list[str]) -> list[str]:
    """The words, each a tourist's day, month or service word read in Portuguese."""
    return [CALENDAR.get(w) or WORDS.get(w, w) for w in words]


def rewrite_phrases(text: str) -> str:
    """Normalized text with a tourist's phrases read in Portuguese (before the word map)."""
    for pattern, replacement in PHRASES:
        text = pattern.sub(replacement, text)
    return text
