"""PriRFed: private federated Riemannian optimisation (Huang et al. 2024, Algorithm 1).

The estimator validates its parameters, checks the agents' records (``federated.agents``),
resolves its settings by the public rule (``federated.defaults``), calibrates the agents'
local plans to the accountant's total, builds the run's frozen spec (``federated.run``)
and runs it through the one private pipeline (``run_release``: reserve, release, spend).
"""

import math
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp._validation import check_positive_int
from geomstats_dp.federated import deployment
from geomstats_dp.federated.agents import (
    check_agents,
    checked_values,
    inferred_clip_norm,
    split_agents,
)
from geomstats_dp.federated.aggregation import AGGREGATIONS
from geomstats_dp.federated.calibration import Calibration
from geomstats_dp.federated.defaults import AUTO, reply_kind, resolve_settings
from geomstats_dp.federated.local_methods import LOCAL_METHODS
from geomstats_dp.federated.release_file import read_release
from geomstats_dp.federated.run import RunSpec
from geomstats_dp.federated.search_split import AgentSplit
from geomstats_dp.learning import PrivateEstimator
from geomstats_dp.learning.mechanisms.base import run_release
from geomstats_dp.optim import (
    CallableLoss,
    PerSampleLoss,
    SquaredDistanceLoss,
)
from geomstats_dp.optim.initial_point import check_init_point
from geomstats_dp.privacy import PrivacyBudget
from geomstats_dp.privacy.federated import FEDERATED_ACCOUNTANTS

OUTPUTS = ("last", "random", "average", "shrunk")
ENGINES = ("local", "flower")
ACCOUNTANTS = FEDERATED_ACCOUNTANTS + ("end_to_end",)
_POSITIVE = Interval(Real, 0, math.inf, closed="neither")
_COUNT = [Interval(Integral, 1, None, closed="left"), StrOptions({AUTO})]


