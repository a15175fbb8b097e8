"""Warm-started affine-invariant logarithms (``optim.warm_logs``) equal LAPACK's."""

import sys
import warnings

import numpy as np
import pytest
from geomstats.geometry.scalar_product_metric import ScalarProductMetric
from geomstats.geometry.spd_matrices import SPDLogEuclideanMetric, SPDMatrices

from geomstats_dp.learning import PrivateFrechetMean
from geomstats_dp.optim import (
    HuberDistanceLoss,
    SquaredDistanceLoss,
    compiled_blocks,
    warm_logs,
)
from geomstats_dp.optim import oracle as oracle_module
from geomstats_dp.optim.affine_log import AffineLogSums
from tests.conftest import BACKEND, shifted

from .data import cloud

pytest.importorskip("numba")
independent = pytest.mark.backend_independent

# The Daleckii-Krein logarithm's error is about TOLERANCE^2 = 1e-14 on logarithms of
# order one (the module docstring); 1e-11 leaves room for the condition numbers here.
RTOL = 1e-11


def spd(dim, scale=1.0):
    space = SPDMatrices(dim)
    if scale != 1.0:
        space.equip_with_metric(ScalarProductMetric(space, scale))
    return space


def path(space, seed, lengths):
    """Points of a run: each a step of the given length from the previous, from the
    identity."""
    rng = np.random.default_rng(seed)
    points = [np.eye(space.shape[-1])]
    for length in lengths:
        step = rng.standard_normal(space.shape)
        step = step + step.T
        step *= length / np.linalg.norm(step)
        points.append(space.metric.exp(step, points[-1]))
    return points


@pytest.fixture(scope="module")
def loaded_kernels():
    """The kernels, loaded once for this module into a list of its own."""
    saved, warm_logs._KERNELS = warm_logs._KERNELS, []
    try:
        warm_logs._load_kernels()
        return warm_logs._KERNELS
    finally:
        warm_logs._KERNELS = saved


@pytest.fixture(autouse=True)
def kernels(monkeypatch, loaded_kernels):
    """Loaded within each test only: other tests of the session run as if they never
    were (a loaded kernel would put their small SPD runs on the warm route)."""
    monkeypatch.setattr(warm_logs, "_KERNELS", list(loaded_kernels))


class KernelSpy:
    """Records the sweeps of every warm chunk (-1: sent to LAPACK)."""

    def __init__(self, monkeypatch):
        self.sweeps, kernel = [], warm_logs._KERNELS[0]

        def spy(*args):
            self.sweeps.append(kernel(*args))
            return self.sweeps[-1]

        monkeypatch.setattr(warm_logs, "_KERNELS", [spy, *warm_logs._KERNELS[1:]])


def check_pass(bases, sums, data, chunk, coefficients):
    """The warm chunks' norms and weighted sums against the plain ``AffineLogSums``."""
    bound = bases.bind(sums)
    expected_norms, _ = sums(data)
    for start in range(0, len(data), chunk):
        rows = slice(start, start + chunk)
        norms, weighted_sum = bound.rows(start, data[rows])
        np.testing.assert_allclose(norms, expected_norms[rows], rtol=RTOL)
        _, chunk_sum = sums(data[rows])
        expected = chunk_sum(coefficients[rows])
        np.testing.assert_allclose(weighted_sum(coefficients[rows]), expected, rtol=RTOL,
                                   atol=RTOL * np.abs(expected).max())


@independent
@pytest.mark.parametrize("dim, scale", [(3, 1.0), (8, 1.0), (5, 2.5)])
def test_warm_chunks_equal_lapack_along_a_run(monkeypatch, dim, scale):
    space = spd(dim, scale)
    data = np.asarray(cloud(space, 300, radius=2.0, seed=shifted(0), offset=1.0))
    coefficients = np.random.default_rng(shifted(1)).uniform(-1.0, 2.0, len(data))
    spy = KernelSpy(monkeypatch)
    bases = warm_logs.RecordBases(len(data))
    # small steps (refinements), a long one (a coarse step), a point revisited
    points = path(space, shifted(2), [0.05, 0.01, 1.5, 0.3, 0.0])
    for point in points:
        check_pass(bases, AffineLogSums(point, scale), data, 128, coefficients)
    assert len(spy.sweeps) == 3 * (len(points) - 1)  # every pass after the first is warm
    assert min(spy.sweeps) >= 0 and spy.sweeps[-3:] == [0, 0, 0]  # a revisit: no sweep


