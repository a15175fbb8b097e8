"""Where the rule constants of ``PrivateMatrixCompletion``'s default come from: synthetic
matrices only.

``python -m benchmarks matrix_completion_defaults``. The constants of the public rule of
``method="auto"`` and of ``"select"`` (``learning.mechanisms.rank_choice``,
``alternating_least_squares.default_regularization``) are checked on public synthetic
problems, none of them the baseline benchmark's data (``baseline_suites.matrix_completion``)
or the tests':

* n_users in (300, 1000, 3000), n_items in (10, 20, 60), a fraction observed in (0.3, 1.0),
  three kinds of rows, epsilon in (0.1, 1, 10), delta 1e-5, three draws each;
* ratings in the public range [-1, 1], clipped to it: item means U(-0.3, 0.3) plus, by
  kind, "rank4" / "rank1": user offsets N(0, 0.15^2), a rank-4 (rank-1) term of entries
  of scale 0.25 and independent noise of scale 0.15; "means": independent noise of
  scale 0.3 alone (no user offset, no low-rank term: the item means are the best
  model); 20% of the observed ratings held out (``split_ratings``);
* the error: RMSE on the held-out ratings.

Settings, each a release at the whole epsilon:

* ``als|ridge=c,z0``: DP-ALS (``method="als"``) with the users' ridge c min(1, z / z0)
  for the release's noise multiplier z (the default: c = 1, z0 = 0.2);
* ``select|share=s``: the private choice (``rank_choice``) with s epsilon for the choice
  (the default s = 0.1) and the default ridges (``rank_choice.RIDGES``);
* ``select|ridges=R``: the choice at s = 0.1 with the ridges R besides the release's own;
* ``item_means``: the private item means alone (``baseline_suites.matrix_completion``);
  ``item_means+offsets``: the same release, each user fitting their own offset to it
  (post-processing in the billboard model; not a default today).

``method="auto"``'s threshold (the choice runs where s epsilon n_users >= K, the default
K = 100) is scored offline from the ``als|ridge=1,0.2`` and ``select|share=0.1`` rows.

The rule (``docs/benchmarks/matrix_completion.md``): a constant keeps its earlier value
unless the best of its grid beats it, in the mean ratio of errors to the best of the
family per (problem, draw, epsilon), by more than two paired standard errors.

Results: ``results/matrix_completion_defaults.csv`` (one row per problem, draw, epsilon and
setting); the summary printed at the end is quoted on
``docs/benchmarks/matrix_completion.md`` ("Measurements behind the defaults").
"""

import dataclasses
import itertools
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

from benchmarks.accounting import write_csv
from benchmarks.baseline_suites.matrix_completion import private_item_means
from geomstats_dp.datasets import split_ratings
from geomstats_dp.learning._local_completion import centred_ratings, complete_rows, rmse
from geomstats_dp.learning.mechanisms import AlternatingLeastSquaresRelease
from geomstats_dp.learning.mechanisms.alternating_least_squares import default_n_iter
from geomstats_dp.learning.mechanisms.rank_choice import INFORMED_CHOICE, rank_choice
from geomstats_dp.privacy import calibrate_gaussian

EPSILONS = (0.1, 1.0, 10.0)
DELTA = 1e-5
N_USERS = (300, 1000, 3000)
N_ITEMS = (10, 20, 60)
KINDS = {"rank4": (4, 0.15, 0.15), "rank1": (1, 0.15, 0.15), "means": (0, 0.0, 0.3)}
HEAVY_KINDS = {"heavy4": (4, 0.15, 0.15), "heavy1": (1, 0.15, 0.15)}  # see synthetic_problem
HEAVY_SHARE, HEAVY_NOISE = 0.1, 0.6  # users with large residuals, their extra noise
OBSERVED = (0.3, 1.0)
N_DRAWS = 3
RANGE = (-1.0, 1.0)
MODEL_RANK = 3  # the estimator's default rank
RIDGE_RULES = tuple(itertools.product((0.3, 1.0, 3.0), (0.05, 0.2, 1.0)))
SHARES = (0.05, 0.1, 0.2)
RIDGE_SETS = ((), (1.0,), (1.0, 10.0), (0.1, 1.0, 10.0))
THRESHOLDS = (0.0, 10.0, 30.0, 100.0, 300.0, 1000.0, np.inf)
OFFSET_RIDGE = 1.0  # the users' ridge of ``item_means+offsets``
EARLIER = {"als|ridge=": "als|ridge=1.0,0.2", "select|share=": "select|share=0.1",
           "select|ridges=": "select|ridges=(1.0, 10.0)"}  # the defaults before this run
