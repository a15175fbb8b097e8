"""A record whose whitened matrix overflows float64 (SPD(3), entries near the float64
maximum) adds nothing on every route of DP-RGD / DP-RSGD (``AffineLogSums.eigen``: the
loop's batched sums and ``clipped_one``, ``warm_logs``, ``compiled_spd``): the fit
raises nothing, shows the public outputs of its neighbour without that record, releases
a finite point on the space, and the compiled routes release the loop's point."""

import numpy as np
import pytest
from geomstats.geometry.spd_matrices import SPDMatrices
from sklearn.base import clone

from geomstats_dp._backend import to_numpy
from geomstats_dp.learning import PrivateFrechetMean
from geomstats_dp.optim import compiled_blocks, warm_logs
from geomstats_dp.privacy import PrivacyBudget
from geomstats_dp.testing import check_public_observables
from tests.conftest import BACKEND, shifted
from tests.optim.data import cloud

SPACE = SPDMatrices(3)
START = 0.5 * np.eye(3)  # public start: whitening at it doubles a record's entries
# on the space; its whitened matrix at START holds inf, and LAPACK's eigh of it raises
HUGE = 1.7e308 * (0.9 * np.ones((3, 3)) + 0.1 * np.eye(3))
METHODS = {
    "rgd": {"method": "rgd"},
    "rsgd": {"method": "rsgd"},
    "rsgd_single": {"method": "rsgd", "batch_size": 1},  # the loop's ``clipped_one``
    "default": {},
}
_LOADED = {}  # the kernels, loaded once for this module


def _kernels():
    """The SPD(n) block kernel and the warm-start kernels, loaded without leaving them
    loaded for the process (later tests take the routes they take alone)."""
    if not _LOADED:
        saved = compiled_blocks._KERNELS, warm_logs._KERNELS
        compiled_blocks._KERNELS, warm_logs._KERNELS = {}, []
        try:
            _LOADED["spd"] = compiled_blocks.compiled_kernel("spd")
            warm_logs._load_kernels()
            _LOADED["warm"] = warm_logs._KERNELS
        finally:
            compiled_blocks._KERNELS, warm_logs._KERNELS = saved
    return _LOADED


@pytest.fixture(params=["loop", "kernels"])
def route(request, monkeypatch):
    """"loop": the Python loop, no kernel. "kernels": both kernels loaded (for the test
    only); returns the list of kernel calls the fits make ("spd" a block, "warm" a
    warm-started chunk)."""
    if request.param == "loop":
        monkeypatch.setattr(compiled_blocks, "ENABLED", False)
        return None
    if BACKEND not in warm_logs.NUMPY_BACKENDS:
        pytest.skip("the kernels read numpy arrays")
    pytest.importorskip("numba")
    kernels, calls = _kernels(), []

    def block(*args):
        calls.append("spd")
        return kernels["spd"](*args)

    def warm_chunk(*args):
        calls.append("warm")
        return kernels["warm"][0](*args)

    monkeypatch.setattr(compiled_blocks, "_KERNELS", {"spd": block})
    monkeypatch.setattr(warm_logs, "_KERNELS", [warm_chunk, kernels["warm"][1]])
    return calls


def _estimator(name):
    return PrivateFrechetMean(SPACE, epsilon=1.0, clip_norm=1.0, init_point=START,
                              n_iter=80, **METHODS[name])


def _fit(estimator, X):
    return clone(estimator).set_params(random_state=shifted(0),
                                       budget=PrivacyBudget(2.0, 1e-5)).fit(X)


@pytest.mark.filterwarnings("ignore::geomstats_dp.learning.NoiseDominatesWarning",
                            "ignore::geomstats_dp.learning.ScheduleStopsShortWarning")
@pytest.mark.parametrize("name", sorted(METHODS))
def test_an_overflowing_record_adds_nothing_on_every_route(monkeypatch, route, name):
    blocks = name.startswith("rsgd")  # DP-RSGD's kernel: compiled_spd, numpy only
    if route is not None and blocks and BACKEND != "numpy":
        pytest.skip("DP-RSGD takes no kernel on this backend")
    data = np.asarray(cloud(SPACE, 8, radius=1.0, seed=3, offset=0.5))
    huge = data.copy()
    huge[0] = HUGE
    estimator = _estimator(name)
    check_public_observables(estimator, huge, random_state=shifted(0),
                             neighbours=[("without the huge record", data, None)])
    released = _fit(estimator, huge).estimate_
    estimate = to_numpy(released)
    assert np.isfinite(estimate).all() and bool(SPACE.belongs(released))
    if route is None:
        return
    # the kernels' route is the loop's: the same release from the same seed
    assert set(route) == {"spd" if blocks else "warm"}
    monkeypatch.setattr(compiled_blocks, "ENABLED", False)
    np.testing.assert_allclose(to_numpy(_fit(estimator, huge).estimate_), estimate,
                               rtol=1e-9, atol=1e-12)
