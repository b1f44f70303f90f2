"""``orquestra nlu`` and ``orquestra eval`` through the real command line entry point."""

from __future__ import annotations

import io
import json
import sys

import pytest

from orquestra.cli import main


def test_nlu_prints_intents_and_slots_resolved_on_the_given_clock(capsys) -> None:
    text = "me chamo João, 27 anos, quero agendar terça que vem às 19h"
    assert main(["nlu", "--now", "2026-02-05T10:00-03:00", text]) == 0
    line = json.loads(capsys.readouterr().out)
    assert line["intents"] == ["trial"]
    assert line["slots"] == {"nome": "João", "idade": 27, "nivel": None,
                             "date": "2026-02-10", "time": "19:00:00", "yes_no": None,
                             "contact_name": None, "for_someone_else": None}  # fmt: skip


def test_nlu_shows_who_is_booked_and_reads_hours_against_the_class_times(capsys) -> None:
    text = "sou a Ana, qro marcar pra minha filha Sofia, vinte e três, terca q vem as 8"
    assert main(["nlu", "--now", "2026-02-05T10:00-03:00", text]) == 0
    line = json.loads(capsys.readouterr().out)
    assert line["intents"] == ["trial"]
    assert line["slots"] == {"nome": "Sofia", "idade": 23, "nivel": None,
                             "date": "2026-02-10", "time": "20:00:00", "yes_no": None,
                             "contact_name": "Ana", "for_someone_else": True}  # fmt: skip
    assert line["time_candidates"] == ["08:00:00", "20:00:00"]
    text = "quero agendar experimental. Paulo, 50 anos, iniciante"
    assert main(["nlu", "--now", "2026-02-05T10:00-03:00", text]) == 0
    line = json.loads(capsys.readouterr().out)
    assert (line["slots"]["nome"], line["slots"]["idade"]) == ("Paulo", 50)


def test_nlu_reads_json_lines_and_refuses_a_clock_without_offset(monkeypatch, capsys) -> None:
    lines = '{"text": "sim, e onde fica?", "now": "2026-02-05T10:00:00-03:00"}\n'
    monkeypatch.setattr(sys, "stdin", io.StringIO(lines))
    assert main(["nlu"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["intents"] == ["faq"] and out["slots"]["yes_no"] is True
    monkeypatch.setattr(sys, "stdin", io.StringIO('{"text": "oi", "now": "2026-02-05T10:00"}\n'))
    with pytest.raises(SystemExit, match="offset"):
        main(["nlu"])


def test_eval_faq_prints_the_measured_figures(capsys) -> None:
    assert main(["eval", "faq"]) == 0
    assert "top-1 accuracy" in capsys.readouterr().out
