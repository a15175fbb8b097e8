"""The engines that execute a PriRFed run: in process (default) or Flower's simulation.

Both take a ``RunSpec`` (``federated.run``) and the agents' checked records and return
the rounds' history: per round the sampled agents, those that failed (raised or did not
answer within ``round_timeout``) and the server's point.
"""

import contextvars
import functools
import threading
import time

from geomstats_dp.federated import flower_app
from geomstats_dp.federated.local import inject_fault


def run_engine(run, datasets):
    """The rounds' history from the engine ``run.engine`` ("local" or "flower")."""
    if run.engine == "flower":
        return flower_app.run_flower(run, datasets)
    return run_local(run, datasets)


def run_local(run, datasets, fail=None):
    """The in-process engine: rounds in sequence; agents in turn, or in threads when
    ``run.round_timeout`` is set (replies later than it count as failed).

    Parameters
    ----------
    run : RunSpec
    datasets : list or dict
        Agent index -> its checked records.
    fail : dict, optional
        For tests: (round, agent) -> a fault (``federated.local.inject_fault``).

    Returns
    -------
    history : list of dict
        Per round: "sampled", "failed" (agent indices) and "point" (numpy).
    """
    history, point = [], run.start
    for round_index, sampled in enumerate(run.sample_agents()):
        jobs = {agent: functools.partial(_train_or_fail, run, round_index, agent, point,
                                         datasets[agent], (fail or {}).get((round_index, agent)))
                for agent in sampled}
        if run.round_timeout is None:
            outcomes = {agent: _outcome(job) for agent, job in jobs.items()}
        else:
            outcomes = _in_threads(jobs, run.round_timeout)
        agents = [agent for agent in sampled if outcomes.get(agent) is not None]
        point = run.aggregate(point, agents, [outcomes[agent] for agent in agents],
                              last_round=round_index == run.n_rounds - 1)
        failed = [agent for agent in sampled if agent not in agents]
        history.append({"sampled": sampled, "failed": failed, "point": point})
        run.report(round_index, len(agents))
    return history


def _train_or_fail(run, round_index, agent, point, data, fault):
    inject_fault(fault)
    return run.train(round_index, agent, point, data)


def _outcome(job):
    """The job's reply, or None when it raised (a failing agent must not stop the server)."""
    try:
        return job()
    except Exception:  # noqa: BLE001
        return None


def _in_threads(jobs, timeout):
    """Run the jobs in daemon threads; the replies that arrive within ``timeout`` s."""
    outcomes, threads = {}, []
    for agent, job in jobs.items():
        context = contextvars.copy_context()  # an observer of the stages follows the job
        thread = threading.Thread(
            target=lambda a=agent, j=job, c=context: outcomes.update({a: c.run(_outcome, j)}),
            daemon=True)
        thread.start()
        threads.append(thread)
    deadline = time.monotonic() + timeout
    for thread in threads:
        thread.join(max(deadline - time.monotonic(), 0.0))
    return dict(outcomes)  # a snapshot: late replies are ignored
