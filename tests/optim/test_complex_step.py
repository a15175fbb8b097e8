"""The complex step (``optim.complex_step``): exact per-sample gradients of analytic code,
its refusal of non-analytic code, and the routes ``CallableLoss`` takes with it on
autograd and pytorch. References: the closed-form gradients of the Gaussian negative
log-likelihood tr(P^-1 X) + log det P (Euclidean -P^-1 X P^-1 + P^-1, affine-invariant
Riemannian P - X) and a ``PerSampleLoss`` subclass with the closed form."""

import warnings

import geomstats.backend as gs
import numpy as np
import pytest
from geomstats.geometry.spd_matrices import SPDMatrices

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.learning import PrivateERM
from geomstats_dp.optim import CallableLoss, PerSampleLoss, shared_decisions
from geomstats_dp.optim.complex_step import complex_step_jacobian, complex_step_matches
from tests.conftest import BACKEND, shifted
from tests.optim.test_callable_loss import spd_trace_loss

N_RECORDS, BROKEN = 40, 7
AUTODIFF = BACKEND in ("autograd", "pytorch")
JACOBIAN_KEY = ("jacobian", (2, 2))  # the route's decision for records of SPD(2)
ON_COPIES = "complex step on copies"  # the route of the Gaussian likelihood on SPD(2)


def _spd_data(n_records=N_RECORDS, seed=0, dim=2):
    rng = np.random.default_rng(seed)
    factors = rng.normal(size=(n_records, dim, dim))
    data = factors @ np.transpose(factors, (0, 2, 1)) + 0.5 * np.eye(dim)
    point = np.diag(np.linspace(1.5, 0.8, dim)) + 0.3 * (np.ones((dim, dim)) - np.eye(dim))
    return SPDMatrices(dim), point, data


def _euclidean_gradients(point, data):
    """-P^-1 X P^-1 + P^-1 for each X, in numpy."""
    inverse = np.linalg.inv(point)
    return inverse - inverse @ data @ inverse


def _with_abs(point, sample):
    """The same loss with log |det P|: equal on SPD, but abs is not analytic."""
    inverse = gs.linalg.inv(point)
    return (gs.einsum("...ij,...ji->...", inverse, sample)
            + gs.log(gs.abs(gs.linalg.det(point))))


def _with_real_cast(point, sample):
    """The same loss with det P cast to float64 (a complex argument loses its imaginary
    part, with a warning)."""
    inverse = gs.linalg.inv(point)
    return (gs.einsum("...ij,...ji->...", inverse, sample)
            + gs.log(gs.cast(gs.linalg.det(point), gs.float64)))


def _one_point_only(point, sample):
    """The loss at one point, not at copies of it."""
    if gs.ndim(point) > 2:
        raise TypeError("one point at a time")
    return spd_trace_loss(point, sample)


@pytest.fixture(autouse=True)
def _torch_warns_every_time():
    """pytorch warns of a complex-to-real cast once a process: here, every time, so that
    a test that no warning is shown sees the ones a complex call raises."""
    if BACKEND != "pytorch":
        yield
        return
    import torch

    torch.set_warn_always(True)
    yield
    torch.set_warn_always(False)


