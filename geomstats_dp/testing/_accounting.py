"""The ledger against an independent composition of the stages a fit released.

The composition itself is ``testing._composition``; how it composes:

Nothing here calls the package's own accountants (``geomstats_dp.privacy``'s
composition code); the ledger's claim is read from it only to be compared. The stages
(``privacy.stages``) are composed from what each states (law, scale, sensitivity,
sampling rate) with dp-accounting and closed forms:

- Full-batch Gaussian stages only: Gaussian DP, mu = sqrt(sum (sensitivity / std)^2)
  (Dong, Roth & Su 2022), epsilon(delta) by the exact conversion of Balle & Wang (2018).
- Otherwise the privacy-loss distribution (dp-accounting's PLD, pessimistic estimate).
  A Gaussian stage of sensitivity Delta and sampling rate q enters as the add/remove pair
  N(0, s^2) against (1 - q) N(0, s^2) + q N(Delta, s^2) (both directions). With q = 1 it
  is the Gaussian mechanism under any adjacency; under replace-one with a batch drawn
  without replacement it is the tight dominating pair (Zhu, Dong & Wang 2022). dp-accounting's
  own REPLACE_ONE relation is never used: its PLD doubles the given sensitivity while its
  RDP accountant does not. A pure stage (Laplace, discrete Laplace, exponential
  mechanism) of epsilon = sensitivity / scale (the exponential mechanism's stated
  epsilon) enters as the PLD of randomized response, which dominates every
  (epsilon, 0)-DP mechanism (Kairouz, Oh & Viswanath 2015). At delta = 0 the pure
  epsilons add.
- A private selection (Papernot & Steinke 2022): a run's RDP is composed from its
  stages (alpha Delta^2 / (2 s^2) for a full-batch Gaussian, dp-accounting's Poisson
  subsampled Gaussian bound, randomized response's for a pure stage); the best of K runs
  by dp-accounting's ``_compute_rdp_repeat_and_select`` (their Thm. 2 and 6), converted by
  dp-accounting's ``compute_epsilon``.
- PriRFed end to end (public agent sampling): one record is in its agent's local run in
  k ~ Binomial(T, s/N) rounds, so delta(epsilon) = sum_k P(k) delta_k(epsilon), delta_k
  the PLD of k local runs.

Stage groups (``privacy.stages.stage_group``) name where a stage belongs: "search run
<k> training" / "search run <k> validation" (a run of a private search) and "PriRFed
round <r> agent <i>" (an agent's local run).
"""

import collections
import math
import re

import numpy as np

from geomstats_dp.privacy.accountant import compose
from geomstats_dp.privacy.events import (
    ApproxDPEvent,
    GaussianEvent,
    PureEvent,
    SelectionEvent,
)
from geomstats_dp.testing._composition import (
    _stage_key,
    independent_epsilon,
    public_sampling_epsilon,
    selection_epsilon,
    stages_pld,
    stages_rdp,
)
from geomstats_dp.testing._recording import record_fit

# the ledger may lie this far below the independent value (the PLD's pessimistic
# discretisation and the root finders' tolerances), never further
BELOW_ATOL, BELOW_RTOL = 2e-3, 1e-3
_RUN = re.compile(r"search run (\d+) (training|validation)")
_AGENT = re.compile(r"PriRFed round (\d+) agent (\d+)")
_ANY_AGENT = re.compile(r"agent (\d+)")


def _groups(stages, pattern):
    """{match groups: [stages]} for stages whose label contains ``pattern``; and the rest."""
    grouped, rest = collections.defaultdict(list), []
    for stage in stages:
        match = pattern.search(stage.label)
        if match is None:
            rest.append(stage)
        else:
            grouped[match.groups()].append(stage)
    return grouped, rest


