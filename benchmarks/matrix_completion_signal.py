"""The signal threshold of ``method="auto"`` rechecked with the users' offsets at
tau = 2: the fourth synthetic run behind ``PrivateMatrixCompletion``'s rule (issue 31).

``python -m benchmarks matrix_completion_signal``. ``matrix_completion_auto_rule`` chose
the signal threshold S = 10 (the rank-0 release where n / (sqrt(m) z) >= 10 below the
choice, DP-ALS alone elsewhere) with the users' offsets at tau = 1; below S, DP-ALS alone
had won or tied. ``matrix_completion_offsets`` then adopted tau = 2, which makes the
rank-0 release better on rows without offsets. Rechecked here on other draws of the same
1,080 problems (``matrix_completion_rank0._errors`` at tau = 2, seeds from 50,000): the
rules R(300, S) of ``matrix_completion_auto_rule``, S in (0, 1, 2, 3, 5), against the rule
in force R(300, 10), with the same decision rule, stated before the run
(``matrix_completion_rank0.judge``: a candidate is admissible if no (n_users, n_items,
epsilon) class it touches has a mean ratio to the item means above the rule in force's by
more than two paired standard errors; the admissible one of lowest mean ratio is adopted
if it beats the rule in force by more than two paired standard errors over every cell).

Results: ``results/matrix_completion_signal.csv``; the summary is quoted on
``docs/benchmarks/matrix_completion.md``.
"""

import itertools

from benchmarks.matrix_completion_auto_rule import _released
from benchmarks.matrix_completion_rank0 import (
    _errors,
    _table,
    judge,
    print_kinds,
    score,
)

SIGNALS = (0.0, 1.0, 2.0, 3.0, 5.0, 10.0)
IN_FORCE = (300.0, 10.0)


def run(output_dir, quick=False):
    """Score every setting on fresh draws; write the CSV and the summary."""
    summarize(score(output_dir, quick, _errors, 50_000, "matrix_completion_signal"))


def summarize(rows):
    """Every rule's summary (``judge``), each setting by kind, and the adopted rule."""
    keys, ratios = _table(rows)
    rules = itertools.product((IN_FORCE[0],), SIGNALS)
    adopted = judge(keys, ratios, rules, _released, IN_FORCE)
    print_kinds(keys, ratios)
    print(f"adopted: R(K = {adopted[0]:g}, S = {adopted[1]:g})")
