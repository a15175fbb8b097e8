"""PrivatePCA: the sensitivities, the noise drawn, convergence, "auto", the transformer."""

import math
import warnings

import geomstats.backend as gs
import numpy as np
import pytest
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.stiefel import Stiefel
from scipy import stats
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning, NotFittedError

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.learning import NoiseDominatesWarning, PrivatePCA, _pca_rows
from geomstats_dp.learning import pca as pca_module
from geomstats_dp.learning.mechanisms import analyze_gauss, pca_gradient
from geomstats_dp.learning.pca import PCALoss, explained_variance_ratio
from geomstats_dp.optim import riemannian_gradient
from geomstats_dp.privacy import BudgetExceededError, GaussianEvent, PrivacyBudget
from tests.conftest import shifted
from tests.optim.spies import TangentGaussianSpy

HUGE_EPSILON = 1e6
PUBLIC = ("method_", "noise_multiplier_", "noise_multipliers_", "n_iter_", "events_",
          "clip_norm_", "n_gradient_evaluations_", "data_norm_", "n_features_in_")


def _spiked(n_samples, n_features=10, seed=0, spike=4.0):
    """Rows of norm <= 1 from a covariance with a spike along e_0 + e_1."""
    rng = np.random.default_rng(seed)
    direction = np.zeros(n_features)
    direction[:2] = 1 / math.sqrt(2)
    X = rng.standard_normal((n_samples, n_features)) + spike * np.outer(
        rng.standard_normal(n_samples), direction)
    X /= np.linalg.norm(X, axis=1).max()
    return X, direction


