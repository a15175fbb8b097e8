"""The random streams of a run: batch indices and noise, each drawn a block at a time.

A run's generator is split into two independent child streams (``Generator.spawn``), one
for the batches and one for the noise. Each stream is then read in the same order whether
its draws are made one step at a time or a block of steps at a time, so blocking changes
the cost of a run, never its iterates: the noise normals of ``BLOCK_FLOATS`` values are
drawn in one call (``BufferedNormals``) and the batches of ``block_steps`` steps at once.
Generators that cannot spawn (``SecureGenerator``: operating-system entropy, nothing to
replay) serve both streams themselves.
"""

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
        The run's generator; a ``Generator`` spawns two children (its own stream is left
        for the run's other draws: indices, random outputs, restarts).

    Returns
    -------
    batch_rng : numpy.random.Generator or SecureGenerator
    noise_rng : BufferedNormals
    """
    try:
        batch_rng, noise_rng = rng.spawn(2)
    except (AttributeError, TypeError):  # no seed sequence to spawn from
        batch_rng = noise_rng = rng
    return batch_rng, BufferedNormals(noise_rng, BLOCK_FLOATS)


def block_steps(n_samples):
    """Steps whose batches are drawn at once: ``MAX_BLOCK_STEPS``, fewer for large n
    (a Poisson block holds one uniform per sample and step)."""
    return max(1, min(MAX_BLOCK_STEPS, BLOCK_FLOATS // max(n_samples, 1)))
