"""PriRFed on Flower's deployment runtime (SuperLink + SuperNodes + ``flwr run``).

A Flower app project names ``geomstats_dp.federated.flower_deploy:server`` and
``:client`` (through a one-line module of its own) as its components. Its run
configuration (``[tool.flwr.app.config]`` or ``flwr run --run-config``) is the dict
returned by ``PriRFed.deployment_config(sizes, out, estimator=...)``, which charges the
user's budget first: either ``estimator = "module:function"`` (an importable function
returning the PriRFed on every machine: any space and loss), or the flat parameters of a
squared-distance PriRFed on the sphere S^dim. Each SuperNode is started with
``--node-config "partition-id=i data-path=/path/to/agent_i.npy"``: its records never
leave its machine. The ServerApp writes the release to ``out``; ``PriRFed.load_release``
reads it.

Importing this module imports flwr (extra ``flower``).
"""

import functools
import importlib

import numpy as np
from geomstats.geometry.hypersphere import Hypersphere

from geomstats_dp._backend import to_backend
from geomstats_dp.federated.estimator import PriRFed
from geomstats_dp.federated.flower_app import make_client_app, make_server_app


def estimator_from_config(config):
    """The PriRFed the run configuration describes (its seed, output and timeout set)."""
    if "estimator" in config:
        module, name = str(config["estimator"]).split(":")
        estimator = getattr(importlib.import_module(module), name)()
    else:
        estimator = PriRFed(
            Hypersphere(int(config["dim"])), epsilon=float(config["epsilon"]),
            delta=float(config["delta"]), n_rounds=int(config["n-rounds"]),
            n_sampled=int(config["n-sampled"]), local_steps=int(config["local-steps"]),
            local_method=str(config["local-method"]), clip_norm=float(config["clip-norm"]),
            batch_size=int(config["batch-size"]) or None,
            step_size=float(config["step-size"]) or None,
            aggregation=str(config["aggregation"]), accountant=str(config["accountant"]),
        )
    return estimator.set_params(random_state=int(config["seed"]),
                                output=str(config["output"]),
                                round_timeout=float(config["round-timeout"]) or None)


def sizes_from_config(config):
    return [int(size) for size in str(config["sizes"]).split(",")]


@functools.lru_cache(maxsize=8)
def _client_run(items, agent, data_path):
    config = dict(items)
    estimator = estimator_from_config(config)
    loss = estimator._make_loss()
    data = loss.check_data(to_backend(np.load(data_path)))
    return estimator.run_spec(sizes_from_config(config)), {agent: data}


def _get_client_run(context):
    return _client_run(tuple(sorted(context.run_config.items())),
                       int(context.node_config["partition-id"]),
                       str(context.node_config["data-path"]))


def _get_server_run(context):
    config = context.run_config
    return estimator_from_config(config).run_spec(sizes_from_config(config))


def _write_release(run, history, context):
    point = run.final_point(history)
    np.save(str(context.run_config["out"]), np.asarray(point))


client = make_client_app(_get_client_run)
server = make_server_app(_get_server_run, [], on_end=_write_release)
