"""Step-size schedules: data-independent functions of the global step index t = 0, 1, ..."""

import math
import numbers

import numpy as np

from geomstats_dp._validation import check_positive_finite


class ConstantStep:
    """eta_t = value."""

    def __init__(self, value):
        self.value = check_positive_finite(value, "step_size")

    def __call__(self, step):
        """Step size at step ``step``."""
        return self.value

    def __repr__(self):
        return f"ConstantStep({self.value})"


class _DecayingStep:
    """A schedule scale * h(t + offset) with a decreasing h."""

    def __init__(self, scale, offset=1.0):
        self.scale = check_positive_finite(scale, "scale")
        self.offset = check_positive_finite(offset, "offset")

    def __repr__(self):
        return f"{type(self).__name__}(scale={self.scale}, offset={self.offset})"


class InverseTimeStep(_DecayingStep):
    """eta_t = scale / (t + offset); scale = 1/beta, offset = 1 is Han et al. 2024's Theorem 3."""

    def __call__(self, step):
        """Step size at step ``step``."""
        return self.scale / (step + self.offset)


class InverseSqrtStep(_DecayingStep):
    """eta_t = scale / sqrt(t + offset)."""

    def __call__(self, step):
        """Step size at step ``step``."""
        return self.scale / math.sqrt(step + self.offset)


def as_schedule(step_size):
    """Return a schedule for a positive number or a callable ``step -> float``."""
    if isinstance(step_size, numbers.Real) and not isinstance(step_size, bool):
        return ConstantStep(step_size)
    if callable(step_size):
        return step_size
    raise TypeError(
        "step_size must be a positive number or a callable step -> float, "
        f"got {type(step_size).__name__}"
    )


def step_size_values(step_size, n_steps):
    """Evaluate a schedule at steps 0..n_steps-1, checking every value.

    Parameters
    ----------
    step_size : float or callable
    n_steps : int

    Returns
    -------
    values : numpy.ndarray, shape=[n_steps]
    """
    schedule = as_schedule(step_size)
    values = np.array([float(schedule(step)) for step in range(n_steps)])
    bad = ~(np.isfinite(values) & (values > 0))
    if bad.any():
        step = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"step_size must be finite and > 0 at every step, got {values[step]} at step {step}"
        )
    return values
