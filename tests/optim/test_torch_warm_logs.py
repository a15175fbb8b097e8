"""Warm-started affine-invariant logarithms on pytorch (``optim.torch_warm_logs``) equal
LAPACK's.

The kernels are compiled once per process for SPD(3) on the CPU (``compiled`` fixture):
minutes the first time on a machine, seconds from inductor's on-disk cache.
"""

import warnings

import numpy as np
import pytest
from geomstats.geometry.scalar_product_metric import ScalarProductMetric
from geomstats.geometry.spd_matrices import SPDMatrices

from geomstats_dp.learning import PrivateFrechetMean
from geomstats_dp.optim import SquaredDistanceLoss, compiled_blocks, warm_logs
from geomstats_dp.optim.affine_log import AffineLogSums
from tests.conftest import BACKEND, shifted

from .data import cloud

pytestmark = [pytest.mark.skipif(BACKEND != "pytorch", reason="the route of pytorch tensors"),
              pytest.mark.slow]
torch = pytest.importorskip("torch")
torch_warm_logs = pytest.importorskip("geomstats_dp.optim.torch_warm_logs")

RTOL = 1e-11  # as tests/optim/test_warm_logs.py: about TOLERANCE^2 on logarithms of order 1
ROWS = torch_warm_logs.CHUNK_ROWS + 300  # two chunks, the second padded


KEY = (3, torch.device("cpu"))


@pytest.fixture(scope="module")
def loaded():
    """The SPD(3) CPU kernels, compiled once for this module, left out of the process's
    table (other tests' SPD(3) fits run as if they never were compiled)."""
    saved = dict(torch_warm_logs._KERNELS)
    try:
        assert torch_warm_logs.compile_warm_logs(3)
        return torch_warm_logs._KERNELS[KEY]
    finally:
        torch_warm_logs._KERNELS.clear()
        torch_warm_logs._KERNELS.update(saved)


@pytest.fixture
def compiled(monkeypatch, loaded):
    """The kernels, in the process's table within the test only."""
    monkeypatch.setitem(torch_warm_logs._KERNELS, KEY, loaded)
    return loaded


def spd(scale=1.0):
    space = SPDMatrices(3)
    if scale != 1.0:
        space.equip_with_metric(ScalarProductMetric(space, scale))
    return space


def path(space, seed, lengths):
    """Points of a run from the identity, each a step of the given length."""
    rng = np.random.default_rng(seed)
    points = [torch.eye(3, dtype=torch.float64)]
    for length in lengths:
        step = rng.standard_normal((3, 3))
        step = torch.as_tensor(step + step.T)
        points.append(space.metric.exp(step * (length / step.norm()), points[-1]))
    return points


class Spy:
    """The bases of a run, recording the sweeps of each warm chunk (-1: to LAPACK)."""

    def __init__(self, compiled, n_rows):
        self.bases = torch_warm_logs.TorchRecordBases(n_rows, KEY)
        self.sweeps, self._count = [], [0]
        frame, sweep, *rest = compiled

        def counted(*args):
            self._count[0] += 1
            return sweep(*args)

        def framed(*args):
            self._count[0] = 0
            return frame(*args)

        self.bases.kernels = [framed, counted, *rest]
        warm = self.bases.warm

        def recorded(*args):
            result = warm(*args)
            self.sweeps.append(-1 if result is None else self._count[0])
            return result

        self.bases.warm = recorded


def check_pass(bases, sums, data, coefficients):
    """Every chunk's norms and weighted sum against the plain ``AffineLogSums``."""
    bound = bases.bind(sums)
    assert bound.chunk_rows == torch_warm_logs.CHUNK_ROWS
    chunk = bound.chunk_rows
    for start in range(0, len(data), chunk):
        rows = slice(start, start + chunk)
        norms, weighted_sum = bound.rows(start, data[rows])
        expected_norms, expected_sum = sums(data[rows])
        np.testing.assert_allclose(norms.numpy(), expected_norms.numpy(), rtol=RTOL)
        expected = expected_sum(coefficients[rows]).numpy()
        np.testing.assert_allclose(weighted_sum(coefficients[rows]).numpy(), expected,
                                   rtol=RTOL, atol=RTOL * np.abs(expected).max())



def test_warm_passes_keep_every_tensor_in_torch(compiled, monkeypatch):
    """No tensor crosses to numpy or back in a pass, LAPACK's or a warm one (the route a
    CUDA run takes unchanged)."""
    space = spd()
    data = cloud(space, ROWS, radius=2.0, seed=shifted(13), offset=1.0)
    coefficients = torch.ones(ROWS, dtype=torch.float64)
    spy = Spy(compiled, ROWS)
    crossings = []
    to_array, from_array = torch.Tensor.numpy, torch.from_numpy
    monkeypatch.setattr(torch.Tensor, "numpy",
                        lambda self, *a, **k: crossings.append("numpy") or to_array(self, *a, **k))
    monkeypatch.setattr(torch, "from_numpy",
                        lambda array: crossings.append("from_numpy") or from_array(array))
    for point in path(space, shifted(14), [0.05, 0.3]):
        bound = spy.bases.bind(AffineLogSums(point))
        for start in range(0, ROWS, bound.chunk_rows):
            _, weighted_sum = bound.rows(start, data[start:start + bound.chunk_rows])
            weighted_sum(coefficients[start:start + bound.chunk_rows])
    assert len(spy.sweeps) == 4 and min(spy.sweeps) >= 0  # two warm passes of two chunks
    assert crossings == []

