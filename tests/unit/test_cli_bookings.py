"""``orquestra bookings``'s pure parts: the default period and the table and CSV renderings."""

from __future__ import annotations

import csv
import io
from datetime import date

from orquestra.bookings import period, render_csv, render_table

CLASSES = [
    {
        "date": "2026-02-10",
        "time": "19:00",
        "capacity": 6,
        "seats_left": 4,
        "bookings": [
            {
                "booking_id": "AE-AAAAAA",
                "student_name": "Ana",
                "age": 30,
                "level": "iniciante",
                "conversation_id": "c1",
                "contact_name": "Ana Souza",
                "status": "attended",
                "booked_at": "2026-02-05T10:00:00-03:00",
            },
            {
                "booking_id": "AE-BBBBBB",
                "student_name": None,
                "age": None,
                "level": None,
                "conversation_id": None,
                "contact_name": None,
                "status": "booked",
                "booked_at": "2026-02-06T10:00:00-03:00",
            },
        ],
    },
    {"date": "2026-02-10", "time": "20:00", "capacity": 6, "seats_left": 6, "bookings": []},
]


def test_the_default_period_is_the_current_week_and_one_bound_makes_a_week() -> None:
    wednesday = date(2026, 2, 11)
    assert period(None, None, wednesday) == (date(2026, 2, 9), date(2026, 2, 15))
    assert period(date(2026, 2, 10), None, wednesday) == (date(2026, 2, 10), date(2026, 2, 16))
    assert period(None, date(2026, 2, 10), wednesday) == (date(2026, 2, 4), date(2026, 2, 10))
    assert period(date(2026, 3, 1), date(2026, 3, 2), wednesday) == (
        date(2026, 3, 1),
        date(2026, 3, 2),
    )


def test_the_table_shows_seats_names_and_statuses() -> None:
    lines = render_table(CLASSES).splitlines()
    assert lines[0] == "2026-02-10 19:00  2/6 vagas ocupadas"
    assert "AE-AAAAAA" in lines[1] and "veio" in lines[1]
    assert "Ana (30 anos, iniciante, Ana Souza)" in lines[1]
    assert "AE-BBBBBB" in lines[2] and "(dados apagados)" in lines[2]
    assert lines[3] == "2026-02-10 20:00  0/6 vagas ocupadas"
    assert render_table([]) == "nenhuma aula no período"


def test_the_csv_has_one_row_per_booking_and_per_empty_class() -> None:
    rows = list(csv.DictReader(io.StringIO(render_csv(CLASSES))))
    assert [(r["time"], r["booking_id"], r["status"]) for r in rows] == [
        ("19:00", "AE-AAAAAA", "attended"),
        ("19:00", "AE-BBBBBB", "booked"),
        ("20:00", "", ""),
    ]
    assert rows[0]["age"] == "30" and rows[1]["student_name"] == ""
