"""How PriRFed runs Flower's simulation runtime: silent unless verbose, short polling.

Silence. Unless ``verbose``, logging is disabled up to CRITICAL for the duration of the
run (``logging.disable``: Flower, Ray, alembic and sqlalchemy set their loggers' levels
as they are imported, so a level set beforehand does not hold), the warnings that Flower
and Ray issue are ignored (and ResourceWarnings: Ray's subprocess handles), and the Ray workers' output is not forwarded to this process
(``log_to_driver=False``). Afterwards the previous logging state is restored, and
``PYTHONPATH`` (which Flower rewrites) too.

Polling. Flower 1.41's simulation runtime moves messages by polling: its in-memory grid
pulls the replies every ``pull_interval`` and its message extractor
(``vce_api.add_messages_to_queue``) looks for new messages at a fixed interval (Flower's
values are on the federated page of the docs), so a round costs at least that interval
however fast the agents train. For the duration of the run both
poll every ``poll_s`` (default ``POLL_S``) instead: the extractor is replaced by the same
loop with the shorter wait (flwr is pinned to 1.41.x by the ``flower`` extra).
"""

import contextlib
import logging
import os
import warnings

POLL_S = 0.01
QUIET_WARNINGS = r"(flwr|ray|alembic)(\.|$)"


def backend_config(n_cpus, verbose):
    """Flower's ``backend_config`` for Ray: ``n_cpus`` one-CPU workers, no dashboard.

    Parameters
    ----------
    n_cpus : int
        CPUs given to Ray (one worker each).
    verbose : bool
        Without it, the workers' output stays in Ray's log files and Ray logs errors only.

    Returns
    -------
    config : dict
    """
    init_args = {"num_cpus": n_cpus, "include_dashboard": False}
    if not verbose:
        init_args.update(log_to_driver=False, logging_level=logging.ERROR)
    return {"client_resources": {"num_cpus": 1, "num_gpus": 0.0}, "init_args": init_args}


@contextlib.contextmanager
def quiet(verbose):
    """Within the block: Flower, Ray, alembic and sqlalchemy silent unless ``verbose``.

    Parameters
    ----------
    verbose : bool
        True lets Flower and Ray log (also inside ``quiet_numerics``, which disables log
        records below ERROR while a release runs) and leaves warnings as they are
        (``PYTHONPATH`` is restored anyway).
    """
    pythonpath = os.environ.get("PYTHONPATH")
    disabled = logging.root.manager.disable
    try:
        with warnings.catch_warnings():
            if not verbose:
                warnings.filterwarnings("ignore", module=QUIET_WARNINGS)
                warnings.simplefilter("ignore", ResourceWarning)  # Ray's subprocesses
                logging.disable(logging.CRITICAL)
            else:
                logging.disable(logging.NOTSET)
            yield
    finally:
        logging.disable(disabled)
        if pythonpath is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = pythonpath


def _message_poller(poll_s):
    """Flower's ``add_messages_to_queue``, waiting ``poll_s`` between polls."""

    def poll_messages(state, queue, nodes_mapping, f_stop):
        while not f_stop.is_set():
            for node_id in nodes_mapping:
                for message in state.get_message_ins(node_id=node_id, limit=1):
                    queue.put(message)
            f_stop.wait(poll_s)

    return poll_messages


@contextlib.contextmanager
def short_polling(poll_s=POLL_S):
    """Within the block: the simulation runtime's extractor polls every ``poll_s``."""
    from flwr.server.superlink.fleet.vce import vce_api

    original = vce_api.add_messages_to_queue
    vce_api.add_messages_to_queue = _message_poller(poll_s)
    try:
        yield
    finally:
        vce_api.add_messages_to_queue = original


def shorten_pull_interval(grid, poll_s=POLL_S):
    """Have the ServerApp's in-memory grid pull replies every ``poll_s``."""
    if hasattr(grid, "pull_interval"):
        grid.pull_interval = poll_s
