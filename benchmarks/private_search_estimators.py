"""The price of tuning privately for matrix completion and structured prediction.

``python -m benchmarks private_search_estimators``. The data, splits and error measures
are those of the baseline suites (``benchmarks.baseline_suites``), delta = 1e-5,
3 seeds. For each estimator, at the same total epsilon:

* "default": the estimator's public defaults, fitted at the whole epsilon;
* "search": ``PrivateGridSearchCV`` over the grid (its defaults: K Poisson of mean 2m,
  a 25% validation part, refit on the whole training data with what is left of epsilon);
* "hand-tuned": the candidate of the grid with the smallest mean test error over the seeds,
  each fitted at the whole epsilon: the best choice in hindsight, which reads the test data
  and is not private;
* "non_private": the suite's non-private answer.

Settings (public):

* ``PrivateMatrixCompletion`` (DP-ALS, ``rating_range=(1, 5)``) on MovieLens-100K, the
  suite's split (20% of the ratings held out, seeded by the seed); grid: ``rank`` in
  {2, 3, 5}; score: each validation user's mean squared error on their ratings, clipped to
  B = 16 (the squared width of the rating range); error: test RMSE. Total epsilon 1 and 4.
* ``PrivateStructuredPrediction`` (its default on S^1: the extrinsic release) on
  segment_hue (KEEL segment, the mean hue on S^1, 2,000 training and 200 test regions);
  grid: ``bandwidth`` in {0.5, 1, 2} x the median distance between the (public) training
  features, the default being 1 x; score: the squared geodesic distance, clipped to
  B = pi^2 (the diameter of S^1, squared); error: the mean geodesic distance to the
  held-out targets. Total epsilon 1 and 10.

PriRFed's rounds and local steps are searched in ``benchmarks.private_search_federated``
(each agent's records split, the score noised at the agents).

Results: ``results/private_search_estimators.csv`` (one row per fit).
"""

import warnings

import numpy as np
from threadpoolctl import threadpool_limits

from benchmarks.accounting import write_csv
from benchmarks.baseline_suites import matrix_completion, structured_prediction
from geomstats_dp._backend import to_numpy
from geomstats_dp.datasets import split_ratings
from geomstats_dp.learning import PrivateMatrixCompletion, PrivateStructuredPrediction
from geomstats_dp.learning.matrix_completion import rmse
from geomstats_dp.learning.structured_prediction import (
    median_bandwidth,
    nonprivate_prediction,
)
from geomstats_dp.model_selection import PrivateGridSearchCV
from geomstats_dp.privacy import PrivacyBudget

DELTA = 1e-5
N_SEEDS = 3
BANDWIDTH_MULTIPLES = (0.5, 1.0, 2.0)


class MatrixCompletionTask:
    """PrivateMatrixCompletion on MovieLens-100K, the rank searched."""

    name, dataset, parameter = "PrivateMatrixCompletion", "movielens_100k", "rank"
    epsilons, loss_bound = (1.0, 4.0), 16.0

    def __init__(self, quick):
        ratings, self.rating_range = matrix_completion.DATASETS[self.dataset]()
        self.ratings = ratings[:300] if quick else ratings
        self.values = (2, 5) if quick else (2, 3, 5)
        self.default = PrivateMatrixCompletion().rank

    def data(self, seed):
        """(training data, test data) of the suite's split for ``seed``."""
        return split_ratings(self.ratings, matrix_completion.TEST_SIZE, random_state=seed)

    def estimator(self, epsilon, seed, **params):
        return PrivateMatrixCompletion(epsilon=epsilon, delta=DELTA,
                                       rating_range=self.rating_range, random_state=seed,
                                       **params)

    def fit(self, estimator, train):
        return estimator.fit(train)

    def error(self, estimator, train, test):
        """Test RMSE of each user's completed row."""
        return rmse(estimator.predict(train), test)

    def non_private(self, train, test):
        return rmse(matrix_completion.non_private_als(train, self.rating_range), test)


