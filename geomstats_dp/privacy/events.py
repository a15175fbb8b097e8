"""Mechanism events: what one release costs, stated with its adjacency, sensitivity, noise.

Conventions (the same for every event, estimator and accountant):

- Adjacency is ``"replace_one"`` by default (two datasets of the same size n differ in one
  record), as in the papers; ``"add_remove"`` (one record added or removed) is the setting of
  Poisson subsampling.
- The *sensitivity* of a query is the largest norm of the change of its value between two
  adjacent datasets. A mean of n per-sample gradients clipped to norm C has replace-one
  sensitivity 2C/n (add/remove: C/n for a sum divided by a fixed n).
- The *noise multiplier* z of a Gaussian event is the standard deviation of the noise of ONE
  step divided by the sensitivity of that step's query (under the event's adjacency). For a
  subsampled step the query is the one computed on the sampled batch: for a batch mean of b
  clipped gradients sampled without replacement, z = noise_std / (2C/b).
"""

import math
from dataclasses import dataclass

from geomstats_dp._validation import (
    check_positive_finite,
    check_positive_int,
    check_probability,
)

SAMPLINGS = ("full", "without_replacement", "poisson")
ADJACENCIES = ("replace_one", "add_remove")
_CONSISTENCY_RTOL = 1e-9


def _check_choice(value, name, choices):
    if value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {value!r}")
    return value


def _check_optional_positive(value, name):
    return None if value is None else check_positive_finite(value, name)


def _check_label(label):
    if not isinstance(label, str):
        raise TypeError(f"label must be a str, got {type(label).__name__}")
    return label


@dataclass(frozen=True)
class GaussianEvent:
    """``n_steps`` Gaussian releases with the same noise multiplier and sampling scheme.

    Parameters
    ----------
    noise_multiplier : float
        z = noise standard deviation / sensitivity of one step's query (see module notes).
    n_steps : int
        Number of steps (releases) composed.
    sampling_rate : float
        Probability that a given record enters one step's query: b/n for a batch of b
        drawn without replacement from n records, the inclusion probability for Poisson
        sampling; 1.0 for the full batch.
    sampling : {"full", "without_replacement", "poisson"}
        How a step selects its records. "without_replacement" (a uniformly random batch of
        fixed size) is accounted under replace-one adjacency, "poisson" (each record
        independently) under add/remove adjacency.
    adjacency : {"replace_one", "add_remove"}
        Neighbouring relation of the guarantee; "poisson" requires "add_remove" and
        "without_replacement" requires "replace_one".
    sensitivity, noise_std : float, optional
        The step's sensitivity and noise standard deviation, stated for the record; when
        both are given, ``noise_std / sensitivity`` must equal ``noise_multiplier``.
    label : str
        Free text naming the release (estimator, step), shown in the ledger.
    """

    noise_multiplier: float
    n_steps: int = 1
    sampling_rate: float = 1.0
    sampling: str = "full"
    adjacency: str = "replace_one"
    sensitivity: float | None = None
    noise_std: float | None = None
    label: str = ""

    def __post_init__(self):
        fields = {
            "noise_multiplier": check_positive_finite(
                self.noise_multiplier, "noise_multiplier"
            ),
            "n_steps": check_positive_int(self.n_steps, "n_steps"),
            "sampling": _check_choice(self.sampling, "sampling", SAMPLINGS),
            "adjacency": _check_choice(self.adjacency, "adjacency", ADJACENCIES),
            "sensitivity": _check_optional_positive(self.sensitivity, "sensitivity"),
            "noise_std": _check_optional_positive(self.noise_std, "noise_std"),
            "label": _check_label(self.label),
        }
        fields["sampling_rate"] = _check_sampling_rate(
            self.sampling_rate, fields["sampling"]
        )
        _check_adjacency_of_sampling(fields["sampling"], fields["adjacency"])
        _check_noise_consistency(
            fields["noise_multiplier"], fields["sensitivity"], fields["noise_std"]
        )
        for name, value in fields.items():
            object.__setattr__(self, name, value)

    @classmethod
    def from_noise(cls, noise_std, sensitivity, **kwargs):
        """Build the event of a step with noise ``noise_std`` on a query of ``sensitivity``.

        Parameters
        ----------
        noise_std : float
            Standard deviation of one step's noise (per coordinate of an orthonormal basis).
        sensitivity : float
            Sensitivity of one step's query under the event's adjacency.
        **kwargs
            The other fields of GaussianEvent (n_steps, sampling_rate, ...).

        Returns
        -------
        event : GaussianEvent
        """
        noise_std = check_positive_finite(noise_std, "noise_std")
        sensitivity = check_positive_finite(sensitivity, "sensitivity")
        return cls(
            noise_std / sensitivity, sensitivity=sensitivity, noise_std=noise_std, **kwargs
        )

    @property
    def subsampled(self):
        """Whether a step sees a random part of the data (sampling rate below one)."""
        return self.sampling_rate < 1.0

    @property
    def mu(self):
        """Gaussian-DP parameter sqrt(n_steps) / z of the event without subsampling."""
        return math.sqrt(self.n_steps) / self.noise_multiplier


