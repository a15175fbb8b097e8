"""Fits on Dask arrays: the in-memory release, chunk by chunk, without gathering."""

import concurrent.futures
import contextlib
import subprocess
import sys
import tracemalloc

import numpy as np
import pytest
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.spd_matrices import SPDMatrices

from geomstats_dp._backend import to_numpy
from geomstats_dp.learning import PrivateERM, PrivateFrechetMean
from geomstats_dp.optim import SquaredDistanceLoss
from tests.learning.public_outputs import public_outputs

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")

pytestmark = pytest.mark.dask


def spd_records(n_samples, dim, seed):
    """n SPD(dim) matrices A A^T / dim + I / 2 (numpy, float64)."""
    draws = np.random.default_rng(seed).standard_normal((n_samples, dim, dim))
    return draws @ np.swapaxes(draws, 1, 2) / dim + np.eye(dim) / 2


def mean_fit(X, **params):
    settings = {"epsilon": 1.0, "delta": 1e-5, "clip_norm": 2.0, "n_iter": 4, "random_state": 7}
    return PrivateFrechetMean(SPDMatrices(3), **{**settings, **params}).fit(X)


def assert_same_release(in_memory, on_dask):
    np.testing.assert_allclose(to_numpy(on_dask.estimate_), to_numpy(in_memory.estimate_),
                               rtol=0, atol=1e-10)
    assert on_dask.events_ == in_memory.events_
    assert on_dask.n_gradient_evaluations_ == in_memory.n_gradient_evaluations_
    assert on_dask.clip_norm_ == pytest.approx(in_memory.clip_norm_, rel=1e-12)


@pytest.mark.parametrize("scheduler", [
    "threads", pytest.param("processes", marks=pytest.mark.slow)])
def test_frechet_mean_equals_in_memory_release(scheduler, monkeypatch):
    X = spd_records(900, 3, seed=0)
    expected = mean_fit(X)
    with contextlib.ExitStack() as stack:
        options = {"scheduler": scheduler}
        if scheduler == "processes":
            from dask.multiprocessing import get_context

            # one pool of worker processes for the fit's every compute (Dask's own
            # scheduler starts a pool a compute, each process importing the package);
            # the hash seed Dask gives the pools it starts
            monkeypatch.setenv("PYTHONHASHSEED", "6640")
            options["pool"] = stack.enter_context(concurrent.futures.ProcessPoolExecutor(
                2, mp_context=get_context()))
        stack.enter_context(dask.config.set(options))
        got = mean_fit(da.from_array(X, chunks=(128, 3, 3)))
    assert_same_release(expected, got)
    assert got.budget_.spent_epsilon == pytest.approx(expected.budget_.spent_epsilon)


@pytest.mark.parametrize("params", [
    {"method": "rsgd", "batch_size": 50, "n_iter": 5},
    {"method": "rsgd", "batch_size": 50, "n_iter": 5, "sampling": "poisson", "dataset_size": 600},
    {"method": "rsvrg", "n_iter": 2, "inner_steps": 5},
])
def test_stochastic_methods_equal_in_memory_release(params):
    """Batches (drawn on the client from public quantities) are read from the chunks."""
    X = spd_records(600, 3, seed=10)
    expected = mean_fit(X, **params)
    got = mean_fit(da.from_array(X, chunks=(100, 3, 3)), **params)
    assert_same_release(expected, got)


def test_distributed_cluster_gives_the_in_memory_release():
    X = spd_records(700, 3, seed=1)
    expected = mean_fit(X, clip_norm="auto")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster):
        got = mean_fit(da.from_array(X, chunks=(100, 3, 3)), clip_norm="auto")
    assert_same_release(expected, got)


def test_erm_with_public_weights_equals_in_memory_release():
    space = Hypersphere(2)
    rng = np.random.default_rng(2)
    X = rng.standard_normal((500, 3)) + np.array([0.0, 0.0, 3.0])
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    weights = rng.uniform(0.5, 1.5, size=500)
    params = {"epsilon": 2.0, "clip_norm": 1.5, "n_iter": 5, "random_state": 3}
    expected = PrivateERM(space, SquaredDistanceLoss(space), **params).fit(
        X, sample_weight=weights)
    got = PrivateERM(space, SquaredDistanceLoss(space), **params).fit(
        da.from_array(X, chunks=(64, 3)), sample_weight=weights)
    assert_same_release(expected, got)


