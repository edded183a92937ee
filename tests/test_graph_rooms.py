"""The rooms of docs/graphs.md: instances, mechanisms, statements, tables. Each name has
one home; the former module path of a moved instance or mechanism still works for one
release, with a deprecation warning, and a moved table names its new room."""

from __future__ import annotations

import inspect

import pytest

from dpfix.explore import graph_instances, graph_mechanisms, graph_tables, graph_theory
from dpfix.numbers.deprecation import DpfixDeprecationWarning

ROOMS = (graph_instances, graph_mechanisms, graph_theory, graph_tables)


def test_every_public_name_has_one_room():
    homes: dict[str, str] = {}
    for room in ROOMS:
        for name in room.__all__:
            assert name not in homes, f"{name} in {homes.get(name)} and {room.__name__}"
            homes[name] = room.__name__
            obj = getattr(room, name)
            if inspect.isfunction(obj) or inspect.isclass(obj):  # defined where it is listed
                assert obj.__module__ == room.__name__, (name, obj.__module__)


@pytest.mark.parametrize("name, home", [("product_northwest", graph_mechanisms),
                                        ("LPCertificate", graph_mechanisms),
                                        ("complete_instances", graph_instances)])
def test_a_moved_name_still_works_from_graph_theory_with_a_warning(name, home):
    with pytest.warns(DpfixDeprecationWarning, match=rf"graph_theory\.{name} is deprecated; "
                                                     rf"use {home.__name__}\.{name}"):
        got = getattr(graph_theory, name)
    assert got is getattr(home, name)


def test_a_moved_table_names_its_room():
    with pytest.raises(AttributeError, match=r"graph_theory.grid_table is now "
                                             r"dpfix.explore.graph_tables.grid_table"):
        graph_theory.grid_table  # noqa: B018
    with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
        graph_theory.nothing  # noqa: B018


def test_the_statements_use_the_mechanisms_room():
    assert graph_theory.best_remap is graph_mechanisms.best_remap
    assert graph_theory.GraphInstance is graph_instances.GraphInstance
