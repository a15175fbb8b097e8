"""The Flower engine's silence, without starting Ray."""

import logging
import os
import warnings

from geomstats.geometry.hypersphere import Hypersphere

from geomstats_dp.federated import flower_runtime

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
