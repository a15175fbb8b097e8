"""The Flower engine's silence and the run's shipping by value, without starting Ray."""

import logging
import os
import pickle
import warnings

import geomstats.backend as gs
import numpy as np
import pytest
from geomstats.geometry.hypersphere import Hypersphere

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.federated import PriRFed, flower_runtime

SPACE = Hypersphere(2)


def emit():
    """A Flower log line and a Ray warning, as they would be issued."""
    logging.getLogger("flwr").warning("flower speaks")
    warnings.warn_explicit("ray speaks", FutureWarning, "worker.py", 1,
                           module="ray._private.worker")


def test_quiet_silences_flower_and_ray_and_restores_everything(caplog, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", "mine")
    caplog.set_level(logging.DEBUG)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with flower_runtime.quiet(verbose=False):
            emit()
            os.environ["PYTHONPATH"] = "rewritten by flower"
        assert caught == [] and caplog.records == []
        emit()  # afterwards: as before the run
        assert [str(w.message) for w in caught] == ["ray speaks"]
        assert [record.getMessage() for record in caplog.records] == ["flower speaks"]
        with flower_runtime.quiet(verbose=True):
            emit()
        assert len(caught) == 2 and len(caplog.records) == 2
    assert os.environ["PYTHONPATH"] == "mine"


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
