"""The conformance checks on a mechanism alone: a minimal estimator around its spec.

A mechanism (``learning.mechanisms.Mechanism``: a frozen spec of public quantities with
``events()`` and ``release(data, weights, rng)``) is wrapped in ``MechanismEstimator``,
which does what every estimator of the package does around it (shape checks, the budget,
``run_release``, the fitted attributes) and nothing more, so that every check of
``check_private_estimator`` applies to the mechanism itself, built without an estimator.
"""

import dataclasses
import numbers
from typing import ClassVar

from sklearn.utils._param_validation import HasMethods

from geomstats_dp._validation import BUDGET, PROBABILITY, RANDOM_STATE, PositiveFinite
from geomstats_dp.learning import (
    PrivateEstimator,
    check_array,
    check_sample_count,
    check_shape,
)
from geomstats_dp.learning.mechanisms.clip_bound import AutoClip
from geomstats_dp.optim import PairedSamples, SquaredDistanceLoss
from geomstats_dp.privacy.accountant import compose_epsilon
from geomstats_dp.testing._case import Case

DEFAULT_DELTA = 1e-5
MAX_RESCALES = 50


def composed_epsilon(spec, delta=None):
    """The epsilon the spec's events compose to, at its delta (``delta``, else the spec's,
    else 1e-5)."""
    delta = delta or getattr(spec, "delta", None) or DEFAULT_DELTA
    return compose_epsilon(spec.events(), delta)


def _is_epsilon(name):
    return name == "epsilon" or name.endswith("_epsilon")


def rescaled(spec, factor):
    """``spec`` with every epsilon field (``epsilon``, ``*_epsilon``, an ``AutoClip``'s)
    multiplied by ``factor``: the same release at a scaled privacy target."""
    changes = {}
    for field in dataclasses.fields(spec):
        value = getattr(spec, field.name)
        if _is_epsilon(field.name) and isinstance(value, numbers.Real):
            changes[field.name] = value * factor
        elif isinstance(value, AutoClip):
            changes[field.name] = dataclasses.replace(value, epsilon=value.epsilon * factor)
    return dataclasses.replace(spec, **changes)