class StructuredPredictionTask:
    """PrivateStructuredPrediction on segment_hue, the kernel's bandwidth searched."""

    name, dataset, parameter = "PrivateStructuredPrediction", "segment_hue", "bandwidth"
    epsilons, loss_bound = (1.0, 10.0), float(np.pi**2)

    def __init__(self, quick):
        self.space, self.clip_norm, X, Y, train, test = (
            structured_prediction.datasets(quick)[self.dataset])
        self.split = (X[train], Y[train]), (X[test], Y[test])
        median = median_bandwidth(X[train])  # features are public (label-level privacy)
        multiples = BANDWIDTH_MULTIPLES[::2] if quick else BANDWIDTH_MULTIPLES
        self.values = tuple(float(m * median) for m in multiples)
        self.default = float(median)

    def data(self, seed):
        """(training pairs, test pairs): the suite's split, the same for every seed."""
        return self.split

    def estimator(self, epsilon, seed, **params):
        return PrivateStructuredPrediction(self.space, epsilon=epsilon, delta=DELTA,
                                           clip_norm=self.clip_norm, random_state=seed,
                                           **params)

    def fit(self, estimator, train):
        return estimator.fit(*train)

    def error(self, estimator, train, test):
        """Mean geodesic distance of the predictions to the test targets."""
        X, Y = test
        return structured_prediction._error(self.space, estimator.predict(X), Y)

    def non_private(self, train, test):
        model = PrivateStructuredPrediction(self.space, clip_norm=self.clip_norm,
                                            method="rgd").fit(*train)
        exact = np.stack([to_numpy(nonprivate_prediction(self.space, row, train[1], 100))
                          for row in model.weights(test[0])])
        return structured_prediction._error(self.space, exact, test[1])


TASKS = (MatrixCompletionTask, StructuredPredictionTask)


def _search_rows(task, epsilon, seed, train, test):
    """The private search at total ``epsilon``: one row."""
    budget = PrivacyBudget(epsilon, DELTA)
    search = PrivateGridSearchCV(
        task.estimator(epsilon, None), {task.parameter: list(task.values)},
        epsilon=epsilon, delta=DELTA, loss_bound=task.loss_bound, budget=budget,
        random_state=seed,
    )
    task.fit(search, train)
    return {"method": "search", "value": search.best_params_[task.parameter],
            "error": task.error(search.best_estimator_, train, test),
            "run_epsilon": search.run_epsilon_, "refit_epsilon": search.refit_epsilon_,
            "spent_epsilon": budget.spent_epsilon}


def task_rows(task, n_seeds, epsilons):
    """One row per fit: every candidate, the default, the search, the non-private answer."""
    rows = []
    nan = float("nan")
    for seed in range(n_seeds):
        train, test = task.data(seed)
        base = {"estimator": task.name, "dataset": task.dataset, "seed": seed,
                "parameter": task.parameter, "run_epsilon": nan, "refit_epsilon": nan,
                "spent_epsilon": nan}
        rows.append({**base, "epsilon": float("inf"), "method": "non_private",
                     "value": nan, "error": task.non_private(train, test)})
        for epsilon in epsilons:
            row = {**base, "epsilon": epsilon}
            for value in task.values:
                estimator = task.fit(task.estimator(epsilon, seed, **{task.parameter: value}),
                                     train)
                rows.append({**row, "method": "candidate", "value": value,
                             "error": task.error(estimator, train, test)})
            estimator = task.fit(task.estimator(epsilon, seed), train)
            rows.append({**row, "method": "default", "value": task.default,
                         "error": task.error(estimator, train, test)})
            rows.append({**row, **_search_rows(task, epsilon, seed, train, test)})
    for epsilon in epsilons:
        hand = _hand_tuned(rows, epsilon)
        for r in rows:
            if r["epsilon"] == epsilon and r["method"] == "candidate" and r["value"] == hand:
                rows.append({**r, "method": "hand-tuned"})
    return rows


def _hand_tuned(rows, epsilon):
    """The candidate value with the smallest mean test error over the seeds."""
    errors = {}
    for r in rows:
        if r["method"] == "candidate" and r["epsilon"] == epsilon:
            errors.setdefault(r["value"], []).append(r["error"])
    return min(errors, key=lambda value: np.nanmean(errors[value]))


def summary(rows):
    """(estimator, epsilon) -> method -> (mean error, values chosen)."""
    table = {}
    for r in rows:
        if r["method"] != "candidate":
            cell = table.setdefault((r["estimator"], r["epsilon"]), {}).setdefault(
                r["method"], ([], []))
            cell[0].append(r["error"])
            cell[1].append(r["value"])
    return {key: {method: (float(np.nanmean(errors)), values)
                  for method, (errors, values) in methods.items()}
            for key, methods in table.items()}


def run(output_dir, quick=False):
    """Run both estimators; write the CSV; print the summary."""
    rows = []
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for make_task in TASKS:
            task = make_task(quick)
            rows += task_rows(task, 1 if quick else N_SEEDS,
                              task.epsilons[:1] if quick else task.epsilons)
    for key, methods in summary(rows).items():
        print(key, {method: (round(error, 4), values)
                    for method, (error, values) in methods.items()}, flush=True)
    write_csv(output_dir / "private_search_estimators.csv", rows)
