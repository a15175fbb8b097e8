"""The Riemannian Laplace mechanism (Reimherr et al., 2021) and its calibration.

``RiemannianLaplace`` is the law; ``frechet_mean_sensitivity`` and ``laplace_scale`` turn a
data radius, a sample size and epsilon into its scale; ``baselines`` holds the mechanisms
it is compared with (ambient-space Laplace, K-norm gradient mechanism).
"""

from geomstats_dp.distributions.laplace.riemannian_laplace import RiemannianLaplace
from geomstats_dp.distributions.laplace.sensitivity import (
    ball_geometry,
    curvature_bounds,
    footpoint_free_normaliser,
    frechet_gradient_sensitivity,
    frechet_mean_sensitivity,
    injectivity_radius,
    laplace_scale,
    max_data_radius,
)

__all__ = [
    "RiemannianLaplace",
    "ball_geometry",
    "curvature_bounds",
    "footpoint_free_normaliser",
    "frechet_gradient_sensitivity",
    "frechet_mean_sensitivity",
    "injectivity_radius",
    "laplace_scale",
    "max_data_radius",
]
