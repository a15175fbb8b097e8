"""The one place where a release adds its noise to a clipped statistic: a stage.

Every mechanism releases each noisy statistic through ``noisy_stage``: the clipped
statistic (the query, a function of the data), the noise already drawn for it, and the
public quantities that make the stage private (the law of the noise, its scale, the
query's sensitivity under the stated adjacency). Without an observer it returns
``statistic + noise`` and nothing else happens.

An observer (``observe_stages``, a context manager used by ``geomstats_dp.testing``)
sees every stage of a fit in order and chooses what is released. The conformance checks
use it to record the noise actually drawn against its stated scale, to replay a
dataset's releases on a neighbouring dataset (so that both runs query the same points)
and compare each stage's statistic with its stated sensitivity, and to build broken
twins (half the noise) for the audits. Stages that are not an additive noise (the
exponential mechanism of a private quantile) report their cost with ``discrete_stage``.
"""

import contextlib
import contextvars
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from geomstats_dp._backend import to_numpy

LAWS = ("gaussian", "laplace", "discrete_laplace", "discrete_gaussian", "exponential")

_OBSERVER = contextvars.ContextVar("geomstats_dp_stage_observer", default=None)


@dataclass(frozen=True)
class Stage:
    """One noisy release inside a fit, as an observer sees it.

    Parameters
    ----------
    label : str
        What is released (names the ledger event it belongs to).
    statistic : array-like or float
        The clipped statistic (the query's value on the data), before noise.
    noise : array-like or float
        The noise drawn for it (same shape); for ``"exponential"`` stages, None.
    law : {"gaussian", "laplace", "discrete_laplace", "discrete_gaussian", "exponential"}
        The law of the noise.
    scale : float
        The standard deviation of each coordinate ("gaussian", "discrete_gaussian") or
        the Laplace scale b ("laplace", "discrete_laplace"); for "exponential", epsilon.
    sensitivity : float
        The largest change of ``statistic`` between neighbouring datasets, in ``norm``
        (l2 for Gaussian noise, l1 for Laplace noise), under ``adjacency``.
    dim : int
        Number of independent noise coordinates (the manifold's dimension for tangent
        noise).
    norm : callable or None
        ``norm(difference)`` of two statistics (the Riemannian norm at the stage's base
        point for tangent statistics); None: the Euclidean (l2) norm of the array, the l1
        norm for Laplace laws, the largest entry's change (sup norm of the utilities) for
        "exponential".
    adjacency : str
        "replace_one", "add_remove", "user_level" or "label_level".
    sampling_rate : float
        Probability that a record enters this stage's query (1 for the full data).
    choice : object
        For "exponential" stages, the candidate the mechanism chose.
    dist : callable or None
        ``dist(statistic, other)``: the distance of two statistics where a difference
        has no meaning (a point of a manifold: the metric's distance); wins over ``norm``.
    group : str
        The part of a composite release the stage belongs to (``stage_group``; its
        prefixes, outermost first), "" outside any.
    """

    label: str
    statistic: Any
    noise: Any
    law: str
    scale: float
    sensitivity: float
    dim: int = 1
    norm: Callable | None = None
    adjacency: str = "replace_one"
    sampling_rate: float = 1.0
    choice: Any = None
    dist: Callable | None = None
    group: str = ""

    def release(self):
        """The value released without an observer: ``statistic + noise`` (or the choice)."""
        if self.law == "exponential":
            return self.choice
        return self.statistic + self.noise

    def public(self):
        """The stage's public description, equal on neighbouring datasets: (label, law,
        scale, sensitivity, dim, adjacency, sampling_rate)."""
        return (self.label, self.law, self.scale, self.sensitivity, self.dim,
                self.adjacency, self.sampling_rate)

    def distance(self, other):
        """The move of the statistic between two runs of this stage: ``dist`` of the two
        statistics, else ``measure`` of their difference."""
        if self.dist is not None:
            return float(self.dist(self.statistic, other.statistic))
        return self.measure(self.statistic - other.statistic)

    def measure(self, difference):
        """The size of ``difference`` (of two statistics, or the noise) in the stage's
        ``norm`` (default: l2; l1 for Laplace laws; the largest entry for "exponential")."""
        if self.norm is not None:
            return float(self.norm(difference))
        values = np.abs(np.asarray(to_numpy(difference), dtype=float)).ravel()
        if self.law == "exponential":
            return float(values.max(initial=0.0))
        return float(values.sum() if "laplace" in self.law else np.sqrt((values**2).sum()))


def observing():
    """Whether an observer is active in this context (``observe_stages``): code that
    releases without going through its stages (a compiled kernel) takes the route that
    does while one is."""
    return _OBSERVER.get() is not None


def noisy_stage(statistic, noise, *, label, law, scale, sensitivity, dim=1, norm=None,
                adjacency="replace_one", sampling_rate=1.0):
    """Release ``statistic + noise``: one stage of a mechanism (see module notes).

    Returns
    -------
    released : array-like or float
        ``statistic + noise``, or what an active observer returns for this stage.
    """
    observer = _OBSERVER.get()
    if observer is None:
        return statistic + noise
    return observer(Stage(label, statistic, noise, law, scale, sensitivity, dim, norm,
                          adjacency, sampling_rate))


def discrete_stage(choice, *, label, epsilon, sensitivity, utility=None,
                   adjacency="replace_one", dist=None):
    """Report a stage released by the exponential mechanism; returns ``choice``.

    ``utility`` (the candidates' utilities, array; or the centre of a continuous
    exponential mechanism such as the Riemannian Laplace law, with its ``dist``) is the
    statistic whose sensitivity is ``sensitivity``. An observer may replace the choice
    (a replay on a neighbour).
    """
    observer = _OBSERVER.get()
    if observer is None:
        return choice
    return observer(Stage(label, utility, None, "exponential", epsilon, sensitivity,
                          adjacency=adjacency, choice=choice, dist=dist))


@contextlib.contextmanager
def observe_stages(observer):
    """Within the block, every stage of this context is passed to ``observer(stage)``.

    ``observer`` returns the value to release (``stage.release()`` to change nothing;
    for an exponential stage ``stage.choice``).
    """
    token = _OBSERVER.set(observer)
    try:
        yield observer
    finally:
        _OBSERVER.reset(token)


@contextlib.contextmanager
def stage_group(prefix):
    """Within the block, an active observer sees every stage labelled ``"prefix: label"``.

    Names the part of a composite release a stage belongs to (a PriRFed round and agent,
    a search's run and split), so that the accounting checks can compose the stages as
    the release is stated to (``geomstats_dp.testing``). Without an observer it does
    nothing.
    """
    observer = _OBSERVER.get()
    if observer is None:
        yield
        return

    def relabel(stage):
        group = f"{prefix}: {stage.group}" if stage.group else prefix
        return observer(dataclasses.replace(stage, label=f"{prefix}: {stage.label}",
                                            group=group))

    with observe_stages(relabel):
        yield
