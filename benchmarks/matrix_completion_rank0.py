"""Where ``PrivateMatrixCompletion``'s rank-0 release and its ``method="auto"`` rule come
from: synthetic matrices only (issue 31, "never below the trivial answer").

``python -m benchmarks matrix_completion_rank0``. On the problems of
``matrix_completion_defaults`` (public range [-1, 1], 20% of the observed ratings held
out, epsilon in (0.1, 1, 10)) with its five kinds of rows (rank 4, rank 1, item means
alone, and the two heavy-tailed kinds of ``synthetic_problem``), 5, 10, 20 or 60 items
(5: few items), other draws (three each), each setting a release at the whole epsilon:

* ``als``: DP-ALS alone (``method="als"``; the rule's branch before this run);
* ``select|raw``: the private choice as it was (its rank-0 candidate the unshrunk item
  means, ``RankChoiceRelease(rank0=("raw",))``);
* ``select``: the choice with the two rank-0 candidates of ``rank_choice.RANK0`` (the
  shrunk item means, and each user adding their own shrunk offset);
* ``means``: the rank-0 release alone (``method="means"``, ``mechanisms.item_means``);
* ``item_means``: the private item means (``baseline_suites.matrix_completion``), the
  trivial answer every ratio is taken against.

A rule picks, from public quantities only, the choice where a tenth of epsilon times the
number of users reaches K, else a one-candidate release. The rule before this run:
``select|raw`` at K = 100, else ``als``. Candidates: the choice ``select|raw`` or
``select``, the other branch ``als`` or ``means``, K in ``THRESHOLDS``.

The decision rule, stated before the run: each cell's error is the held-out RMSE over
the item means' on the same split; a class is an (n_users, n_items, epsilon) triple (the
public quantities; 30 cells: five kinds, two observed fractions, three draws). A
candidate rule is admissible if in every class where it releases differently from the
rule before, its mean ratio is not above that rule's by more than two paired standard
errors (it wins or ties every class it touches). The admissible rule of lowest mean ratio
over every cell is adopted if that mean beats the rule before by more than two paired
standard errors; otherwise nothing changes. Reported with it: the classes where a rule
loses to the item means by more than two standard errors.

Results: ``results/matrix_completion_rank0.csv``; the summary printed at the end is quoted
on ``docs/benchmarks/matrix_completion.md``.
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
    N_USERS,
    OBSERVED,
    RANGE,
    _completed,
    _spec,
    scored_rows,
)
from geomstats_dp.learning._local_completion import (
    OFFSET_STRICTNESS,
    complete_offsets,
    rmse,
)
from geomstats_dp.learning.mechanisms.item_means import ItemMeansRelease
from geomstats_dp.learning.mechanisms.rank_choice import rank_choice

N_ITEMS = (5, 10, 20, 60)
N_DRAWS = 3
THRESHOLDS = (30.0, 100.0, 300.0, 1000.0, np.inf)
EARLIER = ("select|raw", "als", 100.0)


def choice_error(fitted, train, test, strictness=OFFSET_STRICTNESS):
    """The held-out RMSE of what ``PrivateMatrixCompletion.predict`` returns for the
    release ``fitted`` (a rank-0 release with the users' own offsets at ``strictness``)."""
    if fitted.get("rank_") == 0 and fitted["user_offsets_"]:
        completed = complete_offsets(fitted["item_offsets_"], train, strictness)
        return rmse(np.clip(completed, *RANGE), test)
    return rmse(_completed(fitted, train), test)


def released_means(train, epsilon, seed):
    """The item offsets of the rank-0 release (``method="means"``) at the whole epsilon."""
    means = ItemMeansRelease(n_samples=len(train), epsilon=epsilon, delta=DELTA,
                             half_width=1.0, clip_norm=float(np.sqrt(3 / 8)),
                             rating_range=RANGE, offset=0.0)
    return means.release(train, None, np.random.default_rng(seed))["item_offsets_"]


def item_means_error(train, test, epsilon, seed):
    """The held-out RMSE of the private item means (the baseline suite's)."""
    item, _ = private_item_means(train, RANGE, epsilon, DELTA, np.random.default_rng(seed))
    return rmse(np.broadcast_to(item, train.shape), test)


def _errors(train, test, epsilon, seed):
    """(setting, error) of every setting on one split."""
    n_users = len(train)
    choice = rank_choice(_spec(n_users, epsilon))
    settings = {"als": _spec(n_users, epsilon),
                "select|raw": dataclasses.replace(choice, rank0=("raw",)),
                "select": choice}
    for name, spec in settings.items():
        fitted = spec.release(train, None, np.random.default_rng(seed))
        yield name, choice_error(fitted, train, test)
    item = released_means(train, epsilon, seed)
    yield "means", choice_error({"rank_": 0, "user_offsets_": True,
                                 "item_offsets_": item}, train, test)
    yield "item_means", item_means_error(train, test, epsilon, seed)


def score(output_dir, quick, errors, first_seed, name):
    """Score ``errors`` on every problem (five kinds, ``N_ITEMS``, draws seeded from
    ``first_seed``); write ``name``.csv and return its rows."""
    problems = list(itertools.product(N_USERS, N_ITEMS, {**KINDS, **HEAVY_KINDS},
                                      OBSERVED, range(N_DRAWS)))
    rows = scored_rows(problems[:2] if quick else problems, errors, first_seed=first_seed)
    write_csv(output_dir / f"{name}.csv", rows)
    return rows


def run(output_dir, quick=False):
    """Score every setting on every synthetic problem; write the CSV and the summary."""
    # other draws than matrix_completion_defaults' and matrix_completion_scores'
    summarize(score(output_dir, quick, _errors, 20_000, "matrix_completion_rank0"))


def _table(rows):
    """Cell keys [n_cells, 4] (n_users, n_items, epsilon, kind) and each setting's ratio
    to the item means [n_cells]."""
    cells = {}
    for row in rows:
        key = (int(row["n_users"]), int(row["n_items"]), float(row["epsilon"]), row["kind"],
               float(row["observed"]), int(row["draw"]))
        cells.setdefault(key, {})[row["setting"]] = float(row["error"])
    keys = list(cells)
    ratios = {name: np.array([cells[key][name] / cells[key]["item_means"] for key in keys])
              for name in cells[keys[0]]}
    return keys, ratios


def _released(keys, ratios, rule):
    """The ratio of a rule (choice, other branch, K) per cell, and the setting it runs."""
    choice, other, threshold = rule
    methods = np.array([choice if 0.1 * epsilon * n_users >= threshold else other
                        for n_users, _, epsilon, *_ in keys])
    return np.array([ratios[m][i] for i, m in enumerate(methods)]), methods


def _by_class(keys, values):
    """Mean and standard error of ``values`` per (n_users, n_items, epsilon) class."""
    classes = {}
    for key, value in zip(keys, values):
        classes.setdefault(key[:3], []).append(value)
    return {c: (np.mean(v), np.std(v, ddof=1) / np.sqrt(len(v))) for c, v in classes.items()}


def judge(keys, ratios, rules, released, in_force):
    """Print every rule's mean ratio, its classes worse than the rule in force (of those
    it touches) and lost to the item means; return the rule the decision adopts."""
    before, before_methods = released(keys, ratios, in_force)
    admissible = {}
    for rule in rules:
        values, methods = released(keys, ratios, rule)
        touched = {key[:3] for key, d in zip(keys, methods != before_methods) if d}
        losses = [c for c, (mean, se) in _by_class(keys, values - before).items()
                  if c in touched and mean > 2 * se]
        lost = [c for c, (mean, se) in _by_class(keys, values).items() if mean - 1 > 2 * se]
        gain = before - values
        gain_se = np.std(gain, ddof=1) / np.sqrt(len(gain))
        if not losses:
            admissible[rule] = (np.mean(values), np.mean(gain), gain_se)
        print(f"{rule}: mean ratio {np.mean(values):.4f}, gain {np.mean(gain):+.4f} (se "
              f"{gain_se:.4f}); classes worse than the rule in force {len(losses)} of "
              f"{len(touched)} touched {sorted(losses)}; lost to the item means "
              f"{len(lost)} {sorted(lost)}")
    best = min(admissible, key=lambda rule: admissible[rule][0])
    _, gain, gain_se = admissible[best]
    print(f"best admissible {best}: gain {gain:+.4f}, se {gain_se:.4f}")
    return best if gain > 2 * gain_se else in_force


def print_kinds(keys, ratios):
    """Print each setting's mean ratio over every cell and by kind of rows."""
    for name, values in ratios.items():
        kinds = {kind: np.mean(values[[key[3] == kind for key in keys]])
                 for kind in dict.fromkeys(key[3] for key in keys)}
        print(f"{name:14s} mean ratio {np.mean(values):.4f} (" + ", ".join(
            f"{kind} {value:.4f}" for kind, value in kinds.items()) + ")")


def summarize(rows):
    """Every rule's summary (``judge``), each setting's mean ratio by kind, and the
    adopted rule (the module docstring's decision)."""
    keys, ratios = _table(rows)
    rules = itertools.product(("select|raw", "select"), ("als", "means"), THRESHOLDS)
    adopted = judge(keys, ratios, rules, _released, EARLIER)
    print_kinds(keys, ratios)
    print(f"adopted: {adopted[0]} where 0.1 epsilon n >= {adopted[2]:g}, else {adopted[1]}")
