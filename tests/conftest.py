"""Test configuration: the geomstats backend is chosen by GEOMSTATS_BACKEND per run.

Tests marked ``backend_independent`` exercise pure numpy/scipy logic (accounting,
calibration) and run only in the numpy run of ``make test``.
"""

import os

import pytest

BACKEND = os.environ.get("GEOMSTATS_BACKEND", "numpy")

if BACKEND == "pytorch":
    import torch

    # Small geomstats einsums are tens of times slower with several threads competing
    # with the other pytest worker; make test runs one worker per core.
    torch.set_num_threads(1)


def pytest_collection_modifyitems(config, items):
    """Skip backend-independent tests outside the numpy run."""
    if BACKEND == "numpy":
        return
    skip = pytest.mark.skip(reason=f"backend independent; runs on numpy, not {BACKEND}")
    for item in items:
        if "backend_independent" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def backend():
    """Name of the active geomstats backend."""
    return BACKEND
