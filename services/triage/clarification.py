"""N1/N2 clarification pieces: the menu, reading a choice, and the texts of the dialogue.

N1 shows a numbered menu (from the pack) when triage cannot place a message; N2 confirms the
chosen option before routing, for the options the pack marks ``confirm``.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from services.triage.config import ClarificationConfig, ClarifyOption
from services.triage.models import PendingClarification
from shared.nlu.normalize import normalize
from shared.pack import Pack

_NUMBER = re.compile(r"^\d+$")


def menu(config: ClarificationConfig, pack: Pack, seed: str) -> str:
    """The numbered option lines."""
    return "\n".join(
        f"{number}. {pack.text(option.label_key, seed=seed)}"
        for number, option in enumerate(config.options, start=1)
    )


def menu_text(config: ClarificationConfig, pack: Pack, seed: str, *, invalid: bool) -> str:
    """The N1 question (or, after an answer we could not read, the retry) with the menu."""
    key = config.texts.invalid if invalid else config.texts.ask
    return f"{pack.text(key, seed=seed)}\n\n{menu(config, pack, seed)}"


def confirm_text(
    option: ClarifyOption, config: ClarificationConfig, pack: Pack, seed: str, *, again: bool
) -> str:
    """The N2 question for a chosen option."""
    subject = pack.text(option.subject_key or "", seed=seed)
    key = config.texts.confirm_again if again else config.texts.confirm
    return pack.text(key, seed=seed, subject=subject)


def parse_choice(
    text: str, config: ClarificationConfig, *, numbers_only: bool = False
) -> ClarifyOption | None:
    """The option a short answer picks, by number, ordinal or word; None when unreadable.

    An answer naming two different options, or a number outside the menu, picks nothing: the
    menu is shown again rather than guessing. ``numbers_only`` reads numbers and ordinals
    alone: an explicit pick, which wins over any reading of the words.
    """
    normalized = normalize(text)
    words = normalized.split()
    if not words or len(words) > config.choice_max_words:
        return None
    options = config.options
    picked: set[int] = set()
    for word in words:
        if _NUMBER.match(word):
            number = int(word)
            if not 1 <= number <= len(options):
                return None
            picked.add(number - 1)
    picked |= config.ordinal_choices(normalized)
    if not numbers_only:
        picked |= {index for index, option in enumerate(options) if option.named_in(normalized)}
    if len(picked) != 1:
        return None
    return options[picked.pop()]


def find_option(option_id: str | None, config: ClarificationConfig) -> ClarifyOption | None:
    return next((option for option in config.options if option.id == option_id), None)


def expired(pending: PendingClarification, now: datetime, config: ClarificationConfig) -> bool:
    """A clarification left unanswered past the configured time is forgotten (business time)."""
    return now - pending.asked_at > timedelta(minutes=config.expire_after_minutes)