@pytest.mark.parametrize("scale", [1.0, 2.5])
def test_warm_chunks_equal_lapack_along_a_run(compiled, scale):
    space = spd(scale)
    data = cloud(space, ROWS, radius=2.0, seed=shifted(0), offset=1.0)
    coefficients = torch.as_tensor(
        np.random.default_rng(shifted(1)).uniform(-1.0, 2.0, ROWS))
    spy = Spy(compiled, ROWS)
    # small steps (refinements), one within the tolerance (no sweep: the logarithm's
    # first-order term is what it adds), a long one (a coarse step), a point revisited
    points = path(space, shifted(2), [0.05, 0.01, 1e-9, 1.5, 0.3, 0.0])
    for point in points:
        check_pass(spy.bases, AffineLogSums(point, scale), data, coefficients)
    assert len(spy.sweeps) == 2 * (len(points) - 1)  # every pass after the first is warm
    assert min(spy.sweeps) >= 0 and max(spy.sweeps[:2]) > 0  # swept where it moved
    assert spy.sweeps[4:6] == spy.sweeps[-2:] == [0, 0]  # within the tolerance: no sweep


def test_a_chunk_that_needs_more_sweeps_goes_to_lapack(compiled, monkeypatch):
    space = spd()
    data = cloud(space, 50, radius=2.0, seed=shifted(3), offset=1.0)
    monkeypatch.setattr(warm_logs, "MAX_SWEEPS", 0)
    spy = Spy(compiled, 50)
    for point in path(space, shifted(4), [0.2]):
        sums = AffineLogSums(point)
        check_pass(spy.bases, sums, data, torch.ones(50, dtype=torch.float64))
        eigvecs = torch.linalg.eigh(sums.whiten(data))[1]
        kept = spy.bases.bases[0, ..., :50].permute(2, 0, 1)
        assert torch.equal(kept, eigvecs)  # LAPACK's bases kept
        assert spy.bases.frames[0] is sums.factor
    assert spy.sweeps == [-1]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("record", ["not positive definite", "overflowing"])
def test_a_record_without_a_finite_logarithm_adds_nothing(compiled, record):
    """-I (NaN logarithms), and a record near the float64 maximum whose whitened matrix
    holds inf at the points 0.5 P (``AffineLogSums.eigen``): a NaN norm, nothing added,
    on the first (LAPACK) pass and the warm ones."""
    space = spd()
    data = cloud(space, 40, radius=1.0, seed=shifted(5))
    data[7] = (-torch.eye(3) if record == "not positive definite"
               else 1.7e308 * (0.9 * torch.ones(3, 3) + 0.1 * torch.eye(3)))
    spy = Spy(compiled, 40)
    kept = np.delete(np.arange(40), 7)
    for point in path(space, shifted(6), [0.1, 0.1]):
        sums = AffineLogSums(0.5 * point)
        norms, weighted_sum = spy.bases.bind(sums).rows(0, data)
        assert not torch.isfinite(norms[7]) and torch.isfinite(norms[kept]).all()
        _, expected = sums(data[kept])
        np.testing.assert_allclose(weighted_sum(torch.ones(40, dtype=torch.float64)),
                                   expected(torch.ones(39, dtype=torch.float64)), rtol=RTOL)
    assert len(spy.sweeps) == 2 and min(spy.sweeps) >= 0


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_a_record_whose_whitening_no_longer_overflows_gets_lapacks_norm(compiled):
    """At 0.1 I the record's whitened matrix holds inf (LAPACK's pass gives it the
    identity basis); at I it is finite but its sweeps overflow (a basis that is not
    finite); at 4 I it is finite: the warm pass restarts it from the identity and finds
    LAPACK's finite norm (a basis kept not finite would leave it out)."""
    data = cloud(spd(), 40, radius=1.0, seed=shifted(5))
    data[7] = 1e308 * (0.9 * torch.ones(3, 3) + 0.1 * torch.eye(3))
    spy = Spy(compiled, 40)
    for scale in (0.1, 1.0, 4.0):  # LAPACK, then two warm passes
        sums = AffineLogSums(scale * torch.eye(3, dtype=torch.float64))
        norms, weighted_sum = spy.bases.bind(sums).rows(0, data)
    expected_norms, expected_sum = sums(data)
    assert torch.isfinite(expected_norms[7])
    np.testing.assert_allclose(norms, expected_norms, rtol=RTOL)
    ones = torch.ones(40, dtype=torch.float64)
    np.testing.assert_allclose(weighted_sum(ones), expected_sum(ones), rtol=RTOL)
    assert len(spy.sweeps) == 2


