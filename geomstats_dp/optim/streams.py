"""The random streams of a run: batch indices and noise, each drawn a block at a time.

A run's generator seeds two independent child streams, one for the batches and one for
the noise (``SeedSequence.spawn`` of four draws of the run's generator: the streams
follow the generator's state, so an advanced generator gives fresh streams). Each stream
is then read in the same order whether its draws are made one step at a time or a block
of steps at a time, so blocking changes the cost of a run, never its iterates: the noise
normals are drawn up to ``BLOCK_FLOATS`` values per call (``BufferedNormals``) and the
batches of ``block_steps`` steps at once (without replacement: by rejection of candidates
with a repeated index, ``DistinctBatches``). A ``SecureGenerator`` (operating-system
entropy, nothing to replay) serves both streams itself.

DP-RGD and DP-RSVRG draw from the run's generator itself, unsplit (their releases
predate the split streams): their noise is read through ``shared_stream``, which draws a
normal ahead only where the strategy has reserved it (the steps of the run or of an
epoch, before any other draw), so that it too reads blocks, leaving the generator where
one draw at a time leaves it.
"""

import numpy as np

from geomstats_dp._backend import BufferedNormals

BLOCK_FLOATS = 2**16
"""Normals (or Poisson uniforms) drawn per call: 512 KiB, a block of steps' worth."""

MAX_BLOCK_STEPS = 64
"""At most this many steps' batches are drawn at once."""


def split_streams(rng):
    """Return ``(batch_rng, noise_rng)``: independent streams for batches and noise.

    The child generators use numpy's SFC64 bit generator (a counter-based chaotic
    generator that passes the same statistical test batteries as the default PCG64),
    whose normals are cheaper to draw (timings: docs/benchmarks/optimizers.md, "Speed of
    the routes a user takes").

    Parameters
    ----------
    rng : numpy.random.Generator or SecureGenerator
        The run's generator; a ``Generator`` gives four draws to seed the two streams
        (its own stream is left for the run's other draws: random outputs, restarts).

    Returns
    -------
    batch_rng : numpy.random.Generator or SecureGenerator
    noise_rng : BufferedNormals
    """
    if isinstance(rng, np.random.Generator):
        seeds = np.random.SeedSequence(rng.integers(0, 2**63, size=4)).spawn(2)
        batch_rng, noise_rng = (np.random.Generator(np.random.SFC64(seed)) for seed in seeds)
    else:
        batch_rng = noise_rng = rng
    return batch_rng, BufferedNormals(noise_rng, BLOCK_FLOATS)


def shared_stream(rng):
    """The noise stream of a run whose other draws come from ``rng`` too: a
    ``BufferedNormals`` of ``rng`` that reads ahead only the normals reserved
    (``BufferedNormals.reserve``), at most ``BLOCK_FLOATS`` per call."""
    return BufferedNormals(rng, BLOCK_FLOATS, ahead=0)


def block_steps(n_samples):
    """Steps whose batches are drawn at once: ``MAX_BLOCK_STEPS``, fewer for large n
    (a Poisson block holds one uniform per sample and step)."""
    return max(1, min(MAX_BLOCK_STEPS, BLOCK_FLOATS // max(n_samples, 1)))


def distinct_by_rejection(n_samples, batch_size):
    """Whether ``DistinctBatches`` suits: b (b - 1) <= 2 n, so that b uniform indices are
    all distinct with probability about exp(-b (b - 1) / 2n) >= 1/e or more."""
    return batch_size * (batch_size - 1) <= 2 * n_samples


class DistinctBatches:
    """Batches of b distinct indices of range(n), uniformly, a block of steps at a time.

    Each candidate is the next b integers of the stream, uniform on range(n); a candidate
    with a repeated index is rejected, and conditioning on distinct entries leaves every
    ordered b-tuple of distinct indices equally likely: the law of
    ``rng.choice(n, b, replace=False)``. Candidates are read in stream order whatever the
    block (numpy's integers are the same sequence whatever the sizes asked for) and the
    unread ones are kept for the next block, so the batches are those of drawing one
    candidate at a time. A candidate is accepted with probability about
    exp(-b (b - 1) / 2n) (about 0.61 for the default b = sqrt(n)); the draws depend on
    the stream and on n and b, never on the data.

    Parameters
    ----------
    rng : numpy.random.Generator or SecureGenerator
    n_samples : int
    batch_size : int
        b, with ``distinct_by_rejection(n_samples, batch_size)``.
    """

    def __init__(self, rng, n_samples, batch_size):
        self.rng = rng
        self.n_samples = n_samples
        self.batch_size = batch_size
        self._candidates = np.empty((0, batch_size), dtype=np.int64)
        self._accepted = np.empty(0, dtype=bool)

    def draw(self, n_steps):
        """The next ``n_steps`` batches, list of numpy.ndarray of int, shape=[b]."""
        batches = []
        while len(batches) < n_steps:
            if self._candidates.shape[0] == 0:
                self._refill(2 * (n_steps - len(batches)))
            positions = np.flatnonzero(self._accepted)[: n_steps - len(batches)]
            batches.extend(self._candidates[positions])
            read = positions[-1] + 1 if len(batches) == n_steps else len(self._accepted)
            self._candidates, self._accepted = (
                self._candidates[read:], self._accepted[read:])
        return batches

    def _refill(self, count):
        """Draw ``count`` candidates and mark those without a repeated index."""
        self._candidates = np.asarray(
            self.rng.integers(0, self.n_samples, size=(count, self.batch_size)))
        ordered = np.sort(self._candidates, axis=1)
        self._accepted = np.all(ordered[:, 1:] != ordered[:, :-1], axis=1)
