"""PriRFed: private federated Riemannian optimisation (Huang et al. 2024, Algorithm 1)."""

import contextvars
import dataclasses
import functools
import math
import threading
import time
import warnings

import numpy as np

from geomstats_dp._backend import quiet_numerics, to_backend, to_numpy
from geomstats_dp._validation import (
    check_positive_finite,
    check_positive_int,
    check_probability,
)
from geomstats_dp.federated.aggregation import (
    AGGREGATIONS,
    aggregate,
    karcher_mean,
    shrink_step,
)
from geomstats_dp.federated.defaults import AUTO, resolve_settings
from geomstats_dp.federated.local import (
    agent_seed,
    inject_fault,
    local_train,
    server_seed,
)
from geomstats_dp.federated.local_methods import LOCAL_METHODS
from geomstats_dp.federated.release_file import read_release
from geomstats_dp.federated.search_split import AgentSplit
from geomstats_dp.learning import _defaults
from geomstats_dp.learning._base import PrivateEstimator
from geomstats_dp.learning._data import check_array
from geomstats_dp.learning.mechanisms.loss_checks import infer_clip_norm
from geomstats_dp.optim import (
    CallableLoss,
    PerSampleLoss,
    SquaredDistanceLoss,
    canonical_point,
)
from geomstats_dp.optim.karcher import first_settled
from geomstats_dp.privacy import ApproxDPEvent, PrivacyLeakWarning
from geomstats_dp.privacy.federated import (
    AMPLIFYING_ACCOUNTANTS,
    FEDERATED_ACCOUNTANTS,
    FederatedGuarantee,
    local_target,
)
from geomstats_dp.privacy.federated_e2e import (
    end_to_end_local_target,
    prirfed_end_to_end_epsilon,
)
from geomstats_dp.privacy.stages import stage_group

OUTPUTS = ("last", "random", "average", "shrunk")
ENGINES = ("local", "flower")
ACCOUNTANTS = FEDERATED_ACCOUNTANTS + ("end_to_end",)


