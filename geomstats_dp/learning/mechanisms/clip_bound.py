"""The clip bound of the gradient and tangent releases.

``clip_norm`` of a release is a public float, ``AutoClip`` (a private quantile of the
gradient norms at the start, its own pure-DP event) or None (read from the data: not
private, with a PrivacyLeakWarning).
"""

from dataclasses import dataclass

from geomstats_dp.learning.mechanisms.loss_checks import infer_clip_norm
from geomstats_dp.optim.oracle import gradient_norms
from geomstats_dp.privacy.quantile import private_quantile, quantile_event


@dataclass(frozen=True)
class AutoClip:
    """``clip_norm="auto"``: release a private ``quantile`` of the per-sample gradient
    norms at the start (exponential mechanism on a public grid, ``privacy.quantile``),
    spending ``epsilon`` as its own pure-DP event.

    Attributes
    ----------
    quantile : float
        In (0, 1).
    epsilon : float
        > 0, the epsilon of the quantile release.
    """

    quantile: float
    epsilon: float

    def event(self, label):
        """The ledger event of the quantile release, labelled ``label: clip_norm='auto'``."""
        return quantile_event(self.epsilon, ": ".join(filter(None, (label,
                                                                     "clip_norm='auto'"))))


def clip_events(clip_norm, label):
    """The events of resolving ``clip_norm`` before a release: the quantile's, or ()."""
    return (clip_norm.event(label),) if isinstance(clip_norm, AutoClip) else ()


def resolve_clip_norm(clip_norm, loss, data, start, rng, label):
    """The clip bound of the first step at ``start``.

    Parameters
    ----------
    clip_norm : float, AutoClip or None
        A public bound; a private quantile of the gradient norms at ``start``; or None,
        the largest gradient norm (not private, with a PrivacyLeakWarning).
    loss : PerSampleLoss
    data : array-like, shape=[n_samples, ...]
    start : array-like, shape=[*space.shape]
    rng : numpy.random.Generator
    label : str
        The release's label (that of the quantile's event).

    Returns
    -------
    clip_norm : float
    """
    if isinstance(clip_norm, AutoClip):
        event = clip_norm.event(label)
        return private_quantile(gradient_norms(loss, data, start), clip_norm.quantile,
                                event.epsilon, rng, label=event.label)
    if clip_norm is None:
        return infer_clip_norm(loss, data, start)
    return clip_norm
