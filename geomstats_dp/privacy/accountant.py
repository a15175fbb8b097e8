"""Compose a ledger of events into one (epsilon, delta) guarantee, with the tightest rule.

Rules, tried in this order of preference (every candidate is a valid (epsilon, delta)
guarantee, so the smallest one is reported):

1. Full-batch Gaussian events only: exact Gaussian-DP composition, mu = sqrt(sum T/z^2)
   (Dong, Roth & Su 2022), converted exactly (Balle & Wang 2018). Nothing is lost.
2. Subsampled Gaussian events: Renyi-DP composition of autodp's amplification bounds
   (without replacement: Wang, Balle & Kasiviswanathan 2019; Poisson: Zhu & Wang 2019),
   converted with Balle et al. (2020, Thm. 21).
3. A private selection (``SelectionEvent``, Papernot & Steinke 2022) in the ledger: the
   RDP composition of everything (its bound is an RDP curve; at delta = 0 it is infinite).
   A selection with a public number of runs k_max differs from the best of K runs with
   probability tau = P[K > k_max] (``selection``): the RDP bound is converted at
   delta - (1 + e^epsilon) sum tau (``_truncated_rdp``).
4. Pure epsilon-DP events mixed with Gaussian ones: the smaller of
   (a) the Gaussian part by rule 1 or 2 plus the sum of the pure epsilons (basic
       composition of (eps_G, delta) with (eps_i, 0) releases), and
   (b) the RDP composition of everything, a pure epsilon-DP event entering through its RDP
       curve (Bun & Steinke 2016, Lemma 4: the RDP of randomized response).
   A ledger of pure events only gets the smaller of their sum and (b).

5. Generic (epsilon, delta) events (``ApproxDPEvent``, releases made with another tool) are
   never treated as Gaussian: they compose with each other by basic composition (epsilons
   and deltas add) or advanced composition (Dwork, Rothblum & Vadhan 2010: epsilon =
   sqrt(2 ln(1/delta') sum eps_i^2) + sum eps_i (e^eps_i - 1) at delta = sum delta_i +
   delta'), whichever is smaller, and with the rest of the ledger (stated at what is left
   of ``delta``) by basic composition. The split of ``delta`` is the best of a fixed grid.

``delta = 0`` only admits pure events (their epsilons add); a Gaussian event then costs an
infinite epsilon. All events of a ledger must share one adjacency.
"""

import functools
import math
from dataclasses import dataclass

from geomstats_dp._validation import check_probability
from geomstats_dp.privacy.events import (
    ApproxDPEvent,
    GaussianEvent,
    PureEvent,
    SelectionEvent,
    check_events,
    ledger_adjacency,
)
from geomstats_dp.privacy.gaussian_dp import gdp_epsilon
from geomstats_dp.privacy.pld import pld_epsilon
from geomstats_dp.privacy.renyi import ledger_epsilon
from geomstats_dp.privacy.selection import selection_truncation

METHODS = ("auto", "rdp", "pld")
_DELTA_SPLITS = (0.1, 0.25, 0.5, 0.75, 0.9)  # fractions of the slack given to delta'


@dataclass(frozen=True)
class Guarantee:
    """An (epsilon, delta)-DP guarantee and the accountant that gave it.

    Attributes
    ----------
    epsilon : float
    delta : float
    accountant : str
        "gdp" (exact Gaussian DP), "rdp", "pure" (sum of pure epsilons), "gdp+pure" or
        "rdp+pure" (basic composition of the Gaussian part with the pure part), "pld",
        or "empty"; with ApproxDPEvent releases, "<rest>+basic" or "<rest>+advanced"
        ("basic"/"advanced" alone when the ledger holds nothing else).
    """

    epsilon: float
    delta: float
    accountant: str


def compose(events, delta, method="auto"):
    """Compose a ledger of events into an (epsilon, delta) guarantee.

    Parameters
    ----------
    events : iterable of GaussianEvent or PureEvent
        All under the same adjacency.
    delta : float
        In [0, 1).
    method : {"auto", "rdp", "pld"}
        "auto": the tightest of the rules in the module notes. "rdp": Renyi-DP composition
        of the whole ledger (for comparison). "pld": the privacy-loss-distribution
        accountant of dp-accounting (optional dependency, see ``pld_epsilon``).

    Returns
    -------
    guarantee : Guarantee
    """
    events = check_events(events)
    delta = check_probability(delta, "delta", allow_zero=True)
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    return _compose(events, delta, method)


@functools.lru_cache(maxsize=4096)
def _compose(events, delta, method):
    """``compose`` on checked arguments, remembered: a pure function of the public,
    frozen events (a budget composes the same ledger on every fit of an estimator)."""
    ledger_adjacency(events)
    if not events:
        return Guarantee(0.0, delta, "empty")
    approx = tuple(event for event in events if isinstance(event, ApproxDPEvent))
    if approx:
        rest = tuple(event for event in events if not isinstance(event, ApproxDPEvent))
        return _compose_with_approx(rest, approx, delta, method)
    selections = any(isinstance(event, SelectionEvent) for event in events)
    if method == "pld" and selections:
        raise ValueError(
            "method='pld' does not cover a SelectionEvent (its bound is an RDP curve); "
            "use method='auto' or 'rdp'"
        )
    if method == "pld":
        return Guarantee(pld_epsilon(events, delta), delta, "pld")
    gaussians = tuple(event for event in events if isinstance(event, GaussianEvent))
    pure_total = math.fsum(event.epsilon for event in events if isinstance(event, PureEvent))
    if delta == 0:
        return Guarantee(math.inf if gaussians or selections else pure_total, delta, "pure")
    if selections:
        return _truncated_rdp(events, delta)
    whole = Guarantee(ledger_epsilon(events, delta), delta, "rdp")
    if method == "rdp":
        return whole
    split = _gaussian_part(gaussians, delta)
    if pure_total > 0:
        name = "pure" if not gaussians else f"{split.accountant}+pure"
        split = Guarantee(split.epsilon + pure_total, delta, name)
    return min((split, whole), key=lambda guarantee: guarantee.epsilon)


