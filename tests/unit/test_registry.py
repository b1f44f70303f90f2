"""The service registry: every list the system uses is derived from the services' specs."""

from __future__ import annotations

import importlib

import pytest

from orquestra import up
from services.registry import GROUPS, SERVICES, SLICES, SPECIALISTS, SPECS, TOPOLOGY
from shared.keys import Keys
from shared.spec import Consumes, ServiceSpec, topology_of


def test_names_slices_and_groups_are_unique() -> None:
    assert len(set(SERVICES)) == len(SERVICES)
    assert len(set(SLICES)) == len(SLICES)
    assert len(set(GROUPS)) == len(GROUPS)


def test_every_spec_builds_and_runs_as_its_own_module() -> None:
    for spec in SPECS:
        assert callable(spec.builder())
        assert spec.build.startswith(f"services.{spec.name}.")
        importlib.import_module(f"services.{spec.name}.__main__")


def test_the_bus_topology_is_what_the_specs_consume() -> None:
    keys = Keys("orq:", topology=TOPOLOGY)
    assert sorted(keys.groups()) == sorted((keys.stream(s), g) for s, g in GROUPS)
    assert {(f"orq:tasks.{name}", name) for name in SPECIALISTS} <= set(keys.groups())


def test_a_new_specialist_needs_no_key_list() -> None:
    """The groups come from the specs alone: a spec that is not in the code base (so in no
    list of shared/) gets its group created, in every partition, like the others."""
    newcomer = ServiceSpec(
        name="newcomer",
        build="services.newcomer.app:build",
        consumes=(Consumes("tasks.newcomer", "newcomer"),),
        specialist=True,
    )
    keys = Keys("orq:", 4, topology=topology_of([*SPECS, newcomer]))
    assert [(f"orq:tasks.newcomer:{{p{p:02d}}}", "newcomer") for p in range(4)] == [
        pair for pair in keys.groups() if pair[1] == "newcomer"
    ]


def test_keys_without_the_topology_say_where_it_comes_from() -> None:
    with pytest.raises(ValueError, match=r"services\.registry\.TOPOLOGY"):
        Keys("orq:").groups()


def test_every_published_stream_is_a_bus_stream() -> None:
    keys = Keys("orq:", topology=TOPOLOGY)
    streams = set(keys.all_streams())
    for spec in SPECS:
        for stream in spec.publishes:
            assert keys.stream(stream) in streams, (spec.name, stream)


def test_up_runs_every_registered_worker() -> None:
    assert [s for s in SERVICES if s != "gateway"] == up.WORKERS