EARLIER_THRESHOLD = 100.0


def synthetic_problem(n_users, n_items, kind, observed, seed):
    """Ratings (NaN where unobserved) of the module docstring's model.

    A heavy kind ("heavy4", "heavy1": ``matrix_completion_scores``) adds noise of scale
    ``HEAVY_NOISE`` to the ratings of a random ``HEAVY_SHARE`` of the users (large
    residuals under any model) and observes user u's entries with probability
    observed a_u, a_u ~ U(0.2, 1) (uneven counts: users with few ratings, on whom a small
    ridge overfits)."""
    rank, user_scale, noise = {**KINDS, **HEAVY_KINDS}[kind]
    rng = np.random.default_rng(seed)
    items = rng.uniform(-0.3, 0.3, n_items)
    users = user_scale * rng.standard_normal(n_users)
    low_rank = (rng.standard_normal((n_users, rank)) @ rng.standard_normal((rank, n_items))
                * 0.25 / np.sqrt(max(rank, 1)))
    full = items + users[:, None] + low_rank + noise * rng.standard_normal((n_users, n_items))
    if kind in HEAVY_KINDS:
        heavy = rng.random((n_users, 1)) < HEAVY_SHARE
        full += heavy * HEAVY_NOISE * rng.standard_normal(full.shape)
        observed = observed * rng.uniform(0.2, 1.0, (n_users, 1))
    return np.where(rng.random(full.shape) < observed, np.clip(full, *RANGE), np.nan)


def _spec(n_users, epsilon, regularization=None):
    """The DP-ALS spec the estimator builds for ``rating_range=RANGE``."""
    half = (RANGE[1] - RANGE[0]) / 2
    return AlternatingLeastSquaresRelease(
        n_samples=n_users, rank=MODEL_RANK, epsilon=epsilon, delta=DELTA,
        clip_norm=float(np.sqrt(3 / 8) * half**2),
        n_iter=default_n_iter(epsilon, DELTA), regularization=regularization,
        half_width=half, rating_range=RANGE, offset=sum(RANGE) / 2)


def _completed(fitted, train):
    """What ``PrivateMatrixCompletion.predict`` returns for the release ``fitted``."""
    ratings = centred_ratings(train, RANGE, sum(RANGE) / 2)
    if fitted.get("rank_", MODEL_RANK) == 0:
        return np.broadcast_to(fitted["item_offsets_"], train.shape)
    return np.clip(complete_rows(fitted["item_offsets_"], fitted["item_factors_"], ratings,
                                 fitted["regularization_"]), *RANGE)


def _settings(n_users, epsilon):
    """(name, mechanism spec) of every DP-ALS and choice setting."""
    z = calibrate_gaussian(epsilon, DELTA, default_n_iter(epsilon, DELTA) + 1)
    for c, z0 in RIDGE_RULES:
        yield f"als|ridge={c},{z0}", _spec(n_users, epsilon, c * min(1.0, z / z0))
    for share in SHARES:
        yield f"select|share={share}", rank_choice(_spec(n_users, epsilon), share)
    for ridges in RIDGE_SETS:
        yield f"select|ridges={ridges}", dataclasses.replace(
            rank_choice(_spec(n_users, epsilon)), ridges=ridges)


def _errors(train, test, epsilon, seed):
    """(setting, error) of every setting on one split."""
    for name, spec in _settings(len(train), epsilon):
        fitted = spec.release(train, None, np.random.default_rng(seed))
        yield name, rmse(_completed(fitted, train), test)
    means, _ = private_item_means(train, RANGE, epsilon, DELTA, np.random.default_rng(seed))
    yield "item_means", rmse(np.broadcast_to(means, train.shape), test)
    ratings = centred_ratings(train, RANGE, 0.0)
    offsets = complete_rows(means, np.zeros((len(means), 0)), ratings, OFFSET_RIDGE)
    yield "item_means+offsets", rmse(np.clip(offsets, *RANGE), test)


def run(output_dir, quick=False):
    """Score every setting on every synthetic problem; write the CSV and the summary."""
    problems = list(itertools.product(N_USERS, N_ITEMS, KINDS, OBSERVED, range(N_DRAWS)))
    rows = scored_rows(problems[:2] if quick else problems, _errors)
    write_csv(output_dir / "matrix_completion_defaults.csv", rows)
    summarize(rows)


