"""The stages one record reaches cost no more than the ledger claims
(``check_touched_stages``): each neighbour's fit is replayed and the stages whose
statistic moved are composed independently (``testing._composition``), as the release
composes them, against the ledger's claim."""

import collections

import numpy as np

from geomstats_dp._backend import to_numpy
from geomstats_dp.testing._accounting import (
    _AGENT,
    _assert_not_below,
    _claimed,
    _delta_of,
    _federation,
    _groups,
    _ledger_kind,
    _selection_independent,
)
from geomstats_dp.testing._composition import (
    independent_epsilon,
    public_sampling_epsilon,
    stages_pld,
)
from geomstats_dp.testing._neighbours import default_neighbours
from geomstats_dp.testing._recording import record_fit, replay_fit


def _moved(first, second):
    """Whether a stage's statistic (for an exponential stage, its utilities) moved."""
    return not np.array_equal(to_numpy(first.statistic), to_numpy(second.statistic))


def check_touched_stages(estimator, X, y=None, *, neighbours=None, delta=None,
                         random_state=0, predict=None, fit_params=None):
    """The stages one record actually reaches cost no more than the ledger claims.

    Property: for each neighbour (default ``default_neighbours``: every record replaced
    in turn under replace-one adjacency), the fit is replayed on it (``replay_fit``: the same releases,
    so the same queries) and the stages whose statistic moved are the ones the record
    reaches. Composed independently as the release composes them (sequentially within a
    search's run and outside the runs, as the best of K runs across runs; within the
    rounds a PriRFed agent's record takes part in), they cost no more than the ledger's
    claim at ``delta``. This catches a record reaching two releases that the ledger
    composes in parallel (a record in both parts of a search's split, in two agents).

    Parameters
    ----------
    estimator : PrivateEstimator
        Unfitted template.
    X, y : array-like
    neighbours : iterable of (str, X2, y2), optional
        A neighbour the estimator refuses with a ValueError or TypeError is skipped.
    delta : float, optional
        Default the estimator's ``delta``.
    random_state : int
    predict : array-like, optional
        Features to predict on after the fit (releases made at predict time).
    fit_params : dict, optional
        Public keyword arguments of ``fit`` (``sample_weight``), the same on neighbours.

    Raises
    ------
    AssertionError
        Naming the neighbour, the stages it reached and the two epsilons.
    """
    recorded = record_fit(estimator, X, y, random_state=random_state, predict=predict,
                          fit_params=fit_params)
    delta = _delta_of(estimator, delta)
    events = tuple(recorded.events)
    kind = _ledger_kind(events, recorded.estimator)
    claimed, claimed_delta = _claimed(events, delta, kind)
    for name, X2, y2 in (neighbours if neighbours is not None
                         else default_neighbours(estimator, X, y)):
        try:
            replayed = replay_fit(estimator, X2, y2, recorded, random_state=random_state)
        except (ValueError, TypeError):
            continue
        touched = _reached(recorded.stages, replayed)
        if not touched:
            continue
        if kind == "selection":
            independent = _selection_independent(touched, events, delta, parallel=False)
        elif kind == "federated":
            independent = _touched_federated(touched, recorded.estimator, claimed_delta)
        else:
            independent = independent_epsilon(touched, delta)
        labels = sorted({stage.label for stage in touched})
        _assert_not_below(claimed, independent,
                          f"check_touched_stages({type(estimator).__name__}), {name} "
                          f"(reached {len(touched)} stages: {labels[:4]})")


def _reached(stages, replayed):
    """The stages whose statistic moved; a subsampled stage stands for all the stages of
    its label (the batches that missed the record are part of its amplification)."""
    moved = [first for first, second in zip(stages, replayed) if _moved(first, second)]
    sampled = {stage.label for stage in moved if stage.sampling_rate < 1}
    return [stage for stage in stages
            if stage.label in sampled or any(stage is other for other in moved)]


def _touched_federated(touched, fitted, delta):
    """End-to-end epsilon of the record's per-round releases (all its agents' touched
    stages in one round composed), over k ~ Binomial(T, s/N) rounds."""
    grouped, rest = _groups(touched, _AGENT)
    rounds = collections.defaultdict(list)
    for (round_index, _), members in grouped.items():
        rounds[int(round_index)] += members
    n_rounds, n_agents, n_sampled, _ = _federation(fitted)
    worst = max(rounds.values(), key=len)
    epsilon = public_sampling_epsilon(stages_pld(worst), n_rounds, n_sampled / n_agents,
                                      delta)
    return epsilon + independent_epsilon(rest, delta) if rest else epsilon