def compose_epsilon(events, delta, method="auto"):
    """Epsilon of a ledger of events at ``delta``, by the tightest valid rule.

    Parameters
    ----------
    events : iterable of GaussianEvent or PureEvent
        All under the same adjacency (replace-one by default).
    delta : float
        In [0, 1).
    method : {"auto", "rdp", "pld"}
        See ``compose``.

    Returns
    -------
    epsilon : float
        0.0 for an empty ledger; infinite for Gaussian events at delta = 0.

    Notes
    -----
    Full-batch Gaussians compose exactly (Gaussian DP); subsampled ones through RDP
    (autodp). A ledger with pure events gets the smaller of (a) the Gaussian part's
    epsilon plus the sum of the pure epsilons and (b) the RDP composition of everything,
    each pure epsilon-DP event entering through the RDP curve of randomized response.

    Examples
    --------
    >>> compose_epsilon([GaussianEvent(2.0, n_steps=100)], delta=1e-5)  # doctest: +SKIP
    """
    return compose(events, delta, method).epsilon


def _truncated_rdp(events, delta):
    """The RDP composition of a ledger with selections, at delta less their truncation.

    With tau the sum of the selections' P[K > k_max], the ledger is (epsilon(d), d +
    (1 + e^epsilon(d)) tau)-DP for every d (``selection`` module notes); epsilon(d)
    decreases in d. From d_0 = delta - (1 + e^epsilon(delta / 2)) tau >= delta / 2,
    d_1 = delta - (1 + e^epsilon(d_0)) tau >= d_0 meets d_1 + (1 + e^epsilon(d_1)) tau
    <= delta. Infinite if d_0 < delta / 2.
    """
    tau = math.fsum(selection_truncation(event) for event in events
                    if isinstance(event, SelectionEvent))
    if tau == 0:
        return Guarantee(ledger_epsilon(events, delta), delta, "rdp")
    rdp_delta = delta / 2
    for _ in range(2):
        epsilon = ledger_epsilon(events, rdp_delta)
        rdp_delta = delta - (1 + math.exp(min(epsilon, 700.0))) * tau
        if rdp_delta < delta / 2:
            return Guarantee(math.inf, delta, "rdp")
    return Guarantee(ledger_epsilon(events, rdp_delta), delta, "rdp")


def _gaussian_part(gaussians, delta):
    """Guarantee of the Gaussian events alone: exact GDP if none is subsampled, else RDP."""
    if all(not event.subsampled for event in gaussians):
        mu = math.sqrt(math.fsum(e.n_steps / e.noise_multiplier**2 for e in gaussians))
        return Guarantee(gdp_epsilon(mu, delta), delta, "gdp")
    return Guarantee(ledger_epsilon(gaussians, delta), delta, "rdp")


def approx_composition(approx, delta_prime=0.0):
    """Basic (``delta_prime = 0``) or advanced composition of (epsilon, delta) events.

    Parameters
    ----------
    approx : tuple of ApproxDPEvent
    delta_prime : float
        0 for basic composition; > 0 for advanced composition (Dwork, Rothblum & Vadhan
        2010, heterogeneous form).

    Returns
    -------
    epsilon, delta : float
        The composed guarantee.
    """
    delta = math.fsum(event.delta for event in approx)
    if delta_prime == 0:
        return math.fsum(event.epsilon for event in approx), delta
    squares = math.fsum(event.epsilon**2 for event in approx)
    if max(event.epsilon for event in approx) > _LARGEST_EXPONENT:
        return math.inf, delta + delta_prime  # e^epsilon overflows: no useful bound
    drift = math.fsum(event.epsilon * math.expm1(event.epsilon) for event in approx)
    return math.sqrt(2 * math.log(1 / delta_prime) * squares) + drift, delta + delta_prime


_LARGEST_EXPONENT = 700.0  # math.expm1 overflows a float beyond about 709.8


def _compose_with_approx(rest, approx, delta, method):
    """Best valid split of ``delta`` between the approx events, delta' and the rest."""
    slack = delta - math.fsum(event.delta for event in approx)
    if slack < 0:
        return Guarantee(math.inf, delta, "basic")
    candidates = [(0.0, slack)]  # basic composition, the rest at the whole slack
    if slack > 0:
        fractions = _DELTA_SPLITS + ((1.0,) if not rest else ())
        candidates += [(f * slack, (1 - f) * slack) for f in fractions]
    best = Guarantee(math.inf, delta, "basic")
    for delta_prime, rest_delta in candidates:
        epsilon, _ = approx_composition(approx, delta_prime)
        name = "advanced" if delta_prime > 0 else "basic"
        if rest:
            part = compose(rest, rest_delta, method)
            epsilon, name = epsilon + part.epsilon, f"{part.accountant}+{name}"
        if epsilon < best.epsilon:
            best = Guarantee(epsilon, delta, name)
    return best
