"""Test configuration: the geomstats backend is chosen by GEOMSTATS_BACKEND per run.

Tests marked ``backend_independent`` exercise pure numpy/scipy logic (accounting,
calibration) and run only in the numpy run of ``make test``.

Statistical tests and audits add the ``seed_shift`` fixture to every fixed seed, so that
``pytest --seed-shift=K`` (or ``GEOMSTATS_DP_SEED_SHIFT=K``) reruns them on another block
of random draws: their tolerances must hold for any K, not only for the seeds written.

Tests marked ``slow`` are collected first (in their order), so that under ``pytest -n 2``
the long ones are dealt to both workers at the start instead of ending the run on one.
Under pytest-xdist, ``--progress-after=S`` prints every S seconds the tests that have run
longer than S (a run without workers captures the output of its test's thread).
"""

import os
import threading
import time

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
    """``--seed-shift=K``: rerun the statistical tests on the K-th other block of seeds;
    ``--progress-after=S``: name the tests still running after S seconds."""
    parser.addoption(
        "--seed-shift", type=int, default=None,
        help=f"shift every statistical test's seeds by K blocks (default: ${SEED_SHIFT_VARIABLE} or 0)",
    )
    parser.addoption(
        "--progress-after", type=float, default=None, metavar="S",
        help="every S seconds, print the tests that have run longer than S (default: never)",
    )


def pytest_configure(config):
    """Publish --seed-shift through the environment, where ``shifted`` reads it; start the
    progress lines in xdist's controller."""
    option = config.getoption("--seed-shift")
    if option is not None:
        os.environ[SEED_SHIFT_VARIABLE] = str(option)
    after = config.getoption("--progress-after")
    if after and getattr(config.option, "numprocesses", None) and not hasattr(
            config, "workerinput"):
        config.pluginmanager.register(LongTestReporter(config, after), "long-test-reporter")


class LongTestReporter:
    """Every ``after`` seconds, one line per test running for longer than ``after``."""

    def __init__(self, config, after):
        self.config, self.after = config, after
        self.running, self.stop = {}, threading.Event()
        self.start = time.monotonic()

    def pytest_runtest_logstart(self, nodeid):
        self.running[nodeid] = time.monotonic()

    def pytest_runtest_logfinish(self, nodeid):
        self.running.pop(nodeid, None)

    def pytest_sessionstart(self):
        threading.Thread(target=self._watch, daemon=True).start()

    def pytest_sessionfinish(self):
        self.stop.set()

    def _watch(self):
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        while not self.stop.wait(self.after):
            now = time.monotonic()
            for nodeid, started in list(self.running.items()):
                if now - started >= self.after:
                    reporter.ensure_newline()
                    reporter.write_line(f"[{now - self.start:5.0f} s] still running "
                                        f"after {now - started:.0f} s: {nodeid}")


def pytest_report_header(config):
    """Print the seed shift, so that a failure names the block it ran on."""
    return f"seed shift: {os.environ.get(SEED_SHIFT_VARIABLE, '0')} ({SEED_SHIFT_VARIABLE})"


def shifted(seed):
    """``seed`` moved to the current block: seed + K * SEED_STRIDE under --seed-shift=K.

    Statistical tests and audits wrap each fixed seed in it (``default_rng(shifted(0))``).
    """
    return seed + SEED_STRIDE * int(os.environ.get(SEED_SHIFT_VARIABLE, "0"))


def pytest_collection_modifyitems(config, items):
    """Put the slow tests first; skip backend-independent tests outside the numpy run."""
    items.sort(key=lambda item: "slow" not in item.keywords)  # stable: order kept within
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
