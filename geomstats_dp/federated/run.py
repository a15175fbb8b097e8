"""The run specification of PriRFed: a frozen mechanism of public quantities.

``RunSpec`` holds everything an engine needs for one run except the agents' records (the
space and loss, the agents' public sizes and calibrated plans, the start point, the root
seed, the resolved settings, the charged event); ``PriRFed`` builds it, and
``learning.mechanisms.base.run_release`` runs it (reserve -> release -> spend). Its
``release(data, weights, rng)`` runs the rounds on an engine (``federated.engine``) and
returns the released point and the public history; the aggregation, the output and the
history are post-processing.
"""

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from geomstats_dp._backend import quiet_numerics, to_backend, to_numpy
from geomstats_dp.federated import engine
from geomstats_dp.federated.aggregation import (
    aggregate,
    aggregate_steps,
    karcher_mean,
    shrink_step,
)
from geomstats_dp.federated.local import agent_seed, local_train, server_seed
from geomstats_dp.learning.mechanisms.base import Mechanism
from geomstats_dp.optim.karcher import first_settled
from geomstats_dp.privacy.federated import AMPLIFYING_ACCOUNTANTS
from geomstats_dp.privacy.stages import stage_group


@dataclass(frozen=True)
class RunSpec(Mechanism):
    """One PriRFed run (Huang et al. 2024, Algorithm 1) from public quantities.

    Adjacency, sensitivity and accountant: those of ``PriRFed`` (record level,
    replace-one within an agent; each local step's sensitivity is its plan's; the
    accountant's total is ``event``). A run that raises once its rounds started is
    charged (an agent's reply may have left it): ``charged_if_raises``.

    Attributes
    ----------
    space : Manifold
    loss : PerSampleLoss
    plans : tuple of (GradientPlan, float or callable)
        Per agent, its calibrated plan and local step size.
    sizes : tuple of int
        The agents' public sizes n_i.
    start : numpy.ndarray, shape=[*space.shape]
        The public start point.
    entropy : int
        The root seed: the server draws from ``server_seed(entropy)``, agent i in round
        t from ``agent_seed(entropy, t, i)``.
    n_rounds, n_sampled, local_steps : int
        T, s and K.
    output : {"last", "random", "average", "shrunk"}
    aggregation : {"tangent_mean", "karcher_mean"}
    accountant : str
        Which ``history_`` entries are public (``public_history``).
    event : ApproxDPEvent
        The accountant's total, charged once for the whole run.
    injectivity_radius : float
        The space's injectivity radius at ``start`` (inf where not implemented).
    reply : {"point", "tangent"}
        What an agent sends (``local.local_train``): its local output point, or, for one
        local step, the step's tangent vector at the broadcast point, which the server
        averages as released (``aggregation.aggregate_steps``); either is the agent's
        release or a function of it.
    engine : {"local", "flower"}
    round_timeout : float or None
    verbose, record_failures : bool
    """

    charged_if_raises: ClassVar[bool] = True

    space: Any
    loss: Any
    plans: tuple
    sizes: tuple
    start: Any
    entropy: int
    n_rounds: int
    n_sampled: int
    local_steps: int
    output: str
    aggregation: str
    accountant: str
    event: Any
    injectivity_radius: float = math.inf
    reply: str = "point"
    engine: str = "local"
    round_timeout: float = None
    verbose: bool = False
    record_failures: bool = True

    def events(self):
        """The run's one event: the accountant's total."""
        return (self.event,)

    def release(self, data, weights, rng):
        """Run the rounds on ``engine`` (its own seeds from ``entropy``; ``rng`` unused).

        Parameters
        ----------
        data : list of array-like, each shape=[n_i, ...]
            The agents' checked records.
        weights : None
            Unused (the agents' weights are their public sizes).
        rng : numpy.random.Generator
            Unused: the agents and the server draw from the root seed's tree.

        Returns
        -------
        fitted : dict
            ``estimate_`` (the released point, backend array) and ``history_``.
        """
        history = engine.run_engine(self, data)
        return {"estimate_": to_backend(self.final_point(history)),
                "history_": public_history(history, self.accountant, self.record_failures)}

    def sample_agents(self):
        """The agents of every round: s of N without replacement, from the server's seed."""
        rng = np.random.default_rng(server_seed(self.entropy))
        n_agents = len(self.sizes)
        return [np.sort(rng.choice(n_agents, self.n_sampled, replace=False)).tolist()
                for _ in range(self.n_rounds)]

    def train(self, round_index, agent, start, data):
        """Agent ``agent``'s reply in round ``round_index`` from its records ``data``."""
        plan, step_size = self.plans[agent]
        with stage_group(f"PriRFed round {round_index} agent {agent}"):
            return local_train(self.loss, data, plan.strategy, self.local_steps, step_size,
                               start, agent_seed(self.entropy, round_index, agent),
                               direction_bound=self.direction_bound(plan.strategy,
                                                                    self.sizes[agent]),
                               reply=self.reply)

    def direction_bound(self, strategy, size):
        """The radius local noisy gradients are projected onto: ``strategy.signal_bound``
        where the injectivity radius at the start is infinite (SPD matrices with the
        affine-invariant metric, hyperbolic and Euclidean spaces: an unbounded noisy step
        there can overflow the next point); None elsewhere, where the exponential map is
        bounded and a capped step near the injectivity radius would land near the cut
        locus (on the sphere, at the antipode) instead of wrapping around. None also with
        ``output="shrunk"``: its factor takes the replies' noise as Gaussian of norm
        ``round_noise``, which a cap would shrink with the signal (both are compared in
        docs/benchmarks/baselines.md, "PriRFed"), and its one round from the public start
        is itself bounded by the shrinkage."""
        if self.output == "shrunk" or not math.isinf(self.injectivity_radius):
            return None
        return strategy.signal_bound(size)

    def report(self, round_index, n_replies):
        """With ``verbose``, print the round's progress (no agent identities)."""
        if not self.verbose:
            return
        replies = f": {n_replies} of {self.n_sampled} replies" if self.record_failures else ""
        print(f"PriRFed round {round_index + 1}/{self.n_rounds}{replies}")

    def aggregate(self, start, agents, replies, last_round=False):
        """The next server point from the replies received (numpy): points, or tangent
        vectors at ``start`` (``reply``); with ``shrinks_at_server``, the last round's
        mean step is shrunk there (``final_point``)."""
        if not replies:
            return start
        weights = to_backend(np.array([self.sizes[agent] for agent in agents], dtype=float)
                             / sum(self.sizes[agent] for agent in agents))
        replies, start = to_backend(np.stack(replies)), to_backend(start)
        with quiet_numerics():
            if self.reply != "tangent":
                point = aggregate(self.space, replies, weights, start, self.aggregation)
            else:
                noise = self.round_noise() if last_round and self.shrinks_at_server else None
                point = aggregate_steps(self.space, replies, weights, start,
                                        self.aggregation, noise)
        return to_numpy(point)

    @property
    def shrinks_at_server(self):
        """Whether the "shrunk" output shrinks the last round's mean of tangent replies as
        the server aggregates them, rather than in ``final_point``: where the injectivity
        radius is finite (a sphere), a step longer than it cannot be read back from the
        aggregate with Log. The last round's point in the history is then the shrunk
        release; elsewhere the history keeps the unshrunk aggregate."""
        return (self.output == "shrunk" and self.reply == "tangent"
                and self.aggregation == "tangent_mean"
                and not math.isinf(self.injectivity_radius))

    def final_point(self, history):
        """The released point from the rounds' points (post-processing), by ``output``.

        "last": Option 1; "random": a round drawn uniformly by the server's seed (Option
        2); "average": the Karcher mean (equal weights, started at the last point) of the
        round points from the first round that moved the server's point by no more than
        the noise explains (``settled_round``): the earlier rounds carry the start
        point's bias; "shrunk": the last round's step from the point it started from,
        shrunk by the noise it carries (``aggregation.shrink_step``, ``round_noise``;
        with ``shrinks_at_server``, already shrunk in the last round's point).
        """
        if self.output == "last":
            return history[-1]["point"]
        if self.output == "shrunk" and self.shrinks_at_server:
            return history[-1]["point"]
        if self.output == "shrunk":
            previous = history[-2]["point"] if len(history) > 1 else self.start
            with quiet_numerics():
                point = shrink_step(self.space, to_backend(history[-1]["point"]),
                                    to_backend(previous), self.round_noise())
            return to_numpy(point)
        if self.output == "random":
            rng = np.random.default_rng(np.random.SeedSequence(self.entropy, spawn_key=(2,)))
            return history[int(rng.integers(len(history)))]["point"]
        points = np.stack([record["point"] for record in history])
        points = points[self.settled_round(points):]
        weights = np.full(len(points), 1.0 / len(points))
        with quiet_numerics():
            point = karcher_mean(self.space, to_backend(points), to_backend(weights),
                                 to_backend(points[-1]))
        return to_numpy(point)

    def round_noise(self):
        """nu = sqrt(d K sum_i w_i^2 sigma_i^2), the expected norm of a round's aggregated
        noise (agent i's noise std sigma_i, K unit local steps, w_i = n_i / n); public."""
        weights = np.array(self.sizes, dtype=float) / sum(self.sizes)
        variances = [sum(std**2 for std in plan.strategy.noise_stds) for plan, _ in self.plans]
        return math.sqrt(int(self.space.dim) * self.local_steps
                         * float(np.dot(weights**2, variances)))

    def settled_round(self, points):
        """The first round whose move d(x_{t-1}, x_t) is at most 2 sqrt(2) nu, else the last.

        nu is the norm of a round's aggregated noise (``round_noise``): once the server's
        point has settled, two rounds differ by their noises, of norm about sqrt(2) nu.
        A function of the released points and the public noise only (post-processing).

        Parameters
        ----------
        points : numpy.ndarray, shape=[T, *space.shape]
            The round points.

        Returns
        -------
        index : int
        """
        chain = [to_backend(point) for point in (self.start, *points)]
        thresholds = np.full(len(points), 2 * math.sqrt(2) * self.round_noise())
        with quiet_numerics():
            return first_settled(self.space, chain, thresholds) - 1


def public_history(history, accountant, record_failures=True):
    """``history_``: who was sampled is withheld when the accountant assumes it secret;
    who failed, also when ``record_failures`` is False."""
    if accountant in AMPLIFYING_ACCOUNTANTS:
        return [{"point": record["point"]} for record in history]
    if not record_failures:
        return [{key: value for key, value in record.items() if key != "failed"}
                for record in history]
    return history
