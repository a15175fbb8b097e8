"""A differentially private quantile by the exponential mechanism, on a public grid.

Adjacency: replace-one (or add/remove). Query: the rank utility
u(c) = -| #{i : v_i <= c} - q n | of each candidate c of a public grid, whose sensitivity
is 1 (one record moves one count by at most 1; adding or removing one also moves q n by
q <= 1). The exponential mechanism picks c with probability proportional to
exp(epsilon u(c) / 2) and is epsilon-DP (McSherry & Talwar 2007): a ``PureEvent``.
"""

import numpy as np

from geomstats_dp._validation import check_positive_finite, check_probability
from geomstats_dp.privacy.events import PureEvent
from geomstats_dp.privacy.stages import discrete_stage

DEFAULT_GRID = np.geomspace(1e-3, 1e3, 25)  # 4 candidates a decade


def quantile_event(epsilon, label="private quantile"):
    """The ledger entry of one ``private_quantile`` release."""
    return PureEvent(check_positive_finite(epsilon, "epsilon"), sensitivity=1.0,
                     label=label)


def rank_utility(values, grid, quantile):
    """-| #{i : v_i <= c} - q n | for every candidate c of ``grid``: sensitivity 1.

    Parameters
    ----------
    values : numpy.ndarray, shape=[n]
    grid : numpy.ndarray, shape=[k]
        Public, increasing candidates.
    quantile : float

    Returns
    -------
    utility : numpy.ndarray, shape=[k]
    """
    counts = np.searchsorted(np.sort(values), grid, side="right")
    return -np.abs(counts - quantile * len(values))


def interval_utility(values, grid, quantile):
    """-dist(q n, [#{v < c}, #{v <= c}]) for every candidate c of ``grid``: the number of
    values that must move for c to be a q-quantile. Sensitivity 1 (each count moves by
    at most 1). Unlike ``rank_utility``, a candidate equal to many values scores 0: values
    clamped to the grid's top choose the top rather than tie every candidate.

    Parameters
    ----------
    values : numpy.ndarray, shape=[n]
    grid : numpy.ndarray, shape=[k]
        Public, increasing candidates.
    quantile : float

    Returns
    -------
    utility : numpy.ndarray, shape=[k]
    """
    values = np.sort(values)
    below = np.searchsorted(values, grid, side="left")
    at_most = np.searchsorted(values, grid, side="right")
    target = quantile * len(values)
    return -(np.maximum(below - target, 0.0) + np.maximum(target - at_most, 0.0))


def private_quantile(values, quantile, epsilon, rng, grid=DEFAULT_GRID,
                     label="private quantile", utility=rank_utility,
                     adjacency="replace_one"):
    """Release a grid point near the ``quantile`` of ``values``, epsilon-DP.

    Parameters
    ----------
    values : numpy.ndarray, shape=[n]
        The private values (non-finite ones count as larger than every candidate).
    quantile : float
        In (0, 1).
    epsilon : float
    rng : numpy.random.Generator or SecureGenerator
        Only ``rng.random()`` is used.
    grid : numpy.ndarray, shape=[k]
        Public, increasing candidates.
    label : str
        The label of its ledger event (``quantile_event``): the release is reported as an
        exponential-mechanism stage (``privacy.stages.discrete_stage``) whose statistic
        is the utilities of the candidates, of sensitivity 1.
    utility : callable
        ``utility(values, grid, quantile)``, of sensitivity 1 under ``adjacency``:
        ``rank_utility`` (the module's) or ``interval_utility``.
    adjacency : str
        The adjacency the stage is reported under.

    Returns
    -------
    candidate : float
    """
    quantile = check_probability(quantile, "quantile")
    epsilon = check_positive_finite(epsilon, "epsilon")
    grid = np.asarray(grid, dtype=np.float64)
    values = np.where(np.isfinite(values), values, np.inf)
    scores = utility(values, grid, quantile)
    index = exponential_mechanism(scores, epsilon, 1.0, rng)
    return discrete_stage(float(grid[index]), label=label, epsilon=epsilon,
                          sensitivity=1.0, utility=scores, adjacency=adjacency)


def exponential_mechanism(utility, epsilon, sensitivity, rng):
    """The index of a candidate drawn with probability proportional to
    exp(epsilon u / (2 sensitivity)) (McSherry & Talwar 2007): epsilon-DP when each
    utility moves by at most ``sensitivity`` between neighbours.

    Parameters
    ----------
    utility : numpy.ndarray, shape=[k]
    epsilon, sensitivity : float
    rng : numpy.random.Generator or SecureGenerator
        Only ``rng.random()`` is used (inverse transform).

    Returns
    -------
    index : int
    """
    logits = epsilon * np.asarray(utility, dtype=np.float64) / (2 * sensitivity)
    probabilities = np.exp(logits - logits.max())
    cumulative = np.cumsum(probabilities / probabilities.sum())
    index = int(np.searchsorted(cumulative, float(rng.random()), side="right"))
    return min(index, len(cumulative) - 1)