@pytest.mark.parametrize("record", [1e150 * np.eye(3), 1e200 * np.eye(3)])
@pytest.mark.parametrize("cap", [warm_logs.MAX_SWEEPS, 2])
def test_one_record_moves_a_pass_by_at_most_the_cap_then_lapack(compiled, monkeypatch,
                                                                 record, cap):
    """As on numpy (issue 29, finding 6): a warm chunk performs at most the cap's sweeps
    whatever one record is, then goes to LAPACK, the sums equal LAPACK's either way.
    (Not diag(1e150, 1, 1): LAPACK's small eigenvalues of it carry errors of 1e134 and
    its logarithm is NaN on pytorch, where the sweeps find the finite one.)"""
    monkeypatch.setattr(warm_logs, "MAX_SWEEPS", cap)
    space = spd()
    data = cloud(space, 24, radius=2.0, seed=shifted(11), offset=1.0)
    data[5] = torch.as_tensor(record)
    spy = Spy(compiled, 24)
    for point in path(space, shifted(12), [0.05, 1.5, 0.3]):
        check_pass(spy.bases, AffineLogSums(point), data, torch.ones(24, dtype=torch.float64))
    assert len(spy.sweeps) == 3 and max(spy.sweeps) <= cap
    if cap == 2:
        assert -1 in spy.sweeps


def fit(monkeypatch, data, enabled):
    monkeypatch.setattr(compiled_blocks, "ENABLED", enabled)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        estimator = PrivateFrechetMean(SPDMatrices(3), epsilon=2.0, delta=1e-5,
                                       clip_norm=2.0, method="rgd",
                                       random_state=shifted(8)).fit(data)
    return estimator, [str(warning.message) for warning in caught]


def test_a_fit_on_the_warm_route_gives_the_lapack_release(compiled, monkeypatch):
    data = cloud(SPDMatrices(3), 1500, radius=2.0, seed=shifted(7), offset=1.5)
    warm_chunks, warm_call = [], torch_warm_logs.TorchRecordBases.warm

    def spied(bases, *args):
        result = warm_call(bases, *args)
        warm_chunks.append(result is not None)
        return result

    monkeypatch.setattr(torch_warm_logs.TorchRecordBases, "warm", spied)
    warm, warm_warnings = fit(monkeypatch, data, True)
    assert warm_chunks and all(warm_chunks)
    cold, cold_warnings = fit(monkeypatch, data, False)
    np.testing.assert_allclose(warm.estimate_.numpy(), cold.estimate_.numpy(), rtol=1e-10)
    assert warm_warnings == cold_warnings
    for name in ("n_iter_", "n_gradient_evaluations_", "clip_norm_", "method_"):
        assert getattr(warm, name) == getattr(cold, name)


def test_the_route_is_taken_on_public_conditions_only(compiled, monkeypatch):
    loss = SquaredDistanceLoss(SPDMatrices(3))
    data = torch.zeros((10, 3, 3), dtype=torch.float64)
    assert isinstance(warm_logs.record_bases_for(loss, data),
                      torch_warm_logs.TorchRecordBases)  # compiled: any size
    for other in (data.numpy(), data.float(), data.clone().requires_grad_(True)):
        assert warm_logs.record_bases_for(loss, other) is None
    assert warm_logs.record_bases_for(SquaredDistanceLoss(SPDMatrices(2)),
                                      torch.zeros((10, 2, 2), dtype=torch.float64)) is None
    with monkeypatch.context() as patched:
        patched.setattr(compiled_blocks, "ENABLED", False)
        assert warm_logs.record_bases_for(loss, data) is None
    calls = []
    monkeypatch.setattr(torch_warm_logs, "_compiles", lambda *key: calls.append(key))
    four = SquaredDistanceLoss(SPDMatrices(4))  # not compiled: compiled for enough rows only
    monkeypatch.setattr(torch_warm_logs, "MIN_ROWS_TO_COMPILE", 11)
    assert warm_logs.record_bases_for(four, torch.zeros((10, 4, 4), dtype=torch.float64)) is None
    assert not calls
    assert warm_logs.record_bases_for(four, torch.zeros((11, 4, 4), dtype=torch.float64)) is None
    assert calls == [(4, torch.device("cpu"))]  # its failure: LAPACK


def test_a_compile_failure_warns_once_and_takes_lapack(monkeypatch):
    def failing(*args, **kwargs):
        raise RuntimeError("no compiler")

    monkeypatch.setattr(torch_warm_logs, "_FAILURE", [])
    monkeypatch.setattr(torch_warm_logs, "_KERNELS", {})
    monkeypatch.setattr(torch, "compile", lambda *args, **kwargs: failing)
    with pytest.warns(RuntimeWarning, match="no compiler"):
        assert not torch_warm_logs.compile_warm_logs(3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not torch_warm_logs.compile_warm_logs(3)  # no second warning
        assert warm_logs.record_bases_for(SquaredDistanceLoss(SPDMatrices(3)), torch.zeros(
            (10, 3, 3), dtype=torch.float64)) is None
