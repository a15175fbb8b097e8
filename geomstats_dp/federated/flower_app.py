"""PriRFed as a Flower app (Message API, flwr 1.41; extra ``flower``).

The ClientApp's train handler calls ``federated.local.local_train``, the function the
in-process engine calls; the ServerApp runs a strategy in FedAvg's shape
(``configure_train`` / ``aggregate_train``) that samples the round's agents with the run's
server seed and aggregates on the manifold. Points travel as ArrayRecords. Flower's own DP
wrappers do not apply (Euclidean noise, no custom aggregation): the library's accounting
is the authority, and it counts every sampled agent whether or not its reply arrives.

In the simulation (``run_flower``) the run, loss included, reaches the workers by value
(``flower_payload``: cloudpickle), so any loss the in-process engine accepts works, also
a lambda or a function of the user's script; Flower and Ray are silent unless ``verbose``
and poll every ``flower_runtime.POLL_S`` (``flower_runtime``).

flwr is imported inside the functions, so the package works without the extra.
"""

import os
import time

import numpy as np

from geomstats_dp.federated import flower_runtime
from geomstats_dp.federated.flower_payload import ShippedRun
from geomstats_dp.federated.local import inject_fault

ARRAYS, CONFIG = "arrays", "config"
NODE_WAIT_S = 120.0


def _wait_for_nodes(grid, n_nodes, limit):
    """The node ids once ``n_nodes`` have connected (bounded wait)."""
    deadline = time.monotonic() + limit
    while True:
        node_ids = list(grid.get_node_ids())
        if len(node_ids) >= n_nodes or time.monotonic() > deadline:
            return node_ids
        time.sleep(0.2)


def _flwr():
    os.environ.setdefault("FLWR_TELEMETRY_ENABLED", "0")
    try:
        from flwr import app
        from flwr.clientapp import ClientApp
        from flwr.serverapp import ServerApp
    except ImportError as error:  # pragma: no cover - depends on the environment
        raise ImportError(
            "engine='flower' needs the flower extra: pip install 'geomstats-dp[flower]'"
        ) from error
    return app, ClientApp, ServerApp


class ManifoldStrategy:
    """A strategy in FedAvg's shape whose aggregation is the tangent (or Karcher) mean.

    Parameters
    ----------
    run : RunSpec
        Sizes, aggregation, seeds and the rounds' sampled agents.
    node_of_agent : dict
        Agent index -> Flower node id.
    """

    def __init__(self, run, node_of_agent):
        self.run = run
        self.node_of_agent = node_of_agent
        self.sampled = run.sample_agents()

    def configure_train(self, server_round, arrays, config, grid):
        """One TRAIN message per sampled agent, carrying the point and the round."""
        app, _, _ = _flwr()
        messages = []
        for agent in self.sampled[server_round]:
            content = app.RecordDict({
                ARRAYS: arrays,
                CONFIG: app.ConfigRecord({"round": server_round, "agent": agent}),
            })
            messages.append(app.Message(content=content, message_type=app.MessageType.TRAIN,
                                        dst_node_id=self.node_of_agent[agent]))
        return messages

    def aggregate_train(self, server_round, replies, start):
        """The manifold aggregate of the replies that arrived; the agents that failed."""
        sampled = self.sampled[server_round]
        received = {}
        for reply in replies:
            if reply.has_error() or ARRAYS not in reply.content:
                continue
            agent = int(reply.content[CONFIG]["agent"])
            received[agent] = reply.content[ARRAYS].to_numpy_ndarrays()[0]
        agents = [agent for agent in sampled if agent in received]
        point = self.run.aggregate(start, agents, [received[a] for a in agents],
                                   last_round=server_round == self.run.n_rounds - 1)
        failed = [agent for agent in sampled if agent not in received]
        return point, failed


