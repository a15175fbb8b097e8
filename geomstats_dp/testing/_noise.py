"""The noise a fit draws is the noise its ledger pays for (``check_noise_drawn``)."""

from collections import defaultdict

from scipy import stats

from geomstats_dp.testing._accounting import approx_pays
from geomstats_dp.testing._recording import record_fit

ALPHA = 1e-6
"""Level of each moment test (two-sided, one per stage label): a correct mechanism fails
one with probability below this."""

RTOL = 1e-9
"""Relative tolerance of the comparisons of stated and charged quantities (rounding)."""

GAUSSIAN_LAWS = ("gaussian", "discrete_gaussian")
LAPLACE_LAWS = ("laplace", "discrete_laplace")


def _close(a, b):
    return abs(a - b) <= RTOL * max(abs(a), abs(b))


def events_of(stage, events):
    """The ledger events of ``stage``: those labelled as it is, or ending ": <label>" (a
    gradient query's name, ``optim.NoisyQuery.name``)."""
    return [event for event in events
            if event.label == stage.label or event.label.endswith(f": {stage.label}")]


def noise_statistic(stage):
    """(size, degrees): ||n||^2 / scale^2 and ``dim`` for Gaussian laws (chi-square with
    ``dim`` degrees of freedom), ||n||_1 / scale and ``dim`` for Laplace laws
    (Gamma(``dim``, 1)), in the stage's norm; None for an exponential stage."""
    size = stage.measure(stage.noise) / stage.scale
    if stage.law in GAUSSIAN_LAWS:
        return size**2, stage.dim
    if stage.law in LAPLACE_LAWS:
        return size, stage.dim
    return None


def moment_interval(law, degrees):
    """The central 1 - ALPHA interval of the pooled noise statistic of ``degrees``
    coordinates: chi-square (Gaussian laws) or Gamma (Laplace laws); the discrete laws
    are tested as their continuous ones (scales well above their grid step)."""
    law = stats.chi2(degrees) if law in GAUSSIAN_LAWS else stats.gamma(degrees)
    return law.ppf(ALPHA / 2), law.isf(ALPHA / 2)


def charged_mismatch(stage, event):
    """Why ``event`` does not pay for ``stage``'s noise (a message), or None."""
    kind = type(event).__name__
    if stage.law in GAUSSIAN_LAWS:
        if kind == "ApproxDPEvent" and stage.sampling_rate == 1.0:
            multiplier = stage.scale / stage.sensitivity
            return None if approx_pays(multiplier, event) else (
                f"scale / sensitivity = {multiplier:.6g}: a Gaussian mechanism beyond the "
                f"ledger's (epsilon={event.epsilon:.6g}, delta={event.delta:.6g})")
        if kind != "GaussianEvent":
            return f"a {stage.law} stage charged as a {kind}"
        multiplier = stage.scale / stage.sensitivity
        if not _close(multiplier, event.noise_multiplier):
            return (f"scale / sensitivity = {stage.scale:.6g} / {stage.sensitivity:.6g} = "
                    f"{multiplier:.6g}, ledger noise multiplier {event.noise_multiplier:.6g}")
        if event.sensitivity is not None and not _close(stage.sensitivity, event.sensitivity):
            return (f"sensitivity {stage.sensitivity:.6g}, ledger sensitivity "
                    f"{event.sensitivity:.6g}")
        if not _close(stage.sampling_rate, event.sampling_rate):
            return (f"sampling rate {stage.sampling_rate:.6g}, ledger sampling rate "
                    f"{event.sampling_rate:.6g}")
        return None
    if kind != "PureEvent":
        return f"a {stage.law} stage charged as a {kind}"
    if stage.law == "exponential":
        if not _close(stage.scale, event.epsilon):
            return f"epsilon {stage.scale:.6g}, ledger epsilon {event.epsilon:.6g}"
    elif event.noise_scale is not None and not _close(stage.scale, event.noise_scale):
        return f"scale {stage.scale:.6g}, ledger noise scale {event.noise_scale:.6g}"
    elif stage.sensitivity / stage.scale > event.epsilon * (1 + RTOL):
        return (f"sensitivity / scale = {stage.sensitivity / stage.scale:.6g} above the "
                f"ledger epsilon {event.epsilon:.6g}")
    if event.sensitivity is not None and not _close(stage.sensitivity, event.sensitivity):
        return f"sensitivity {stage.sensitivity:.6g}, ledger sensitivity {event.sensitivity:.6g}"
    return None