def test_release_is_private_not_the_plain_mean():
    """The noise is drawn on the client: two seeds give different releases."""
    X = da.from_array(spd_records(400, 3, seed=4), chunks=(100, 3, 3))
    first, second = mean_fit(X, random_state=1), mean_fit(X, random_state=2)
    assert np.abs(to_numpy(first.estimate_) - to_numpy(second.estimate_)).max() > 1e-6


@pytest.mark.parametrize("method", ["rgd", "rsgd"])
def test_neighbouring_dask_datasets_show_the_same_public_outputs(method):
    """One record replaced by a far point: everything but the release is the same."""
    X = spd_records(500, 3, seed=12)
    neighbour = X.copy()
    neighbour[321] = np.diag([50.0, 0.02, 1.0])
    outputs = [public_outputs(PrivateFrechetMean(SPDMatrices(3), method=method,
                                                 clip_norm=2.0, n_iter=3, random_state=0),
                              da.from_array(data, chunks=(64, 3, 3)))
               for data in (X, neighbour)]
    assert outputs[0] == outputs[1]


@pytest.mark.parametrize("bad_row", [0, 333, 899])
def test_off_manifold_row_is_reported_by_index(bad_row):
    X = spd_records(900, 3, seed=5)
    X[bad_row, 0, 1] += 4.0  # no longer symmetric
    with pytest.raises(ValueError, match=rf"X row {bad_row} is the first invalid record "
                                         r"\(1 of 8 chunks"):
        mean_fit(da.from_array(X, chunks=(128, 3, 3)))


def test_first_of_several_invalid_rows_is_reported_and_budget_kept():
    X = spd_records(600, 3, seed=6)
    X[[450, 130, 131], 1, 1] = np.nan
    estimator = PrivateFrechetMean(SPDMatrices(3), epsilon=1.0, clip_norm=2.0, n_iter=2)
    with pytest.raises(ValueError, match=r"X row 130 is the first invalid record \(2 of 5"):
        estimator.fit(da.from_array(X, chunks=(128, 3, 3)))
    assert not hasattr(estimator, "estimate_")


def test_shape_errors_before_any_value_is_read():
    reads = []

    def record_read(block):
        reads.append(block.shape)
        return block

    X = da.from_array(spd_records(50, 3, seed=7), chunks=(10, 3, 3)).map_blocks(
        record_read, meta=np.empty((0, 3, 3)))
    with pytest.raises(ValueError, match="shape"):
        PrivateFrechetMean(SPDMatrices(4), clip_norm=1.0).fit(X)
    with pytest.raises(TypeError, match="complex"):
        PrivateFrechetMean(SPDMatrices(3), clip_norm=1.0).fit(X.astype(complex))
    assert reads == []


def test_memory_stays_bounded_by_the_chunks():
    """A lazily generated array 5 times larger than the peak memory allowed (gathering
    it would need all of it; about a tenth was measured)."""
    n_samples, dim = 62_500, 8
    total_bytes = n_samples * dim * dim * 8
    X = _generated_spd(n_samples, dim, rows_per_chunk=500, seed=8)
    tracemalloc.start()
    try:
        with dask.config.set(scheduler="threads", num_workers=1):
            fitted = PrivateFrechetMean(SPDMatrices(dim), clip_norm=2.0, n_iter=2,
                                        random_state=0).fit(X)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert fitted.n_gradient_evaluations_ == 2 * n_samples
    assert peak < total_bytes / 5, (peak, total_bytes)