def _ledger_kind(events, fitted=None):
    """"selection", "federated" (PriRFed's end-to-end event), "approx" (an (epsilon,
    delta) event among the others, e.g. objective perturbation) or "plain"."""
    if any(isinstance(event, SelectionEvent) for event in events):
        return "selection"
    if any(isinstance(event, ApproxDPEvent) for event in events):
        return "federated" if hasattr(fitted, "local_epsilon_") else "approx"
    return "plain"


def approx_pays(noise_multiplier, event):
    """Whether the (epsilon, delta) ``event`` covers a full-batch Gaussian stage of
    ``noise_multiplier``: the Gaussian mechanism's epsilon at the event's delta is at most
    the event's (the event states a bound no tighter than the stage's noise gives)."""
    gaussian = compose((GaussianEvent(noise_multiplier),), event.delta).epsilon
    return gaussian <= event.epsilon * (1 + 1e-9)


def _delta_of(estimator, delta):
    if delta is not None:
        return delta
    return float(estimator.get_params(deep=False).get("delta", 1e-5) or 1e-5)


def _claimed(events, delta, kind="plain"):
    """The ledger's own (epsilon, delta) claim, from the package's accountant."""
    if kind == "federated":
        (event,) = events
        return event.epsilon, event.delta
    return compose(events, delta).epsilon, delta


def _assert_not_below(claimed, independent, what):
    if claimed < independent * (1 - BELOW_RTOL) - BELOW_ATOL:
        raise AssertionError(
            f"{what}: the ledger claims epsilon={claimed:.6g}, below the independent "
            f"composition of the stages {independent:.6g}")


# -- the selection ----------------------------------------------------------------------

def _selection_of(events):
    selections = [event for event in events if isinstance(event, SelectionEvent)]
    if len(selections) != 1:
        raise AssertionError(f"check_ledger_composition: a search charges one "
                             f"SelectionEvent, got {len(selections)}")
    return selections[0]


def _part_rdp(stages):
    """RDP of one part of a run: its stages composed, those of different agents (a
    federated run and score) in parallel, a record being in one agent's data."""
    grouped, rest = _groups(stages, _ANY_AGENT)
    rdp = stages_rdp(rest)
    if grouped:
        rdp = rdp + np.max(np.stack([stages_rdp(group) for group in grouped.values()]),
                           axis=0)
    return rdp


def _run_rdps(runs, parallel):
    """Each run's RDP: the larger of its parts' (``parallel``: a record is in one part,
    of one agent), or the composition of all its stages."""
    rdps = []
    for parts in runs.values():
        if parallel:
            rdps.append(np.max(np.stack([_part_rdp(part) for part in parts.values()]),
                               axis=0))
        else:
            rdps.append(stages_rdp([stage for part in parts.values() for stage in part]))
    return rdps


def _runs(stages):
    """{run: {part: [stages]}} of a search's stages, and the stages outside the runs."""
    grouped, rest = _groups(stages, _RUN)
    runs = collections.defaultdict(dict)
    for (run, part), members in grouped.items():
        runs[int(run)][part] = members
    return runs, rest


def _selection_independent(stages, events, delta, parallel=True):
    selection = _selection_of(events)
    runs, rest = _runs(stages)
    if not runs:  # K = 0 under the Poisson law: the selection released nothing
        return independent_epsilon(rest, delta)
    return selection_epsilon(_run_rdps(runs, parallel), selection.mean, selection.shape,
                             delta, stages_rdp(rest) if rest else None)


# -- PriRFed -----------------------------------------------------------------------------

def _federation(fitted):
    """(n_rounds, n_agents, n_sampled, accountant) of a fitted PriRFed."""
    return (fitted.n_rounds_, len(fitted.noise_multipliers_), fitted.n_sampled_,
            fitted.accountant)


