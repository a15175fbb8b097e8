"""check_noise_drawn: passes on the package's mechanisms; fails on half the noise, on a
quantile run at another epsilon than charged, on a release that bypasses its stage."""

from dataclasses import replace

import pytest

from geomstats_dp.learning._pca_rows import noisy_stage
from geomstats_dp.learning.mechanisms import tangent
from geomstats_dp.optim.oracle import GradientOracle
from geomstats_dp.privacy import GaussianEvent
from geomstats_dp.privacy.quantile import private_quantile
from geomstats_dp.privacy.stages import Stage
from geomstats_dp.testing._noise import check_charged, check_noise_drawn
from geomstats_dp.testing._recording import RecordedFit
from tests.conftest import shifted

from .stage_cases import (
    NORTH,
    frechet_mean,
    label_data,
    matrix_completion,
    pca,
    pca_data,
    ratings_data,
    sphere_data,
    structured_prediction,
)

CASES = {
    "rgd": lambda: (frechet_mean("rgd"), sphere_data(), None),
    "rsgd": lambda: (frechet_mean("rsgd"), sphere_data(), None),
    "rsgd poisson": lambda: (frechet_mean("rsgd", sampling="poisson", dataset_size=30),
                             sphere_data(), None),
    "rsvrg": lambda: (frechet_mean("rsvrg"), sphere_data(), None),
    "two_stage auto": lambda: (frechet_mean("two_stage", clip_norm="auto"), sphere_data(),
                               None),
    "laplace": lambda: (frechet_mean("laplace", radius=0.5, center=NORTH, clip_norm=None),
                        sphere_data(spread=0.1), None),
    "analyze_gauss": lambda: (pca("analyze_gauss"), pca_data(), None),
    "pca rgd": lambda: (pca("rgd", n_iter=5, centering="none"), pca_data(), None),
    "als": lambda: (matrix_completion(), ratings_data(), None),
    "labels": lambda: (structured_prediction(), *label_data()),
}


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("case", CASES)
def test_the_mechanisms_draw_their_charged_noise(case):
    estimator, X, y = CASES[case]()
    check_noise_drawn(estimator, X, y, n_fits=3, random_state=shifted(0))


def test_half_the_gradient_noise_fails(monkeypatch):
    draw = GradientOracle.draw_noise
    monkeypatch.setattr(GradientOracle, "draw_noise",
                        lambda self, point, sigma: draw(self, point, sigma) * 0.5)
    with pytest.raises(AssertionError, match=r"'full_gradient' \(gaussian\).*expected 1"):
        check_noise_drawn(frechet_mean("rgd"), sphere_data(), n_fits=10,
                          random_state=shifted(0))


@pytest.mark.filterwarnings("ignore")
def test_a_quantile_run_at_the_full_epsilon_fails(monkeypatch):
    """The localisation quantile of two_stage at epsilon while the ledger charges 5%."""
    estimator = frechet_mean("two_stage")
    monkeypatch.setattr(tangent, "private_quantile", lambda values, q, epsilon, rng, **kw:
                        private_quantile(values, q, estimator.epsilon, rng, **kw))
    with pytest.raises(AssertionError, match="localisation radius.*epsilon 2, ledger "
                                             "epsilon 0.1"):
        check_noise_drawn(estimator, sphere_data(), n_fits=1, random_state=shifted(0))


def test_a_release_outside_its_stage_fails(monkeypatch):
    """PCA's mean with its noise added without ``noisy_stage``: charged, not drawn."""
    from geomstats_dp.learning import _pca_rows

    def unobserved(statistic, noise, **stage):
        if stage["label"] == "PrivatePCA: mean":
            return statistic + noise
        return noisy_stage(statistic, noise, **stage)

    monkeypatch.setattr(_pca_rows, "noisy_stage", unobserved)
    with pytest.raises(AssertionError, match="charges 1 release.*'PrivatePCA: mean'"):
        check_noise_drawn(pca("analyze_gauss"), pca_data(), n_fits=1)


@pytest.mark.backend_independent
def test_only_the_parts_of_a_composite_release_go_without_their_own_event():
    """A stage no event names fails, unless it is a part of a composite release
    (``stage_group``), which the ledger states as a whole; a stage with an event is
    compared to it, and the counts to the events' steps."""
    event = GaussianEvent(2.0, n_steps=2, sensitivity=0.5, label="m: step")
    stage = Stage("m: step", 0.0, 0.1, "gaussian", 1.0, 0.5)
    check_charged(RecordedFit(None, [stage, stage], (event,)))
    with pytest.raises(AssertionError, match="charges 2 release.*made 1"):
        check_charged(RecordedFit(None, [stage], (event,)))
    with pytest.raises(AssertionError, match="noise multiplier 2"):
        check_charged(RecordedFit(None, [replace(stage, scale=0.5)] * 2, (event,)))
    unnamed = replace(stage, label="other: step")
    with pytest.raises(AssertionError, match="has no ledger event"):
        check_charged(RecordedFit(None, [stage, stage, unnamed], (event,)))
    grouped = replace(unnamed, group="other")
    check_charged(RecordedFit(None, [stage, grouped], (event,)))
