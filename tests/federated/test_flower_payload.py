"""The run shipped to Flower's workers by value, without starting Ray: a lambda loss of
``geomstats.backend`` calls survives the round trip, unpickled once per process."""

import pickle
import warnings

import geomstats.backend as gs
import numpy as np
import pytest
from geomstats.geometry.hypersphere import Hypersphere

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.federated import PriRFed

SPACE = Hypersphere(2)


def test_a_lambda_loss_of_geomstats_backend_calls_ships_by_value():
    pytest.importorskip("ray")
    from geomstats_dp.federated.flower_payload import ShippedRun

    data = [to_numpy(SPACE.projection(to_backend(np.random.default_rng(0).normal(size=(5, 3)))))]
    estimator = PriRFed(SPACE, loss=lambda point, sample: gs.sum(gs.exp(point) * sample),
                        n_rounds=2, local_steps=1, local_method="rgd", clip_norm=1.0,
                        step_size=0.1, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # numpy: finite differences
        run, datasets = estimator.run_spec([5]), {0: to_backend(data[0])}
        shipped = pickle.loads(pickle.dumps(ShippedRun((run, datasets))))  # as a worker gets it
        received, received_data = shipped.load()
        start = to_numpy(run.start)
        np.testing.assert_allclose(received.train(1, 0, start, received_data[0]),
                                   run.train(1, 0, start, datasets[0]), rtol=0, atol=1e-12)
    assert shipped.load()[0] is received  # unpickled once per process


def test_backend_functions_are_sent_by_reference():
    pytest.importorskip("ray")
    from geomstats_dp.federated.flower_payload import dumps

    assert pickle.loads(dumps(gs)) is gs
    assert pickle.loads(dumps(gs.exp)) is gs.exp
