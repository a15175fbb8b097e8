"""Every tutorial notebook runs from top to bottom, and its stored outputs are current.

The documentation site renders the outputs stored in the notebooks (it does not execute
them), so a stored notebook must be the result of a full run of its current cells:
re-execute it with ``python tutorials/execute.py NOTEBOOK`` (or ``make notebooks``).
"""

import importlib.util
from pathlib import Path

import nbformat
import pytest

from tests import test_tutorial_frechet_mean

TUTORIALS_DIR = Path(__file__).resolve().parents[1] / "tutorials"
TUTORIALS = sorted(TUTORIALS_DIR.glob("*.ipynb"))

_spec = importlib.util.spec_from_file_location("execute", TUTORIALS_DIR / "execute.py")
execute = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(execute)

# what a fresh run must show besides its kinds of output, for the notebooks whose stored
# outputs a module of their own checks (each notebook is executed once, here)
FRESH_RUN_CHECKS = {"01_private_frechet_mean_emg": test_tutorial_frechet_mean.check_outputs}


def _code_cells(notebook):
    return [cell for cell in notebook.cells if cell.cell_type == "code"]


def _output_kinds(cell):
    """What a cell shows: output types and MIME types, in order.

    Standard error is left out (library warnings differ between backends), and consecutive
    chunks of standard output count once (the kernel splits a stream as it flushes).
    """
    kinds = []
    for output in cell.get("outputs", []):
        kind = output["output_type"]
        if kind == "stream" and output["name"] == "stderr":
            continue
        if kind in {"display_data", "execute_result"}:
            kind += ":" + ",".join(sorted(output["data"]))
        if kind != "stream" or kinds[-1:] != ["stream"]:
            kinds.append(kind)
    return kinds


def _errors(notebook):
    return [
        (index, output.get("ename"))
        for index, cell in enumerate(_code_cells(notebook))
        for output in cell.get("outputs", [])
        if output["output_type"] == "error"
    ]


@pytest.mark.backend_independent
@pytest.mark.parametrize("path", TUTORIALS, ids=lambda path: path.stem)
def test_stored_outputs_come_from_one_full_run(path):
    """Cells were executed once each, in order, without error (what the site shows)."""
    notebook = nbformat.read(path, as_version=4)
    counts = [cell.execution_count for cell in _code_cells(notebook)]
    assert counts == list(range(1, len(counts) + 1)), (
        f"{path.name}: execution counts {counts}; re-run tutorials/execute.py {path.name}"
    )
    assert not _errors(notebook)
    assert str(TUTORIALS_DIR.parent) not in path.read_text(), "an output names a local path"


# About 50 s per notebook: run in the numpy pass only (the kernel inherits GEOMSTATS_BACKEND,
# and the library's backend coverage comes from the unit tests), to keep the suite short.
@pytest.mark.slow
@pytest.mark.backend_independent
@pytest.mark.parametrize("path", TUTORIALS, ids=lambda path: path.stem)
def test_tutorial_executes_and_matches_stored_outputs(path):
    """A fresh run raises nothing and shows the same kinds of output as the stored one
    (and what ``FRESH_RUN_CHECKS`` asks of it).

    Kinds, not values: numbers may move in the last digits between backends and BLAS
    builds, but a cell that gained or lost a plot, a table or a warning means the stored
    notebook is stale.
    """
    stored = nbformat.read(path, as_version=4)
    fresh = execute.execute_notebook(path, timeout=300)
    assert not _errors(fresh)
    stale = [
        (index, _output_kinds(old), _output_kinds(new))
        for index, (old, new) in enumerate(zip(_code_cells(stored), _code_cells(fresh)))
        if _output_kinds(old) != _output_kinds(new)
    ]
    assert not stale, f"{path.name}: stored outputs are stale (cell, stored, fresh): {stale}"
    if path.stem in FRESH_RUN_CHECKS:
        FRESH_RUN_CHECKS[path.stem](fresh)
