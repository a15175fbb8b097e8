"""The boundary between geomstats' backends and the numpy code that draws noise.

Noise is drawn from a numpy ``Generator`` (so that ``random_state`` means the same thing on
every backend) and computed in float64 numpy/scipy (some samplers need LAPACK routines that
geomstats' backends do not expose); it crosses into the active backend here, and only here.
"""

import contextlib
import logging
import math
import os
import warnings

import geomstats.backend as gs
import numpy as np
from scipy import special


def to_numpy(x):
    """Return a float64 numpy copy of a backend array (torch tensors included)."""
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    return np.array(x, dtype=np.float64)


def as_numpy(x):
    """Return a backend array as float64 numpy, without a copy when it already is one.

    For read-only use (input checks, base points of a draw); ``to_numpy`` copies.
    """
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    return np.asarray(x, dtype=np.float64)


def to_backend(x):
    """Return a numpy array as an array of the active geomstats backend (float64)."""
    return gs.from_numpy(np.asarray(x, dtype=np.float64, order="C"))


TORCH = gs.__name__.endswith("pytorch")
"""Whether the active backend is pytorch (a torch tensor's fused scaled sums are used)."""
if TORCH:
    import torch


def add_scaled(x, coefficient, y):
    """x + coefficient y for arrays of one shape and a float coefficient: one fused
    ``torch.add`` for torch tensors (one tensor call instead of two), the operators
    for numpy arrays."""
    if TORCH and not isinstance(x, np.ndarray):
        return torch.add(x, y, alpha=coefficient)
    return x + coefficient * y


def subtract_scaled(x, coefficient, y, out):
    """out[...] = x - coefficient y, for vectors of one shape, all numpy or all torch
    (``out`` may be a view of a larger array); returns ``out``."""
    if TORCH and not isinstance(x, np.ndarray):
        return torch.sub(x, y, alpha=coefficient, out=out)
    return np.subtract(x, coefficient * y, out=out)


class SecureGenerator:
    """The subset of ``numpy.random.Generator`` the library uses, fed by ``os.urandom``.

    Uniforms carry 53 random bits, so every draw consumes operating-system entropy and
    nothing can be replayed from a seed. A continuous law obtained by inverse transform of
    one uniform takes at most 2^53 values, whose gaps Mironov's (2012) attack exploits;
    following Holohan & Braghin (2021), each normal and gamma draw is the sum of two
    independent inverse-transform draws (normals: (N_1 + N_2) / sqrt(2); gammas of shape
    a: the sum of two of shape a / 2), so that no value is a known function of one
    uniform. Scalar scores go further (``model_selection.scores``: discrete noise on a
    grid, from ``bytes``).
    """

    def random(self, size=None):
        """Uniform on [0, 1) with 53 random bits."""
        count = int(np.prod(size)) if size is not None else 1
        words = np.frombuffer(os.urandom(8 * count), dtype=np.uint64) >> np.uint64(11)
        values = words.astype(np.float64) * 2.0**-53
        return values.reshape(size) if size is not None else float(values[0])

    def bytes(self, length):
        """``length`` random bytes."""
        return os.urandom(length)

    def uniform(self, low=0.0, high=1.0, size=None):
        """Uniform on [low, high)."""
        return low + (high - low) * self.random(size)

    def _open_uniform(self, size):
        """Uniform on (0, 1): inverse transforms need both ends excluded."""
        return (np.asarray(self.random(size)) * (2.0**53 - 1) + 0.5) * 2.0**-53

    def standard_normal(self, size=None):
        """Standard normal draws: (N_1 + N_2) / sqrt(2), each N_i by inverse transform."""
        values = (special.ndtri(self._open_uniform(size))
                  + special.ndtri(self._open_uniform(size))) / math.sqrt(2.0)
        return values if size is not None else float(values)

    def gamma(self, shape, scale=1.0, size=None):
        """Gamma draws: the sum of two of half the shape, each by inverse transform."""
        half = np.asarray(shape, dtype=np.float64) / 2
        return scale * (special.gammaincinv(half, self._open_uniform(size))
                        + special.gammaincinv(half, self._open_uniform(size)))

    def integers(self, low, high=None, size=None):
        """Integers uniform on [low, high) (rejection-free for ranges below 2**53)."""
        if high is None:
            low, high = 0, low
        return (low + np.floor(self.random(size) * (high - low))).astype(np.int64)

    def permutation(self, n):
        """A uniformly random permutation of range(n)."""
        return np.argsort(self.random(n), kind="stable")

    def choice(self, n, size=None, replace=True):
        """Indices drawn from range(n), with or without replacement."""
        if replace:
            return self.integers(0, n, size)
        count = int(np.prod(size)) if size is not None else 1
        picked = self.permutation(n)[:count]
        return picked.reshape(size) if size is not None else int(picked[0])


