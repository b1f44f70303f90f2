"""Services run together: which may share a process (``services_together``, the one check of
``python -m services``, the gateway's ``--with``, ``orquestra up --together`` and
``orquestra bench --together``), and how ``orquestra up`` runs that process."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

import pytest

from orquestra import bench
from orquestra.up import parse_together, together_child
from services import __main__ as services_main
from services.gateway import __main__ as gateway_main
from services.registry import SERVICES, services_together

WORKERS = ", ".join(name for name in SERVICES if name != "gateway")


def test_the_names_come_back_in_the_registrys_order() -> None:
    assert services_together(["trial", "gateway", "triage"], gateway=True) == (
        "gateway", "triage", "trial",
    )  # fmt: skip
    assert services_together([], gateway=False, at_least=0) == ()


def test_a_wrong_name_is_named_with_the_names_allowed() -> None:
    with pytest.raises(ValueError) as caught:
        services_together(["trial", "nope", "gateway"], gateway=False)
    assert str(caught.value) == f"no worker service gateway, nope (one of {WORKERS})"
    with pytest.raises(ValueError, match=r"^no service nope \(one of gateway, "):
        services_together(["nope"], gateway=True)


def test_a_name_twice_and_too_few_names_are_refused() -> None:
    with pytest.raises(ValueError, match=r"^trial named twice$"):
        services_together(["trial", "triage", "trial"], gateway=False)
    with pytest.raises(ValueError, match=rf"^name 2 or more of gateway, {WORKERS}$"):
        services_together(["trial"], gateway=True, at_least=2)
    with pytest.raises(ValueError, match=r"^name 1 or more of"):
        services_together([], gateway=False)


def test_groups_come_in_the_registrys_order_and_refuse_what_cannot_run_together() -> None:
    assert parse_together(["trial,triage", "scheduler, merger"]) == [
        ("triage", "trial"),
        ("merger", "scheduler"),
    ]
    with pytest.raises(ValueError, match=r"^--together 'trial': name 2 or more of "):
        parse_together(["trial"])
    with pytest.raises(ValueError, match=r"^--together 'trial,nope': no service nope "):
        parse_together(["trial,nope"])
    with pytest.raises(ValueError, match=r"^--together 'trial,trial': trial named twice"):
        parse_together(["trial,trial"])
    with pytest.raises(ValueError, match="trial named in two groups"):
        parse_together(["triage,trial", "trial,faq"])


def test_workers_run_as_python_m_services_and_with_the_gateway_as_the_gateway() -> None:
    workers = together_child(("triage", "trial"), 1, 8000)
    assert (workers.label, workers.module, workers.argv) == (
        "triage+trial#1", "services", ["triage", "trial"],
    )  # fmt: skip
    served = together_child(("gateway", "triage", "trial"), 2, 8000)
    assert served.label == "gateway+triage+trial#2"
    assert served.module == "services.gateway"
    assert served.argv == ["--port", "8000", "--with", "triage,trial", "--reuse-port"]


def test_the_bench_takes_the_same_names_and_says_what_is_wrong_as_argparse_does() -> None:
    assert bench.together("trial, gateway") == ("gateway", "trial")
    with pytest.raises(argparse.ArgumentTypeError, match=r"^no service nope "):
        bench.together("trial,nope")
    with pytest.raises(argparse.ArgumentTypeError, match=r"^name 2 or more of "):
        bench.together("trial")


@pytest.mark.parametrize(
    ("main", "argv", "error"),
    [
        (services_main.main, ["gateway", "trial"], "services: no worker service gateway "),
        (services_main.main, ["trial", "trial"], "services: trial named twice"),
        (gateway_main.main, ["--with", "trial,gateway"], "gateway: --with: no worker service "),
        (gateway_main.main, ["--with", "nope"], "gateway: --with: no worker service nope "),
    ],
)
def test_the_processes_refuse_what_cannot_run_in_them_before_they_start(
    monkeypatch: pytest.MonkeyPatch, main: Callable[[], None], argv: list[str], error: str
) -> None:
    monkeypatch.setattr(sys, "argv", ["prog", *argv])
    with pytest.raises(SystemExit) as exited:
        main()
    assert str(exited.value).startswith(error)
