"""Blocked draws (batches and noise a block of steps at a time) leave the iterates unchanged."""

import numpy as np
import pytest

from geomstats_dp._backend import BufferedNormals, get_rng, to_backend, to_numpy
from geomstats_dp.optim import (
    FullBatch,
    InverseTimeStep,
    MiniBatch,
    SquaredDistanceLoss,
    VarianceReduced,
    minimize,
    streams,
)

from .data import MEAN_SPACES, cloud

STRATEGIES = {
    "rsgd": MiniBatch(5, 0.8, 0.3),
    "rsgd_poisson": MiniBatch(5, 0.8, 0.3, sampling="poisson"),
    "rgd": FullBatch(0.8, 0.3),
    "rsvrg": VarianceReduced(4, 0.8, 0.8, 0.3, 0.2),
}


def iterates(space, data, strategy, seed):
    result = minimize(
        SquaredDistanceLoss(space), data, strategy, 30, InverseTimeStep(0.5, offset=2.0),
        output="weighted_average", random_state=seed, keep_iterates=True,
    )
    return to_numpy(result.iterates), to_numpy(result.point)


@pytest.mark.parametrize("strategy_name", sorted(STRATEGIES))
@pytest.mark.parametrize("space_name", sorted(MEAN_SPACES))
def test_blocked_draws_give_the_per_step_iterates(monkeypatch, space_name, strategy_name):
    space = MEAN_SPACES[space_name]()
    data = cloud(space, 40, radius=1.0, seed=5)
    strategy = STRATEGIES[strategy_name]
    blocked = iterates(space, data, strategy, seed=6)
    monkeypatch.setattr(streams, "BLOCK_FLOATS", 1)  # one step's draws per call
    monkeypatch.setattr(streams, "MAX_BLOCK_STEPS", 1)
    per_step = iterates(space, data, strategy, seed=6)
    np.testing.assert_array_equal(blocked[0], per_step[0])
    np.testing.assert_array_equal(blocked[1], per_step[1])
    # the noise moved the run: another seed gives other iterates
    other = iterates(space, data, strategy, seed=7)
    assert not np.allclose(blocked[0][1:], other[0][1:])


@pytest.mark.backend_independent
@pytest.mark.parametrize("block", [4, 10_000])
def test_buffered_normals_serve_the_generator_sequence(block):
    sizes = [3, (2, 4), None, 7, (1, 1, 5), 11] + [(1, 1, 300)] * 40
    count = sum(1 if size is None else int(np.prod(size)) for size in sizes)
    buffered = BufferedNormals(np.random.default_rng(8), block=block)
    served = [np.ravel(buffered.standard_normal(size)) for size in sizes]
    expected = np.random.default_rng(8).standard_normal(count)
    np.testing.assert_array_equal(np.concatenate(served), expected)
    assert get_rng(buffered) is buffered
    # other draws go to the generator itself
    assert buffered.integers(0, 10, size=3).shape == (3,)


@pytest.mark.backend_independent
def test_poisson_block_equals_one_step_draws():
    strategy = MiniBatch(3, 1.0, 0.1, sampling="poisson")
    block = strategy.draw_batches(np.random.default_rng(9), 20, 6)
    rng = np.random.default_rng(9)
    steps = [strategy.draw_batches(rng, 20, 1)[0] for _ in range(6)]
    assert len(block) == 6
    for first, second in zip(block, steps):
        np.testing.assert_array_equal(first, second)