class PriRFed(PrivateEstimator):
    """Private federated learning on a manifold: Huang et al. (2024), Algorithm 1.

    Each of ``n_rounds`` rounds the server samples ``n_sampled`` of the N agents without
    replacement and broadcasts its point; each sampled agent runs ``local_steps`` steps of
    its private local method (``federated.local_methods``: DP-RSGD, DP-RSVRG or DP-RGD,
    calibrated by the same plan as ``PrivateERM``, or the noisy clipped tangent mean) on
    its own records; the server aggregates the replies with the tangent mean
    Exp_x(sum_i w_i Log_x(x_i)) (w_i proportional to the agents' sizes), or iterates it to
    the weighted Karcher mean. With one step of the tangent mean (the default) an agent
    replies with the step v_i itself, a tangent vector at x, and the server takes
    Exp_x(sum_i w_i v_i): on a sphere a reply longer than pi is not wrapped
    (``RunSpec.reply``). The release is the last aggregate (Option 1,
    ``output="last"``), one drawn uniformly among the T rounds (Option 2, "random"),
    the Karcher mean of the round points once they have settled ("average"), or the last
    aggregate with its step shrunk by the noise it carries ("shrunk"); all are
    post-processing (``RunSpec.final_point``).

    One-shot private averaging is ``local_method="tangent_mean", n_rounds=1,
    n_sampled=N, output="last"`` (each agent releases its noisy clipped tangent mean at
    the public start point once; the server averages), and for another loss
    ``local_method="rgd", n_rounds=1, n_sampled=N`` with the agents' full local DP-RGD
    solves. The defaults
    (``"auto"``, resolved by the public rule of ``federated.defaults`` from N, the agents'
    sizes, the dimension, epsilon, delta, C and the injectivity radius at the start;
    stored as ``n_rounds_``, ...): for the squared distance, every agent every round,
    T <= 10 rounds of noisy tangent means (as many as keep each agent's noise below the
    clipped signal and half the injectivity radius; one if fewer than ``MIN_ROUNDS``) and
    the average of the settled round points (one round's step shrunk where the
    injectivity radius is infinite); another loss: one-shot averaged full DP-RGD solves.

    Privacy. Record level, replace-one adjacency within an agent (one record of one agent
    replaced by any other; the agents' sizes are public). Each local step clips the
    per-sample Riemannian gradients (for the tangent mean: the Log_x(z), the gradients of
    d(x, z)^2 / 2) to ``clip_norm`` C (a public bound on their norms in the metric) and
    adds tangent Gaussian noise; its sensitivity is that of ``PrivateERM``'s step: 2C/n_i
    for the tangent mean and DP-RGD, 2C/b for a DP-RSGD batch of b, 2C/n_i and 4 C1 for
    DP-RSVRG. The user gives the total (epsilon, delta) of the whole run; the agents' noise
    is calibrated so that the accountant meets it. A record is only in its own agent's
    releases (parallel composition across agents):

    - "end_to_end" (default, ``privacy.federated_e2e``): a record is seen in the
      Binomial(T, s/N) rounds where its agent is sampled, which are public; the run is
      accounted from the agents' noise (each agent's local steps, batch sampling
      included): with every agent sampled, the T K local Gaussian releases of the
      record's agent composed exactly (Gaussian DP) for full-batch steps, in RDP
      otherwise. Sound whoever learns the sampled agents: the server, a reader of
      ``history_``.
    - "public_sampling" (``privacy.prirfed_public_sampling``): the same public sampling,
      accounted from the agents' local (epsilon, delta) by optimal composition: more noise
      for the same total (the noise multipliers of both are compared in
      docs/federated.md, "Privacy"), a faster calibration.
    - "parallel_optimal" (``privacy.prirfed_epsilon``) and "theorem_4_2" (the paper's)
      also amplify by agent sampling, which only holds against an observer who does not
      learn which agents were sampled. They do not protect against the server. With them
      ``history_`` does not record the sampled or failed agents.

    Every sampled agent is counted, also one that fails or never answers (a lost reply
    may have been seen). The T round releases are charged to the budget together as one
    ``ApproxDPEvent`` with the accountant's total (composed with other releases by basic
    or advanced composition), held from just before the first round: a run that raises
    after it started (an agent's reply may have left it) is charged all the same; a fit
    refused before (the budget, the data checks) is not. The aggregation, the output and
    ``history_`` are post-processing. Where the injectivity radius is infinite
    (SPD, hyperbolic, Euclidean), each local noisy gradient is projected onto the ball of
    radius C (2 C1 + C0 for DP-RSVRG) of its tangent space before its step
    (``RunSpec.direction_bound``): post-processing, and a very noisy step cannot leave the
    manifold numerically.

    Trust assumption: whether an agent fails or times out does not depend on its records
    (crashes and delays come from its machine or network). A failure that does changes
    the release (the round aggregates without that reply) and ``history_["failed"]``, and
    is not covered by the guarantee. ``record_failures=False`` withholds the failure
    record (``history_`` and the ``verbose`` lines then hold no failure information); the
    release still aggregates only the replies that arrived.

    Parameters
    ----------
    space : Manifold
    loss : PerSampleLoss, callable or None
        As in ``PrivateERM``; None is the squared distance (a federated Frechet mean).
    epsilon, delta : float
        Total guarantee of the whole run.
    n_rounds : int or "auto"
        T.
    n_sampled : int or "auto"
        s, agents per round (<= N); "auto" is N.
    local_steps : int or "auto"
        K, local steps (epochs for rsvrg).
    local_method : {"auto", "tangent_mean", "rgd", "rsgd", "rsvrg"}
        "tangent_mean" needs the squared distance loss.
    clip_norm : float or None
        C; None infers it from the data with a PrivacyLeakWarning (not private).
    batch_size : int, optional
        rsgd batch size; default about sqrt of the smallest agent's size.
    step_size : float or callable, optional
        Local step size; default noise-aware (``learning.default_step_size``); the tangent mean's
        is 1.
    output : {"auto", "last", "random", "average", "shrunk"}
    aggregation : {"tangent_mean", "karcher_mean"}
    accountant : {"end_to_end", "public_sampling", "parallel_optimal", "theorem_4_2"}
    engine : {"local", "flower"}
        In-process, or Flower's simulation engine (extra ``flower``): the run, loss
        included, is shipped to its workers by value with cloudpickle (any loss the
        in-process engine accepts, a lambda too), and Flower and Ray stay silent unless
        ``verbose``.
    round_timeout : float or None
        Seconds the server waits for a round's replies; a reply later than that counts as
        failed (its agent is still charged). None waits for every reply (the local engine
        then trains the agents in turn; with a timeout, in threads).
    init_point : array-like, optional
        Data-independent start; default a canonical point.
    budget : PrivacyBudget, optional
    random_state : None or int
        Root seed; agent i in round t draws from SeedSequence(root, spawn_key=(1, t, i)).
    verbose : bool
        Print each round's number of replies (without ``record_failures``, only the
        round), and let Flower and Ray print their logs (``engine="flower"`` is silent
        otherwise).
    record_failures : bool
        Whether ``history_`` lists each round's failed agents (see the trust assumption).

    Attributes
    ----------
    estimate_ : array-like, shape=[*space.shape]
    local_method_, n_rounds_, n_sampled_, local_steps_, output_
        The settings of the run (the ``"auto"`` ones resolved; public).
    budget_ : PrivacyBudget
    events_ : tuple of ApproxDPEvent
    guarantee_ : FederatedGuarantee
        The accountant's total at the calibrated local guarantee.
    local_epsilon_, local_delta_ : float
        Each agent's local guarantee (with "end_to_end": the parameter of its noise).
    noise_multipliers_ : list of dict
        Per agent, the local noise multipliers (noise std / sensitivity) of its plan.
    history_ : list of dict
        Per round: "point" (the aggregate, released anyway) and, unless the accountant
        amplifies by agent sampling, "sampled" (agent indices) and, with
        ``record_failures``, "failed" (those that raised or did not answer in time).
    """

    _parameter_constraints: ClassVar[dict] = {
        "space": [HasMethods(["belongs"])],
        "loss": [PerSampleLoss, callable, None],
        "epsilon": [_POSITIVE],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "n_rounds": _COUNT,
        "n_sampled": _COUNT,
        "local_steps": _COUNT,
        "local_method": [StrOptions({AUTO, *LOCAL_METHODS})],
        "clip_norm": [_POSITIVE, None],
        "batch_size": [Interval(Integral, 1, None, closed="left"), None],
        "step_size": [_POSITIVE, callable, None],
        "output": [StrOptions({AUTO, *OUTPUTS})],
        "aggregation": [StrOptions(set(AGGREGATIONS))],
        "accountant": [StrOptions(set(ACCOUNTANTS))],
        "engine": [StrOptions(set(ENGINES))],
        "round_timeout": [_POSITIVE, None],
        "init_point": ["array-like", None],
        "budget": [PrivacyBudget, None],
        "random_state": [Interval(Integral, 0, None, closed="left"), None],
        "verbose": ["boolean"],
        "record_failures": ["boolean"],
    }
    # the private search splits each agent's records (``federated.search_split``)
    _search_split = AgentSplit
    _FITTED = ("estimate_", "budget_", "events_", "guarantee_", "local_epsilon_",
               "local_delta_", "noise_multipliers_", "history_", "clip_norm_",
               "local_method_", "n_rounds_", "n_sampled_", "local_steps_", "output_")

    def __init__(self, space, loss=None, epsilon=1.0, delta=1e-5, n_rounds=AUTO,
                 n_sampled=AUTO, local_steps=AUTO, local_method=AUTO, clip_norm=None,
                 batch_size=None, step_size=None, output=AUTO, aggregation="tangent_mean",
                 accountant="end_to_end", engine="local", round_timeout=None,
                 init_point=None, budget=None, random_state=None, verbose=False,
                 record_failures=True):
        self.space = space
        self.loss = loss
        self.epsilon = epsilon
        self.delta = delta
        self.n_rounds = n_rounds
        self.n_sampled = n_sampled
        self.local_steps = local_steps
        self.local_method = local_method
        self.clip_norm = clip_norm
        self.batch_size = batch_size
        self.step_size = step_size
        self.output = output
        self.aggregation = aggregation
        self.accountant = accountant
        self.engine = engine
        self.round_timeout = round_timeout
        self.init_point = init_point
        self.budget = budget
        self.random_state = random_state
        self.verbose = verbose
        self.record_failures = record_failures
        self._remember_budget()

    # -- inputs ------------------------------------------------------------------------

    def _settings(self, sizes):
        """The run's settings from public quantities (``federated.defaults``), checked."""
        self._validate_params()
        loss = self._make_loss()
        settings = resolve_settings(self.get_params(deep=False), sizes, int(self.space.dim),
                                    isinstance(loss, SquaredDistanceLoss),
                                    self._injectivity_radius())
        LOCAL_METHODS[settings.local_method].check_loss(loss)
        if settings.n_sampled > len(sizes):
            raise ValueError(f"n_sampled must be <= the number of agents {len(sizes)}, "
                             f"got {settings.n_sampled}")
        return settings

    def _start(self):
        """The public start point (numpy), checked to lie on the space."""
        return to_numpy(check_init_point(self.space, self.init_point))

    def _injectivity_radius(self):
        """geomstats' injectivity radius at the start point; inf where not implemented."""
        try:
            radius = self.space.metric.injectivity_radius(to_backend(self._start()))
        except NotImplementedError:
            return math.inf
        return float(to_numpy(radius))

    def _check_data(self, datasets, y=None, groups=None):
        """Check every agent's records as ``fit`` does (an error names the agent and the
        record's index in its array); the private search checks its whole data with it
        before any run."""
        checked_values(self._make_loss(), check_agents(split_agents(datasets, groups)))

    def _make_loss(self):
        if self.loss is None:
            return SquaredDistanceLoss(self.space)
        if isinstance(self.loss, PerSampleLoss):
            return self.loss
        return CallableLoss(self.space, self.loss)

    # -- fit ---------------------------------------------------------------------------

    def fit(self, datasets, y=None, groups=None):
        """Run PriRFed on the agents' records.

        Parameters
        ----------
        datasets : list of array-like, each shape=[n_i, ...]; or X with ``groups``
            Agent i's records.
        y : None
            Ignored (scikit-learn's signature).
        groups : array-like, shape=[n], optional
            The agent of each row of X.

        Returns
        -------
        self
        """
        self._validate_params()
        budget = self._start_fit(self.epsilon, self.delta)
        arrays = check_agents(split_agents(datasets, groups))
        sizes = [len(data) for data in arrays]
        settings = self._settings(sizes)
        target = self._event(sizes, settings, budget)[1]
        checked = checked_values(self._make_loss(), arrays)  # values, after the budget check
        clip_norm = self.clip_norm
        if clip_norm is None:
            clip_norm = inferred_clip_norm(self._make_loss(), checked, self._start())
        run = self._run(sizes, settings, clip_norm, target)
        fitted = run_release(run, budget, checked, None)
        self.estimate_, self.history_ = fitted["estimate_"], fitted["history_"]
        self._set_charged(budget, fitted["events_"], target, settings)
        self.noise_multipliers_ = [plan.noise_multipliers for plan, _ in run.plans]
        self.clip_norm_ = clip_norm
        return self

    def _set_charged(self, budget, events, target, settings):
        """The fitted attributes of what was charged (``target``: local epsilon, local
        delta, total guarantee), and the run's settings."""
        self.budget_, self.events_ = budget, tuple(events)
        self.local_epsilon_, self.local_delta_, self.guarantee_ = target
        self.local_method_, self.n_rounds_ = settings.local_method, settings.n_rounds
        self.n_sampled_, self.local_steps_ = settings.n_sampled, settings.local_steps
        self.output_ = settings.output

    def deployment_config(self, sizes, out, estimator=None):
        """Charge the budget for a run on Flower's deployment runtime; its run config.

        The run (``geomstats_dp.federated.flower_deploy``) is the one ``fit`` would run on
        agents of these sizes; its release is read back with ``load_release``. The whole
        run is charged now, before anything runs (a run that then fails stays charged).

        Parameters
        ----------
        sizes : list of int
            The agents' public sizes, agent i on the SuperNode with ``partition-id=i``.
        out : str
            Where the ServerApp writes the release (.npy).
        estimator : str, optional
            "module:function", an importable zero-argument function that returns this
            estimator (same parameters) on every machine. Without it, only a squared
            distance loss on a ``Hypersphere`` can be described by the configuration.

        Returns
        -------
        config : dict
            For ``[tool.flwr.app.config]`` or ``flwr run --run-config``.
        """
        self._validate_params()
        budget = self._start_fit(self.epsilon, self.delta)
        sizes = [check_positive_int(size, f"sizes[{i}]") for i, size in enumerate(sizes)]
        settings = self._settings(sizes)
        seed = (int(self.random_state) if self.random_state is not None
                else int(np.random.SeedSequence().generate_state(1, np.uint32)[0]))
        if self.clip_norm is None:
            raise ValueError("clip_norm must be given for a deployment (no data to infer it)")
        config = deployment.run_config(self, settings, sizes, out, seed, estimator)
        event, target = self._event(sizes, settings, budget)
        budget.spend(event)  # the release is made outside: charged before it runs
        self._set_charged(budget, (event,), target, settings)
        self.clip_norm_ = self.clip_norm
        return config

    def load_release(self, path):
        """Read a deployed run's release (after ``deployment_config``); returns self.

        The file must hold one finite point of ``space`` (its shape, on the manifold:
        ``federated.release_file``), as the ServerApp of the configured run writes it.

        Parameters
        ----------
        path : str or path-like
            The run configuration's ``out``.

        Returns
        -------
        self
        """
        if "events_" not in self.__dict__:
            raise RuntimeError("call deployment_config first: it charges the budget")
        self.estimate_ = to_backend(read_release(self.space, path))
        return self

    # -- calibration -------------------------------------------------------------------

    def _calibration(self):
        """The public parameters the run is calibrated from (``federated.calibration``)."""
        return Calibration(self.epsilon, self.delta, self.accountant, int(self.space.dim),
                           self.batch_size, self.step_size)

    def _event(self, sizes, settings, budget):
        """The run's event (checked against ``budget``) and its local target."""
        calibration = self._calibration()
        target = calibration.local_target(sizes, settings)
        event = calibration.event(target[2], settings)
        budget.check(event)
        return event, target

    def _run(self, sizes, settings, clip_norm, target):
        """The ``RunSpec`` at the calibrated ``target`` (local epsilon, delta, guarantee)."""
        calibration = self._calibration()
        local_epsilon, local_delta, guarantee = target
        batch_size = calibration.agents_batch_size(sizes)
        plans = tuple(calibration.plan(settings, local_epsilon, local_delta, size, clip_norm,
                                       batch_size) for size in sizes)
        return RunSpec(
            space=self.space, loss=self._make_loss(), plans=plans, sizes=tuple(sizes),
            start=self._start(), entropy=_entropy(self.random_state),
            n_rounds=settings.n_rounds, n_sampled=settings.n_sampled,
            local_steps=settings.local_steps, output=settings.output,
            aggregation=self.aggregation, accountant=self.accountant,
            event=calibration.event(guarantee, settings),
            injectivity_radius=self._injectivity_radius(), reply=reply_kind(settings),
            engine=self.engine,
            round_timeout=self.round_timeout, verbose=self.verbose,
            record_failures=self.record_failures)

    def run_spec(self, sizes, clip_norm=None):
        """The run an engine executes on agents of ``sizes``, from public quantities only.

        Parameters
        ----------
        sizes : list of int
            The agents' public sizes n_i.
        clip_norm : float, optional
            Default ``self.clip_norm``.

        Returns
        -------
        run : RunSpec
        """
        settings = self._settings(sizes)
        target = self._calibration().local_target(sizes, settings)
        return self._run(sizes, settings, self.clip_norm if clip_norm is None else clip_norm,
                         target)

    def record_ledgers(self, sizes):
        """RDP ledgers that bound one record's privacy loss in a run on agents of ``sizes``
        (``Calibration.record_ledgers``); used by the private search
        (``federated.search_split``).

        Parameters
        ----------
        sizes : list of int
            The agents' public sizes n_i.

        Returns
        -------
        ledgers : tuple of tuple of GaussianEvent
            One per distinct agent plan.
        """
        return self._calibration().record_ledgers(sizes, self._settings(sizes))


def _entropy(random_state):
    if random_state is None:
        return np.random.SeedSequence().entropy
    return int(random_state)