class PriRFed(PrivateEstimator):
    """Private federated learning on a manifold: Huang et al. (2024), Algorithm 1.

    Each of ``n_rounds`` rounds the server samples ``n_sampled`` of the N agents without
    replacement and broadcasts its point; each sampled agent runs ``local_steps`` steps of
    its private local method (``federated.local_methods``: DP-RSGD, DP-RSVRG or DP-RGD,
    calibrated by the same plan as ``PrivateERM``, or the noisy clipped tangent mean) on
    its own records; the server aggregates the replies with the tangent mean
    Exp_x(sum_i w_i Log_x(x_i)) (w_i proportional to the agents' sizes), or iterates it to
    the weighted Karcher mean. The release is the last aggregate (Option 1,
    ``output="last"``), one drawn uniformly among the T rounds (Option 2, "random"),
    the Karcher mean of the round points once they have settled ("average"), or the last
    aggregate with its step shrunk by the noise it carries ("shrunk"); all are
    post-processing (``RunSpec.release``).

    One-shot private averaging is ``local_method="tangent_mean", n_rounds=1,
    n_sampled=N, output="last"`` (each agent releases its noisy clipped tangent mean at
    the public start point once; the server averages), and for another loss
    ``local_method="rgd", n_rounds=1, n_sampled=N`` with the agents' full local DP-RGD
    solves. The defaults
    (``"auto"``, resolved by the public rule of ``federated.defaults`` from N, the agents'
    sizes, the dimension, epsilon, delta, C and the injectivity radius at the start;
    stored as ``n_rounds_``, ...): for the squared distance, every agent every round,
    T <= 10 rounds of noisy tangent means (as many as keep each agent's noise below the
    clipped signal and half the injectivity radius) and the average of the settled round
    points (with one round, where the injectivity radius is infinite, its step shrunk);
    for another loss, the one-shot average of full local DP-RGD solves.

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
      for the same total (2 to 54 times larger noise multipliers in the settings of
      docs/federated.md), a faster calibration.
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
        Local step size; default noise-aware (``learning._defaults``); the tangent mean's
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

    def _check_params(self):
        for name, choices in (("local_method", (AUTO, *LOCAL_METHODS)),
                              ("output", (AUTO, *OUTPUTS)), ("aggregation", AGGREGATIONS),
                              ("accountant", ACCOUNTANTS), ("engine", ENGINES)):
            if getattr(self, name) not in choices:
                raise ValueError(f"{name} must be one of {choices}, got {getattr(self, name)!r}")
        check_positive_finite(self.epsilon, "epsilon")
        check_probability(self.delta, "delta")
        for name in ("n_rounds", "n_sampled", "local_steps"):
            value = getattr(self, name)
            if not (isinstance(value, str) and value == AUTO):
                check_positive_int(value, f"{name} (an int or 'auto')")
        if self.batch_size is not None:
            check_positive_int(self.batch_size, "batch_size")
        if self.clip_norm is not None:
            check_positive_finite(self.clip_norm, "clip_norm")
        if self.round_timeout is not None:
            check_positive_finite(self.round_timeout, "round_timeout")
        if not isinstance(self.record_failures, (bool, np.bool_)):
            raise TypeError("record_failures must be a bool, got "
                            f"{type(self.record_failures).__name__}")
        if self.random_state is not None and not isinstance(self.random_state, (int, np.integer)):
            raise TypeError(
                "random_state must be None or an int (the root seed of every agent), got "
                f"{type(self.random_state).__name__}"
            )

    def _settings(self, sizes):
        """The run's settings from public quantities (``federated.defaults``), checked."""
        self._check_params()
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
        """The public start point (numpy)."""
        return to_numpy(canonical_point(self.space) if self.init_point is None
                        else self.init_point)

    def _injectivity_radius(self):
        """geomstats' injectivity radius at the start point; inf where not implemented."""
        try:
            radius = self.space.metric.injectivity_radius(to_backend(self._start()))
        except NotImplementedError:
            return math.inf
        return float(to_numpy(radius))

    @staticmethod
    def _split(datasets, groups):
        """The per-agent arrays, from a list or from X and scikit-learn's ``groups``."""
        if groups is None:
            if isinstance(datasets, np.ndarray) or not hasattr(datasets, "__len__"):
                raise TypeError(
                    "datasets must be a list of per-agent arrays (or pass X with groups=)"
                )
            return list(datasets)
        X = check_array(datasets, "X", min_ndim=1)
        groups = np.asarray(groups)
        if groups.shape != (len(X),):
            raise ValueError(f"groups must have shape ({len(X)},), got {groups.shape}")
        return [X[groups == label] for label in np.unique(groups)]

    def _check_agents(self, datasets):
        """Shape-only checks: every agent non-empty with the same record shape."""
        if len(datasets) == 0:
            raise ValueError("datasets must hold at least one agent, got none")
        arrays, shape = [], None
        for index, data in enumerate(datasets):
            data = to_numpy(data) if hasattr(data, "detach") else np.asarray(data, dtype=float)
            if data.ndim < 1 or len(data) == 0:
                raise ValueError(f"datasets[{index}] (agent {index}) is empty: "
                                 "every agent must hold at least one record")
            if shape is None:
                shape = data.shape[1:]
            elif data.shape[1:] != shape:
                raise ValueError(
                    f"datasets[{index}] (agent {index}) has records of shape {data.shape[1:]}, "
                    f"expected {shape} as agent 0"
                )
            arrays.append(data)
        return arrays

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
        budget = self._start_fit(self.epsilon, self.delta)
        arrays = self._check_agents(self._split(datasets, groups))
        sizes = [len(data) for data in arrays]
        settings = self._settings(sizes)
        event, (local_epsilon, local_delta, guarantee) = self._event(sizes, settings, budget)
        loss = self._make_loss()
        checked = []
        for index, data in enumerate(arrays):  # values, after the budget check
            try:
                checked.append(loss.check_data(to_backend(data)))
            except (ValueError, TypeError) as error:
                raise type(error)(f"datasets[{index}] (agent {index}): {error}") from None
        start = self._start()
        clip_norm = self.clip_norm
        if clip_norm is None:
            with quiet_numerics(), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                norms = [infer_clip_norm(loss, data, to_backend(start)) for data in checked]
            warnings.warn("clip_norm was inferred from the agents' data (largest per-sample "
                          "gradient norm at the initial point); this bound is not private.",
                          PrivacyLeakWarning, stacklevel=2)
            clip_norm = max(norms)
        run = self.run_spec(sizes, checked, clip_norm, (local_epsilon, local_delta))
        reservation = budget.reserve(event)
        try:
            history = self._run_engine(run)
        finally:  # the agents' replies left them: a run that raises is charged too
            reservation.spend(event)
        self.estimate_ = to_backend(run.release(history, settings.output))
        self._set_charged(budget, event, guarantee, (local_epsilon, local_delta), settings)
        self.noise_multipliers_ = [plan.noise_multipliers for plan, _ in run.plans]
        self.history_ = _public_history(history, self.accountant, self.record_failures)
        self.clip_norm_ = clip_norm
        return self

    def _run_engine(self, run):
        """The rounds' history from the engine ``self.engine``."""
        if self.engine == "flower":
            from geomstats_dp.federated.flower_app import run_flower

            return run_flower(run)
        return run_local(run)

    def _event(self, sizes, settings, budget):
        """The run's event (checked against ``budget``) and its local target."""
        target = self._local_target(sizes, settings)
        guarantee = target[2]
        event = ApproxDPEvent(guarantee.epsilon, guarantee.delta,
                              label=f"PriRFed ({self.accountant}, {settings.local_method})")
        budget.check(event)
        return event, target

    def _set_charged(self, budget, event, guarantee, local_guarantee, settings):
        """The fitted attributes of what was charged, and the run's settings."""
        self.budget_, self.events_, self.guarantee_ = budget, (event,), guarantee
        self.local_epsilon_, self.local_delta_ = local_guarantee
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
        budget = self._start_fit(self.epsilon, self.delta)
        sizes = [check_positive_int(size, f"sizes[{i}]") for i, size in enumerate(sizes)]
        settings = self._settings(sizes)
        seed = (int(self.random_state) if self.random_state is not None
                else int(np.random.SeedSequence().generate_state(1, np.uint32)[0]))
        if self.clip_norm is None:
            raise ValueError("clip_norm must be given for a deployment (no data to infer it)")
        if estimator is None:
            config = _flat_config(self, settings)
        elif isinstance(estimator, str) and ":" in estimator:
            config = {"estimator": estimator}
        else:
            raise ValueError(f"estimator must be 'module:function', got {estimator!r}")
        event, (local_epsilon, local_delta, guarantee) = self._event(sizes, settings, budget)
        budget.spend(event)
        self._set_charged(budget, event, guarantee, (local_epsilon, local_delta), settings)
        self.clip_norm_ = self.clip_norm
        sizes_text = ",".join(str(size) for size in sizes)
        return dict(config, sizes=sizes_text, seed=seed, out=str(out),
                    **{"output": settings.output,
                       "round-timeout": float(self.round_timeout or 0)})

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

    def _batch_size(self, sizes):
        """The agents' DP-RSGD batch size: ``batch_size``, or the default for the
        smallest agent."""
        return self.batch_size or _defaults.default_batch_size(min(sizes))

    def _agent_events(self, settings, local_epsilon, local_delta, sizes):
        """The local events of each distinct agent size, smallest first, at clip norm 1
        (the noise multipliers do not depend on C)."""
        batch_size = self._batch_size(sizes)
        return [self._plan(settings, local_epsilon, local_delta, size, 1.0,
                           batch_size)[0].events
                for size in sorted(set(sizes))]

    def _local_target(self, sizes, settings):
        """(local epsilon, local delta, total guarantee), after the batch-size check."""
        batch_size = self._batch_size(sizes)
        if settings.local_method == "rsgd" and batch_size > min(sizes):
            raise ValueError(
                f"batch_size must be <= the smallest agent's size {min(sizes)}, got {batch_size}"
            )
        if self.accountant != "end_to_end":
            return local_target(self.epsilon, self.delta, len(sizes), settings.n_sampled,
                                settings.n_rounds, self.accountant)
        return self._end_to_end_target(sizes, settings)

    def _end_to_end_target(self, sizes, settings):
        """The end-to-end accountant (public sampling) calibrated through the local plans."""

        def events_of(local_epsilon):
            return self._agent_events(settings, local_epsilon, self.delta, sizes)

        setting = (len(sizes), settings.n_sampled, settings.n_rounds)
        local_epsilon, total = end_to_end_local_target(events_of, self.epsilon, self.delta,
                                                       *setting)
        round_epsilon = max(prirfed_end_to_end_epsilon(events, *setting[:2], 1, self.delta)
                            for events in events_of(local_epsilon))
        return local_epsilon, self.delta, FederatedGuarantee(
            total, self.delta, round_epsilon, self.delta, "end_to_end")

    def run_spec(self, sizes, datasets, clip_norm=None, local_guarantee=None):
        """The run an engine executes, from public quantities (and the agents' data).

        Parameters
        ----------
        sizes : list of int
            The agents' public sizes n_i.
        datasets : list or dict or None
            Agent index -> checked records; None on a server that holds no data
            (deployment), or a dict with one agent on that agent's machine.
        clip_norm : float, optional
            Default ``self.clip_norm``.
        local_guarantee : (float, float), optional
            The agents' (epsilon, delta), when already calibrated by ``fit``.

        Returns
        -------
        run : RunSpec
        """
        settings = self._settings(sizes)
        clip_norm = self.clip_norm if clip_norm is None else clip_norm
        local_epsilon, local_delta = local_guarantee or self._local_target(sizes, settings)[:2]
        batch_size = self._batch_size(sizes)
        plans = [self._plan(settings, local_epsilon, local_delta, size, clip_norm, batch_size)
                 for size in sizes]
        return RunSpec(loss=self._make_loss(), datasets=datasets, plans=plans,
                       sizes=list(sizes), start=self._start(),
                       entropy=_entropy(self.random_state), estimator=self,
                       settings=settings)

    def record_ledgers(self, sizes):
        """RDP ledgers that bound one record's privacy loss in a run on agents of ``sizes``.

        A record is seen only by its own agent, in at most each of the T rounds, by the
        agent's local Gaussian releases: the T-fold composition of the agent's local events
        (exact with every agent sampled; an upper bound with fewer, for every accountant,
        since RDP is a supremum over neighbours and over the public participations). From
        public quantities only (the sizes, the settings, epsilon, delta); the noise
        multipliers do not depend on C, which is not stated. Used by the private search
        (``federated.search_split``).

        Parameters
        ----------
        sizes : list of int
            The agents' public sizes n_i.

        Returns
        -------
        ledgers : tuple of tuple of GaussianEvent
            One per distinct agent plan; a record's RDP at each order is the largest of
            them.
        """
        settings = self._settings(sizes)
        local_epsilon, local_delta = self._local_target(sizes, settings)[:2]
        return tuple(dict.fromkeys(  # one ledger per distinct plan
            tuple(dataclasses.replace(event, n_steps=event.n_steps * settings.n_rounds,
                                      sensitivity=None, noise_std=None,
                                      label=f"PriRFed record, {settings.n_rounds} rounds")
                  for event in events)
            for events in self._agent_events(settings, local_epsilon, local_delta, sizes)
        ))

    def _plan(self, settings, local_epsilon, local_delta, size, clip_norm, batch_size):
        """One agent's calibrated strategy and step size (``federated.local_methods``)."""
        return LOCAL_METHODS[settings.local_method].plan(
            local_epsilon, local_delta, size, settings.local_steps, clip_norm, batch_size,
            int(self.space.dim), self.step_size)