@pytest.mark.backend_independent
def test_split_streams_are_independent_of_the_run_stream():
    rng = np.random.default_rng(10)
    batch_rng, noise_rng = streams.split_streams(rng)
    assert batch_rng is not rng and noise_rng.generator is not rng
    first = batch_rng.random(4)
    assert not np.allclose(first, noise_rng.standard_normal(4))
    # the streams follow the generator's state: the same state, the same streams; an
    # advanced generator, fresh ones
    np.testing.assert_array_equal(
        streams.split_streams(np.random.default_rng(10))[0].random(4), first)
    advanced = np.random.default_rng(10)
    advanced.random()
    assert not np.allclose(streams.split_streams(advanced)[0].random(4), first)
    # a generator without spawn (OS entropy) serves both streams itself
    secure = get_rng(secure=True)
    batch_rng, noise_rng = streams.split_streams(secure)
    assert batch_rng is secure and noise_rng.generator is secure


def _one_candidate_at_a_time(seed, n_samples, batch_size, n_batches):
    """Rejection written out: the next b integers, kept when they are distinct."""
    rng, found = np.random.default_rng(seed), []
    while len(found) < n_batches:
        candidate = rng.integers(0, n_samples, size=batch_size)
        if len(set(candidate.tolist())) == batch_size:
            found.append(candidate)
    return found


@pytest.mark.backend_independent
def test_distinct_batches_read_the_candidates_in_stream_order_whatever_the_block():
    expected = _one_candidate_at_a_time(11, 30, 7, 12)
    stream = streams.DistinctBatches(np.random.default_rng(11), 30, 7)
    served = [batch for size in (1, 4, 2, 5) for batch in stream.draw(size)]
    assert len(served) == 12
    for batch, reference in zip(served, expected):
        np.testing.assert_array_equal(batch, reference)


@pytest.mark.backend_independent
def test_distinct_batches_are_uniform_over_ordered_distinct_tuples():
    """n = 5, b = 2: the 20 ordered pairs of distinct indices equally likely (chi-square
    with 19 degrees of freedom, mean 19 and sd sqrt(38), within 5 sd)."""
    n_batches = 20_000
    batches = np.stack(streams.DistinctBatches(np.random.default_rng(12), 5, 2)
                       .draw(n_batches))
    assert np.all(batches[:, 0] != batches[:, 1])
    counts = np.bincount(batches[:, 0] * 5 + batches[:, 1], minlength=25)
    pairs = counts[~np.eye(5, dtype=bool).ravel()]
    chi_square = np.sum((pairs - n_batches / 20) ** 2 / (n_batches / 20))
    assert abs(chi_square - 19) < 5 * np.sqrt(38)


@pytest.mark.backend_independent
def test_rejection_only_where_a_candidate_is_accepted_often():
    assert streams.distinct_by_rejection(10_992, 105)  # the default b = sqrt(n)
    assert not streams.distinct_by_rejection(100, 50)
    # there MiniBatch draws with numpy's choice, one step at a time
    strategy = MiniBatch(50, 1.0, 0.1)
    draw = strategy.batch_stream(np.random.default_rng(13), 100)
    expected = np.random.default_rng(13).choice(100, size=50, replace=False)
    np.testing.assert_array_equal(draw(1)[0], expected)


@pytest.mark.backend_independent
def test_a_shared_stream_reads_ahead_only_what_is_reserved():
    """With nothing reserved every draw is the generator's own; a reservation of k
    normals is drawn at once, and the generator ends where single draws leave it."""
    shared = BufferedNormals(np.random.default_rng(8), block=100, ahead=0)
    reference = np.random.default_rng(8)
    np.testing.assert_array_equal(shared.standard_normal(3), reference.standard_normal(3))
    assert shared.integers(10**9) == reference.integers(10**9)  # nothing was read ahead
    shared.reserve(250)
    served = np.concatenate([shared.standard_normal(5) for _ in range(50)])
    np.testing.assert_array_equal(served, reference.standard_normal(250))
    assert shared.random() == reference.random()


