"""The largest per-fit epsilon whose search (or refit) still fits a target epsilon.

The cost of a search as a function of the epsilon each candidate is fitted at is computed
from public quantities only (planned events, ``planning``) and is non-decreasing in
practice; a bisection on log(epsilon) returns a point where it is within the target.
"""

import math

_LOW_FACTOR = 1e-2  # the bracket is [0.01, 2] times the target
_HIGH_FACTOR = 2.0
_ITERATIONS = 30


def largest_epsilon(cost, target, name="epsilon"):
    """Largest e in [0.01 target, 2 target] with ``cost(e) <= target``, by bisection.

    Parameters
    ----------
    cost : callable
        ``cost(e) -> epsilon`` of the whole release when each fit is made at epsilon e.
    target : float
        The epsilon the release may cost.
    name : str
        What is calibrated, for the error message.

    Returns
    -------
    epsilon : float
        A feasible e (``cost(e) <= target``).

    Raises
    ------
    ValueError
        If even 0.01 target costs more than the target.
    """
    low, high = _LOW_FACTOR * target, _HIGH_FACTOR * target
    if cost(high) <= target:
        return high
    lowest = cost(low)
    if lowest > target:
        raise ValueError(
            f"epsilon={target:g} cannot pay for this {name}: fits at epsilon {low:.3g} "
            f"already cost {lowest:.4g}; raise epsilon or lower mean_runs"
        )
    for _ in range(_ITERATIONS):
        middle = math.sqrt(low * high)
        if cost(middle) <= target:
            low = middle
        else:
            high = middle
    return low