@independent
def test_a_chunk_that_needs_more_sweeps_goes_to_lapack(monkeypatch):
    space = spd(4)
    data = np.asarray(cloud(space, 50, radius=2.0, seed=shifted(3), offset=1.0))
    spy = KernelSpy(monkeypatch)
    monkeypatch.setattr(warm_logs, "MAX_SWEEPS", 0)
    bases = warm_logs.RecordBases(len(data))
    for point in path(space, shifted(4), [0.2]):
        sums = AffineLogSums(point)
        check_pass(bases, sums, data, 50, np.ones(len(data)))
        eigvecs = np.linalg.eigh(sums.whiten(data))[1]
        np.testing.assert_array_equal(bases.bases, eigvecs)  # LAPACK's bases kept
        assert bases.frames[0] is sums.factor
    assert spy.sweeps == [-1]


@independent
def test_a_record_that_is_not_positive_definite_adds_nothing(monkeypatch):
    space = spd(3)
    data = np.asarray(cloud(space, 40, radius=1.0, seed=shifted(5)))
    data[7] = -np.eye(3)
    spy = KernelSpy(monkeypatch)
    bases = warm_logs.RecordBases(len(data))
    for point in path(space, shifted(6), [0.1, 0.1]):
        norms, weighted_sum = bases.bind(AffineLogSums(point)).rows(0, data)
        assert not np.isfinite(norms[7]) and np.isfinite(np.delete(norms, 7)).all()
        kept = np.delete(np.arange(40), 7)
        _, expected = AffineLogSums(point)(data[kept])
        np.testing.assert_allclose(weighted_sum(np.ones(40)), expected(np.ones(39)),
                                   rtol=RTOL)
    assert spy.sweeps and min(spy.sweeps) >= 0


@independent
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the overflow of the whitening
def test_a_record_whose_whitening_overflows_adds_nothing(monkeypatch):
    """A record near the float64 maximum whose whitened matrix holds inf (at points
    0.5 P: whitening doubles it) gets a NaN norm and adds nothing, as in
    ``AffineLogSums.eigen``, on the first (LAPACK) pass and the warm ones, which its NaN
    keeps warm (``_worst_ratio`` leaves it out)."""
    space = spd(3)
    data = np.asarray(cloud(space, 40, radius=1.0, seed=shifted(5)))
    data[7] = 1.7e308 * (0.9 * np.ones((3, 3)) + 0.1 * np.eye(3))
    spy = KernelSpy(monkeypatch)
    bases = warm_logs.RecordBases(len(data))
    kept = np.delete(np.arange(40), 7)
    for point in path(space, shifted(6), [0.1, 0.1]):
        sums = AffineLogSums(0.5 * point)
        assert not np.isfinite(sums.whiten(data[7:8])).all()
        norms, weighted_sum = bases.bind(sums).rows(0, data)
        assert np.isnan(norms[7]) and np.isfinite(norms[kept]).all()
        _, expected = sums(data[kept])
        np.testing.assert_allclose(weighted_sum(np.ones(40)), expected(np.ones(39)),
                                   rtol=RTOL)
    assert len(spy.sweeps) == 2 and min(spy.sweeps) >= 0


@independent
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the overflow of the whitening
def test_a_record_whose_whitening_no_longer_overflows_gets_lapacks_norm(monkeypatch):
    """At 0.1 I the record's whitened matrix holds inf (LAPACK's pass gives it the
    identity basis); at I it is finite but its sweeps overflow (a basis that is not
    finite); at 4 I it is finite: the warm pass restarts it from the identity and finds
    LAPACK's finite norm (a basis kept not finite would leave it out)."""
    space = spd(3)
    data = np.asarray(cloud(space, 40, radius=1.0, seed=shifted(5)))
    data[7] = 1e308 * (0.9 * np.ones((3, 3)) + 0.1 * np.eye(3))
    spy = KernelSpy(monkeypatch)
    bases = warm_logs.RecordBases(len(data))
    for scale in (0.1, 1.0, 4.0):  # LAPACK, then two warm passes
        sums = AffineLogSums(scale * np.eye(3))
        norms, weighted_sum = bases.bind(sums).rows(0, data)
    expected_norms, expected_sum = sums(data)
    assert np.isfinite(expected_norms[7])
    np.testing.assert_allclose(norms, expected_norms, rtol=RTOL)
    np.testing.assert_allclose(weighted_sum(np.ones(40)), expected_sum(np.ones(40)),
                               rtol=RTOL)
    assert len(spy.sweeps) == 2