@pytest.mark.parametrize("copies", [False, True])
def test_complex_step_gives_the_closed_form_gradients(copies):
    _, point, data = _spd_data()
    derived = to_numpy(complex_step_jacobian(
        lambda at: spd_trace_loss(at, to_backend(data)), to_backend(point), copies=copies))
    assert derived.dtype == np.float64  # complex128 calls on float64 points, real parts
    np.testing.assert_allclose(derived, _euclidean_gradients(point, data),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("function, matches", [
    (spd_trace_loss, True), (_with_abs, False), (_with_real_cast, False)])
def test_only_analytic_code_passes_the_check_and_no_warning_is_shown(function, matches):
    _, point, data = _spd_data(n_records=3)
    reference = _euclidean_gradients(point, data)
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        found = complex_step_matches(lambda at: function(at, to_backend(data)),
                                     to_backend(point), reference)
    assert found is matches
    assert shown == []


def test_a_wrong_reference_fails_the_check():
    _, point, data = _spd_data(n_records=3)
    reference = _euclidean_gradients(point, data)
    reference[1, 0, 1] *= 1 + 1e-7
    assert not complex_step_matches(lambda at: spd_trace_loss(at, to_backend(data)),
                                    to_backend(point), reference)


def _riemannian_gradients(function, point, data):
    """The loss's per-sample gradients and the Jacobian route it took; no warning."""
    space = SPDMatrices(point.shape[0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loss = CallableLoss(space, function)
        gradients = to_numpy(loss.gradients(to_backend(point), to_backend(data)))
    return gradients, loss._decisions(to_backend(point))[("jacobian", point.shape)]


# The Jacobian route per backend: the complex step on copies where the loss broadcasts
# them and the points have at most 4 entries; otherwise at the point on autograd and
# forward mode on the copies on pytorch; non-analytic code falls back to forward mode on
# the copies (pytorch) or reverse over reverse mode (autograd, "one point").
ROUTES = {
    "autograd": [(spd_trace_loss, 2, ON_COPIES), (spd_trace_loss, 3, "complex step"),
                 (_one_point_only, 2, "complex step"), (_with_abs, 2, "one point"),
                 (_with_real_cast, 2, "one point")],
    "pytorch": [(spd_trace_loss, 2, ON_COPIES), (spd_trace_loss, 3, "point copies"),
                (_one_point_only, 2, "one point"), (_with_abs, 2, "point copies"),
                (_with_real_cast, 2, "point copies")],
}


@pytest.mark.skipif(not AUTODIFF, reason="derived by finite differences on numpy")
@pytest.mark.parametrize("function, dim, route", ROUTES.get(BACKEND, []))
def test_route_and_gradients(function, dim, route):
    """Each loss takes its backend's route (``ROUTES``) without a warning, and every
    route gives P - X."""
    _, point, data = _spd_data(dim=dim)
    gradients, taken = _riemannian_gradients(function, point, data)
    assert taken == route
    np.testing.assert_allclose(gradients, point[None] - data, rtol=1e-12, atol=1e-12)


@pytest.mark.skipif(not AUTODIFF, reason="derived by finite differences on numpy")
@pytest.mark.parametrize("failure", ["raises", "negative log"])
def test_a_failing_record_has_a_nan_gradient_and_no_contribution(failure):
    """A record whose call raises, or whose real value is NaN (the log of a negative
    number, finite in complex arithmetic), gets a NaN gradient and contributes nothing;
    the others are exact: the loss plus log(X_00 det P), Riemannian gradient 2P - X."""
    space, point, data = _spd_data()
    data[BROKEN, 0, 0] = -1e200 if failure == "raises" else -4.0

    def loss(point, sample):
        if bool(gs.any(sample[..., 0, 0] < -1e100)):
            raise FloatingPointError("out of range")
        return spd_trace_loss(point, sample) + gs.log(sample[..., 0, 0]
                                                      * gs.linalg.det(point))

    coefficients = np.random.default_rng(1).uniform(size=N_RECORDS)
    with warnings.catch_warnings(), np.errstate(invalid="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)  # the real log of -4
        callable_loss = CallableLoss(space, loss)
        norms, weighted_sum = callable_loss.gradient_sums(to_backend(point))(
            to_backend(data))
        total = to_numpy(weighted_sum(to_backend(coefficients)))
    assert callable_loss._decisions(to_backend(point))[JACOBIAN_KEY] == ON_COPIES
    norms = to_numpy(norms)
    assert np.isnan(norms[BROKEN])
    kept = np.arange(N_RECORDS) != BROKEN
    expected = 2 * point[None] - data[kept]
    np.testing.assert_allclose(total, np.einsum("k,kij->ij", coefficients[kept], expected),
                               rtol=1e-10)


class GaussianLikelihood(PerSampleLoss):
    """tr(P^-1 X) + log det P with its closed-form Riemannian gradient P - X."""

    def values(self, point, data):
        return spd_trace_loss(point, data)

    def gradients(self, point, data):
        return point[None] - data


def _fit(loss, data, epsilon, seed):
    space = SPDMatrices(2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # finite differences on numpy
        estimator = PrivateERM(space, loss, epsilon=epsilon, delta=1e-5, clip_norm=5.0,
                               random_state=seed)
        return to_numpy(estimator.fit(to_backend(data)).estimate_)


@pytest.mark.parametrize("epsilon", [1.0, 1e4])
def test_fit_agrees_with_the_subclass(epsilon):
    """The same seed, the same release as the closed-form subclass (derived gradients:
    the complex step on autograd and pytorch, to rounding; forward differences on numpy);
    at large epsilon, the mean of the covariances (the minimiser) is recovered."""
    _, _, data = _spd_data(n_records=2000, seed=shifted(3))
    derived = _fit(spd_trace_loss, data, epsilon, seed=shifted(4))
    subclass = _fit(GaussianLikelihood(SPDMatrices(2)), data, epsilon, seed=shifted(4))
    # forward differences (step 1e-7): errors ~1e-7 x curvature in each step's gradient
    np.testing.assert_allclose(derived, subclass, atol=1e-6 if BACKEND == "numpy" else 1e-10)
    if epsilon > 100:  # 0.004-0.011 off in 5 draws: the default steps' convergence
        np.testing.assert_allclose(derived, data.mean(axis=0), atol=0.05)


@pytest.mark.skipif(not AUTODIFF, reason="derived by finite differences on numpy")
def test_shared_decision_gives_the_release_of_a_fresh_one():
    _, _, data = _spd_data(n_records=200, seed=5)

    def loss(point, sample):  # a new callable: its decisions are taken here
        return spd_trace_loss(point, sample)

    fresh = _fit(loss, data, 1.0, seed=6)
    routes = [decisions.get(JACOBIAN_KEY) for key, decisions
              in shared_decisions.SHARED_DECISIONS.items() if loss in key]
    shared = _fit(loss, data, 1.0, seed=6)
    assert routes == [ON_COPIES]
    np.testing.assert_array_equal(shared, fresh)


@pytest.mark.skipif(not AUTODIFF, reason="derived by finite differences on numpy")
def test_a_cast_on_a_branch_only_data_take_shows_no_warning():
    """The check sees the dummy records' branch only: a batch with a record past 50
    takes a branch with a cast to real, whose ComplexWarning is not shown (what data
    do must not show), and whose gradients are then wrong: the residual risk, clipped."""
    space, point, data = _spd_data()

    def loss(point, sample):
        if bool(gs.any(sample[..., 0, 0] > 50.0)):
            point = gs.cast(point, gs.float64)
        return spd_trace_loss(point, sample)

    data[BROKEN, 0, 0] = 60.0
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        callable_loss = CallableLoss(space, loss)
        norms, _ = callable_loss.gradient_sums(to_backend(point))(to_backend(data))
    assert callable_loss._decisions(to_backend(point))[JACOBIAN_KEY] == ON_COPIES
    assert shown == []
    assert np.all(np.isfinite(to_numpy(norms)))
