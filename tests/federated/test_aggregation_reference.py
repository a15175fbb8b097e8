"""The server's aggregate of a run against the sphere's closed-form Exp and Log.

Heterogeneous agents (clusters about 1 rad apart, sizes 10, 40 and 150) and a round where
one agent fails: the aggregate must be Exp_x(sum_i w_i Log_x(y_i)) at the broadcast point x
with w_i = n_i / (sum of the sizes that replied), computed here from the replies the agents
actually sent, with Exp and Log written out (not the library's).
"""

import numpy as np
import pytest
from geomstats.geometry.hypersphere import Hypersphere

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.federated import PriRFed, engine
from geomstats_dp.federated import run as run_module
from geomstats_dp.federated.engine import run_local
from geomstats_dp.optim import canonical_point

SPACE = Hypersphere(2)
SIZES = (10, 40, 150)
CENTRES = np.array([[1.0, 0.0, 0.3], [-0.2, 1.0, 0.6], [0.1, -0.3, 1.0]])
KARCHER_STEPS = 20  # the library's fixed number of steps


def sphere_log(base, point):
    cos = np.clip(point @ base, -1.0, 1.0)
    angle = np.arccos(cos)
    return angle / np.sin(angle) * (point - cos * base)


def sphere_exp(base, vector):
    norm = np.linalg.norm(vector)
    return np.cos(norm) * base + np.sin(norm) * vector / norm


def reference_mean(base, replies, weights, n_steps):
    for _ in range(n_steps):
        base = sphere_exp(base, sum(w * sphere_log(base, y) for w, y in zip(weights, replies)))
    return base


def heterogeneous_agents(seed=0):
    rng = np.random.default_rng(seed)
    centres = CENTRES / np.linalg.norm(CENTRES, axis=1, keepdims=True)
    return [to_numpy(SPACE.projection(to_backend(centre + 0.1 * rng.normal(size=(n, 3)))))
            for centre, n in zip(centres, SIZES)]


@pytest.mark.parametrize(("aggregation", "n_steps"),
                         [("tangent_mean", 1), ("karcher_mean", KARCHER_STEPS)])
def test_round_aggregates_match_closed_form_exp_and_log(monkeypatch, aggregation, n_steps):
    replies = {}
    train = run_module.local_train

    def recording(loss, data, strategy, n_iter, step_size, start, seed, *args, **kwargs):
        reply = train(loss, data, strategy, n_iter, step_size, start, seed, *args, **kwargs)
        _, round_index, agent = seed.spawn_key
        replies[round_index, agent] = reply
        return reply

    failing = (1, 2)  # round 1: the largest agent fails
    monkeypatch.setattr(run_module, "local_train", recording)
    monkeypatch.setattr(engine, "run_local",
                        lambda run, datasets: run_local(run, datasets, {failing: "raise"}))
    est = PriRFed(SPACE, epsilon=1e3, n_rounds=3, n_sampled=3, local_steps=5,
                  local_method="rgd", clip_norm=2.0, step_size=0.5, aggregation=aggregation,
                  random_state=0).fit(heterogeneous_agents())
    assert est.history_[1]["failed"] == [2]
    base = to_numpy(canonical_point(SPACE))
    for round_index, record in enumerate(est.history_):
        agents = [a for a in record["sampled"] if a not in record["failed"]]
        points = [np.asarray(replies[round_index, a]) for a in agents]
        spread = max(np.arccos(np.clip(p @ q, -1, 1)) for p in points for q in points)
        assert spread > 0.5  # the replies are far apart: an ambient mean would differ
        weights = np.array([SIZES[a] for a in agents], dtype=float)
        expected = reference_mean(base, points, weights / weights.sum(), n_steps)
        np.testing.assert_allclose(np.asarray(record["point"]), expected, rtol=0, atol=1e-9)
        base = expected