def fits(monkeypatch, data, enabled, **options):
    monkeypatch.setattr(compiled_blocks, "ENABLED", enabled)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        estimator = PrivateFrechetMean(SPDMatrices(3), epsilon=2.0, delta=1e-5,
                                       clip_norm=2.0, **options).fit(data)
    return estimator, [str(warning.message) for warning in caught]


@pytest.mark.skipif(BACKEND == "pytorch", reason="the warm route is for numpy arrays")
@pytest.mark.parametrize("method", ["auto", "rgd"])
def test_a_fit_on_the_warm_route_gives_the_lapack_release(monkeypatch, method):
    """On numpy and on autograd (whose arrays are numpy's)."""
    spy = KernelSpy(monkeypatch)
    data = np.asarray(cloud(SPDMatrices(3), 1500, radius=2.0, seed=shifted(7), offset=1.5))
    seed = shifted(8)
    warm, warm_warnings = fits(monkeypatch, data, True, method=method, random_state=seed)
    assert spy.sweeps and min(spy.sweeps) >= 0
    cold, cold_warnings = fits(monkeypatch, data, False, method=method, random_state=seed)
    np.testing.assert_allclose(warm.estimate_, cold.estimate_, rtol=1e-10)
    assert warm_warnings == cold_warnings
    for name in ("n_iter_", "n_gradient_evaluations_", "clip_norm_", "method_"):
        assert getattr(warm, name) == getattr(cold, name)


@independent
def test_neighbouring_datasets_show_the_same_on_the_warm_route(monkeypatch):
    data = np.asarray(cloud(SPDMatrices(3), 800, radius=2.0, seed=shifted(9), offset=1.0))
    neighbour = data.copy()
    neighbour[0] = np.diag([40.0, 1e-2, 1.0])  # far from the others
    seen = []
    for records in (data, neighbour):
        estimator, caught = fits(monkeypatch, records, True, random_state=shifted(10))
        public = {name: value for name, value in vars(estimator).items()
                  if name.endswith("_") and name != "estimate_"}
        seen.append((sorted(public), public["n_iter_"], public["n_gradient_evaluations_"],
                     caught))
    assert seen[0] == seen[1]


def qualifying(**changes):
    call = {"loss": SquaredDistanceLoss(SPDMatrices(3)), "data": np.zeros((10, 3, 3))}
    call.update(changes)
    return call


@independent
def test_the_route_is_taken_on_public_conditions_only(monkeypatch):
    assert warm_logs.record_bases_for(**qualifying()) is not None
    log_euclidean = SPDMatrices(3)
    log_euclidean.equip_with_metric(SPDLogEuclideanMetric(log_euclidean))
    for loss in (SquaredDistanceLoss(SPDMatrices(2)), SquaredDistanceLoss(log_euclidean),
                 HuberDistanceLoss(SPDMatrices(3), 1.0)):
        assert warm_logs.record_bases_for(**qualifying(loss=loss)) is None
    with monkeypatch.context() as patched:
        patched.setattr(warm_logs, "backend_name", lambda: "autograd")
        assert warm_logs.record_bases_for(**qualifying()) is not None
    for module, name, value in ((warm_logs, "backend_name", lambda: "pytorch"),
                                (compiled_blocks, "ENABLED", False)):
        with monkeypatch.context() as patched:
            patched.setattr(module, name, value)
            assert warm_logs.record_bases_for(**qualifying()) is None
    monkeypatch.setattr(warm_logs, "MIN_ROWS_TO_LOAD", 11)
    assert warm_logs.record_bases_for(**qualifying()) is not None  # loaded: any size
    with monkeypatch.context() as patched:  # not loaded: loaded for enough rows only
        patched.setattr(warm_logs, "_KERNELS", [])
        assert warm_logs.record_bases_for(**qualifying()) is None
        assert warm_logs.record_bases_for(**qualifying(data=np.zeros((11, 3, 3)))) is not None
        patched.setitem(sys.modules, "numba", None)  # import numba raises ImportError
        assert warm_logs.record_bases_for(**qualifying(data=np.zeros((11, 3, 3)))) is None
    dask_array = pytest.importorskip("dask.array")
    lazy = dask_array.from_array(np.zeros((10, 3, 3)), chunks=5)
    assert warm_logs.record_bases_for(**qualifying(data=lazy)) is None


