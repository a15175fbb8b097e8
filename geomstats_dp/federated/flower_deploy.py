"""PriRFed on Flower's deployment runtime (SuperLink + SuperNodes + ``flwr run``).

A Flower app project names ``geomstats_dp.federated.flower_deploy:server`` and
``:client`` (through a one-line module of its own) as its components. Everything public
comes from the run configuration (``[tool.flwr.app.config]`` or ``flwr run
--run-config``): ``dim`` (the sphere S^dim; the squared-distance loss, a federated
Frechet mean), ``sizes`` (the agents' public sizes, "n_0,n_1,..."), ``epsilon``,
``delta``, ``n-rounds``, ``n-sampled``, ``local-steps``, ``local-method``, ``clip-norm``,
``seed`` and ``out`` (where the server writes the release, a .npy file). Each SuperNode
is started with ``--node-config "partition-id=i data-path=/path/to/agent_i.npy"``: its
records never leave its machine. The budget is the user's: charge it with
``PriRFed(...)._local_target(sizes)`` before ``flwr run`` (the tests do).

Importing this module imports flwr (extra ``flower``).
"""

import functools

import numpy as np
from geomstats.geometry.hypersphere import Hypersphere

from geomstats_dp._backend import to_backend
from geomstats_dp.federated.estimator import PriRFed, _release
from geomstats_dp.federated.flower_app import make_client_app, make_server_app


def estimator_from_config(config):
    """The PriRFed whose public parameters the run configuration gives."""
    return PriRFed(
        Hypersphere(int(config["dim"])), epsilon=float(config["epsilon"]),
        delta=float(config["delta"]), n_rounds=int(config["n-rounds"]),
        n_sampled=int(config["n-sampled"]), local_steps=int(config["local-steps"]),
        local_method=str(config["local-method"]), clip_norm=float(config["clip-norm"]),
        random_state=int(config["seed"]),
    )


def sizes_from_config(config):
    return [int(size) for size in str(config["sizes"]).split(",")]


@functools.lru_cache(maxsize=8)
def _client_run(items, agent, data_path):
    config = dict(items)
    estimator = estimator_from_config(config)
    loss = estimator._make_loss()
    data = loss.check_data(to_backend(np.load(data_path)))
    return estimator.run_spec(sizes_from_config(config), {agent: data})


def _get_client_run(context):
    return _client_run(tuple(sorted(context.run_config.items())),
                       int(context.node_config["partition-id"]),
                       str(context.node_config["data-path"]))


def _get_server_run(context):
    config = context.run_config
    return estimator_from_config(config).run_spec(sizes_from_config(config), None)


def _write_release(run, history, context):
    point = _release(history, "last", run.start, run.entropy)
    np.save(str(context.run_config["out"]), np.asarray(point))


client = make_client_app(_get_client_run)
server = make_server_app(_get_server_run, [], timeout=120.0, on_end=_write_release)
