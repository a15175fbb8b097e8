"""Test configuration: the geomstats backend is chosen by GEOMSTATS_BACKEND per run.

Tests marked ``backend_independent`` exercise pure numpy/scipy logic (accounting,
calibration) and run only in the numpy run of ``make test``.

Statistical tests and audits add the ``seed_shift`` fixture to every fixed seed, so that
``pytest --seed-shift=K`` (or ``GEOMSTATS_DP_SEED_SHIFT=K``) reruns them on another block
of random draws: their tolerances must hold for any K, not only for the seeds written.
"""

import os

import pytest

BACKEND = os.environ.get("GEOMSTATS_BACKEND", "numpy")
SEED_SHIFT_VARIABLE = "GEOMSTATS_DP_SEED_SHIFT"
# K shifts a seed by K * SEED_STRIDE: past the other seeds a test writes (0, 1, 2, ...)
SEED_STRIDE = 10_007

if BACKEND == "pytorch":
    import torch

    # Small geomstats einsums are tens of times slower with several threads competing
    # with the other pytest worker; make test runs one worker per core.
    torch.set_num_threads(1)


def pytest_addoption(parser):
    """``--seed-shift=K``: rerun the statistical tests on the K-th other block of seeds."""
    parser.addoption(
        "--seed-shift", type=int, default=None,
        help=f"shift every statistical test's seeds by K blocks (default: ${SEED_SHIFT_VARIABLE} or 0)",
    )


def pytest_configure(config):
    """Publish --seed-shift through the environment, where ``shifted`` reads it."""
    option = config.getoption("--seed-shift")
    if option is not None:
        os.environ[SEED_SHIFT_VARIABLE] = str(option)


def pytest_report_header(config):
    """Print the seed shift, so that a failure names the block it ran on."""
    return f"seed shift: {os.environ.get(SEED_SHIFT_VARIABLE, '0')} ({SEED_SHIFT_VARIABLE})"


def shifted(seed):
    """``seed`` moved to the current block: seed + K * SEED_STRIDE under --seed-shift=K.

    Statistical tests and audits wrap each fixed seed in it (``default_rng(shifted(0))``).
    """
    return seed + SEED_STRIDE * int(os.environ.get(SEED_SHIFT_VARIABLE, "0"))


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


@pytest.fixture
def seed_shift():
    """What a statistical test adds to each of its fixed seeds (``shifted(0)``)."""
    return shifted(0)