def _unit_cube(n_samples, n_features=10, seed=0, gap=1.0):
    """Features in [0, 1] (public bound sqrt(p), loose): two latent factors of scales
    ``gap`` and ``0.8 gap`` (a small eigengap when both are alike) plus uniform noise."""
    rng = np.random.default_rng(seed)
    factors = rng.standard_normal((n_samples, 2)) * [0.12 * gap, 0.1 * gap]
    loadings = np.zeros((2, n_features))
    loadings[0, : n_features // 2] = 1.0
    loadings[1, n_features // 2:] = 1.0
    X = 0.5 + factors @ loadings + rng.uniform(-0.1, 0.1, (n_samples, n_features))
    return np.clip(X, 0.0, 1.0)


def _gdp_delta(epsilon, noise_multiplier):
    """delta(epsilon) of a Gaussian release with this multiplier (Dong, Roth & Su 2022),
    written out here, independently of the library's accountant."""
    mu = 1 / noise_multiplier
    return (stats.norm.cdf(-epsilon / mu + mu / 2)
            - math.exp(epsilon) * stats.norm.cdf(-epsilon / mu - mu / 2))


def _quiet_fit(pca, X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoiseDominatesWarning)
        return pca.fit(X)


@pytest.mark.parametrize("k", [1, 3])
def test_gradients_are_riemannian_and_bounded_by_the_squared_row_norm(k):
    rng = np.random.default_rng(1)
    p = 6
    space = Hypersphere(p - 1) if k == 1 else Stiefel(p, k)
    loss = PCALoss(space)
    ratios = []
    for _ in range(200):
        basis = np.linalg.qr(rng.standard_normal((p, k)))[0]
        point = to_backend(basis[:, 0] if k == 1 else basis)
        z = rng.standard_normal((1, p))
        grads = loss.gradients(point, to_backend(z))
        euclidean = -2 * (z.T @ (z @ basis)).reshape((1,) + tuple(space.shape))
        expected = riemannian_gradient(space, to_backend(euclidean), point)
        assert np.allclose(to_numpy(grads), to_numpy(expected), atol=1e-10)
        norm = float(space.metric.norm(grads[0], point))
        ratios.append(norm / float(np.sum(z**2)))
    assert max(ratios) <= 1 + 1e-12
    assert max(ratios) > 0.9  # the bound |z|^2 is nearly attained


def _upper(matrix):
    return matrix[np.triu_indices(len(matrix))]


@pytest.mark.backend_independent
def test_second_moment_and_variance_sensitivities_hold_and_are_attained():
    """Replace-one moves the upper triangle of z z^T, and that of u u^T (u = W^T z) with
    the residual |z|^2 - |u|^2, by at most sqrt(2) B^2; both bounds are attained."""
    rng = np.random.default_rng(2)
    p, bound = 5, 1.7
    frame = np.linalg.qr(rng.standard_normal((p, 3)))[0]
    basis = frame[:, :2]
    bound_value = _pca_rows.second_moment_sensitivity(bound, 1)
    assert bound_value == pytest.approx(math.sqrt(2) * bound**2)
    largest = [0.0, 0.0]
    for trial in range(2000):
        z, other = rng.standard_normal((2, p))
        if trial < 2:  # the extreme pairs: coordinate axes; a component and a normal
            z, other = (np.eye(p)[0], np.eye(p)[1]) if trial == 0 else frame[:, ::2].T
        z, other = (bound * v / np.linalg.norm(v) * rng.uniform(0.5, 1) ** (trial > 1)
                    for v in (z, other))
        moved = np.linalg.norm(_upper(np.outer(z, z) - np.outer(other, other)))
        released = [_pca_rows.noisy_projected_moments(v[None], basis, 0.0, rng,
                                                      label="variances", sensitivity=1.0)
                    for v in (z, other)]
        variances = [np.append(_upper(moments), residual) for moments, residual in released]
        largest = np.maximum(largest, [moved, np.linalg.norm(variances[0] - variances[1])])
    assert max(largest) <= bound_value * (1 + 1e-12)
    assert largest == pytest.approx([bound_value, bound_value])  # both attained


def test_analyze_gauss_draws_the_calibrated_symmetric_noise(monkeypatch):
    drawn = []
    original = analyze_gauss.noisy_matrix
    monkeypatch.setattr(analyze_gauss, "noisy_matrix",
                        lambda moment, std, rng, **stage:
                        drawn.append(original(moment, std, rng, **stage)) or drawn[-1])
    n, p, bound, epsilon, delta = 400, 30, 2.0, 1.0, 1e-5
    X = np.random.default_rng(3).standard_normal((n, p))
    pca = _quiet_fit(PrivatePCA(2, epsilon=epsilon, delta=delta, data_norm=bound,
                                method="analyze_gauss", centering="none",
                                random_state=0), X)
    (event,) = pca.events_
    assert event.sensitivity == pytest.approx(math.sqrt(2) * bound**2 / n)
    assert _gdp_delta(epsilon, event.noise_multiplier) == pytest.approx(delta, rel=1e-4)
    rows = _pca_rows.bounded_rows(X, bound)
    noise = drawn[0] - rows.T @ rows / n
    assert np.allclose(noise, noise.T)
    entries = _upper(noise)
    # the sample standard deviation of m Gaussian entries: relative standard error 1/sqrt(2m)
    tolerance = 5 / math.sqrt(2 * len(entries))
    assert abs(np.std(entries) / event.noise_std - 1) < tolerance
    assert abs(np.mean(entries)) < 5 * event.noise_std / math.sqrt(len(entries))
    assert pca.budget_.spent_epsilon == pytest.approx(epsilon, rel=1e-6)


@pytest.mark.backend_independent
@pytest.mark.parametrize("centering", ["private_mean", "none"])
def test_analyze_gauss_reads_the_rows_without_a_copy(centering):
    """The default fit allocates less than half of X at its peak (blocks of rows; the
    former row pass copied X at least once), half of the rows beyond B."""
    import tracemalloc

    X = np.random.default_rng(5).standard_normal((20_000, 50))
    bound = float(np.median(np.linalg.norm(X, axis=1)))
    estimator = PrivatePCA(2, data_norm=bound, centering=centering, random_state=0)
    tracemalloc.start()
    try:
        _quiet_fit(estimator, X)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert estimator.method_ == "analyze_gauss"
    assert peak < X.nbytes / 2, (peak, X.nbytes)


@pytest.mark.parametrize("method", ["analyze_gauss", "rgd"])
def test_private_mean_draws_its_calibrated_noise(method):
    """The mean's own event: noise of standard deviation z 2B / n per coordinate, with z
    from the mean's share of mu^2; a half (or zero) noise fails the 5-standard-error
    tolerance on 4 x 150 draws (relative standard error 2.9%)."""
    n, p, bound, epsilon, delta, share = 600, 150, 3.0, 2.0, 1e-5, 0.25
    X = np.random.default_rng(4).uniform(0, 0.2, (n, p))
    rows = _pca_rows.bounded_rows(X, bound)
    noises, events = [], []
    for seed in range(4):
        pca = _quiet_fit(PrivatePCA(1, epsilon=epsilon, delta=delta, data_norm=bound,
                                    centering="private_mean", mean_budget_fraction=share,
                                    method=method, n_iter=2, random_state=seed), X)
        noises.append(to_numpy(pca.mean_) - rows.mean(axis=0))
        events.append(pca.events_[0])
    event = events[0]
    assert isinstance(event, GaussianEvent) and event.label == "PrivatePCA: mean"
    assert event.sensitivity == pytest.approx(2 * bound / n)
    # its share of the Gaussian-DP budget: mu_mean^2 = share * mu^2
    mu_total = 1 / event.noise_multiplier / math.sqrt(share)
    assert _gdp_delta(epsilon, 1 / mu_total) == pytest.approx(delta, rel=1e-4)
    noises = np.concatenate(noises)
    assert abs(np.std(noises) / event.noise_std - 1) < 5 / math.sqrt(2 * noises.size)
    assert pca.budget_.spent_epsilon == pytest.approx(epsilon, rel=1e-6)


def test_gradient_method_draws_the_calibrated_noise(monkeypatch):
    sigmas = TangentGaussianSpy(monkeypatch).sigmas
    X, _ = _spiked(300, seed=4)
    pca = PrivatePCA(1, epsilon=1.0, data_norm=0.5, method="rgd", centering="none",
                     random_state=0).fit(X)
    trace, steps, variances = pca.events_
    assert [event.label for event in pca.events_] == [
        "PrivatePCA: trace", "PrivatePCA DP-RGD: full_gradient", "PrivatePCA: variances"]
    assert pca.clip_norm_ == 0.25 and steps.sensitivity == pytest.approx(2 * 0.25 / 300)
    assert trace.sensitivity == pytest.approx(0.25 / 300)
    assert variances.sensitivity == pytest.approx(math.sqrt(2) * 0.25 / 300)
    assert np.allclose(sigmas, pca.noise_multiplier_ * 2 * 0.25 / 300, rtol=1e-12)
    assert len(sigmas) == pca.n_iter_ == steps.n_steps
    # the three releases compose, exactly, to the budget (Gaussian DP: mu^2 add up)
    mu = math.sqrt(sum(event.n_steps / event.noise_multiplier**2 for event in pca.events_))
    assert _gdp_delta(1.0, 1 / mu) == pytest.approx(1e-5, rel=1e-4)
    assert pca.budget_.spent_epsilon == pytest.approx(1.0, rel=1e-6)


CASES = {
    # name: (data, data_norm, centering)
    "loose by sqrt(p), uncentred": (lambda: _unit_cube(3000), math.sqrt(10), "none"),
    "loose by sqrt(p), centred": (lambda: _unit_cube(3000), math.sqrt(10), "private_mean"),
    "loose by 10, uncentred": (lambda: _spiked(3000, seed=5)[0] / 10, 1.0, "none"),
    "small eigengap, centred": (lambda: _unit_cube(3000, gap=0.3, seed=6), math.sqrt(10),
                                "private_mean"),
}


@pytest.mark.parametrize("k", [1, 2])
@pytest.mark.parametrize("method", ["rgd", "analyze_gauss"])
@pytest.mark.parametrize("case", list(CASES))
def test_converges_at_a_huge_epsilon(case, method, k):
    """From the data-independent start, whatever the looseness of B or the gap."""
    make, bound, centering = CASES[case]
    X = make()
    reference = X if centering == "none" else X - X.mean(axis=0)
    pca = PrivatePCA(k, epsilon=HUGE_EPSILON, delta=1e-5, data_norm=bound,
                     centering=centering, method=method, random_state=0).fit(X)
    # an optimisation tolerance: the slowest direction contracts at the rate
    # (lambda_k - lambda_(k+1)) / T per step (T the trace)
    assert explained_variance_ratio(pca.components_, reference) > 0.995
    covariance = reference.T @ reference / len(X)
    eigenvalues = np.linalg.eigvalsh(covariance)[::-1]
    # the released variances: within 5 standard deviations of their noise's effect
    noise = 5 * pca.events_[-1].noise_std * math.sqrt(X.shape[1])
    assert np.allclose(to_numpy(pca.explained_variance_), eigenvalues[:k], rtol=0.05,
                       atol=noise)
    assert pca.noise_ratio_ < 0.1


@pytest.mark.parametrize("method", ["analyze_gauss", "rgd"])
def test_the_default_centres_on_a_private_mean_as_scikit_learn_does(method):
    """Features in [0, 1] around 0.5, varying most along e_0 - e_1: the uncentred second
    moment points at the mean, orthogonal to the top centred direction; the default
    subtracts a private mean and finds the latter, ``centering="none"`` keeps the
    uncentred release (its events: no mean)."""
    rng = np.random.default_rng(11)
    X = 0.5 + rng.uniform(-0.05, 0.05, (3000, 10))
    X[:, :2] += 0.3 * rng.uniform(-1, 1, (3000, 1)) * [1, -1]
    centred = X - X.mean(axis=0)
    default = PrivatePCA(1, epsilon=HUGE_EPSILON, data_norm=math.sqrt(10), method=method,
                         random_state=shifted(0)).fit(X)
    assert default.get_params()["centering"] == "private_mean"
    assert default.events_[0].label == "PrivatePCA: mean"
    np.testing.assert_allclose(to_numpy(default.mean_), X.mean(axis=0), atol=1e-4)
    assert explained_variance_ratio(default.components_, centred) > 0.99
    uncentred = PrivatePCA(1, epsilon=HUGE_EPSILON, data_norm=math.sqrt(10), method=method,
                           centering="none", random_state=shifted(0)).fit(X)
    assert "PrivatePCA: mean" not in [event.label for event in uncentred.events_]
    assert not to_numpy(uncentred.mean_).any()
    assert explained_variance_ratio(uncentred.components_, centred) < 0.05


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("centering", ["private_mean", "none"])
@pytest.mark.parametrize("method", ["analyze_gauss", "rgd"])
@pytest.mark.parametrize("delta", [0.1, 0.5])
def test_a_large_delta_still_splits_the_gaussian_dp_budget(delta, method, centering):
    """At a large delta a small share of mu^2 is (0, delta)-DP alone (its epsilon at
    delta is 0): every share is calibrated from mu itself, and the events compose
    exactly to (epsilon, delta) (checked with the accountant written out here). The mean
    takes 95% of mu^2, so that even the run's share is small."""
    X = _unit_cube(200)
    pca = _quiet_fit(PrivatePCA(1, epsilon=0.5, delta=delta, data_norm=math.sqrt(10),
                                method=method, centering=centering, n_iter=3,
                                mean_budget_fraction=0.95, random_state=0), X)
    mu = math.sqrt(sum(event.n_steps / event.noise_multiplier**2 for event in pca.events_))
    assert _gdp_delta(0.5, 1 / mu) == pytest.approx(delta, rel=1e-6)
    assert _gdp_delta(0.5, 1 / mu) <= delta * (1 + 1e-9)
    if method == "rgd":  # the trace's share: 2% of what the mean leaves
        trace = pca.events_[-3]
        rest = 0.05 if centering == "private_mean" else 1.0
        assert trace.noise_multiplier == pytest.approx(1 / (mu * math.sqrt(0.02 * rest)))


def test_more_privacy_budget_gives_better_components():
    X, direction = _spiked(2000, seed=2)
    cosines = []
    for epsilon in (0.05, 1.0, 100.0):
        runs = [abs(float(to_numpy(_quiet_fit(
            PrivatePCA(1, epsilon=epsilon, delta=1e-5, data_norm=1.0, method=method,
                       random_state=seed), X).components_)[0] @ direction))
            for seed in range(4) for method in ("rgd", "analyze_gauss")]
        cosines.append(np.mean(runs))
    assert cosines[0] < cosines[1] < cosines[2]
    assert cosines[2] > 0.99


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_noise_ratio_warns_when_the_noise_dominates():
    X = _unit_cube(200)
    for method in ("rgd", "analyze_gauss"):
        with pytest.warns(NoiseDominatesWarning):
            pca = PrivatePCA(1, epsilon=0.05, data_norm=math.sqrt(10), method=method,
                             random_state=0).fit(X)
        assert pca.noise_ratio_ > 1


def test_a_default_that_cannot_converge_says_so_before_reading_data():
    """With n epsilon tiny the default DP-RGD schedule cannot contract, whatever the data:
    the warning comes from public quantities (the budget refuses before any data)."""
    X = _unit_cube(60)
    with (pytest.warns(ConvergenceWarning, match="cannot converge"),
          pytest.raises(BudgetExceededError)):
        PrivatePCA(1, epsilon=0.05, data_norm=math.sqrt(10), method="rgd",
                   budget=PrivacyBudget(0.01, 1e-5)).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        PrivatePCA(1, epsilon=HUGE_EPSILON, data_norm=math.sqrt(10), method="rgd",
                   random_state=0).fit(X)


@pytest.mark.parametrize("method", ["auto", "rgd", "analyze_gauss"])
def test_neighbours_share_every_public_attribute(method):
    X, _ = _spiked(200, seed=6)
    neighbour = X.copy()
    neighbour[5] = np.nan  # a non-finite record is zeroed, never raised on
    fits = []
    for data in (X, neighbour):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fits.append(PrivatePCA(2, epsilon=1.0, data_norm=1.0, method=method,
                                   random_state=3).fit(data))
        # NoiseDominatesWarning is computed from the release (post-processing)
        fits[-1].caught = sorted(str(w.category) for w in caught
                                 if w.category is not NoiseDominatesWarning)
    for name in PUBLIC:
        assert getattr(fits[0], name) == getattr(fits[1], name), name
    assert fits[0].caught == fits[1].caught


@pytest.mark.backend_independent
def test_auto_chooses_from_public_quantities_only(monkeypatch):
    """Two datasets of the same shape, different values: the same choice, that of the
    public rule; the rule moves with p only."""
    rng = np.random.default_rng(7)
    monkeypatch.setattr(pca_module, "AUTO_MAX_FEATURES", 20)
    for p, expected in ((40, "rgd"), (8, "analyze_gauss")):
        methods = {_quiet_fit(PrivatePCA(1, epsilon=0.5, data_norm=math.sqrt(p),
                                         n_iter=1, random_state=0), data).method_
                   for data in (rng.uniform(0, 1, (300, p)), rng.standard_normal((300, p)))}
        assert methods == {expected} == {pca_module.auto_method(p)}


def test_transformer_api():
    X, _ = _spiked(300, seed=8)
    params = {"n_components": 2, "epsilon": 2.0, "data_norm": 1.0, "random_state": 0}
    with pytest.raises(NotFittedError):
        PrivatePCA(**params).transform(X)
    pca = _quiet_fit(PrivatePCA(**params), X)
    projected = pca.transform(X)
    assert np.allclose(to_numpy(_quiet_fit_transform(PrivatePCA(**params), X)),
                       to_numpy(projected))
    back = pca.inverse_transform(projected)
    assert tuple(back.shape) == X.shape
    array_type = type(gs.array([0.0]))
    for name in ("estimate_", "components_", "mean_", "explained_variance_",
                 "explained_variance_ratio_"):
        assert isinstance(getattr(pca, name), array_type), name
    assert isinstance(projected, array_type) and isinstance(back, array_type)
    assert np.allclose(to_numpy(pca.components_) @ to_numpy(pca.components_).T,
                       np.eye(2), atol=1e-8)
    for bad, message in ((np.full((2, 10), np.nan), "X holds a non-finite value"),
                         (np.ones((2, 9)), r"X must have shape \[n_samples, 10\]")):
        with pytest.raises(ValueError, match=message):
            pca.transform(bad)
    with pytest.raises(ValueError, match=r"X must have shape \[n_samples, 2\]"):
        pca.inverse_transform(np.ones((2, 3)))


def _quiet_fit_transform(pca, X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoiseDominatesWarning)
        return pca.fit_transform(X)


@pytest.mark.parametrize("X, params, error, message", [
    (np.ones(5), {"data_norm": 1.0}, ValueError, "X must have at least 2 axes"),
    (np.ones((5, 3)), {"n_components": 3, "data_norm": 1.0}, ValueError,
     "n_components must be < n_features = 3"),
    (np.ones((5, 3)), {}, ValueError, "data_norm must be given"),
    (np.ones((5, 3)), {"data_norm": 1.0, "centering": "yes"}, ValueError,
     "'centering' parameter of PrivatePCA must be"),
    (np.ones((5, 3)), {"data_norm": 1.0, "method": "svd"}, ValueError,
     "'method' parameter of PrivatePCA must be"),
    (np.ones((5, 3)), {"data_norm": -1.0}, ValueError,
     "'data_norm' parameter of PrivatePCA must be"),
    (np.ones((5, 3)), {"data_norm": 1.0, "mean_budget_fraction": 1.0}, ValueError,
     "'mean_budget_fraction' parameter of PrivatePCA must be"),
])
def test_bad_input_names_the_argument_and_charges_nothing(X, params, error, message):
    budget = PrivacyBudget(1.0, 1e-5)
    pca = PrivatePCA(budget=budget, **params)
    with pytest.raises(error, match=message):
        pca.fit(X)
    assert budget.events == () and not hasattr(pca, "components_")


def test_sklearn_conventions():
    pca = PrivatePCA(2, epsilon=3.0, data_norm=1.0)
    params = pca.get_params()
    assert params["n_components"] == 2 and params["method"] == "auto"
    assert clone(pca).get_params() == params


@pytest.mark.parametrize("method", ["rsgd", "rsvrg"])
def test_subsampled_methods_are_not_offered(method):
    """Their accounting does not split the Gaussian-DP budget exactly: refused."""
    with pytest.raises(ValueError, match="'method' parameter of PrivatePCA must be"):
        PrivatePCA(data_norm=1.0, method=method).fit(np.ones((5, 3)))


@pytest.mark.backend_independent
@pytest.mark.parametrize("release", ["noisy_mean", "noisy_trace", "noisy_second_moment",
                                     "noisy_projected_moments"])
def test_each_release_adds_the_noise_it_is_given(release):
    """Every coordinate of each Gaussian release: mean 0, standard deviation the given
    one (5 standard errors on at least 2,000 draws: a half noise fails)."""
    rng = np.random.default_rng(10)
    rows = rng.uniform(0, 1, (50, 4))
    basis = np.linalg.qr(rng.standard_normal((4, 2)))[0]
    function = getattr(_pca_rows, release)
    args = (basis,) if release == "noisy_projected_moments" else ()

    def flat(std):
        value = function(rows, *args, std, rng, label=release, sensitivity=1.0)
        if release == "noisy_projected_moments":
            return np.append(_upper(value[0]), value[1])
        return _upper(value) if release == "noisy_second_moment" else np.ravel(value)

    exact, std = flat(0.0), 0.3
    noise = np.concatenate([flat(std) - exact for _ in range(2000 // exact.size + 1)])
    assert abs(np.std(noise) / std - 1) < 5 / math.sqrt(2 * noise.size)
    assert abs(np.mean(noise)) < 5 * std / math.sqrt(noise.size)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_rgd_small_releases_are_given_their_calibrated_noise(monkeypatch):
    """DP-RGD's trace (sensitivity B^2 / n) and projected moments (sqrt(2) B^2 / n) get
    the noise of their events, whose multipliers are their shares of mu^2."""
    given = {}
    for module, name in ((pca_gradient, "noisy_trace"),
                         (pca_gradient, "noisy_projected_moments")):
        original = getattr(module, name)

        def spy(*args, _original=original, _name=name, **stage):
            given[_name] = args[-2]
            return _original(*args, **stage)

        monkeypatch.setattr(module, name, spy)
    n, p, bound, epsilon, delta = 200, 5, 2.0, 1.0, 1e-5
    X = np.random.default_rng(9).uniform(0.5, 0.9, (n, p))
    pca = _quiet_fit(PrivatePCA(2, epsilon=epsilon, delta=delta, data_norm=bound,
                                method="rgd", n_iter=2, centering="none",
                                random_state=0), X)
    trace_event, _, variance_event = pca.events_
    assert trace_event.sensitivity == pytest.approx(bound**2 / n)
    assert variance_event.sensitivity == pytest.approx(math.sqrt(2) * bound**2 / n)
    assert given == {"noisy_trace": trace_event.noise_std,
                     "noisy_projected_moments": variance_event.noise_std}
    for event, share in ((trace_event, 0.02), (variance_event, 0.03)):
        mu = 1 / event.noise_multiplier / math.sqrt(share)
        assert _gdp_delta(epsilon, 1 / mu) == pytest.approx(delta, rel=1e-4)


def test_bounded_rows_scales_long_rows_zeroes_non_finite_and_copies_only_then():
    """Rows within B come back as given (the very array, no copy); otherwise every row
    has norm min(|z|, B) along z, a non-finite or overflowing row is zero, no warning,
    and the input is left unchanged."""
    rng = np.random.default_rng(7)
    X = rng.standard_normal((50, 6))
    bound = 1.01 * float(np.linalg.norm(X, axis=1).max())
    assert _pca_rows.bounded_rows(X, bound) is X
    X[3] *= 10
    np.testing.assert_allclose(np.linalg.norm(_pca_rows.bounded_rows(X, bound)[3]), bound,
                               rtol=1e-13)  # one long finite row alone is scaled too
    X[5, 2], X[8, 0], X[9] = np.nan, -np.inf, 1e200
    original = X.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rows = _pca_rows.bounded_rows(X, bound)
    np.testing.assert_array_equal(X, original)
    assert not rows[[5, 8, 9]].any()
    kept = np.setdiff1d(np.arange(50), [5, 8, 9])
    norms = np.linalg.norm(original[kept], axis=1)
    np.testing.assert_allclose(np.linalg.norm(rows[kept], axis=1), np.minimum(norms, bound),
                               rtol=1e-13)
    np.testing.assert_allclose(rows[kept] * norms[:, None],
                               original[kept] * np.minimum(norms, bound)[:, None], rtol=1e-13)


def test_score_is_the_probabilistic_pca_likelihood_of_the_release():
    """score_samples is the Gaussian log-density with the covariance the release defines
    (written out here with scipy); score, its mean, spends nothing and says it is not
    private; at a huge epsilon it is scikit-learn's PCA score."""
    from sklearn.decomposition import PCA
    from sklearn.model_selection import cross_val_score

    from geomstats_dp.privacy import PrivacyLeakWarning

    X = _unit_cube(2000)
    pca = _quiet_fit(PrivatePCA(2, epsilon=20.0, data_norm=math.sqrt(10),
                                random_state=shifted(0)), X)
    components = to_numpy(pca.components_)
    noise = pca.noise_variance_
    assert noise > 0
    spikes = np.maximum(to_numpy(pca.explained_variance_) - noise, 0.0)
    covariance = components.T @ np.diag(spikes) @ components + noise * np.eye(10)
    expected = stats.multivariate_normal(to_numpy(pca.mean_), covariance).logpdf(X[:50])
    spent = pca.budget_.spent_epsilon
    with pytest.warns(PrivacyLeakWarning):
        samples = to_numpy(pca.score_samples(X[:50]))
    np.testing.assert_allclose(samples, expected, rtol=1e-10)
    with pytest.warns(PrivacyLeakWarning):
        assert pca.score(X[:50]) == pytest.approx(expected.mean(), rel=1e-10)
    assert pca.budget_.spent_epsilon == spent
    exact = PrivatePCA(2, epsilon=HUGE_EPSILON, data_norm=math.sqrt(10),
                       random_state=shifted(0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        assert exact.fit(X).score(X) == pytest.approx(PCA(2).fit(X).score(X), rel=1e-3)
        scores = cross_val_score(clone(exact), X, cv=3)
    assert np.isfinite(scores).all() and len(scores) == 3


def test_score_floors_a_released_residual_that_is_not_positive():
    """A residual the noise drives below 0 gives noise_variance_ = 0; the score's model
    floors it at a public fraction of B^2 / p and stays finite."""
    X = _unit_cube(50)
    pca = _quiet_fit(PrivatePCA(1, epsilon=0.01, data_norm=math.sqrt(10),
                                random_state=1), X)
    pca.noise_variance_ = 0.0  # as released when the residual's noise is negative
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert np.isfinite(pca.score(X))


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("method", ["analyze_gauss", "rgd"])
def test_the_noise_warning_is_a_public_rule_of_n_p_and_epsilon(method):
    """n = 200 rows in p = 60 at epsilon 0.1: the noise outweighs real data (the ratio is
    the same for two unrelated datasets, Analyze Gauss's is 2 sigma sqrt(p) over
    SIGNAL_FRACTION B^2 from the calibrated noise); at epsilon 1e3 no warning."""
    rng = np.random.default_rng(12)
    datasets = (rng.uniform(0, 1, (200, 60)), _spiked(200, n_features=60, seed=3)[0])
    ratios = []
    for X in datasets:
        with pytest.warns(NoiseDominatesWarning, match="noise_ratio_ > 1"):
            pca = PrivatePCA(1, epsilon=0.1, data_norm=math.sqrt(60), method=method,
                             n_iter=20, random_state=0).fit(X)
        ratios.append(pca.noise_ratio_)
    assert ratios[0] == ratios[1] > 1
    if method == "analyze_gauss":
        noise_std = pca.events_[-1].noise_std
        signal = analyze_gauss.SIGNAL_FRACTION * 60  # of B^2 = 60
        assert ratios[0] == pytest.approx(2 * noise_std * math.sqrt(60) / signal)
    for X in datasets:
        with warnings.catch_warnings():
            warnings.simplefilter("error", NoiseDominatesWarning)
            PrivatePCA(1, epsilon=1e3, data_norm=math.sqrt(60), method=method, n_iter=20,
                       random_state=0).fit(X)


def test_no_noise_warning_on_a_working_digits_pipeline():
    """Digits scaled publicly to norm <= 1, 20 private components at epsilon 1 feeding a
    logistic regression: held-out accuracy far above chance (0.1), and no warning."""
    from sklearn.datasets import load_digits
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split
    from sklearn.pipeline import make_pipeline

    digits = load_digits()
    X = (digits.data / 16.0 - 0.5) / 4.0
    X_train, X_test, y_train, y_test = train_test_split(X, digits.target, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NoiseDominatesWarning)
        pipeline = make_pipeline(
            PrivatePCA(20, epsilon=1.0, data_norm=1.0, random_state=shifted(0)),
            LogisticRegression(max_iter=3000)).fit(X_train, y_train)
    assert pipeline.score(X_test, y_test) > 0.8
