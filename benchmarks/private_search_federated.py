"""The price of tuning PriRFed's rounds and local steps privately.

``python -m benchmarks private_search_federated [--quick]``. The federation of the federated
baselines (``benchmarks.federated_baselines``): geomstats' EMG covariances, SPD(8) with the
affine-invariant metric, 16 agents (4 gestures x 4 contiguous chunks of their windows, 242
to 244 windows each), C = 10 (a bound on the distance from the iterates to a record, from
the data's units), the federated Frechet mean (tangent means at the agents), delta = 1e-5.
Error: the distance of the release to the pooled Frechet mean (the non-private answer,
200 Karcher iterations). At the same total epsilon, ``N_SEEDS`` seeds:

* "hand-tuned": the candidate of ``GRID`` (rounds T x local steps K) with the smallest mean
  error over the seeds, fitted at the whole epsilon: the best choice in hindsight, which
  reads the data and is not private;
* "auto": PriRFed's public default (``federated.defaults``: T <= 10 rounds of one tangent
  mean, the settled rounds averaged), at the whole epsilon;
* "search": ``PrivateGridSearchCV`` over ``GRID`` (its defaults: K Poisson of mean 2m = 12,
  25% of each agent's records for validation, the selection calibrated to half of epsilon,
  the refit on all agents' data at what is left, at half of delta); the score: each agent's
  clipped sum of d^2 / 2 on its validation records (B = 8: most matrices lie 2 to 4 from
  their mean) with its own Gaussian noise, summed by the server (``federated.search_split``);
* "search, laplace score": the same with Laplace noise at the agents.

Results: ``results/private_search_federated.csv`` (one row per fit) and
``results/private_search_federated.png``.
"""

import warnings

import numpy as np
from threadpoolctl import threadpool_limits

from benchmarks.federated import write_csv
from benchmarks.federated_baselines import emg, global_mean
from geomstats_dp._backend import to_backend
from geomstats_dp.federated import PriRFed
from geomstats_dp.model_selection import PrivateGridSearchCV
from geomstats_dp.privacy import PrivacyBudget

DELTA = 1e-5
EPSILONS = (1.0, 4.0, 10.0)
N_SEEDS = 5
GRID = {"n_rounds": [1, 4, 10], "local_steps": [1, 3]}
LOSS_BOUND = 8.0
SEARCHES = {"search": "gaussian", "search, laplace score": "laplace"}
METHODS = ("hand-tuned", "auto", *SEARCHES, "auto at the refit's epsilon")


