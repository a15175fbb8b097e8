"""The frozen record an optimisation run returns."""

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True, eq=False)
class OptimizerResult:
    """What one call of ``minimize`` produced (internal: the estimator decides what to release).

    Attributes
    ----------
    point : array-like, shape=[*space.shape]
        The output selected by ``output`` (last iterate, random iterate or geodesic average).
    output : str
        The output option that selected ``point``.
    n_iter : int
        The ``n_iter`` the run was asked for (steps for FullBatch / MiniBatch, epochs per
        round for VarianceReduced).
    n_steps : int
        Manifold steps taken (all rounds together).
    n_gradient_evaluations : int
        Per-sample gradient evaluations (IFO calls), counted where they happen.
    n_noise_draws : int
        Calls made to the noise sampler.
    step_sizes : numpy.ndarray, shape=[n_steps]
        The step size used at each step (data-independent, fixed before the run).
    iterates : array-like, shape=[n_steps + 1, *space.shape] or None
        The point each step started from, then the final point (only with
        ``keep_iterates=True``).
    """

    point: Any
    output: str
    n_iter: int
    n_steps: int
    n_gradient_evaluations: int
    n_noise_draws: int
    step_sizes: np.ndarray
    iterates: Any = None
