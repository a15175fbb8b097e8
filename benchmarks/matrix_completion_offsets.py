"""How strictly users keep their own offset on the item means: the third synthetic run
behind ``PrivateMatrixCompletion``'s rank-0 release (issue 31).

``python -m benchmarks matrix_completion_offsets``. The baseline suite, rerun with the
rule of ``matrix_completion_auto_rule``, lost a new cell (magic, epsilon 0.1) to the
users' own shrunk offsets, c_u max(0, 1 - tau s_u^2 / (k_u c_u^2)) with tau = 1
(``_local_completion.shrunk_offsets``), where the rows carry no offset. A stricter tau
keeps fewer offsets (tau = 2: about those a leave-one-out check on the user's own ratings
keeps). Scored here on other draws of the same 1,080 problems
(``matrix_completion_rank0``, seeds from 40,000), each a release at the whole epsilon:

* ``als``: DP-ALS alone;
* ``select|tau=t``: the choice (``rank_choice``) with its offsets candidate at tau = t;
* ``means|tau=t``: the rank-0 release (``method="means"``) completed at tau = t (one
  release, post-processed three ways);
* ``item_means``: the private item means (``baseline_suites.matrix_completion``).

Every rule runs the methods of ``method="auto"`` (``rank_choice.auto_method``: the choice
where 0.1 epsilon n >= 300, the rank-0 release where n / (sqrt(m) z) >= 10, else DP-ALS);
the rule in force has tau = 1, the candidates tau in (2, 4). The decision rule, stated
before the run, is the one of the two runs before (``matrix_completion_rank0.judge``): a
class is an (n_users, n_items, epsilon) triple (30 cells); a candidate is admissible if
no class it touches has a mean ratio to the item means above the rule in force's by more
than two paired standard errors; the admissible candidate of lowest mean ratio is adopted
if it beats the rule in force by more than two paired standard errors over every cell.

Results: ``results/matrix_completion_offsets.csv``; the summary is quoted on
``docs/benchmarks/matrix_completion.md``.
"""

import dataclasses

import numpy as np

from benchmarks.matrix_completion_defaults import (
    _spec,
)
from benchmarks.matrix_completion_rank0 import (
    _table,
    choice_error,
    item_means_error,
    judge,
    print_kinds,
    released_means,
    score,
)
from geomstats_dp.learning.mechanisms.rank_choice import auto_method, rank_choice

STRICTNESS = (1.0, 2.0, 4.0)
IN_FORCE = 1.0


def _errors(train, test, epsilon, seed):
    """(setting, error) of every setting on one split."""
    n_users = len(train)
    fitted = _spec(n_users, epsilon).release(train, None, np.random.default_rng(seed))
    yield "als", choice_error(fitted, train, test)
    for tau in STRICTNESS:
        spec = dataclasses.replace(rank_choice(_spec(n_users, epsilon)), strictness=tau)
        fitted = spec.release(train, None, np.random.default_rng(seed))
        yield f"select|tau={tau:g}", choice_error(fitted, train, test, tau)
    item = released_means(train, epsilon, seed)
    for tau in STRICTNESS:
        yield f"means|tau={tau:g}", choice_error(
            {"rank_": 0, "user_offsets_": True, "item_offsets_": item}, train, test, tau)
    yield "item_means", item_means_error(train, test, epsilon, seed)


def run(output_dir, quick=False):
    """Score every setting on fresh draws; write the CSV and the summary."""
    summarize(score(output_dir, quick, _errors, 40_000, "matrix_completion_offsets"))


def _released(keys, ratios, tau):
    """Each cell's ratio under ``auto_method`` with the users' offsets at ``tau``."""
    methods = []
    for n_users, n_items, epsilon, *_ in keys:
        method = auto_method(n_users, n_items, epsilon, _spec(n_users, epsilon).noise_multiplier)
        methods.append(method if method == "als" else f"{method}|tau={tau:g}")
    return np.array([ratios[m][i] for i, m in enumerate(methods)]), np.array(methods)


def summarize(rows):
    """Every tau's summary (``judge``), each setting's mean ratio by kind, the adopted."""
    keys, ratios = _table(rows)
    adopted = judge(keys, ratios, STRICTNESS, _released, IN_FORCE)
    print_kinds(keys, ratios)
    print(f"adopted: tau = {adopted:g}")