def _fitted(estimator, agents):
    """``estimator`` fitted on ``agents``; None if its iterate left the manifold."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return estimator.fit(agents)
        except (np.linalg.LinAlgError, ValueError):
            return None


def _candidates(grid):
    return [{"n_rounds": t, "local_steps": k}
            for t in grid["n_rounds"] for k in grid["local_steps"]]


def epsilon_rows(space, agents, clip_norm, target, epsilon, grid, n_seeds):
    """One row per fit at total ``epsilon``: every candidate, "auto", the searches."""
    rows = []

    def row(method, seed, params, fitted, **extra):
        nan = float("nan")
        distance = (nan if fitted is None else
                    float(space.metric.dist(fitted.estimate_, to_backend(target))))
        rows.append({"epsilon": epsilon, "method": method, "seed": seed,
                     "n_rounds": params.get("n_rounds", nan),
                     "local_steps": params.get("local_steps", nan),
                     "distance": distance, "run_epsilon": nan, "refit_epsilon": nan,
                     "spent_epsilon": nan, **extra})

    def auto(seed, fit_epsilon, fit_delta, method, params):
        """A fit of ``params`` (its "auto" settings resolved) at the given guarantee."""
        estimator = PriRFed(space, epsilon=fit_epsilon, delta=fit_delta,
                            clip_norm=clip_norm, random_state=seed, **params)
        fitted = _fitted(estimator, agents)
        row(method, seed, params or {"n_rounds": fitted and fitted.n_rounds_,
                                     "local_steps": fitted and fitted.local_steps_}, fitted)

    for seed in range(n_seeds):
        for params in [*_candidates(grid), {}]:  # {}: the "auto" settings
            auto(seed, epsilon, DELTA, "candidate" if params else "auto", params)
        for method, score_method in SEARCHES.items():
            budget = PrivacyBudget(epsilon, DELTA)
            search = PrivateGridSearchCV(
                PriRFed(space, clip_norm=clip_norm), grid, epsilon=epsilon, delta=DELTA,
                loss_bound=LOSS_BOUND, score_method=score_method, budget=budget,
                random_state=seed)
            chosen = _fitted(search, agents)  # None: the refit failed (the choice is kept)
            row(method, seed, search.__dict__.get("best_params_", {}),
                chosen and chosen.best_estimator_,
                run_epsilon=search.__dict__.get("run_epsilon_", float("nan")),
                refit_epsilon=search.__dict__.get("refit_epsilon_", float("nan")),
                spent_epsilon=budget.spent_epsilon)
            if method == "search":  # the refit's guarantee: public
                refit = (search.refit_epsilon_, search.refit_fraction * DELTA)
        # the public default at what the search leaves its refit: the price of the share
        # of epsilon alone
        auto(seed, *refit, "auto at the refit's epsilon", {})
    means = {}
    for r in rows:
        if r["method"] == "candidate":
            means.setdefault((r["n_rounds"], r["local_steps"]), []).append(r["distance"])
    # reads the data; a candidate whose fit fails in some seed is not the best
    best = min(means, key=lambda key: np.mean(np.nan_to_num(means[key], nan=np.inf)))
    for r in rows:
        r["hand_tuned"] = (r["method"] == "candidate"
                           and (r["n_rounds"], r["local_steps"]) == best)
    return rows


def summary(rows):
    """epsilon -> method -> (mean distance, its standard error, number of failed fits).

    The mean and standard error are over the seeds whose fit succeeded."""
    table = {}
    for epsilon in sorted({r["epsilon"] for r in rows}):
        subset = [r for r in rows if r["epsilon"] == epsilon]
        table[epsilon] = {}
        for method in METHODS:
            values = np.array([r["distance"] for r in subset
                               if (r["hand_tuned"] if method == "hand-tuned"
                                   else r["method"] == method)])
            finite = values[np.isfinite(values)]
            table[epsilon][method] = (
                float(np.mean(finite)) if len(finite) else float("nan"),
                float(np.std(finite, ddof=1) / np.sqrt(len(finite))) if len(finite) > 1
                else 0.0,
                int(len(values) - len(finite)))
    return table


def plot(rows, path):
    """Mean distance (+- 2 s.e.) against epsilon, one line per method."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    table = summary(rows)
    epsilons = sorted(table)
    figure, axis = plt.subplots(figsize=(5.5, 4))
    for method in METHODS:
        means, errors, _ = zip(*(table[e][method] for e in epsilons))
        axis.errorbar(epsilons, means, yerr=2 * np.array(errors), marker="o", capsize=3,
                      label=method)
    axis.set(xscale="log", yscale="log", xlabel="total epsilon (delta 1e-5)",
             ylabel="distance to the pooled Frechet mean",
             title="PriRFed on EMG, 16 agents: T x K chosen privately")
    axis.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def run(output_dir, quick=False):
    """Run every epsilon; write the CSV and the plot; print the summary."""
    space, agents, clip_norm = emg()
    if quick:
        agents = [points[:40] for points in agents]
    epsilons = EPSILONS[1:2] if quick else EPSILONS
    grid = {"n_rounds": [1, 10], "local_steps": [1]} if quick else GRID
    rows = []
    with threadpool_limits(1):
        target = global_mean(space, agents, np.eye(8))
        for epsilon in epsilons:
            rows += epsilon_rows(space, agents, clip_norm, target, epsilon, grid,
                                 1 if quick else N_SEEDS)
            print(epsilon, {method: tuple(round(v, 4) for v in cell)  # mean, s.e., failed
                            for method, cell in summary(rows)[epsilon].items()}, flush=True)
    write_csv(output_dir / "private_search_federated.csv", rows)
    plot(rows, output_dir / "private_search_federated.png")
