"""The suite's own progress lines (``--progress-after``, tests/conftest.py): ``make test``
shows which tests are still running on its long stretches."""

import threading

import pytest

from tests.conftest import LongTestReporter

pytestmark = pytest.mark.backend_independent


class _Terminal:
    """The few terminal-reporter calls the progress lines make, recorded."""

    def __init__(self):
        self.lines, self.wrote = [], threading.Event()

    def ensure_newline(self):
        pass

    def write_line(self, line):
        self.lines.append(line)
        self.wrote.set()


class _Config:
    def __init__(self, terminal):
        self.pluginmanager = self
        self.terminal = terminal

    def get_plugin(self, name):
        assert name == "terminalreporter"
        return self.terminal


def test_a_test_running_past_the_delay_is_named_and_a_finished_one_is_not():
    terminal = _Terminal()
    reporter = LongTestReporter(_Config(terminal), after=0.05)
    reporter.pytest_runtest_logstart("tests/test_a.py::test_long")
    reporter.pytest_runtest_logstart("tests/test_a.py::test_short")
    reporter.pytest_runtest_logfinish("tests/test_a.py::test_short")
    reporter.pytest_sessionstart()
    try:
        assert terminal.wrote.wait(3), "no progress line within 3 s"
    finally:
        reporter.pytest_sessionfinish()
    assert all("still running after" in line for line in terminal.lines)
    assert any(line.endswith("tests/test_a.py::test_long") for line in terminal.lines)
    assert not any("test_short" in line for line in terminal.lines)


def test_no_line_once_every_test_has_finished():
    terminal = _Terminal()
    reporter = LongTestReporter(_Config(terminal), after=0.02)
    reporter.pytest_runtest_logstart("tests/test_a.py::test_one")
    reporter.pytest_runtest_logfinish("tests/test_a.py::test_one")
    reporter.pytest_sessionstart()
    assert not terminal.wrote.wait(0.2)
    reporter.pytest_sessionfinish()
    assert terminal.lines == []
