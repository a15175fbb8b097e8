"""Exact discrete Laplace and discrete Gaussian noise on a public grid.

A scalar statistic released as ``statistic + noise`` in floating point is not private as
stated: the set of outputs reachable from a dataset depends on the statistic beyond what
the noise hides (Mironov 2012). Here the release is ``gamma (m + Z)``, computed exactly:

- ``gamma`` (``grid_step``), a public power of two below ``min(Delta, b) / 2**GRID_BITS``
  (Delta the sensitivity, b the noise scale), so that every grid value is an exact float;
- ``m = round(S / (count gamma))``, the statistic (an exact sum ``S`` of floats over a
  public ``count``) rounded to the grid in exact rational arithmetic (``rounded_to_grid``);
- ``Z`` an integer drawn exactly from the discrete Laplace law, P(Z = z) proportional to
  exp(-|z| / t), or the discrete Gaussian law, P(Z = z) proportional to
  exp(-z^2 / (2 sigma^2)), by the samplers of Canonne, Kamath & Steinke (2020,
  Algorithms 1-3): rejection sampling from Bernoulli(exp(-x)) draws with x rational, fed by
  uniform integers built from the generator's random bytes (``RandomBits``). No floating-point operation is
  made on a random quantity.

Guarantee (replace-one or add/remove, whatever the statistic's): if the exact statistic
moves by at most Delta between neighbours, the rounded one moves by at most
``k = floor(Delta / gamma) + 1`` grid units (``grid_sensitivity``). The discrete Laplace
release with ``t = k / epsilon`` is then exactly epsilon-DP: every output on the grid has
positive probability from every dataset, with ratio at most exp(epsilon). The discrete
Gaussian with ``sigma = z k'`` has the Renyi divergences of the continuous Gaussian of
noise multiplier z at integer sensitivity k' (Canonne, Kamath & Steinke 2020, Prop. 5);
its (epsilon, delta) curve is marginally above the continuous one at the same k, so the
scores state it at ``k' = k + 1`` (see ``model_selection.scores``).

Not covered: the rejection loops run for a time that grows with |Z|, and the exact sum
for one that depends on the values' float exponents (a fine timing observer is outside
the guarantee).
"""

import math
from fractions import Fraction

GRID_BITS = 10  # the grid step is at most 2**-10 of the sensitivity and of the noise scale


def grid_step(sensitivity, scale):
    """The public grid step: the largest power of two <= min(sensitivity, scale) / 2**GRID_BITS.

    Parameters
    ----------
    sensitivity, scale : float
        Positive: the statistic's sensitivity and the continuous noise scale it would get.

    Returns
    -------
    step : float
        A power of two.
    """
    _, exponent = math.frexp(min(sensitivity, scale))
    return math.ldexp(1.0, exponent - 1 - GRID_BITS)


def grid_sensitivity(sensitivity, step):
    """``floor(sensitivity / step) + 1``: the largest move, in grid units, of a statistic of
    this ``sensitivity`` rounded to the grid (each rounding errs by at most half a unit).

    ``sensitivity / step`` is exact (``step`` is a power of two), and floating-point rounding
    of the sensitivity itself never lowers the floor below the exact one.
    """
    return math.floor(sensitivity / step) + 1


def rounded_to_grid(values, count, step):
    """``round(sum(values) / (count step))``, exactly, as an int.

    Parameters
    ----------
    values : numpy.ndarray, shape=[n]
        Finite floats, summed exactly.
    count : int
        The public divisor.
    step : float

    Returns
    -------
    m : int
    """
    total = sum(map(Fraction, values.tolist()), Fraction(0))
    return round(total / (count * Fraction(step)))


class RandomBits:
    """Uniform integers from a generator's random bytes, fetched ``BLOCK`` bytes at a time.

    Parameters
    ----------
    rng : numpy.random.Generator or SecureGenerator
        Only ``rng.bytes`` is used.
    """

    BLOCK = 256

    def __init__(self, rng):
        self.rng = rng
        self._pool = 0
        self._size = 0

    def bits(self, count):
        """An integer of ``count`` uniform random bits."""
        while self._size < count:
            self._pool |= int.from_bytes(self.rng.bytes(self.BLOCK), "little") << self._size
            self._size += 8 * self.BLOCK
        value = self._pool & ((1 << count) - 1)
        self._pool >>= count
        self._size -= count
        return value

    def below(self, bound):
        """An integer uniform on {0, ..., bound - 1}, by rejection."""
        count = (bound - 1).bit_length()
        while True:
            value = self.bits(count)
            if value < bound:
                return value


def bernoulli_exp(numerator, denominator, bits):
    """A Bernoulli(exp(-gamma)) draw, gamma = numerator / denominator >= 0 (integers;
    CKS 2020, Algorithm 1)."""
    while numerator > denominator:  # exp(-gamma) = exp(-1)^floor(gamma) exp(-frac(gamma))
        if not bernoulli_exp(1, 1, bits):
            return False
        numerator -= denominator
    count = 1  # Bernoulli(gamma / count) draws until the first failure
    while bits.below(denominator * count) < numerator:
        count += 1
    return count % 2 == 1


def discrete_laplace(scale, bits):
    """An integer Z with P(Z = z) proportional to exp(-|z| / scale) (CKS 2020, Algorithm 2).

    Parameters
    ----------
    scale : Fraction
        t > 0.
    bits : RandomBits

    Returns
    -------
    z : int
    """
    numerator, denominator = scale.numerator, scale.denominator
    while True:
        remainder = bits.below(numerator)
        if not bernoulli_exp(remainder, numerator, bits):
            continue
        whole = 0
        while bernoulli_exp(1, 1, bits):
            whole += 1
        magnitude = (remainder + numerator * whole) // denominator
        negative = bits.bits(1) == 1
        if not (negative and magnitude == 0):
            return -magnitude if negative else magnitude


def discrete_gaussian(variance, bits):
    """An integer Z with P(Z = z) proportional to exp(-z^2 / (2 variance)) (CKS 2020,
    Algorithm 3).

    Parameters
    ----------
    variance : Fraction
        sigma^2 > 0.
    bits : RandomBits

    Returns
    -------
    z : int
    """
    scale = math.isqrt(math.floor(variance)) + 1  # floor(sigma) + 1
    while True:
        candidate = discrete_laplace(Fraction(scale), bits)
        excess = (abs(candidate) - variance / scale) ** 2 / (2 * variance)
        if bernoulli_exp(excess.numerator, excess.denominator, bits):
            return candidate
