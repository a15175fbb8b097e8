"""A three-way ``method="auto"`` for ``PrivateMatrixCompletion``, checked on fresh
synthetic draws (issue 31; the second run after ``matrix_completion_rank0``).

``python -m benchmarks matrix_completion_auto_rule``. The first run
(``matrix_completion_rank0``) adopted, under its stated rule, the choice with the new
rank-0 candidates where a tenth of epsilon times n reaches 100 and DP-ALS alone elsewhere
(the rule now in force); it also showed the rank-0 release (``method="means"``) ahead of
DP-ALS below that threshold except at the lowest signal, one class of which (1,000 users,
60 items, epsilon 0.1) it lost. A hypothesis drawn from that run is checked here on other
draws of the same problems (``matrix_completion_rank0._errors``, seeds from 30,000):

the rule R(K, S): "select" where 0.1 epsilon n >= K; else "means" where the public
signal ratio n / (sqrt(m) z) reaches S (``rank_choice.signal_ratio``, z the noise
multiplier of DP-ALS alone at (epsilon, delta)); else "als". K in (100, 300, 1000), S in
(0, 1, 3, 10, 30, inf); the rule in force is R(100, inf).

The decision rule, stated before the run, is the first run's: a class is an
(n_users, n_items, epsilon) triple (30 cells); a rule is admissible if in every class
where it releases differently from the rule in force its mean ratio to the item means is
not above that rule's by more than two paired standard errors; the admissible rule of
lowest mean ratio over every cell is adopted if it beats the rule in force by more than
two paired standard errors over every cell. Reported with it: the classes each rule loses
to the item means by more than two standard errors.

Results: ``results/matrix_completion_auto_rule.csv``; the summary is quoted on
``docs/benchmarks/matrix_completion.md``.
"""

import itertools

import numpy as np

from benchmarks.matrix_completion_defaults import _spec
from benchmarks.matrix_completion_rank0 import _errors, _table, judge, score
from geomstats_dp.learning.mechanisms.rank_choice import signal_ratio

THRESHOLDS = (100.0, 300.0, 1000.0)
SIGNALS = (0.0, 1.0, 3.0, 10.0, 30.0, np.inf)
IN_FORCE = (100.0, np.inf)


def run(output_dir, quick=False):
    """Score every setting on fresh draws; write the CSV and the summary."""
    summarize(score(output_dir, quick, _errors, 30_000, "matrix_completion_auto_rule"))


def _released(keys, ratios, rule):
    """Each cell's ratio under R(K, S) and the method it runs."""
    threshold, signal = rule
    methods = []
    for n_users, n_items, epsilon, *_ in keys:
        z = _spec(n_users, epsilon).noise_multiplier
        if 0.1 * epsilon * n_users >= threshold:
            methods.append("select")
        else:
            methods.append("means" if signal_ratio(n_users, n_items, z) >= signal else "als")
    return np.array([ratios[m][i] for i, m in enumerate(methods)]), np.array(methods)


def summarize(rows):
    """Every rule's summary (``matrix_completion_rank0.judge``) and the adopted rule."""
    keys, ratios = _table(rows)
    adopted = judge(keys, ratios, itertools.product(THRESHOLDS, SIGNALS), _released,
                    IN_FORCE)
    print(f"adopted: R(K = {adopted[0]:g}, S = {adopted[1]:g})")
