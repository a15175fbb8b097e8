"""The random streams of a run: batch indices and noise, each drawn a block at a time.

A run's generator seeds two independent child streams, one for the batches and one for
the noise (``SeedSequence.spawn`` of four draws of the run's generator: the streams
follow the generator's state, so an advanced generator gives fresh streams). Each stream
is then read in the same order whether its draws are made one step at a time or a block
of steps at a time, so blocking changes the cost of a run, never its iterates: the noise
normals are drawn up to ``BLOCK_FLOATS`` values per call (``BufferedNormals``) and the
batches of ``block_steps`` steps at once. A ``SecureGenerator`` (operating-system
entropy, nothing to replay) serves both streams itself.
"""

import numpy as np

from geomstats_dp._backend import BufferedNormals

BLOCK_FLOATS = 2**16
"""Normals (or Poisson uniforms) drawn per call: 512 KiB, a block of steps' worth."""

MAX_BLOCK_STEPS = 64
"""At most this many steps' batches are drawn at once."""


def split_streams(rng):
    """Return ``(batch_rng, noise_rng)``: independent streams for batches and noise.

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
        batch_rng, noise_rng = (np.random.default_rng(seed) for seed in seeds)
    else:
        batch_rng = noise_rng = rng
    return batch_rng, BufferedNormals(noise_rng, BLOCK_FLOATS)


def block_steps(n_samples):
    """Steps whose batches are drawn at once: ``MAX_BLOCK_STEPS``, fewer for large n
    (a Poisson block holds one uniform per sample and step)."""
    return max(1, min(MAX_BLOCK_STEPS, BLOCK_FLOATS // max(n_samples, 1)))