@pytest.mark.backend_independent
def test_dask_is_not_imported_for_in_memory_data():
    code = (
        "import sys, numpy as np\n"
        "from geomstats.geometry.spd_matrices import SPDMatrices\n"
        "from geomstats_dp.learning import PrivateFrechetMean\n"
        "X = np.stack([np.eye(2) * (1 + i / 10) for i in range(10)])\n"
        "PrivateFrechetMean(SPDMatrices(2), clip_norm=1.0, n_iter=2).fit(X)\n"
        "print('dask' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("method", ["analyze_gauss", "rgd"])
@pytest.mark.parametrize("centering", ["none", "private_mean"])
def test_pca_equals_in_memory_release(method, centering):
    """Analyze Gauss's second-moment matrix, DP-RGD's clipped sums, the private mean, trace
    and variances reduced over chunks of rows; a non-finite row is zeroed per record, as
    in memory."""
    from geomstats_dp.learning import PrivatePCA

    rng = np.random.default_rng(9)
    X = rng.standard_normal((2000, 6)) * np.array([3.0, 2.0, 1.0, 0.5, 0.3, 0.1])
    X[17, 2] = np.nan
    params = dict(method=method, n_components=2, data_norm=10.0, centering=centering,
                  random_state=4, **({"n_iter": 4} if method == "rgd" else {}))
    expected = PrivatePCA(**params).fit(X)
    got = PrivatePCA(**params).fit(da.from_array(X, chunks=(300, 6)))
    np.testing.assert_allclose(to_numpy(got.estimate_), to_numpy(expected.estimate_),
                               rtol=0, atol=1e-10)
    np.testing.assert_allclose(got.mean_, expected.mean_, rtol=0, atol=1e-12)
    np.testing.assert_allclose(got.explained_variance_, expected.explained_variance_,
                               rtol=1e-12)
    assert got.events_ == expected.events_
    assert got.n_gradient_evaluations_ == expected.n_gradient_evaluations_


def _generated_spd(n_samples, dim, rows_per_chunk, seed):
    """A lazily generated Dask array of SPD(dim) records (never in memory at once)."""
    def make_spd(draws):
        return draws @ np.swapaxes(draws, 1, 2) / dim + np.eye(dim) / 2

    draws = da.random.default_rng(seed).standard_normal(
        (n_samples, dim, dim), chunks=(rows_per_chunk, dim, dim))
    return draws.map_blocks(make_spd, dtype=float)


@pytest.mark.slow
@pytest.mark.backend_independent
def test_worker_with_memory_limit_below_the_array_completes_the_fit():
    """A worker process limited to 300 MB (paused at 80%, killed at 95%) fits a 320 MB
    array in 2 MB chunks: the fit completes (gathering the rows into one task is refused
    by the scheduler with this limit, a MemoryError)."""
    n_samples, dim = 625_000, 8
    X = _generated_spd(n_samples, dim, rows_per_chunk=4_096, seed=11)
    assert X.nbytes > 300 * 2**20
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  memory_limit="300MiB", dashboard_address=None) as cluster, \
            distributed.Client(cluster):
        fitted = PrivateFrechetMean(SPDMatrices(dim), clip_norm=2.0, n_iter=1,
                                    random_state=0).fit(X)
    assert fitted.n_gradient_evaluations_ == n_samples


def test_methods_that_do_not_read_dask_refuse_it_before_the_budget():
    from geomstats_dp.privacy import PrivacyBudget

    space = SPDMatrices(3)
    X = da.from_array(spd_records(100, 3, seed=13), chunks=(25, 3, 3))
    budget = PrivacyBudget(5.0, 1e-4)
    laplace = PrivateFrechetMean(space, method="laplace", radius=1.0, center=np.eye(3),
                                 budget=budget)
    with pytest.raises(TypeError, match="method='laplace' does not read Dask arrays"):
        laplace.fit(X)
    with pytest.raises(TypeError, match="y is not supported with a Dask array X"):
        PrivateERM(space, SquaredDistanceLoss(space), clip_norm=1.0,
                   budget=budget).fit(X, y=np.zeros(100))
    assert budget.spent_epsilon == 0


@pytest.mark.parametrize("method", ["tangent", "two_stage"])
@pytest.mark.parametrize("clip_norm", [2.0, "auto"])
def test_tangent_releases_equal_in_memory_release(method, clip_norm):
    X = spd_records(900, 3, seed=14)
    expected = mean_fit(X, method=method, clip_norm=clip_norm)
    got = mean_fit(da.from_array(X, chunks=(128, 3, 3)), method=method, clip_norm=clip_norm)
    assert_same_release(expected, got)
