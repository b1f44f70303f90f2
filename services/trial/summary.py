"""What the trial says back about a booking in progress: the fields a message gave ("Anotado:
50 anos e nível iniciante.") and, on a handoff, what was understood and what is still missing.

So a person always hears what the bot kept and what it still needs, and whoever takes over a
conversation reads the same summary. Every word comes from the pack (``trial_fact_*``,
``trial_field_*``, ``trial_summary``).
"""

from __future__ import annotations

from datetime import datetime

from services.trial.models import Asked, TrialState
from services.trial.replies import TextSource, base_values, join_list
from shared.trial.config import TrialConfig

# What a summary lists, in order (date and time are said together when both are known).
SUMMARY_FIELDS: tuple[Asked, ...] = ("nome", "idade", "nivel", "date", "time")


def facts(
    state: TrialState,
    fields: list[Asked],
    *,
    now_local: datetime,
    config: TrialConfig,
    pack: TextSource,
    seed: str,
) -> list[str]:
    """``fields`` of ``state`` as said to people ("nome Paulo", "terça, 10/02 às 18:00")."""
    values = base_values(state, now_local=now_local, config=config)
    said: list[str] = []
    for name in fields:
        if name == "time" and "date" in fields:
            continue
        fact = pack.text(f"trial_fact_{name}", seed=seed, **values)
        if name == "date" and "time" in fields:
            fact = f"{fact} {pack.text('trial_fact_time', seed=seed, **values)}"
        said.append(fact)
    return said


def missing_fields(state: TrialState) -> list[Asked]:
    """The fields of a booking still unknown, in the order a summary lists them."""
    known = {
        "nome": state.nome,
        "idade": state.idade,
        "nivel": state.nivel,
        "date": state.desired_date,
        "time": state.desired_time,
    }
    return [f for f in SUMMARY_FIELDS if known[f] is None]


def summary(
    state: TrialState,
    *,
    now_local: datetime,
    config: TrialConfig,
    pack: TextSource,
    seed: str,
    asked: Asked | None = None,
) -> str:
    """What was understood and what is still missing, in one sentence pair. With every field
    known, what is missing is the confirmation, or the field asked again (``asked``: a time
    with a free seat when the one kept is full)."""
    lacking = missing_fields(state)
    have = [f for f in SUMMARY_FIELDS if f not in lacking]
    if not lacking and state.stage == "awaiting_confirmation":
        lacking = ["confirmation"]
    elif not lacking and asked is not None:
        lacking = [asked]
    falta = join_list([pack.text(f"trial_field_{f}", seed=seed) for f in lacking], config)
    if not have:
        return pack.text("trial_summary_empty", seed=seed, falta=falta)
    said = facts(state, have, now_local=now_local, config=config, pack=pack, seed=seed)
    return pack.text("trial_summary", seed=seed, anotado=join_list(said, config), falta=falta)