def scored_rows(problems, errors, first_seed=0):
    """One row per (problem, epsilon, setting): ``errors(train, test, epsilon, seed)``
    yields (setting, error) on each problem's split, seeded by first_seed + its index."""
    rows = []
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for index, (n_users, n_items, kind, observed, draw) in enumerate(problems):
            seed = first_seed + index
            ratings = synthetic_problem(n_users, n_items, kind, observed, seed=seed)
            train, test = split_ratings(ratings, 0.2, random_state=seed)
            for epsilon in EPSILONS:
                for name, error in errors(train, test, epsilon, seed=seed):
                    rows.append({"n_users": n_users, "n_items": n_items, "kind": kind,
                                 "observed": observed, "draw": draw, "epsilon": epsilon,
                                 "setting": name, "error": error})
            print(f"problem {index + 1}/{len(problems)} done", flush=True)
    return rows


def _cells(rows):
    """(n_users, kind, problem, epsilon) -> {setting: error} (rows as written or read)."""
    cells = {}
    for row in rows:
        key = (int(row["n_users"]), row["kind"], (row["n_items"], row["observed"],
                                                  row["draw"]), float(row["epsilon"]))
        cells.setdefault(key, {})[row["setting"]] = float(row["error"])
    return cells


def _paired(ratios, earlier):
    """Mean and standard error of the earlier setting's ratio minus each setting's."""
    gains = {name: np.array(ratios[earlier]) - np.array(v) for name, v in ratios.items()}
    return {name: (g.mean(), g.std(ddof=1) / np.sqrt(len(g))) for name, g in gains.items()}


def _ratios(cells, prefix):
    """Each setting's error over the best of its family, per cell (the same cell order)."""
    ratios = {}
    for errors in cells.values():
        family = {name: e for name, e in errors.items() if name.startswith(prefix)}
        best = min(family.values())
        for name, error in family.items():
            ratios.setdefault(name, []).append(error / best)
    return ratios


def summarize(rows):
    """Print each family's settings ranked (with their paired gain over the earlier
    default), the threshold's, and the rank-0 releases against the default."""
    cells = _cells(rows)
    for prefix, earlier in EARLIER.items():
        ratios = _ratios(cells, prefix)
        gains = _paired(ratios, earlier)
        for name, values in sorted(ratios.items(), key=lambda item: np.mean(item[1])):
            print(f"{name:32s} mean ratio to the family's best {np.mean(values):.4f}, "
                  f"worst {np.max(values):.3f}; gain over {earlier} "
                  f"{gains[name][0]:+.4f} (se {gains[name][1]:.4f})")
    by_threshold = {}
    for threshold in THRESHOLDS:
        ratios, losses = {}, 0
        for (n_users, kind, _, epsilon), errors in cells.items():
            als, select = errors["als|ridge=1.0,0.2"], errors["select|share=0.1"]
            chosen = select if 0.1 * epsilon * n_users >= threshold else als
            ratios.setdefault(kind, []).append(chosen / min(als, select))
            losses += chosen > errors["item_means"]
        every = by_threshold[threshold] = np.concatenate(list(ratios.values()))
        kinds = ", ".join(f"{kind} {np.mean(v):.4f}" for kind, v in ratios.items())
        print(f"auto with K = {threshold:6g}: mean ratio to the better of als and select "
              f"{np.mean(every):.4f} ({kinds}), worst {np.max(every):.3f}; worse than "
              f"the item means in {losses} of {len(every)} cells")
    for threshold, (gain, error) in _paired(by_threshold, EARLIER_THRESHOLD).items():
        print(f"K = {threshold:6g}: gain over K = {EARLIER_THRESHOLD:g} {gain:+.4f} "
              f"(se {error:.4f})")
    for epsilon in EPSILONS:
        chosen = [(e["select|share=0.1"] if 0.1 * epsilon * key[0] >= INFORMED_CHOICE
                   else e["als|ridge=1.0,0.2"], e["item_means"], e["item_means+offsets"])
                  for key, e in cells.items() if key[-1] == epsilon]
        auto, means, offsets = np.array(chosen).T
        print(f"epsilon {epsilon:g}: auto loses to item_means in {np.sum(auto > means)} "
              f"of {len(auto)} cells, to item_means+offsets in {np.sum(auto > offsets)}; "
              f"mean ratios {np.mean(auto / means):.3f}, {np.mean(auto / offsets):.3f}")
