"""The smallest noise level x whose ledger ``events_of(x)`` meets a target epsilon.

epsilon(x) does not increase with x. The search works on g(log x) = log epsilon - log
target: a bracket grown geometrically from a guess (one step is close to right, since
epsilon ~ 1/x), then Brent's method, stopped as soon as a feasible x comes within a
relative ``TOLERANCE`` of the target. Every evaluation of a subsampled ledger computes RDP
curves, so the number of evaluations is what this module keeps small (counts and timings:
docs/benchmarks/accounting.md, "Calibration time").
"""

import math

from scipy import optimize

from geomstats_dp.privacy.accountant import compose_epsilon

NOISE_RANGE = (1e-3, 1e8)
TOLERANCE = 1e-4  # stop at a feasible x with epsilon >= target (1 - TOLERANCE)
_XTOL = 1e-9  # ... or when the bracket is narrower than this in log x
_MAX_STEP = 5.0


class _Found(Exception):
    """Raised from inside Brent's method to stop at a good enough feasible point."""

    def __init__(self, log_x):
        super().__init__(log_x)
        self.log_x = log_x


def smallest_noise(events_of, target, delta, initial, name="noise multiplier"):
    """Smallest x in ``NOISE_RANGE`` with ``compose_epsilon(events_of(x), delta) <= target``.

    Parameters
    ----------
    events_of : callable
        float -> tuple of events; their epsilon must not increase with x.
    target : float
        The epsilon to meet.
    delta : float
        In (0, 1).
    initial : float
        A guess of the answer.
    name : str
        What x is, for the error message.

    Returns
    -------
    x : float
        Feasible (epsilon <= target), with epsilon >= target (1 - TOLERANCE) or within a
        relative 1e-9 of an infeasible level.

    Raises
    ------
    ValueError
        If even the largest x of ``NOISE_RANGE`` misses the target.
    """
    low_limit, high_limit = (math.log(bound) for bound in NOISE_RANGE)

    def excess(log_x):
        epsilon = compose_epsilon(events_of(math.exp(log_x)), delta)
        value = math.log(max(epsilon, 1e-300)) - math.log(target)
        if -TOLERANCE <= value <= 0:
            raise _Found(log_x)
        return value

    try:
        low, high = _bracket(excess, math.log(initial), low_limit, high_limit, target, name)
        if low is None:
            return math.exp(high)
        root = optimize.brentq(excess, low, high, xtol=_XTOL)
        for candidate in (root, min(root + _XTOL, high)):  # brentq is within xtol of it
            if excess(candidate) <= 0:
                return math.exp(candidate)
    except _Found as found:
        return math.exp(found.log_x)
    return math.exp(high)


def _bracket(excess, log_x, low_limit, high_limit, target, name):
    """(infeasible log x, feasible log x), or (None, low_limit) if all of the range is feasible."""
    log_x = min(max(log_x, low_limit), high_limit)
    value = excess(log_x)
    direction = 1.0 if value > 0 else -1.0
    step = min(max(abs(value) * 1.2, 0.1), _MAX_STEP)  # epsilon ~ 1/x: one step nearly does
    while True:
        previous = log_x
        log_x = min(max(log_x + direction * step, low_limit), high_limit)
        value = excess(log_x)
        if (value > 0) != (direction > 0):
            return tuple(sorted((previous, log_x)))
        if log_x == high_limit:
            raise ValueError(
                f"the target epsilon={target} cannot be met: even a {name} of "
                f"{NOISE_RANGE[1]:g} gives epsilon={target * math.exp(value):.4g}"
            )
        if log_x == low_limit:
            return None, low_limit
        step *= 2