def make_client_app(get_run, fail=None):
    """The ClientApp: agent = the node's ``partition-id``; trains with ``local_train``.

    ``get_run(context) -> (RunSpec, datasets)`` gives the run and the records this node
    holds (agent index -> records; deployment: built from the run and node
    configuration). ``fail`` (tests) maps (round, agent) to a fault
    (``federated.local.inject_fault``: raise, or answer late).
    """
    app, ClientApp, _ = _flwr()
    client = ClientApp()

    @client.query()
    def identify(msg, context):
        agent = int(context.node_config["partition-id"])
        return app.Message(app.RecordDict({CONFIG: app.ConfigRecord({"agent": agent})}),
                           reply_to=msg)

    @client.train()
    def train(msg, context):
        agent = int(context.node_config["partition-id"])
        round_index = int(msg.content[CONFIG]["round"])
        inject_fault((fail or {}).get((round_index, agent)))
        start = msg.content[ARRAYS].to_numpy_ndarrays()[0]
        run, datasets = get_run(context)
        reply = run.train(round_index, agent, start, datasets[agent])
        content = app.RecordDict({
            ARRAYS: app.ArrayRecord([np.asarray(reply)]),
            CONFIG: app.ConfigRecord({"agent": agent}),
        })
        return app.Message(content, reply_to=msg)

    return client


def make_server_app(run, history, on_end=None, poll_s=None):
    """The ServerApp: identify the agents' nodes, then T rounds; appends to ``history``.

    ``run`` is a RunSpec or a callable ``run(context) -> RunSpec``; each round waits at
    most ``run.round_timeout`` seconds for its replies (later ones count as failed);
    ``on_end(run, history, context)`` is called once the rounds are done (deployment:
    write the release); ``poll_s``, when given, is how often the grid pulls replies
    (simulation: ``flower_runtime.shorten_pull_interval``).
    """
    app, _, ServerApp = _flwr()
    server = ServerApp()
    get_run = run if callable(run) else (lambda context: run)

    @server.main()
    def main(grid, context):
        if poll_s is not None:
            flower_runtime.shorten_pull_interval(grid, poll_s)
        run = get_run(context)
        records = [] if on_end is not None else history
        node_ids = _wait_for_nodes(grid, len(run.sizes), NODE_WAIT_S)
        queries = [app.Message(app.RecordDict({CONFIG: app.ConfigRecord({})}),
                               message_type=app.MessageType.QUERY, dst_node_id=node)
                   for node in node_ids]
        node_of_agent, errors = {}, []
        for reply in grid.send_and_receive(queries, timeout=NODE_WAIT_S):
            if reply.has_error():
                errors.append(reply.error.reason)
            else:
                agent = int(reply.content[CONFIG]["agent"])
                node_of_agent[agent] = reply.metadata.src_node_id
        missing = [a for a in range(len(run.sizes)) if a not in node_of_agent]
        if missing:
            raise RuntimeError(f"no Flower node answered for agents {missing}: {errors}")
        strategy = ManifoldStrategy(run, node_of_agent)
        point = run.start
        for server_round in range(run.n_rounds):
            arrays = app.ArrayRecord([np.asarray(point)])
            messages = strategy.configure_train(server_round, arrays, app.ConfigRecord(), grid)
            replies = grid.send_and_receive(messages, timeout=run.round_timeout)
            point, failed = strategy.aggregate_train(server_round, replies, point)
            records.append({"sampled": strategy.sampled[server_round], "failed": failed,
                            "point": point})
            run.report(server_round, run.n_sampled - len(failed))
        if on_end is not None:
            on_end(run, records, context)

    return server


def run_flower(run, datasets, fail=None, poll_s=flower_runtime.POLL_S):
    """Run PriRFed in Flower's simulation engine (Ray, two workers); returns the history.

    The run and the agents' records are shipped to the workers by value
    (``flower_payload.ShippedRun``); Flower and Ray are silent unless ``run.verbose``;
    the runtime polls every ``poll_s`` seconds (0.1 is Flower's own polling).
    """
    shipped = ShippedRun((run, datasets))
    history = []
    with flower_runtime.quiet(run.verbose):  # flwr's imports log too
        _flwr()
        from flwr.simulation import run_simulation

        with flower_runtime.short_polling(poll_s):
            run_simulation(
                server_app=make_server_app(run, history, poll_s=poll_s),
                client_app=make_client_app(lambda context: shipped.load(), fail),
                num_supernodes=len(run.sizes),
                backend_config=flower_runtime.backend_config(2, run.verbose),
            )
    if len(history) != run.n_rounds:
        raise RuntimeError(
            f"the Flower run ended after {len(history)} of {run.n_rounds} rounds"
        )
    return history
