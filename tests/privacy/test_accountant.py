"""The ledger composes by the tightest valid rule, and agrees with independent accountants."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize
from scipy.stats import norm

from geomstats_dp.privacy import GaussianEvent, PureEvent, compose, compose_epsilon

pytestmark = pytest.mark.backend_independent

SCHEMES = {
    "full": {"sampling_rate": 1.0, "sampling": "full"},
    "without_replacement": {"sampling_rate": 0.01, "sampling": "without_replacement"},
    "poisson": {"sampling_rate": 0.01, "sampling": "poisson", "adjacency": "add_remove"},
}


def closed_form_gdp_epsilon(mu, delta):
    """Epsilon of a mu-GDP mechanism at delta, from delta(eps) = Phi(-eps/mu + mu/2)
    - e^eps Phi(-eps/mu - mu/2) (Dong, Roth & Su 2022, Cor. 2.13), solved independently."""

    def excess(eps):
        return norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2) - delta

    return optimize.brentq(excess, 0.0, 100.0, xtol=1e-14, rtol=1e-14)


@pytest.mark.parametrize("delta", [1e-5, 1e-3])
@pytest.mark.parametrize(
    ("noise_multiplier", "n_steps"), [(1.0, 1), (5.0, 10), (20.0, 100), (60.0, 1000)]
)
def test_full_batch_equals_closed_form_gdp(noise_multiplier, n_steps, delta):
    event = GaussianEvent(noise_multiplier, n_steps=n_steps)
    expected = closed_form_gdp_epsilon(math.sqrt(n_steps) / noise_multiplier, delta)
    assert compose_epsilon([event], delta) == pytest.approx(expected, abs=1e-6)


def test_heterogeneous_full_batch_composes_as_one_gaussian():
    events = [GaussianEvent(3.0, n_steps=4), GaussianEvent(10.0, n_steps=50, label="b")]
    mu = math.sqrt(4 / 3.0**2 + 50 / 10.0**2)
    assert compose_epsilon(events, 1e-5) == pytest.approx(
        closed_form_gdp_epsilon(mu, 1e-5), abs=1e-6
    )
    assert compose(events, 1e-5).accountant == "gdp"


@pytest.mark.parametrize(("noise_multiplier", "n_steps"), [(5.0, 10), (20.0, 100), (60.0, 1000)])
def test_rdp_only_overstates_the_exact_full_batch_epsilon(noise_multiplier, n_steps):
    event = GaussianEvent(noise_multiplier, n_steps=n_steps)
    exact = compose_epsilon([event], 1e-5)
    rdp = compose_epsilon([event], 1e-5, method="rdp")
    assert exact < rdp < 1.2 * exact  # docs/papers.md: RDP overstates by 2-10 %


# Typical DP-SGD regimes (epsilon between 0.2 and 10), where the optimal RDP order is an
# integer-spaced one of both grids; dp-accounting's default orders include fractional ones.
POISSON_CASES = [(1.0, 0.01, 1000), (1.1, 0.05, 50), (2.0, 0.001, 10000), (0.9, 0.02, 500)]


@pytest.mark.parametrize(("noise_multiplier", "rate", "n_steps"), POISSON_CASES)
def test_poisson_agrees_with_dp_accounting_rdp(noise_multiplier, rate, n_steps):
    dp_accounting = pytest.importorskip("dp_accounting")
    from dp_accounting.rdp import rdp_privacy_accountant

    reference = rdp_privacy_accountant.RdpAccountant()  # add/remove by default
    reference.compose(
        dp_accounting.PoissonSampledDpEvent(rate, dp_accounting.GaussianDpEvent(noise_multiplier)),
        n_steps,
    )
    event = GaussianEvent(noise_multiplier, n_steps, rate, "poisson", "add_remove")
    assert compose_epsilon([event], 1e-5) == pytest.approx(reference.get_epsilon(1e-5), rel=0.01)


@pytest.mark.parametrize(("noise_multiplier", "rate", "n_steps"), POISSON_CASES)
def test_poisson_rdp_curve_matches_dp_accounting_on_the_same_orders(
    noise_multiplier, rate, n_steps
):
    dp_accounting = pytest.importorskip("dp_accounting")
    from dp_accounting.rdp import rdp_privacy_accountant

    from geomstats_dp.privacy.renyi import ORDERS

    reference = rdp_privacy_accountant.RdpAccountant(orders=list(ORDERS))
    reference.compose(
        dp_accounting.PoissonSampledDpEvent(rate, dp_accounting.GaussianDpEvent(noise_multiplier)),
        n_steps,
    )
    event = GaussianEvent(noise_multiplier, n_steps, rate, "poisson", "add_remove")
    # Both compute the exact RDP of the Poisson-subsampled Gaussian at integer orders.
    assert compose_epsilon([event], 1e-5) == pytest.approx(reference.get_epsilon(1e-5), rel=1e-6)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # inside autodp's order search
@pytest.mark.parametrize(
    ("noise_multiplier", "rate", "n_steps"), [(1.0, 0.01, 1000), (2.0, 0.1, 100)]
)
def test_without_replacement_matches_autodp_own_composition(noise_multiplier, rate, n_steps):
    from autodp import mechanism_zoo, transformer_zoo

    base = mechanism_zoo.ExactGaussianMechanism(sigma=noise_multiplier)
    base.neighboring = "replace_one"
    sampled = transformer_zoo.AmplificationBySampling(PoissonSampling=False)(
        base, rate, improved_bound_flag=True
    )
    reference = transformer_zoo.Composition()([sampled], [n_steps]).get_approxDP(1e-5)
    event = GaussianEvent(noise_multiplier, n_steps, rate, "without_replacement")
    # autodp optimises over real orders, the library over a grid of integers: the grid can
    # only lose, and by little where the optimal order is small.
    epsilon = compose_epsilon([event], 1e-5)
    assert reference * (1 - 1e-8) <= epsilon <= reference * 1.01


def test_pure_events_compose_no_worse_than_their_sum():
    events = [PureEvent(0.1, label=f"laplace {i}") for i in range(20)]
    assert compose_epsilon(events, 0.0) == pytest.approx(2.0, rel=1e-12)
    # At delta > 0 the RDP route (randomized response's curve) beats the plain sum.
    assert compose_epsilon(events, 1e-5) < 2.0


def test_pure_and_gaussian_events_compose():
    gaussian = GaussianEvent(5.0, n_steps=10)
    laplace = PureEvent(0.5)
    both = compose_epsilon([gaussian, laplace], 1e-5)
    assert max(compose_epsilon([gaussian], 1e-5), 0.5) < both
    assert both <= compose_epsilon([gaussian], 1e-5) + 0.5 + 1e-12  # basic composition


def test_gaussian_at_delta_zero_is_not_private():
    assert compose_epsilon([GaussianEvent(5.0)], 0.0) == math.inf
    assert compose_epsilon([], 1e-5) == 0.0


def test_a_ledger_has_one_adjacency():
    events = [GaussianEvent(1.0), GaussianEvent(1.0, adjacency="add_remove")]
    with pytest.raises(ValueError, match=r"events\[1\].*adjacency"):
        compose_epsilon(events, 1e-5)


@pytest.mark.parametrize(
    ("arguments", "error", "name"),
    [
        (([GaussianEvent(1.0)], 1.0), ValueError, "delta"),
        (([GaussianEvent(1.0)], 1e-5, "moments"), ValueError, "method"),
        (([GaussianEvent(1.0), 3.0], 1e-5), TypeError, r"events\[1\]"),
    ],
)
def test_compose_rejects_bad_input(arguments, error, name):
    with pytest.raises(error, match=name):
        compose_epsilon(*arguments)


@settings(max_examples=6, deadline=None)
@given(
    scheme=st.sampled_from(sorted(SCHEMES)),
    noise_multiplier=st.floats(0.8, 5.0),
    factor=st.floats(1.05, 3.0),
    n_steps=st.integers(1, 2000),
)
def test_epsilon_falls_as_noise_grows(scheme, noise_multiplier, factor, n_steps):
    def epsilon(z):
        return compose_epsilon([GaussianEvent(z, n_steps, **SCHEMES[scheme])], 1e-5)

    assert epsilon(noise_multiplier * factor) <= epsilon(noise_multiplier)


@settings(max_examples=6, deadline=None)
@given(
    scheme=st.sampled_from(sorted(SCHEMES)),
    noise_multiplier=st.floats(0.8, 5.0),
    n_steps=st.integers(1, 2000),
    extra=st.integers(1, 2000),
)
def test_epsilon_rises_with_steps(scheme, noise_multiplier, n_steps, extra):
    def epsilon(steps):
        return compose_epsilon([GaussianEvent(noise_multiplier, steps, **SCHEMES[scheme])], 1e-5)

    assert epsilon(n_steps) <= epsilon(n_steps + extra)
    assert np.isfinite(epsilon(n_steps))


@pytest.mark.backend_independent
def test_a_huge_approx_event_composes_by_basic_composition_without_overflow():
    """Advanced composition of an (epsilon, delta) event beyond e^700 is no bound (inf)
    rather than an OverflowError; basic composition then gives its epsilon plus the
    Gaussian part's at the rest of delta."""
    from geomstats_dp.privacy import ApproxDPEvent
    from geomstats_dp.privacy.accountant import approx_composition

    huge = ApproxDPEvent(1e6, 5e-6)
    assert approx_composition((huge,), 1e-7)[0] == math.inf
    gaussian = GaussianEvent(3.0)
    total = compose((huge, gaussian), 1e-5).epsilon
    assert total == pytest.approx(1e6 + compose_epsilon((gaussian,), 5e-6))
