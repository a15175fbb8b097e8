"""Empirical privacy audit: a statistical lower bound on the epsilon of a mechanism.

The mechanism runs many times on two neighbouring datasets D and D'. A threshold event
E = {T > t} or {T < t} on a scalar statistic T of the output is chosen on a calibration
split (the event with the largest lower bound there, in either order of D and D'); on the
separate evaluation split, Clopper-Pearson intervals bound p = P[M(D) in E] from below and
q = P[M(D') in E] from above, each at level (1 - confidence)/2. If the mechanism were
(epsilon, delta)-DP, p <= e^epsilon q + delta; so with probability >= confidence,

    epsilon >= log((p_lower - delta) / q_upper).

A result above a claimed epsilon refutes the claim (at that confidence); a result below it
proves nothing. Worst-case neighbours (one record moved to the opposite clip boundary) give
the most powerful audit.
"""

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from geomstats_dp._backend import get_rng, to_backend, to_numpy
from geomstats_dp._validation import (
    check_finite_array,
    check_positive_int,
    check_probability,
)

_TAILS = ("upper", "lower")


@dataclass(frozen=True)
class AuditResult:
    """Outcome of ``audit``.

    Attributes
    ----------
    epsilon_lower_bound : float
        With probability >= ``confidence`` the mechanism is not (epsilon, delta)-DP for any
        epsilon below it (0.0 when the data show nothing).
    delta : float
        The delta of the claim being tested.
    confidence : float
    threshold : float
        t of the chosen event.
    tail : {"upper", "lower"}
        The event is {T > t} ("upper") or {T < t} ("lower").
    first : {"dataset", "neighbour"}
        The dataset whose probability of the event is bounded from below (p).
    p_lower, q_upper : float
        Clopper-Pearson bounds on the two probabilities, on the evaluation split.
    n_evaluation : int
        Runs per dataset in the evaluation split.
    """

    epsilon_lower_bound: float
    delta: float
    confidence: float
    threshold: float
    tail: str
    first: str
    p_lower: float
    q_upper: float
    n_evaluation: int

    def refutes(self, epsilon):
        """Whether the audit rejects an (epsilon, delta) claim at ``confidence``."""
        return self.epsilon_lower_bound > epsilon


def audit(
    mechanism,
    dataset,
    neighbour,
    n_runs=10000,
    statistic=None,
    delta=0.0,
    confidence=0.95,
    calibration_fraction=0.5,
    random_state=None,
):
    """Lower-bound the epsilon of ``mechanism`` from runs on two neighbouring datasets.

    Parameters
    ----------
    mechanism : callable
        ``mechanism(dataset, rng) -> output``, rng a numpy Generator; the output may be a
        scalar, a vector or a point of a manifold (any backend array).
    dataset, neighbour : object
        Two neighbouring datasets, passed to ``mechanism`` unchanged.
    n_runs : int
        Runs on each dataset (calibration and evaluation splits together).
    statistic : callable, optional
        Maps the stacked outputs, a backend array [n_runs, *output.shape], to n_runs
        scalars; see ``distance_statistic`` and ``log_coordinate_statistic`` for
        manifold-valued outputs. None: the outputs must be scalars.
    delta : float
        The delta of the claim to test, in [0, 1).
    confidence : float
        In (0, 1).
    calibration_fraction : float
        Share of the runs used to choose the event, in (0, 1).
    random_state : None, int or numpy.random.Generator

    Returns
    -------
    result : AuditResult
    """
    n_runs = check_positive_int(n_runs, "n_runs", minimum=4)
    delta = check_probability(delta, "delta", allow_zero=True)
    confidence = check_probability(confidence, "confidence")
    calibration_fraction = check_probability(calibration_fraction, "calibration_fraction")
    if not callable(mechanism):
        raise TypeError(f"mechanism must be callable, got {type(mechanism).__name__}")
    n_calibration = min(max(round(calibration_fraction * n_runs), 1), n_runs - 1)
    rng = get_rng(random_state)
    level = (1.0 - confidence) / 2.0
    samples = {
        name: _statistics(mechanism, data, n_runs, statistic, rng, name)
        for name, data in (("dataset", dataset), ("neighbour", neighbour))
    }
    calibration = {name: values[:n_calibration] for name, values in samples.items()}
    evaluation = {name: values[n_calibration:] for name, values in samples.items()}
    threshold, tail, first = _choose_event(calibration, delta, level)
    second = "neighbour" if first == "dataset" else "dataset"
    n_evaluation = n_runs - n_calibration
    p_lower = _clopper_pearson_lower(
        _count(evaluation[first], threshold, tail), n_evaluation, level
    )
    q_upper = _clopper_pearson_upper(
        _count(evaluation[second], threshold, tail), n_evaluation, level
    )
    return AuditResult(
        epsilon_lower_bound=float(_epsilon_bound(p_lower, q_upper, delta)),
        delta=delta,
        confidence=confidence,
        threshold=float(threshold),
        tail=tail,
        first=first,
        p_lower=float(p_lower),
        q_upper=float(q_upper),
        n_evaluation=n_evaluation,
    )


