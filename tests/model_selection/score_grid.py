"""The public grid of a discrete score, computed here from its definition (not the code's):
gamma = 2^(floor(log2(min(sensitivity, scale))) - 10), and the rounded statistic's move in
grid units, floor(sensitivity / gamma) + 1."""

import math


def grid(sensitivity, scale):
    """(gamma, k) of a statistic of ``sensitivity`` whose continuous noise scale is ``scale``."""
    step = 2.0 ** (math.floor(math.log2(min(sensitivity, scale))) - 10)
    return step, math.floor(sensitivity / step) + 1


def laplace_sensitivity(sensitivity, epsilon):
    """The sensitivity a discrete Laplace score states: gamma k, at scale Delta / epsilon."""
    step, units = grid(sensitivity, sensitivity / epsilon)
    return step * units
