"""``federated.deployment``: the run configuration of a deployed PriRFed."""

import numpy as np
import pytest
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.spd_matrices import SPDMatrices

from geomstats_dp.federated import PriRFed
from geomstats_dp.federated.defaults import RunSettings
from geomstats_dp.federated.deployment import flat_config, run_config

pytestmark = pytest.mark.backend_independent

SETTINGS = RunSettings("rsgd", 3, 2, 4, "random")


def estimator(space=None, **params):
    params = {"clip_norm": 0.5, "batch_size": 4, "step_size": 0.2, "round_timeout": 30.0,
              **params}
    return PriRFed(space or Hypersphere(3), **params)


def test_the_flat_configuration_holds_the_run_and_its_settings():
    config = run_config(estimator(), SETTINGS, [10, 12, 14], "out.npy", 7)
    assert config == {
        "dim": 3, "epsilon": 1.0, "delta": 1e-5, "n-rounds": 3, "n-sampled": 2,
        "local-steps": 4, "local-method": "rsgd", "clip-norm": 0.5, "batch-size": 4,
        "step-size": 0.2, "aggregation": "tangent_mean", "accountant": "end_to_end",
        "sizes": "10,12,14", "seed": 7, "out": "out.npy", "output": "random",
        "round-timeout": 30.0}


def test_an_estimator_path_replaces_the_flat_parameters():
    config = run_config(estimator(SPDMatrices(2)), SETTINGS, [5], "out.npy", 1,
                        "my_app:make_estimator")
    assert config["estimator"] == "my_app:make_estimator" and "dim" not in config
    with pytest.raises(ValueError, match="estimator must be 'module:function'"):
        run_config(estimator(), SETTINGS, [5], "out.npy", 1, "no_colon")


@pytest.mark.parametrize(("params", "match"), [
    ({"space": SPDMatrices(2)}, "only a Hypersphere"),
    ({"init_point": np.array([0.0, 0.0, 0.0, 1.0])}, "default start"),
    ({"step_size": lambda step: 0.1}, "callable step_size"),
])
def test_what_the_flat_configuration_cannot_describe_is_refused(params, match):
    with pytest.raises(ValueError, match=match):
        flat_config(estimator(**params), SETTINGS)