class RunSpec:
    """Everything an engine needs for one run (checked data, plans, seeds)."""

    def __init__(self, loss, datasets, plans, sizes, start, entropy, estimator, settings):
        self.loss = loss
        self.datasets = datasets
        self.plans = plans
        self.sizes = sizes
        self.start = start
        self.entropy = entropy
        self.space = estimator.space
        self.n_rounds = settings.n_rounds
        self.n_sampled = settings.n_sampled
        self.local_steps = settings.local_steps
        self.output = settings.output
        self.aggregation = estimator.aggregation
        self.round_timeout = estimator.round_timeout
        self.verbose = estimator.verbose
        self.record_failures = estimator.record_failures
        self.injectivity_radius = estimator._injectivity_radius()

    def sample_agents(self):
        """The agents of every round: s of N without replacement, from the server's seed."""
        rng = np.random.default_rng(server_seed(self.entropy))
        n_agents = len(self.sizes)
        return [np.sort(rng.choice(n_agents, self.n_sampled, replace=False)).tolist()
                for _ in range(self.n_rounds)]

    def train(self, round_index, agent, start):
        """Agent ``agent``'s reply in round ``round_index`` (numpy)."""
        plan, step_size = self.plans[agent]
        with stage_group(f"PriRFed round {round_index} agent {agent}"):
            return local_train(self.loss, self.datasets[agent], plan.strategy,
                               self.local_steps, step_size, start,
                               agent_seed(self.entropy, round_index, agent),
                               direction_bound=self.direction_bound(plan.strategy,
                                                                    self.sizes[agent]))

    def direction_bound(self, strategy, size):
        """The radius local noisy gradients are projected onto: ``strategy.signal_bound``
        where the injectivity radius at the start is infinite (SPD matrices with the
        affine-invariant metric, hyperbolic and Euclidean spaces: an unbounded noisy step
        there can overflow the next point); None elsewhere, where the exponential map is
        bounded and a capped step near the injectivity radius would land near the cut
        locus (on the sphere, at the antipode) instead of wrapping around. None also with
        ``output="shrunk"``: its factor takes the replies' noise as Gaussian of norm
        ``round_noise``, which a cap would shrink with the signal (measured: the EMG
        federation at epsilon 0.1 ended 4.62 from the mean capped, 3.20 uncapped), and its
        one round from the public start is itself bounded by the shrinkage."""
        if self.output == "shrunk" or not math.isinf(self.injectivity_radius):
            return None
        return strategy.signal_bound(size)

    def report(self, round_index, n_replies):
        """With ``verbose``, print the round's progress (no agent identities)."""
        if not self.verbose:
            return
        replies = f": {n_replies} of {self.n_sampled} replies" if self.record_failures else ""
        print(f"PriRFed round {round_index + 1}/{self.n_rounds}{replies}")

    def aggregate(self, start, agents, replies):
        """The next server point from the replies received (numpy)."""
        if not replies:
            return start
        weights = np.array([self.sizes[agent] for agent in agents], dtype=float)
        with quiet_numerics():
            point = aggregate(self.space, to_backend(np.stack(replies)),
                              to_backend(weights / weights.sum()), to_backend(start),
                              self.aggregation)
        return to_numpy(point)

    def release(self, history, output):
        """The released point from the rounds' points (post-processing).

        "last": Option 1; "random": a round drawn uniformly by the server's seed (Option
        2); "average": the Karcher mean (equal weights, started at the last point) of the
        round points from the first round that moved the server's point by no more than
        the noise explains (``settled_round``): the earlier rounds carry the start
        point's bias; "shrunk": the last round's step from the point it started from,
        shrunk by the noise it carries (``aggregation.shrink_step``, ``round_noise``).
        """
        if output == "last":
            return history[-1]["point"]
        if output == "shrunk":
            previous = history[-2]["point"] if len(history) > 1 else self.start
            with quiet_numerics():
                point = shrink_step(self.space, to_backend(history[-1]["point"]),
                                    to_backend(previous), self.round_noise())
            return to_numpy(point)
        if output == "random":
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


