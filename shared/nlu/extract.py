"""One call per turn: every slot the rules can read from a message.

Cheap by construction (all patterns compiled at import, a few linear scans of one message), so a
service may call it on every turn whatever its stage and merge only the fields it cares about.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import date, datetime, time
from zoneinfo import ZoneInfo

from shared.nlu.age import without_birth_date
from shared.nlu.dates import hour_after_day, resolve_date, resolve_time
from shared.nlu.models import Expecting, Slots
from shared.nlu.party import (
    includes_writer,
    member_facts,
    party_in,
    without_writer_age,
    writer_with_age,
)
from shared.nlu.slots import LevelsByTime, People, extract_age, extract_level, extract_people
from shared.nlu.yesno import yes_no


def extract_slots(
    text: str,
    now: datetime,
    tz: ZoneInfo,
    expecting: Expecting | None = None,
    *,
    valid_times: Collection[str] | None = None,
    not_names: Collection[str] = (),
    reference_date: date | None = None,
    reference_time: time | None = None,
    levels_by_time: LevelsByTime = (),
) -> Slots:
    """Slots in ``text``; ``now`` is ``Turn.now``, ``tz`` the business timezone, ``expecting``
    the field the bot just asked for (it makes a bare "João", "27", "10" or "19" count).

    ``valid_times`` ("HH:MM") picks the reading of an hour said without a period ("às 8" is
    20:00 when only 20:00 is a class time); ``not_names`` are words never read as a name;
    ``reference_date`` the date already agreed ("terça seguinte" is the Tuesday after it),
    ``reference_time`` the time already said ("da noite" after "às 7" is 19:00);
    ``levels_by_time`` the pack's rule for the level of a time played ("jogo há 8 meses").
    """
    people = extract_people(text, expecting_name=expecting == "nome", not_names=not_names)
    group = party_in(text)
    writer = includes_writer(text) or (group is not None and writer_with_age(text, group.names))
    if people.for_someone_else and writer:
        # "pra mim e pro meu marido": a group booked one at a time starts with the writer,
        # whose own name ("sou a Telma") is the first student's; the others come next.
        people = People(people.contact_name, None, False)
    today = now.astimezone(tz).date()
    idade = extract_age(text, expecting_age=expecting == "idade", today=today)
    nivel = extract_level(text, expecting_level=expecting == "nivel", levels_by_time=levels_by_time)
    if group and people.nome in group.names and writer:
        # The writer's own age and level, not the other's ("sou o Rui, 41, ela tem 39").
        idade, level = member_facts(text, people.nome, group.names, levels_by_time)
        nivel = level or nivel
    elif group and group.names and not people.for_someone_else and not includes_writer(text):
        # "o Enzo de 10 e o Rafa de 6", "Lia 19, Duda 22 e Mel 20": the first one named is
        # the first student, with what the message says of them.
        first = group.names[0]
        if people.nome is None or people.nome in group.names:
            people = People(first, people.contact_name, people.for_someone_else)
            age, level = member_facts(text, first, group.names, levels_by_time)
            idade = age if age is not None else idade
            nivel = level or nivel
    elif group and people.nome in group.names:
        # "ela é a Bia, 30, e o Caio, 28": the age and level said of the one booked first.
        age, level = member_facts(text, people.nome, group.names, levels_by_time)
        idade = age if age is not None else idade
        nivel = level or nivel
    elif people.nome and people.contact_name and people.for_someone_else:
        # "sou o Rui, 41, e ela é a Ana, 38": the student's own age, not the writer's.
        age, _ = member_facts(text, people.nome, (people.nome, people.contact_name))
        idade = age if age is not None else idade
    elif people.for_someone_else and not writer:
        # "pro meu filho de 8, eu tenho 38": the age the writer tells of themselves is not
        # the student's; none is better than the parent's.
        idade = extract_age(
            without_writer_age(text), expecting_age=expecting == "idade", today=today
        )
    # A birth date gives the age; it is never the day of the class.
    when = without_birth_date(text)
    day = resolve_date(when, now, tz, expecting=expecting == "date", reference=reference_date)
    hour = resolve_time(
        text, expecting=expecting == "time", valid_times=valid_times, previous=reference_time
    )
    if hour is None and valid_times:
        hour = hour_after_day(when, day, valid_times)
    return Slots(
        nome=people.nome,
        idade=idade,
        nivel=nivel,
        date=day,
        time=hour,
        yes_no=yes_no(text),
        contact_name=people.contact_name,
        for_someone_else=people.for_someone_else,
    )