def distance_statistic(space, reference_point):
    """Statistic T(x) = d(reference_point, x), for ``audit`` on manifold-valued outputs.

    Parameters
    ----------
    space : Manifold
        A geomstats space with a metric.
    reference_point : array-like, shape=[*space.shape]

    Returns
    -------
    statistic : callable
        Backend array [n, *space.shape] -> [n].
    """

    def statistic(points):
        return space.metric.dist(to_backend(to_numpy(reference_point)), points)

    return statistic


def log_coordinate_statistic(space, base_point, direction):
    """Statistic T(x) = <Log_w(x), v>_w / |v|_w: the log-map coordinate along v at w.

    Parameters
    ----------
    space : Manifold
        A geomstats space with a metric.
    base_point : array-like, shape=[*space.shape]
        w.
    direction : array-like, shape=[*space.shape]
        v, tangent at w (for a worst-case audit: the direction in which the neighbouring
        datasets differ).

    Returns
    -------
    statistic : callable
        Backend array [n, *space.shape] -> [n].
    """
    base_point = to_backend(to_numpy(base_point))
    direction = to_backend(to_numpy(direction))
    norm = space.metric.norm(direction, base_point)

    def statistic(points):
        logs = space.metric.log(points, base_point)
        return space.metric.inner_product(logs, direction, base_point) / norm

    return statistic


def _statistics(mechanism, data, n_runs, statistic, rng, name):
    outputs = np.stack([to_numpy(mechanism(data, rng)) for _ in range(n_runs)])
    if statistic is None:
        if outputs.size != n_runs:
            raise ValueError(
                f"the mechanism's outputs on the {name} have shape {outputs.shape[1:]}; "
                "pass a statistic mapping them to scalars"
            )
        values = outputs.reshape(n_runs)
    else:
        values = to_numpy(statistic(to_backend(outputs))).reshape(-1)
        if values.shape != (n_runs,):
            raise ValueError(
                f"statistic must return {n_runs} scalars for {n_runs} outputs, "
                f"got shape {values.shape}"
            )
    check_finite_array(values, f"statistic of the outputs on the {name}")
    return values


def _count(values, threshold, tail):
    return int(np.sum(values > threshold if tail == "upper" else values < threshold))


def _counts(values, thresholds, tail):
    """Number of ``values`` above (tail="upper") or below each threshold, vectorised."""
    ordered = np.sort(values)
    if tail == "upper":
        return len(ordered) - np.searchsorted(ordered, thresholds, side="right")
    return np.searchsorted(ordered, thresholds, side="left")


def _clopper_pearson_lower(count, n, level):
    """One-sided lower confidence bound at ``level`` on a binomial proportion."""
    count = np.asarray(count)
    bound = stats.beta.ppf(level, np.maximum(count, 1), n - count + 1)
    return np.where(count > 0, bound, 0.0)


def _clopper_pearson_upper(count, n, level):
    """One-sided upper confidence bound at ``level`` on a binomial proportion."""
    count = np.asarray(count)
    bound = stats.beta.ppf(1.0 - level, count + 1, np.maximum(n - count, 1))
    return np.where(count < n, bound, 1.0)


def _epsilon_bound(p_lower, q_upper, delta):
    with np.errstate(divide="ignore", invalid="ignore"):
        bound = np.log(np.maximum(p_lower - delta, 0.0) / q_upper)
    return np.maximum(np.nan_to_num(bound, nan=0.0, neginf=0.0), 0.0)


def _choose_event(calibration, delta, level):
    """The (threshold, tail, first) with the largest bound on the calibration split."""
    thresholds = np.unique(np.concatenate(list(calibration.values())))
    n = len(calibration["dataset"])
    best = (-math.inf, thresholds[0], _TAILS[0], "dataset")
    for tail in _TAILS:
        counts = {name: _counts(values, thresholds, tail) for name, values in calibration.items()}
        for first, second in (("dataset", "neighbour"), ("neighbour", "dataset")):
            bounds = _epsilon_bound(
                _clopper_pearson_lower(counts[first], n, level),
                _clopper_pearson_upper(counts[second], n, level),
                delta,
            )
            index = int(np.argmax(bounds))
            if bounds[index] > best[0]:
                best = (bounds[index], thresholds[index], tail, first)
    return best[1:]