def _local_runs(stages):
    """{agent: the stages of its local run in the first round it took part in}."""
    grouped, rest = _groups(stages, _AGENT)
    if rest:
        raise AssertionError(f"check_ledger_composition: PriRFed stage {rest[0].label!r} "
                             "is outside every agent's local run")
    runs = {}
    for (round_index, agent), members in sorted(grouped.items(),
                                                key=lambda item: int(item[0][0])):
        runs.setdefault(int(agent), members)
    return runs


def _federated_independent(local_runs, fitted, delta):
    """The end-to-end epsilon (public sampling) of the dearest agent's local run."""
    n_rounds, n_agents, n_sampled, _ = _federation(fitted)
    return max(public_sampling_epsilon(stages_pld(run), n_rounds, n_sampled / n_agents,
                                       delta)
               for run in local_runs.values())


# -- the checks ------------------------------------------------------------------------

def _match_stages(stages, events, where, exhaustive=True):
    """Every stage is charged by one unit of an event of ``events`` with its noise
    multiplier and sampling rate (Gaussian) or its epsilon (pure), and (``exhaustive``)
    every unit of the events by one stage."""
    units = []
    for event in events:
        if isinstance(event, GaussianEvent):
            units += [("gaussian", event.noise_multiplier, event.sampling_rate)] * event.n_steps
        elif isinstance(event, PureEvent):
            units.append(("pure", event.epsilon, 1.0))
        elif isinstance(event, ApproxDPEvent):
            units.append(("approx", event, 1.0))
        else:
            raise AssertionError(f"{where}: event {event!r} cannot charge a stage")  # noqa: TRY004
    for index, stage in enumerate(stages):
        kind, value, rate = _stage_key(stage)
        for position, (unit_kind, unit_value, unit_rate) in enumerate(units):
            if unit_kind == "approx" and kind == "gaussian" and rate == 1.0:
                if approx_pays(value, unit_value):
                    del units[position]
                    break
            elif (unit_kind == kind and math.isclose(unit_value, value, rel_tol=1e-6)
                    and math.isclose(unit_rate, rate, rel_tol=1e-9)):
                del units[position]
                break
        else:
            what = "noise multiplier" if kind == "gaussian" else "epsilon"
            raise AssertionError(
                f"{where}: stage {index} ({stage.label!r}, {stage.law}) has {what} "
                f"{value:.6g} and sampling rate {rate:.6g}, which no remaining ledger event "
                f"charges")
    if units and exhaustive:
        raise AssertionError(f"{where}: the ledger charges {len(units)} release(s) that no "
                             f"stage made, first {units[0]}")


def default_rtol(stages, events):
    """How far above the independent composition a sound ledger lies: 1e-3 for
    full-batch Gaussian stages only (exact Gaussian DP on both sides), 2.0 with a
    subsampled stage (the general RDP bound of sampling without replacement, Wang, Balle
    & Kasiviswanathan 2019, exceeds the optimal epsilon by a factor up to about 2.5 on
    small data), 0.3 otherwise (RDP or basic composition against the PLD)."""
    keys = [_stage_key(stage) for stage in stages]
    if any(kind == "gaussian" and rate < 1 for kind, _, rate in keys):
        return 2.0
    if (all(kind == "gaussian" for kind, _, _ in keys)
            and all(isinstance(event, GaussianEvent) for event in events)):
        return 1e-3
    return 0.3


