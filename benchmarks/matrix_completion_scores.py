"""Where the held-out score of ``PrivateMatrixCompletion``'s choice comes from: synthetic
matrices only (issue 31, ``method="select"``).

``python -m benchmarks matrix_completion_scores``. The choice (``rank_choice``) scores
each candidate by minus the sum over users of the user's held-out error, clipped to
B = c h^p (its sensitivity). Scored here, on the problems of
``matrix_completion_defaults`` (public range [-1, 1], 20% of the observed ratings held
out, epsilon in (0.1, 1, 10)) and its heavy kinds ("heavy4", "heavy1": a tenth of the
users with residuals of scale 0.6, uneven counts, ``synthetic_problem``), two draws each:

* ``select|squared,c``: each user's mean squared error, clipped to c h^2, c in
  (0.25, 0.5, 1, 4) (0.25: the earlier default; 4: no clip, (2h)^2 the largest error);
* ``select|root,c``: its square root, clipped to c h, c in (0.25, 0.5, 1, 2);
* ``select|absolute,c``: the mean absolute error, clipped to c h, c in (0.25, 0.5, 1, 2);
* ``item_means``: the private item means at the whole epsilon (the losses counted).

The rule, stated before the run: the score (kind and clip together) keeps its earlier
value unless the best of the grid beats it, in the mean ratio of the held-out RMSE to the
best of the family per (problem, draw, epsilon) cell, over every cell, by more than two
paired standard errors. The summary also gives each setting's mean ratio per kind and on
the cells where ``method="auto"`` runs the choice (``informed_choice``).

Results: ``results/matrix_completion_scores.csv``; the summary printed at the end is
quoted on ``docs/benchmarks/matrix_completion.md``.
"""

import dataclasses
import itertools

import numpy as np

from benchmarks.accounting import write_csv
from benchmarks.baseline_suites.matrix_completion import private_item_means
from benchmarks.matrix_completion_defaults import (
    DELTA,
    HEAVY_KINDS,
    KINDS,
    N_ITEMS,
    N_USERS,
    OBSERVED,
    RANGE,
    _cells,
    _completed,
    _paired,
    _ratios,
    _spec,
    scored_rows,
)
from geomstats_dp.learning._local_completion import rmse
from geomstats_dp.learning.mechanisms.rank_choice import informed_choice, rank_choice

N_DRAWS = 2
SCORE_GRID = {"squared": (0.25, 0.5, 1.0, 4.0), "root": (0.25, 0.5, 1.0, 2.0),
              "absolute": (0.25, 0.5, 1.0, 2.0)}
EARLIER = "select|squared,0.25"


def _errors(train, test, epsilon, seed):
    """(setting, error) of every score and of the item means on one split."""
    base = rank_choice(_spec(len(train), epsilon))
    for score, clips in SCORE_GRID.items():
        for clip in clips:
            spec = dataclasses.replace(base, score=score, clip=clip)
            fitted = spec.release(train, None, np.random.default_rng(seed))
            yield f"select|{score},{clip}", rmse(_completed(fitted, train), test)
    means, _ = private_item_means(train, RANGE, epsilon, DELTA, np.random.default_rng(seed))
    yield "item_means", rmse(np.broadcast_to(means, train.shape), test)


def run(output_dir, quick=False):
    """Score every setting on every synthetic problem; write the CSV and the summary."""
    problems = list(itertools.product(N_USERS, N_ITEMS, {**KINDS, **HEAVY_KINDS}, OBSERVED,
                                      range(N_DRAWS)))
    # other draws than matrix_completion_defaults'
    rows = scored_rows(problems[:2] if quick else problems, _errors, first_seed=10_000)
    write_csv(output_dir / "matrix_completion_scores.csv", rows)
    summarize(rows)


def summarize(rows):
    """Print the settings ranked with their paired gain over the earlier score, their
    mean ratio per kind and on the informed cells, and the losses to the item means."""
    cells = _cells(rows)
    ratios = _ratios(cells, "select|")
    gains = _paired(ratios, EARLIER)
    informed = np.array([informed_choice(n_users, epsilon)
                         for n_users, _, _, epsilon in cells])
    kinds = np.array([kind for _, kind, _, _ in cells])
    for name, values in sorted(ratios.items(), key=lambda item: np.mean(item[1])):
        values = np.array(values)
        by_kind = ", ".join(f"{kind} {values[kinds == kind].mean():.4f}"
                            for kind in dict.fromkeys(kinds))
        losses = sum(errors[name] > errors["item_means"] for errors in cells.values())
        print(f"{name:24s} mean ratio {values.mean():.4f} (informed "
              f"{values[informed].mean():.4f}; {by_kind}), worst {values.max():.3f}; "
              f"gain over {EARLIER} {gains[name][0]:+.4f} (se {gains[name][1]:.4f}); "
              f"worse than item_means in {losses} of {len(values)}")