@independent
def test_mini_batch_queries_leave_the_bases_alone(monkeypatch):
    space = spd(3)
    data = np.asarray(cloud(space, 60, radius=1.0, seed=shifted(11)))
    oracle = oracle_module.GradientOracle(SquaredDistanceLoss(space), data,
                                          np.full(60, 1 / 60), None,
                                          np.random.default_rng(0))
    point = np.eye(3)
    oracle.clipped_sum(point, 1.0, indices=np.arange(10))
    assert oracle._record_bases.frames == {}
    full = oracle.clipped_sum(point, 1.0)
    assert set(oracle._record_bases.frames) == {0}
    expected = oracle_module.clipped_sum_in_chunks(
        AffineLogSums(point), data, np.full(60, 1 / 60), 1.0)
    np.testing.assert_allclose(full, expected, rtol=RTOL)


@independent
@pytest.mark.parametrize("record", [
    1e150 * np.eye(4),  # the record: one more sweep for its chunk
    1e200 * np.eye(4),  # many more
    np.diag([1e150, 1.0, 1.0, 1.0]),
    -np.eye(4),  # not positive definite
])
@pytest.mark.parametrize("cap", [warm_logs.MAX_SWEEPS, 2])
def test_one_record_moves_a_pass_by_at_most_the_cap_then_lapack(monkeypatch, record, cap):
    """Issue 29, finding 6: the sweeps of a chunk depend on each of its records. Run in
    Python with every sweep counted, a warm pass of a chunk performs at most the cap
    (``MAX_SWEEPS``; 2 to send these chunks past it) whatever the record, and a chunk
    not converged by then goes to LAPACK, whose bases it keeps; the sums equal LAPACK's
    either way. So one record changes a pass by at most the cap's sweeps of its chunk
    and one LAPACK pass of it."""
    performed, returned, sweep = [], [], warm_logs._sweep

    def counted(*args):
        performed[-1] += 1
        sweep(*args)

    def python_kernel(*args):  # the uncompiled ``_warm_chunk``, calling ``counted``
        performed.append(0)
        returned.append(warm_logs._warm_chunk(*args))
        return returned[-1]

    monkeypatch.setattr(warm_logs, "_sweep", counted)
    monkeypatch.setattr(warm_logs, "_KERNELS", [python_kernel, *warm_logs._KERNELS[1:]])
    monkeypatch.setattr(warm_logs, "MAX_SWEEPS", cap)
    space = spd(4)
    data = np.asarray(cloud(space, 24, radius=2.0, seed=shifted(11), offset=1.0))
    data[5] = record
    bases = warm_logs.RecordBases(len(data))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # LAPACK's log of -I's eigenvalues
        for point in path(space, shifted(12), [0.05, 1.5, 0.3]):
            sums = AffineLogSums(point)
            norms, weighted_sum = bases.bind(sums).rows(0, data)
            expected_norms, expected_sum = sums(data)
            np.testing.assert_allclose(norms, expected_norms, rtol=RTOL)
            coefficients = np.ones(len(data))
            expected = expected_sum(coefficients)
            np.testing.assert_allclose(weighted_sum(coefficients), expected, rtol=RTOL,
                                       atol=RTOL * np.abs(expected).max())
            if returned and returned[-1] == -1:  # past the cap: LAPACK's bases kept
                np.testing.assert_array_equal(bases.bases,
                                              np.linalg.eigh(sums.whiten(data))[1])
    assert len(performed) == 3  # every pass after the first is warm
    assert max(performed) <= cap
    assert all(count == cap for count, result in zip(performed, returned) if result == -1)
    if cap == 2:  # these records take their chunk past two sweeps at some pass
        assert -1 in returned