def check_charged(recorded):
    """Every stage of ``recorded`` is paid for by a ledger event with its law, scale (or
    epsilon), sensitivity and sampling rate; every event by as many stages as its steps,
    or by none where the fit's mechanism declares it skippable
    (``Mechanism.skippable_events``: a skipped query, charged all the same).

    A stage of a composite release (labelled ``"part: label"`` by ``stage_group``: a
    search's run, a PriRFed agent), which no event names, is left out, and then the
    counts are not compared: the ledger states such a release as a whole (best of K runs,
    an end-to-end calibration), which the accounting checks compose
    (``check_ledger_composition``).

    Raises
    ------
    AssertionError
    """
    releases, composite = defaultdict(int), False
    for index, stage in enumerate(recorded.stages):
        candidates = events_of(stage, recorded.events)
        if not candidates and stage.group:  # a part of a composite release
            composite = True
            continue
        if not candidates:
            raise AssertionError(
                f"check_noise_drawn: stage {index} ({stage.label!r}) has no ledger event "
                f"(events: {[event.label for event in recorded.events]})")
        reasons = [charged_mismatch(stage, event) for event in candidates]
        if all(reasons):
            raise AssertionError(f"check_noise_drawn: stage {index} ({stage.label!r}): "
                                 f"{reasons[0]}")
        releases[candidates[0].label] += 1
    if composite:
        return
    for label in {event.label for event in recorded.made_events}:
        steps = sum(getattr(event, "n_steps", 1) for event in recorded.events
                    if event.label == label)
        if releases[label] != steps:
            raise AssertionError(
                f"check_noise_drawn: the ledger charges {steps} release(s) of {label!r}, "
                f"the fit made {releases[label]} stage(s) of it")


def check_noise_drawn(estimator, X, y=None, *, n_fits=5, random_state=0, predict=None,
                      fit_params=None):
    """The noise actually drawn at each stage has the stated law and scale, and the stated
    scale is the noise the ledger charged for.

    Over ``n_fits`` fits (random states ``random_state + i``), for each stage label, the
    noise's size in the stage's norm is pooled: sum ||n||^2 / scale^2 over the stages is
    chi-square with sum dim degrees of freedom for Gaussian laws (E ||n||^2 / (dim
    scale^2) = 1), sum ||n||_1 / scale is Gamma(sum dim) for Laplace laws
    (E |n| / scale = 1); each falls in its central 1 - ``ALPHA`` interval. In every fit,
    each stage is paid for by a ledger event of its label (``check_charged``): the same
    noise multiplier scale / sensitivity (Gaussian), noise scale or epsilon (Laplace,
    exponential), sensitivity and sampling rate, and each event by as many stages as its
    steps.

    Parameters
    ----------
    estimator : PrivateEstimator
        Unfitted template.
    X, y : array-like
    n_fits : int
    random_state : int
    predict : array-like, optional
        Features to predict on after each fit (releases made at predict time).
    fit_params : dict, optional
        Public keyword arguments of ``fit`` (``sample_weight``).

    Raises
    ------
    AssertionError
        Naming the stage, its label and the numbers.
    """
    pooled = defaultdict(lambda: [0.0, 0])
    for fit in range(n_fits):
        recorded = record_fit(estimator, X, y, random_state=random_state + fit,
                              predict=predict, fit_params=fit_params)
        check_charged(recorded)
        for stage in recorded.stages:
            statistic = noise_statistic(stage)
            if statistic is not None:
                pooled[stage.label, stage.law][0] += statistic[0]
                pooled[stage.label, stage.law][1] += statistic[1]
    for (label, law), (size, degrees) in pooled.items():
        low, high = moment_interval(law, degrees)
        if not low <= size <= high:
            moment = "||n||^2 / scale^2" if law in GAUSSIAN_LAWS else "||n||_1 / scale"
            raise AssertionError(
                f"check_noise_drawn: stage {label!r} ({law}): the noise drawn has "
                f"{moment} = {size / degrees:.4g} per coordinate over {degrees} "
                f"coordinates, expected 1 (interval [{low / degrees:.4g}, "
                f"{high / degrees:.4g}] at level {ALPHA})")
