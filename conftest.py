"""Shared pytest set-up: the ``--full`` switch for exhaustive checks."""

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "dpfix", deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=40
)
settings.load_profile("dpfix")


def pytest_addoption(parser):
    parser.addoption("--full", action="store_true", help="run the exhaustive checks too")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--full"):
        return
    skip = pytest.mark.skip(reason="exhaustive check: run with --full")
    for item in items:
        if "full" in item.keywords:
            item.add_marker(skip)