def check_ledger_composition(estimator, X, y=None, *, delta=None, random_state=0,
                             rtol=None, recorded=None, predict=None, fit_params=None):
    """The ledger charges each stage of a fit, and its epsilon is the stages' composition.

    Property: every stage's noise multiplier (or pure epsilon) and sampling rate is
    charged by the ledger's events, one event unit per stage; and the ledger's claimed
    epsilon at ``delta`` is at least the independent composition of the stages (module
    notes), and at most ``1 + rtol`` times it (``default_rtol``). For a private search the runs' stages
    are checked against the SelectionEvent's candidates and score and composed as the
    best of K runs (a record in one part of the split); for PriRFed, each agent's local
    run against ``local_epsilon_`` and ``local_delta_`` (every accountant), and end to end
    over the Binomial(T, s/N) rounds of public sampling (the "end_to_end" accountant,
    and, never below only, the looser "public_sampling"; the accountants that assume the
    sampled agents hidden are checked on the local runs only).

    Parameters
    ----------
    estimator : PrivateEstimator
        Unfitted template.
    X, y : array-like
    delta : float, optional
        Default the estimator's ``delta``.
    random_state : int
    rtol : float, optional
        How far above the independent composition the ledger may lie; default
        ``default_rtol``.
    recorded : RecordedFit, optional
        A fit already recorded (``record_fit``) on (X, y).
    predict : array-like, optional
        Features to predict on after the fit (releases made at predict time).
    fit_params : dict, optional
        Public keyword arguments of ``fit`` (``sample_weight``).

    Raises
    ------
    AssertionError
        Naming the stage or the two epsilons.
    """
    recorded = recorded or record_fit(estimator, X, y, random_state=random_state,
                                      predict=predict, fit_params=fit_params)
    delta = _delta_of(estimator, delta)
    events, stages = tuple(recorded.events), recorded.stages
    kind = _ledger_kind(events, recorded.estimator)
    name = f"check_ledger_composition({type(estimator).__name__})"
    if kind == "selection":
        selection = _selection_of(events)
        runs, rest = _runs(stages)
        for run, parts in runs.items():
            for part, members in parts.items():
                _match_run_part(members, selection, part, f"{name}, run {run} {part}")
        _match_stages(rest, [event for event in events if event is not selection],
                      f"{name}, outside the runs")
        independent = _selection_independent(stages, events, delta)
    elif kind == "federated":
        fitted = recorded.estimator
        local_runs = _local_runs(stages)
        for agent, run in local_runs.items():
            local = independent_epsilon(run, fitted.local_delta_)
            _assert_not_below(fitted.local_epsilon_, local,
                              f"{name}: agent {agent}'s local run")
        if fitted.accountant not in ("end_to_end", "public_sampling"):
            return  # hidden sampling: each local run only
        independent = _federated_independent(local_runs, fitted, events[0].delta)
        if fitted.accountant == "public_sampling":  # from the local (epsilon, delta): loose
            _assert_not_below(events[0].epsilon, independent, name)
            return
    else:
        _match_stages(stages, recorded.made_events, name)
        independent = independent_epsilon(stages, delta)
    claimed, delta = _claimed(events, delta, kind)
    _assert_not_below(claimed, independent, name)
    if kind == "approx" and rtol is None:
        return  # an (epsilon, delta) event's bound: no Gaussian composition reproduces it
    rtol = default_rtol(stages, events) if rtol is None else rtol
    if claimed > independent * (1 + rtol) + BELOW_ATOL:
        raise AssertionError(f"{name}: the ledger claims epsilon={claimed:.6g}, more than "
                             f"1 + {rtol} times the independent composition "
                             f"{independent:.6g}")


def _match_run_part(stages, selection, part, where):
    """A run's training stages are one candidate's ledger, its validation stages the
    score's; per agent for a federated run (whose agents take part in some of the rounds
    the candidate ledger counts: every stage charged, not every step)."""
    grouped, rest = _groups(stages, _ANY_AGENT)
    training = part == "training"
    options = selection.candidates if training else (selection.score,)
    for group in [rest] * bool(rest) + list(grouped.values()):
        exhaustive = not grouped or not training
        if not any(_matches(group, option, exhaustive) for option in options):
            wanted = "candidate ledger" if training else "score event"
            raise AssertionError(f"{where}: stages {sorted({s.label for s in group})[:3]} "
                                 f"match no {wanted} of the SelectionEvent")


def _matches(stages, events, exhaustive=True):
    try:
        _match_stages(stages, events, "", exhaustive)
    except AssertionError:
        return False
    return True