def run_local(run, fail=None):
    """The in-process engine: rounds in sequence; agents in turn, or in threads when
    ``run.round_timeout`` is set (replies later than it count as failed).

    ``fail``, for tests, maps (round, agent) to a fault (``federated.local.inject_fault``).
    """
    history, point = [], run.start
    for round_index, sampled in enumerate(run.sample_agents()):
        jobs = {agent: functools.partial(_train_or_fail, run, round_index, agent, point,
                                         (fail or {}).get((round_index, agent)))
                for agent in sampled}
        if run.round_timeout is None:
            outcomes = {agent: _outcome(job) for agent, job in jobs.items()}
        else:
            outcomes = _in_threads(jobs, run.round_timeout)
        agents = [agent for agent in sampled if outcomes.get(agent) is not None]
        point = run.aggregate(point, agents, [outcomes[agent] for agent in agents])
        failed = [agent for agent in sampled if agent not in agents]
        history.append({"sampled": sampled, "failed": failed, "point": point})
        run.report(round_index, len(agents))
    return history


def _train_or_fail(run, round_index, agent, point, fault):
    inject_fault(fault)
    return run.train(round_index, agent, point)


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


def _public_history(history, accountant, record_failures=True):
    """``history_``: who was sampled is withheld when the accountant assumes it secret;
    who failed, also when ``record_failures`` is False."""
    if accountant in AMPLIFYING_ACCOUNTANTS:
        return [{"point": record["point"]} for record in history]
    if not record_failures:
        return [{key: value for key, value in record.items() if key != "failed"}
                for record in history]
    return history


def _flat_config(estimator, settings):
    """The run configuration of a squared-distance PriRFed on a sphere."""
    from geomstats.geometry.hypersphere import Hypersphere

    if (not isinstance(estimator.space, Hypersphere) or estimator.loss is not None
            or estimator.init_point is not None):
        raise ValueError("without estimator='module:function', a deployment describes only "
                         "a Hypersphere with the squared distance loss (loss=None) from the "
                         "default start (init_point=None)")
    step_size = estimator.step_size
    if step_size is not None and not isinstance(step_size, (int, float)):
        raise ValueError("a callable step_size needs estimator='module:function'")
    return {"dim": int(estimator.space.dim), "epsilon": float(estimator.epsilon),
            "delta": float(estimator.delta), "n-rounds": settings.n_rounds,
            "n-sampled": settings.n_sampled, "local-steps": settings.local_steps,
            "local-method": settings.local_method, "clip-norm": float(estimator.clip_norm),
            "batch-size": int(estimator.batch_size or 0), "step-size": float(step_size or 0),
            "aggregation": estimator.aggregation, "accountant": estimator.accountant}


def _entropy(random_state):
    if random_state is None:
        return np.random.SeedSequence().entropy
    return int(random_state)