class BufferedNormals:
    """A generator whose standard normals are drawn ``block`` at a time.

    ``standard_normal(size)`` serves the next values of a buffer refilled by
    ``generator.standard_normal(block)``; other draws go to ``generator`` unchanged. A
    numpy ``Generator`` produces the same sequence of normals whatever the sizes it is
    asked for, so a stream that only draws normals yields exactly the values of the
    unbuffered generator, with one generator call per block instead of one per draw.

    The refills start at ``FIRST_REFILL`` normals and grow fourfold up to ``block``, so
    that a short run does not pay for a block it never uses. ``backend_normal`` serves the
    same sequence as arrays of the active backend, from one conversion of each refill: a
    pytorch run's noise crosses from numpy once per refill, not once per draw.

    A stream that shares its generator with other draws reads ahead only what it is told
    (``ahead=0``, then ``reserve``): a refill never draws more than the normals asked for
    plus those reserved, so the generator is left where unbuffered draws would leave it,
    and with nothing reserved the stream is the generator itself, one call per draw.

    Parameters
    ----------
    generator : numpy.random.Generator or SecureGenerator
    block : int
        Most normals drawn per refill.
    ahead : int, optional
        Normals that may be drawn ahead of the reads; unbounded by default.
    """

    FIRST_REFILL = 256

    def __init__(self, generator, block, ahead=math.inf):
        self.generator = generator
        self.block = block
        self._ahead = ahead
        self._refill = min(self.FIRST_REFILL, block)
        self._buffer = np.empty(0)
        self._next = 0
        self._converted = None  # the buffer in the active backend, made on first use
        self._padded = None  # [count, next start, rows [m, count + 1], next row]

    def standard_normal(self, size=None):
        """Standard normals of shape ``size`` (a view of the buffer; never served
        twice)."""
        flat = isinstance(size, (int, np.integer))  # served as the 1-D slice itself
        if size is None:
            count = 1
        elif flat:  # before math.prod: no exception to catch
            count = int(size)
        else:
            count = math.prod(size)  # np.prod costs microseconds on a tuple
        if self._next + count > self._buffer.size:
            self._fill(count)
        values = self._buffer[self._next : self._next + count]
        self._next += count
        if size is None:
            return float(values[0])
        return values if flat else values.reshape(size)

    def _fill(self, count):
        """A fresh buffer: the unread rest, then a refill, ``count`` values at least and
        no more ahead of the reads than allowed."""
        rest = self._buffer[self._next :]
        size = max(count - rest.size, min(self._refill, self._ahead))
        self._ahead = max(0, self._ahead - size)
        fresh = self.generator.standard_normal(size)
        self._buffer = np.concatenate([rest, fresh]) if rest.size else fresh
        self._next = 0
        self._converted = self._padded = None
        self._refill = min(4 * self._refill, self.block)

    def reserve(self, count):
        """Let the next ``count`` normals be drawn ahead: the caller guarantees that
        nothing else draws from the generator until they have been read."""
        self._ahead += count

    def backend_normal(self, count):
        """The next ``count`` standard normals of ``standard_normal``'s sequence, a backend
        vector (on pytorch a view of the buffer converted once per refill). Read-only
        use: the view is shared with the buffer."""
        if not TORCH:
            return to_backend(self.standard_normal(count))
        if self._next + count > self._buffer.size:
            self._fill(count)
        if self._converted is None:
            self._converted = to_backend(self._buffer)
        start = self._next
        self._next += count
        return self._converted[start : self._next]

    def backend_padded_normal(self, count):
        """(0, the next ``count`` normals of ``standard_normal``'s sequence), a backend
        vector [count + 1]: on pytorch a row of the rest of the buffer laid out in rows
        of ``count`` behind a zero, converted once (again only if the draws stop falling
        on its rows: another size, a refill). Read-only use."""
        if not TORCH:
            padded = np.zeros(count + 1)
            padded[1:] = self.standard_normal(count)
            return to_backend(padded)
        rows = self._padded
        if rows is None or rows[0] != count or rows[1] != self._next:
            if self._next + count > self._buffer.size:
                self._fill(count)
            available = (self._buffer.size - self._next) // count
            block = np.zeros((available, count + 1))
            block[:, 1:] = self._buffer[
                self._next : self._next + available * count].reshape(available, count)
            rows = self._padded = [count, self._next, to_backend(block), 0]
        row = rows[2][rows[3]]
        rows[3] += 1
        self._next += count
        rows[1] = self._next if rows[3] < rows[2].shape[0] else -1
        return row

    def __getattr__(self, name):
        return getattr(self.generator, name)


def get_rng(random_state=None, secure=False):
    """Return the random generator for ``random_state``.

    Parameters
    ----------
    random_state : None, int, numpy.random.Generator, SecureGenerator or BufferedNormals
        None draws fresh entropy; an int seeds a new PCG64 generator; a generator is used
        as it is (and advanced).
    secure : bool
        Draw every number from the operating system's entropy (``os.urandom``) instead of
        a pseudo-random generator; ``random_state`` must then be None.

    Returns
    -------
    rng : numpy.random.Generator or SecureGenerator
    """
    if secure:
        if random_state is not None and not isinstance(random_state, SecureGenerator):
            raise ValueError(
                "secure=True draws from the operating system's entropy; "
                f"random_state must be None, got {random_state!r}"
            )
        return SecureGenerator()
    if isinstance(random_state, (np.random.Generator, SecureGenerator, BufferedNormals)):
        return random_state
    if random_state is None or isinstance(random_state, (int, np.integer)):
        if isinstance(random_state, (int, np.integer)) and random_state < 0:
            raise ValueError(f"random_state must be non-negative, got {random_state}")
        return np.random.default_rng(random_state)
    raise TypeError(
        "random_state must be None, an int or a numpy.random.Generator, "
        f"got {type(random_state).__name__}"
    )


@contextlib.contextmanager
def quiet_numerics():
    """Silence floating-point warnings and log records while private data are processed.

    Whether numpy warns (overflow, invalid value) or geomstats logs ("Negative eigenvalue
    encountered in log", through the root logger) depends on the data values: such a
    message would tell neighbouring datasets apart outside the release. Non-finite
    per-sample gradients are zeroed by the clipping (``optim.clipping``). Log records of
    level WARNING and below are disabled process-wide for the duration (``logging`` has
    no per-thread switch).
    """
    previous = logging.root.manager.disable
    logging.disable(max(previous, logging.WARNING))
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            yield
    finally:
        logging.disable(previous)