class MechanismEstimator(PrivateEstimator):
    """The minimal estimator of a mechanism spec, for ``geomstats_dp.testing``'s checks.

    ``fit`` checks the data's shapes (points of ``mechanism.space`` where the mechanism
    reads points, else rows), refuses a number of records other than the spec's public
    n (except under Poisson sampling, where n is private), and runs the mechanism through
    ``run_release`` with the spec's public weights.

    Parameters
    ----------
    mechanism : Mechanism
        A frozen spec (a dataclass with an ``epsilon`` field).
    epsilon : float, optional
        The release's epsilon: the spec's epsilon fields are scaled by epsilon over the
        epsilon its events compose to (``composed_epsilon``, ``rescaled``); None keeps
        the spec as built.
    delta : float, optional
        The delta of the budget the checks give a fit (None: the spec's, else 1e-5).
    budget : PrivacyBudget, optional
        Budget to charge; default the one active (``with budget:``), else a fresh one of
        the spec's epsilon and ``delta``.
    random_state : None, int or numpy.random.Generator
    secure : bool
        Draw the noise from the operating system's entropy.
    """

    _parameter_constraints: ClassVar[dict] = {
        "mechanism": [HasMethods(["events", "release"])],
        "epsilon": [PositiveFinite(), None],
        "delta": [*PROBABILITY, None],
        "budget": BUDGET,
        "random_state": RANDOM_STATE,
        "secure": ["boolean"],
    }

    def __init__(self, mechanism, epsilon=None, delta=None, budget=None,
                 random_state=None, secure=False):
        self.mechanism = mechanism
        self.epsilon = epsilon
        self.delta = delta
        self.budget = budget
        self.random_state = random_state
        self.secure = secure
        self._remember_budget()

    # what the worst-case neighbours and the domain checks read: the spec's public fields
    @property
    def space(self):
        """The spec's space (None for a mechanism of feature rows: PCA, DP-ALS)."""
        return getattr(self.mechanism, "space", None)

    @property
    def loss(self):
        return getattr(self.mechanism, "loss", None)

    @property
    def sampling(self):
        return getattr(self.mechanism, "sampling", None)

    @property
    def clip_norm(self):
        """The spec's public clip bound (None when it is released or read)."""
        value = getattr(self.mechanism, "clip_norm", None)
        return value if isinstance(value, numbers.Real) else None

    @property
    def radius(self):
        return getattr(self.mechanism, "radius", None)

    def _spec(self):
        spec = self.mechanism
        if self.epsilon is None:
            return spec
        own = composed_epsilon(spec, self.delta)
        if self.epsilon == own:
            return spec
        # composition is not linear in the shares: shrink until the events fit epsilon
        factor, scaled = self.epsilon / own, spec
        for _ in range(MAX_RESCALES):
            scaled = rescaled(spec, factor)
            found = composed_epsilon(scaled, self.delta)
            if found <= self.epsilon:
                return scaled
            factor *= self.epsilon / found * (1 - 1e-9)
        raise ValueError(f"no rescaling of {type(spec).__name__} composes to epsilon="
                         f"{self.epsilon}")

    def _check_input(self, X, y):
        points = self.space is not None and (
            self.loss is None or isinstance(self.loss, SquaredDistanceLoss))
        if points and y is None:
            data = check_shape(self.space, X, lazy=True)
        else:
            data = check_array(X, "X", lazy=True)
        check_sample_count(len(data), "X")
        if y is not None:
            data = PairedSamples(data, check_array(y, "y", min_ndim=1))
        n_public = self.mechanism.n_samples
        if self.sampling != "poisson" and len(data) != n_public:
            raise ValueError(f"X must hold the mechanism's n_samples={n_public} records, "
                             f"got {len(data)}")
        return data

    def fit(self, X, y=None):
        """Run the mechanism on (X, y) and set its fitted attributes.

        Parameters
        ----------
        X : array-like, shape=[n_samples, ...]
        y : array-like, shape=[n_samples, ...], optional
            Paired with the rows of X for a loss of pairs.

        Returns
        -------
        self
        """
        self._validate_params()
        for name in [name for name in vars(self) if name.endswith("_")
                     and not name.startswith("_")]:
            del self.__dict__[name]
        spec = self._spec()
        delta = self.delta or getattr(spec, "delta", None) or DEFAULT_DELTA
        budget = self._start_fit(self.epsilon or composed_epsilon(spec, delta), delta)
        data = self._check_input(X, y)
        return self._fit_release(budget, type(spec).__name__, spec, data,
                                 getattr(spec, "weights", None))


def mechanism_case(mechanism, X, y=None, *, name=None, **case_options):
    """A ``Case`` of the conformance checks for a mechanism built alone.

    Parameters
    ----------
    mechanism : Mechanism
        A frozen spec of the package's mechanisms or the user's own.
    X, y : array-like
        Small public data (``mechanism.n_samples`` records).
    name : str, optional
        The case's name; default the mechanism's class name.
    **case_options
        ``reference``, ``distance``, ``tolerance``, ``skipped``... of ``Case``.

    Returns
    -------
    case : Case
        Its estimator is ``MechanismEstimator(mechanism, epsilon=composed_epsilon(
        mechanism), delta=...)``; ``check_private_estimator(case.estimator, case.X, case.y)`` runs
        every check on the mechanism.
    """
    delta = getattr(mechanism, "delta", None)
    estimator = MechanismEstimator(mechanism, epsilon=composed_epsilon(mechanism, delta),
                                   delta=delta)
    return Case(name or type(mechanism).__name__, estimator, X, y, **case_options)
