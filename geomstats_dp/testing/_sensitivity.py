"""Each stage's statistic moves by at most its stated sensitivity on a neighbour
(``check_stage_sensitivity``)."""

from geomstats_dp.testing._neighbours import worst_case_neighbours
from geomstats_dp.testing._recording import record_fit, replay_fit

RTOL = 1e-9
"""Relative slack of the bound (rounding of the statistics)."""


def check_stage_sensitivity(estimator, X, y=None, *, neighbours=None, random_state=0,
                            predict=None, fit_params=None):
    """Worst-case neighbours move every stage's statistic by at most its sensitivity.

    The fit is recorded on (X, y) and replayed on each neighbour (``replay_fit``: every
    stage releases the recorded value, so both runs query their data at the same points
    and the replay's stages are public in the same way); for every stage,
    ``norm(statistic - statistic') <= sensitivity * (1 + RTOL)`` in the stage's norm
    (``Stage.distance``: the Riemannian norm at its point for tangent statistics, the
    metric's distance for a Laplace law's centre, the largest utility change for an
    exponential mechanism). A neighbour the estimator refuses with a ValueError or
    TypeError (a clear input error: ``check_input_domain``) is skipped.

    Parameters
    ----------
    estimator : PrivateEstimator
        Unfitted template.
    X, y : array-like
    neighbours : iterable of (str, array-like, array-like or None), optional
        (name, X2, y2) under the estimator's stated adjacency; default
        ``worst_case_neighbours(estimator, X, y)``.
    random_state : int
    predict : array-like, optional
        Features to predict on after the fit (releases made at predict time).
    fit_params : dict, optional
        Public keyword arguments of ``fit`` (``sample_weight``), the same on neighbours.

    Raises
    ------
    AssertionError
        Naming the neighbour, the stage, the distance and the sensitivity; or when the
        neighbour's public stages differ (``replay_fit``), or every neighbour is refused.
    """
    if neighbours is None:
        neighbours = worst_case_neighbours(estimator, X, y)
    recorded = record_fit(estimator, X, y, random_state=random_state, predict=predict,
                          fit_params=fit_params)
    checked = 0
    for name, X2, y2 in neighbours:
        try:
            stages = replay_fit(estimator, X2, y2, recorded, random_state=random_state)
        except (ValueError, TypeError):
            continue
        checked += 1
        for index, (stage, other) in enumerate(zip(recorded.stages, stages)):
            distance = stage.distance(other)
            if not distance <= stage.sensitivity * (1 + RTOL):
                raise AssertionError(
                    f"check_stage_sensitivity: neighbour {name!r} moves stage {index} "
                    f"({stage.label!r}) by {distance:.6g} > its sensitivity "
                    f"{stage.sensitivity:.6g} (ratio {distance / stage.sensitivity:.4g})")
    if not checked:
        raise AssertionError("check_stage_sensitivity: no neighbour was accepted")
