"""The service registry: every list the system uses is derived from the services' specs."""

from __future__ import annotations

import importlib

from orquestra import up
from services.registry import GROUPS, SERVICES, SLICES, SPECIALISTS, SPECS
from shared import keys as key_names
from shared.keys import Keys


def test_names_slices_and_groups_are_unique() -> None:
    assert len(set(SERVICES)) == len(SERVICES)
    assert len(set(SLICES)) == len(SLICES)
    assert len(set(GROUPS)) == len(GROUPS)


def test_every_spec_builds_and_runs_as_its_own_module() -> None:
    for spec in SPECS:
        assert callable(spec.builder())
        assert spec.build.startswith(f"services.{spec.name}.")
        importlib.import_module(f"services.{spec.name}.__main__")


def test_the_bus_topology_matches_the_specs() -> None:
    """Keys still lists the groups it creates (shared/ imports nothing from services/): it
    must be exactly what the specs consume, and its specialists those the specs declare."""
    keys = Keys("orq:")
    assert sorted(keys.groups()) == sorted((keys.stream(s), g) for s, g in GROUPS)
    assert key_names.SPECIALISTS == SPECIALISTS


def test_every_published_stream_is_a_bus_stream() -> None:
    keys = Keys("orq:")
    streams = set(keys.all_streams())
    for spec in SPECS:
        for stream in spec.publishes:
            assert keys.stream(stream) in streams, (spec.name, stream)


def test_up_runs_every_registered_worker() -> None:
    assert [s for s in SERVICES if s != "gateway"] == up.WORKERS
