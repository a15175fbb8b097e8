"""The Frechet-mean tutorial shows what it says: a refused release, composition, utility.

Its stored outputs are checked here; a fresh run's, by ``tests/test_tutorials.py``, which
executes every notebook once and applies ``check_outputs`` to this one.
"""

import re
from pathlib import Path

import nbformat
import pytest

PATH = Path(__file__).resolve().parents[1] / "tutorials" / "01_private_frechet_mean_emg.ipynb"


def _stdout(cell):
    return "".join(output.get("text", "") for output in cell.get("outputs", [])
                   if output["output_type"] == "stream" and output["name"] == "stdout")


def _cell(notebook, marker):
    (cell,) = [cell for cell in notebook.cells
               if cell.cell_type == "code" and marker in cell.source]
    return _stdout(cell)


def check_outputs(notebook):
    """Raise AssertionError unless the notebook's outputs show the tutorial's claims."""
    single = _cell(notebook, "estimator = PrivateFrechetMean(")
    assert re.search(r"spent 1 in \d+ events", single)  # the whole budget, one fit
    distance = float(re.search(r"distance to the exact mean: ([0-9.]+)", single).group(1))
    spread = float(re.search(r"median distance of the data to the mean: ([0-9.]+)",
                             single).group(1))
    assert distance < spread / 5

    shared = _cell(notebook, "BudgetExceededError")
    assert "released a third time" not in shared
    refused = re.search(r"refused: .*epsilon=([0-9.]+) at delta=1e-05, beyond the budget "
                        r"epsilon=1.6 .*nothing was charged", shared)
    assert refused and float(refused.group(1)) > 1.6
    before = re.search(r"after two releases: .*spent ([0-9.]+) in (\d+) events", shared)
    after = re.search(r"after the refused release: .*spent ([0-9.]+) in (\d+) events", shared)
    assert before and after and before.groups() == after.groups()  # nothing charged
    assert 1.0 < float(before.group(1)) < 1.6

    utility = _cell(notebook, "for epsilon in")
    distances = [float(value) for value in
                 re.findall(r"mean distance to the exact mean ([0-9.]+)", utility)]
    assert len(distances) == 4 and distances == sorted(distances, reverse=True)


@pytest.mark.backend_independent
def test_stored_outputs_show_the_refusal_and_the_utility():
    check_outputs(nbformat.read(PATH, as_version=4))