@pytest.mark.parametrize("block", [4, 1000])
def test_backend_views_serve_the_generator_sequence(block):
    """``backend_normal`` and ``backend_padded_normal`` (rows behind a zero) read the
    same sequence as ``standard_normal``, mixed, across refills and sizes."""
    buffered = BufferedNormals(np.random.default_rng(8), block=block)
    served = []
    for index in range(60):
        size = 7 if index % 5 else 3
        kind = index % 3
        if kind == 0:
            served.append(np.ravel(buffered.standard_normal(size)))
        elif kind == 1:
            served.append(to_numpy(buffered.backend_normal(size)))
        else:
            padded = to_numpy(buffered.backend_padded_normal(size))
            assert padded.shape == (size + 1,) and padded[0] == 0.0
            served.append(padded[1:])
    for _ in range(300):  # a long run of one size: rows of the padded block
        padded = to_numpy(buffered.backend_padded_normal(7))
        assert padded[0] == 0.0
        served.append(padded[1:])
    served = np.concatenate(served)
    np.testing.assert_array_equal(served, np.random.default_rng(8).standard_normal(served.size))


@pytest.mark.parametrize("space_name", ["hypersphere", "hyperboloid", "spd_affine"])
def test_prepared_draws_from_a_buffered_stream_are_those_of_sample(space_name):
    """The prepared draw reading a ``BufferedNormals`` stream (backend views, padded
    rows on pytorch) draws what ``sample`` draws from the generator, to rounding."""
    from geomstats_dp.distributions import TangentGaussian
    from tests.distributions.conftest import make_case

    case = make_case(space_name)
    sampler = TangentGaussian(case.space, validate=False)
    draw = sampler.prepare(0.7, random_state=BufferedNormals(np.random.default_rng(3), 50))
    generator = np.random.default_rng(3)
    for point in list(case.points.values()) * 4:
        np.testing.assert_allclose(
            to_numpy(draw(to_backend(point))),
            to_numpy(sampler.sample(to_backend(point), sigma=0.7, random_state=generator)),
            rtol=1e-13, atol=1e-15)


class _OneDrawAtATime:
    """A noise sampler that draws through ``TangentGaussian.sample`` one draw at a time
    (no ``prepare``, no ``normals_per_draw``: nothing is reserved for it)."""

    def __init__(self, space):
        from geomstats_dp.distributions import TangentGaussian

        self.sampler = TangentGaussian(space, validate=False)

    def sample(self, base_point, n_samples=1, sigma=1.0, random_state=None):
        return self.sampler.sample(base_point, n_samples=n_samples, sigma=sigma,
                                   random_state=random_state)


SHARED_GENERATOR = {
    "rgd": (FullBatch(0.8, 0.3), "random"),
    "rsvrg": (VarianceReduced(4, 0.8, 0.8, 0.3, 0.2, restarts=1), "random"),
    "rsvrg_step_noise": (VarianceReduced(3, 0.8, 0.8, 0.3, 0.2, snapshot_noise="step"),
                         "last"),
}


@pytest.mark.parametrize("strategy_name", sorted(SHARED_GENERATOR))
@pytest.mark.parametrize("space_name", sorted(MEAN_SPACES))
def test_reserved_noise_leaves_the_generator_where_single_draws_do(space_name,
                                                                   strategy_name):
    """DP-RGD and DP-RSVRG read their noise ahead (``shared_stream``) only as far as they
    reserve it: the iterates and the generator's state after the run are those of a
    sampler drawing one draw at a time from the generator."""
    space = MEAN_SPACES[space_name]()
    data = cloud(space, 40, radius=1.0, seed=5)
    strategy, output = SHARED_GENERATOR[strategy_name]

    def run(noise_sampler):
        rng = np.random.default_rng(11)
        result = minimize(SquaredDistanceLoss(space), data, strategy, 30, 0.2, output=output,
                          random_state=rng, noise_sampler=noise_sampler, keep_iterates=True)
        return to_numpy(result.iterates), rng.random(3)

    (reserved, after), (single, after_single) = run(None), run(_OneDrawAtATime(space))
    np.testing.assert_allclose(reserved, single, rtol=1e-12, atol=1e-13)
    np.testing.assert_array_equal(after, after_single)