@dataclass(frozen=True)
class PureEvent:
    """A pure epsilon-DP release (the Laplace mechanism, or any (epsilon, 0)-DP step).

    Parameters
    ----------
    epsilon : float
        Its pure-DP parameter, under ``adjacency``.
    sensitivity, noise_scale : float, optional
        The query's sensitivity and the noise scale, stated for the record (the relation
        between them and epsilon depends on the mechanism, so it is not checked).
    label : str
        Free text naming the release.
    adjacency : {"replace_one", "add_remove"}
        Neighbouring relation of the guarantee.
    """

    epsilon: float
    sensitivity: float | None = None
    noise_scale: float | None = None
    label: str = ""
    adjacency: str = "replace_one"

    def __post_init__(self):
        fields = {
            "epsilon": check_positive_finite(self.epsilon, "epsilon"),
            "sensitivity": _check_optional_positive(self.sensitivity, "sensitivity"),
            "noise_scale": _check_optional_positive(self.noise_scale, "noise_scale"),
            "label": _check_label(self.label),
            "adjacency": _check_choice(self.adjacency, "adjacency", ADJACENCIES),
        }
        for name, value in fields.items():
            object.__setattr__(self, name, value)


@dataclass(frozen=True)
class ApproxDPEvent:
    """An (epsilon, delta)-DP release whose mechanism is not known to the accountant.

    For a release made with another tool: the accountant composes it by basic or advanced
    composition of (epsilon, delta)-DP guarantees, never as a Gaussian or an RDP curve.

    Parameters
    ----------
    epsilon : float
        Its epsilon, > 0, under ``adjacency``.
    delta : float
        Its delta, in [0, 1).
    label : str
        Free text naming the release.
    adjacency : {"replace_one", "add_remove"}
        Neighbouring relation of the guarantee.
    """

    epsilon: float
    delta: float
    label: str = ""
    adjacency: str = "replace_one"

    def __post_init__(self):
        fields = {
            "epsilon": check_positive_finite(self.epsilon, "epsilon"),
            "delta": check_probability(self.delta, "delta", allow_zero=True),
            "label": _check_label(self.label),
            "adjacency": _check_choice(self.adjacency, "adjacency", ADJACENCIES),
        }
        for name, value in fields.items():
            object.__setattr__(self, name, value)


@dataclass(frozen=True)
class SelectionEvent:
    """The best of a random number K of runs, K hidden (Papernot & Steinke 2022).

    Each run draws a candidate uniformly at random, fits it on a training split (the
    candidate's events) and scores the fit on a disjoint validation split (the score's
    events); only the best run (its candidate, release and score) is published. A
    replaced record lies in one split: a run's RDP at each order is the larger of the two
    (parallel composition), and the base run's RDP is the largest over the candidates
    (the candidate is drawn independently of the data). K follows the truncated negative
    binomial law of shape ``shape`` (Papernot & Steinke 2022, Thm. 2: 0 logarithmic,
    1 geometric) or, with ``shape = inf``, a Poisson law (Thm. 6). Accounted by RDP only
    (``geomstats_dp.privacy.selection``).

    Parameters
    ----------
    candidates : tuple of tuple of GaussianEvent or PureEvent
        One ledger per candidate: the events of one run's fit.
    score : tuple of GaussianEvent or PureEvent
        The events of one run's score on the validation split.
    mean : float
        E[K], >= 1.
    shape : float
        eta >= 0 of the truncated negative binomial law, or math.inf (Poisson).
    label : str
        Free text naming the search.
    adjacency : {"replace_one"}
        The splits are fixed public index sets, which needs a public n.
    max_runs : int, optional
        The public number of runs k_max of a search that always makes k_max runs and
        releases the best of the first min(K, k_max) (its time then does not reveal K);
        the accountant adds (1 + e^epsilon) P[K > k_max] to delta
        (``geomstats_dp.privacy.selection``). None: K runs.
    """

    candidates: tuple
    score: tuple
    mean: float
    shape: float = 0.0
    label: str = ""
    adjacency: str = "replace_one"
    max_runs: int = None

    def __post_init__(self):
        candidates = tuple(_check_run_events(run) for run in self.candidates)
        if not candidates:
            raise ValueError("candidates must hold at least one candidate's events")
        shape = self.shape
        if not (isinstance(shape, (int, float)) and (shape == math.inf or shape >= 0)):
            raise ValueError(f"shape must be a number >= 0 or math.inf, got {shape!r}")
        fields = {
            "candidates": candidates,
            "score": _check_run_events(self.score),
            "mean": check_positive_finite(self.mean, "mean"),
            "shape": float(shape),
            "label": _check_label(self.label),
            "adjacency": _check_choice(self.adjacency, "adjacency", ("replace_one",)),
            "max_runs": (None if self.max_runs is None
                         else check_positive_int(self.max_runs, "max_runs")),
        }
        if fields["mean"] < 1:
            raise ValueError(f"mean must be >= 1 (runs on average), got {self.mean}")
        for name, value in fields.items():
            object.__setattr__(self, name, value)


