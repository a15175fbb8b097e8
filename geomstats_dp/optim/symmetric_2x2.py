"""Closed-form spectral calculus of 2x2 symmetric matrices, in place of ``eigh``.

A symmetric W = [[m + d, b], [b, m - d]] has eigenvalues m -/+ r, r = sqrt(d^2 + b^2),
and W - m I = r R with R = [[d, b], [b, -d]] / r a reflection (R^2 = I) whose +1 and -1
eigenvectors are those of m + r and m - r. Hence for any function f of the eigenvalues

    f(W) = (f(m + r) + f(m - r)) / 2 I + (f(m + r) - f(m - r)) / 2 R = alpha I + beta W,

beta = (f(m + r) - f(m - r)) / (2 r), alpha = (f(m + r) + f(m - r)) / 2 - beta m. At a
repeated eigenvalue (r = 0, W = m I) the second term vanishes and beta is taken as 0: the
formula is exact there too. Against an ``eigh``-based f(W) the absolute error stays
within a few eps (|f(W)| + max |f'| |W|), the rounding an ``eigh`` itself moves through f,
near-repeated eigenvalues and a condition number of 1e8 included (the tests).

The operations are arithmetic operators, so the same code runs on the arrays of every
backend (any batch shape) and on Python floats: a few vectorised operations where
``numpy.linalg.eigh`` makes one LAPACK call per matrix plus a fixed cost per call (timings:
docs/benchmarks/optimizers.md, "Speed of the routes a user takes").
"""


def spectrum_2x2(first, second, off):
    """Eigenvalues of W = [[first, off], [off, second]] and the pieces the closed form needs.

    Parameters
    ----------
    first, second, off : array-like, shape=[...]
        W[0, 0], W[1, 1] and W[1, 0] of symmetric matrices (the lower triangle, as
        ``eigh`` reads it).

    Returns
    -------
    low, high : array-like, shape=[...]
        The eigenvalues m - r <= m + r.
    mean : array-like, shape=[...]
        m, the half trace.
    gap : array-like, shape=[...]
        r, half the distance between the eigenvalues (>= 0).
    """
    mean = (first + second) / 2
    half_difference = (first - second) / 2
    gap = (half_difference * half_difference + off * off) ** 0.5
    return mean - gap, mean + gap, mean, gap


def function_coefficients(f_low, f_high, mean, gap):
    """(alpha, beta) with f(W) = alpha I + beta W, from f at the two eigenvalues.

    Parameters
    ----------
    f_low, f_high : array-like, shape=[...]
        f(m - r) and f(m + r).
    mean, gap : array-like, shape=[...]
        m and r (``spectrum_2x2``).

    Returns
    -------
    alpha, beta : array-like, shape=[...]
    """
    # r = 0: W = m I, f(W) = f(m) I; the divisor 1 keeps beta = 0 / 1 = 0 exactly
    beta = (f_high - f_low) / (2 * gap + (gap == 0))
    return (f_high + f_low) / 2 - beta * mean, beta