EVENT_TYPES = (GaussianEvent, PureEvent, ApproxDPEvent, SelectionEvent)


def _check_run_events(events):
    """A run's events: GaussianEvent or PureEvent under replace-one adjacency."""
    events = tuple(events)
    for index, event in enumerate(events):
        if not isinstance(event, (GaussianEvent, PureEvent)):
            raise TypeError(
                f"a selected run's events[{index}] must be a GaussianEvent or a PureEvent "
                f"(an RDP curve), got {type(event).__name__}"
            )
        if event.adjacency != "replace_one":
            raise ValueError(
                f"a selected run's events[{index}] has adjacency={event.adjacency!r}; the "
                "search splits a dataset of public size, under replace-one adjacency"
            )
    return events


def _check_sampling_rate(sampling_rate, sampling):
    if sampling == "full":
        if sampling_rate != 1.0:
            raise ValueError(
                f"sampling_rate must be 1.0 with sampling='full', got {sampling_rate}; "
                "choose sampling='without_replacement' or 'poisson' for a batch"
            )
        return 1.0
    rate = check_positive_finite(sampling_rate, "sampling_rate")
    if rate > 1.0:
        raise ValueError(f"sampling_rate must lie in (0, 1], got {rate}")
    return rate


def _check_adjacency_of_sampling(sampling, adjacency):
    if sampling == "poisson" and adjacency != "add_remove":
        raise ValueError(
            "sampling='poisson' is accounted under adjacency='add_remove' "
            f"(amplification by Poisson sampling needs it), got adjacency={adjacency!r}"
        )
    if sampling == "without_replacement" and adjacency != "replace_one":
        raise ValueError(
            "sampling='without_replacement' is accounted under adjacency='replace_one' "
            f"(a fixed batch size needs a fixed dataset size), got adjacency={adjacency!r}"
        )


def _check_noise_consistency(noise_multiplier, sensitivity, noise_std):
    if sensitivity is None or noise_std is None:
        return
    ratio = noise_std / sensitivity
    if abs(ratio - noise_multiplier) > _CONSISTENCY_RTOL * noise_multiplier:
        raise ValueError(
            f"noise_std / sensitivity = {noise_std} / {sensitivity} = {ratio} differs from "
            f"noise_multiplier={noise_multiplier}; build the event from one configuration "
            "(GaussianEvent.from_noise)"
        )


def check_events(events):
    """Return ``events`` as a tuple after checking each is an event of ``EVENT_TYPES``."""
    events = tuple(events)
    for index, event in enumerate(events):
        if not isinstance(event, EVENT_TYPES):
            raise TypeError(
                f"events[{index}] must be a GaussianEvent, a PureEvent, an ApproxDPEvent or "
                f"a SelectionEvent, got {type(event).__name__}"
            )
    return events


def ledger_adjacency(events):
    """The one adjacency shared by ``events`` (replace-one for an empty ledger).

    Raises
    ------
    ValueError
        If two events are stated under different adjacencies: a replace-one guarantee does
        not imply an add/remove one, and the converse costs a factor two (group privacy);
        account such releases in separate ledgers.
    """
    events = tuple(events)
    if not events:
        return "replace_one"
    first = events[0].adjacency
    for index, event in enumerate(events):
        if event.adjacency != first:
            raise ValueError(
                f"events[{index}] has adjacency={event.adjacency!r} but events[0] has "
                f"{first!r}; a ledger composes releases under one adjacency"
            )
    return first
