"""One DP-RSGD step of the squared distance in torch, on the sphere S^d and on SPD(n),
n >= 3 (affine-invariant metric, possibly scaled), for ``optim.compiled_torch``.

The formulas of the numba kernels (``compiled_sphere``, ``compiled_spd``: those of the
loop), written on tensors for a batch of b records at once and without branches on data
values: where the loop branches (a record of non-finite norm adds nothing, the Taylor
coefficients of a tiny step, the renormalisation of a sphere point) both sides are formed
and ``torch.where`` picks one. Two branches cannot be written so: a step whose point the
noise sampler rejects (the loop raises), and on SPD(n) the flooring of the spectrum
(``onto_space.floor_spectrum``) once the bound kept on the condition number exceeds
``SPD_CONDITION_LIMIT``. A step reports them as ``ok`` (False: the loop raises there) and
``stop`` (True: run this step again eagerly, ``eager=True``, where the floor is applied
as the loop applies it). A state is a tuple of tensors: the point (sphere), or the point,
its factor F (F F^T = P), F^-1 and the bound on its condition number (SPD).
"""

import math

import torch
from geomstats import algebra_utils

from geomstats_dp.optim.onto_space import (
    SPD_CONDITION_LIMIT,
    SPHERE_TOLERANCE,
    floor_spectrum,
)

ORDER = 4  # the Taylor order of ``geodesics.SphereGeodesics.step``
COS_TAYLOR = tuple(algebra_utils.cos_close_0["coefficients"][:ORDER])
SINC_TAYLOR = tuple(algebra_utils.sinc_close_0["coefficients"][:ORDER])


def clip_coefficients(norms, prefactors, clip_norm):
    """prefactor_i min(1, C / |g_i|), 0 where |g_i| is not finite (``clip_factors``), and
    the mask of finite norms."""
    finite = torch.isfinite(norms)
    return torch.where(finite, prefactors * (clip_norm / torch.maximum(norms, clip_norm)),
                       0.0), finite


def cap(direction, norm, bound):
    """direction min(1, B / |direction|), 0 for a norm that is not finite, unchanged for
    B = inf (``step_cap.cap_norm``)."""
    factor = torch.where(torch.isfinite(norm), bound / torch.maximum(norm, bound), 0.0)
    return direction * torch.where(torch.isinf(bound), 1.0, factor)


def _dot(left, right):
    """<left, right> over the last axis, as a product and a sum (a reduction the compiler
    fuses, where ``@`` on vectors calls an external BLAS kernel with its dispatch)."""
    return (left * right).sum(-1)


def _matmul(left, right):
    """left @ right for small matrices [..., n, n], as a broadcast product and a sum
    (fused by the compiler, see ``_dot``)."""
    return (left[..., :, :, None] * right[..., None, :, :]).sum(-2)


def _sandwich(outer, inner):
    """outer inner outer^T."""
    return _matmul(_matmul(outer, inner), outer.mT)


def _taylor(squared, coefficients):
    """sum_k c_k squared^k."""
    total, power = 0.0, 1.0
    for coefficient in coefficients:
        total = total + coefficient * power
        power = power * squared
    return total


def _angle_ratios(dots):
    """theta / sin theta and theta / tan theta of theta = arccos(dots), 1 and 1 where
    theta is not positive (``geodesics.sphere_log``)."""
    angle = torch.acos(torch.clamp(dots, -1.0, 1.0))
    positive = angle > 0
    safe = torch.where(positive, angle, 1.0)
    return (torch.where(positive, safe / torch.sin(safe), 1.0),
            torch.where(positive, safe / torch.tan(safe), 1.0))


class SphereSteps:
    """The steps on S^d (extrinsic coordinates [d + 1])."""

    def __init__(self, space, gather=None, device=None):
        self.size = int(space.dim) + 1

    @staticmethod
    def state(point):
        """(x,): a copy."""
        return (point.clone(),)

    @staticmethod
    def point(state):
        """x."""
        return state[0]

    @staticmethod
    def stops_first(state):
        """Whether a step from ``state`` stops: never."""
        return False

    def step(self, state, rows, prefactors, normals, eta, settings, eager=False):
        """(state after the step, ok, stop): ``settings`` = (C, 1, noise scale, B)."""
        (point,) = state
        direction = self.gradient(point, rows, prefactors, settings[0])
        noise, ok = self.noise(point, normals, settings[2])
        direction = direction + torch.where(settings[2] > 0, noise, 0.0)  # sigma 0: none
        direction = cap(direction, torch.linalg.vector_norm(direction), settings[3])
        ok = ok | (settings[2] == 0)  # no draw without noise
        return (self.exp_step(point, direction, -eta),), ok, torch.zeros_like(ok)

    @staticmethod
    def gradient(point, rows, prefactors, clip_norm):
        """sum_i prefactor_i clip_C(-Log_x(z_i)), each gradient projected at x."""
        towards, away = _angle_ratios(_dot(rows, point))
        gradients = away[:, None] * point - towards[:, None] * rows
        gradients = gradients - (_dot(gradients, point) / _dot(point, point))[:, None] * point
        coefficients, finite = clip_coefficients(
            torch.linalg.vector_norm(gradients, dim=-1), prefactors, clip_norm)
        return (coefficients[:, None] * torch.where(finite[:, None], gradients, 0.0)).sum(0)

    @staticmethod
    def noise(point, normals, scale):
        """(scale u, finite): u the pole transport of ``normals`` [d] to x
        (``PoleTransport.draw_one``); not finite where the sampler rejects x."""
        head, tail = point[0], point[1:]
        sign = torch.where(head >= 0, 1.0, -1.0)
        coefficient = _dot(normals, tail) / (1.0 + sign * head)
        first = coefficient * -(head + sign)
        draw = torch.cat([first.reshape(1), normals - coefficient * tail])
        return draw * scale, torch.isfinite(first)

    @staticmethod
    def exp_step(point, direction, coefficient):
        """Exp_x(c V), V projected at x (``SphereGeodesics.step``), renormalised where it
        left the sphere by more than ``SPHERE_TOLERANCE``."""
        along = _dot(direction, point)
        projection = along / _dot(point, point)
        squared = coefficient * coefficient * torch.clamp(
            _dot(direction, direction) - projection * along, min=0.0)
        large = squared >= algebra_utils.EPSILON
        norm = torch.sqrt(torch.where(large, squared, 1.0))
        even = torch.where(large, torch.cos(norm), _taylor(squared, COS_TAYLOR))
        odd = torch.where(large, torch.sin(norm) / norm, _taylor(squared, SINC_TAYLOR))
        odd = odd * coefficient
        moved = point * (even - odd * projection) + odd * direction
        length = torch.linalg.vector_norm(moved)
        away = torch.isfinite(length) & (length > 0) & ((length - 1).abs() > SPHERE_TOLERANCE)
        return torch.where(away, moved / length, moved)

    def interpolate(self, tracked, state, fraction, eager=False):
        """(Exp_a(t Log_a(w)) (``Geodesics.interpolate``), ok, stop)."""
        (average,), (point,) = tracked, state
        towards, away = _angle_ratios(_dot(point, average))
        work = fraction * (towards * point - away * average)
        ok = torch.ones((), dtype=torch.bool, device=point.device)
        return (self.exp_step(average, work, 1.0),), ok, ~ok


class SPDSteps:
    """The steps on SPD(n), n >= 3, the affine-invariant metric times ``scale``."""

    def __init__(self, space, gather, device):
        size = int(space.shape[-1])
        self.shape = (size, size)
        # (index, scales) of the noise's coordinates [n^2] (``_SymmetricCoordinates``)
        self.gather = tuple(torch.as_tensor(part, device=device) for part in gather)

    def state(self, point):
        """(P, F, F^-1, inf): the starting point's condition is unknown (the loop's)."""
        eigvals, eigvecs = torch.linalg.eigh(point)
        roots = torch.sqrt(eigvals)
        return (point.clone(), eigvecs * roots, eigvecs.T / roots[:, None],
                torch.full((), math.inf, dtype=point.dtype, device=point.device))

    @staticmethod
    def point(state):
        """P."""
        return state[0]

    @staticmethod
    def stops_first(state):
        """Whether a step from ``state`` stops whatever its direction: the bound on the
        condition number already exceeds ``SPD_CONDITION_LIMIT`` (a step multiplies it
        by at least 1; at the start of a run it is infinite)."""
        return not bool(state[3] <= SPD_CONDITION_LIMIT)

    def step(self, state, rows, prefactors, normals, eta, settings, eager=False):
        """(state after the step, ok, stop): ``settings`` = (C, sqrt(scale), noise scale,
        B). The direction is formed, capped and mapped in the whitened coordinates
        F^-1 V F^-T (the loop's tangent norm there, its exponential map from there)."""
        point, _, inverse, _ = state
        direction, ok = self.gradient(state, rows, prefactors, settings[0], settings[1])
        noise, drawn = self.noise(point, inverse, normals, settings[2])
        direction = direction + torch.where(settings[2] > 0, noise, 0.0)  # sigma 0: none
        direction = cap(direction, settings[1] * torch.linalg.matrix_norm(direction),
                        settings[3])
        moved, stop = self.whitened_map(state, -eta * direction, None, eager)
        return moved, ok & (drawn | (settings[2] == 0)), stop

    def gradient(self, state, rows, prefactors, clip_norm, norm_scale):
        """(F^-1 G F^-T, F^-1 finite), G = sum_i prefactor_i clip_C(-Log_P(X_i)): one
        ``eigh`` per record of F^-1 X_i F^-T (a record whose whitened matrix is not
        finite adds nothing)."""
        _, _, inverse, _ = state
        whitened = _sandwich(inverse, rows)
        finite = torch.isfinite(whitened).all(dim=(-2, -1))
        eye = torch.eye(self.shape[0], dtype=rows.dtype, device=rows.device)
        eigvals, eigvecs = torch.linalg.eigh(torch.where(finite[:, None, None], whitened,
                                                         eye))
        logs = torch.log(eigvals)
        norms = norm_scale * torch.linalg.vector_norm(logs, dim=-1)
        coefficients, kept = clip_coefficients(torch.where(finite, norms, math.nan),
                                               prefactors, clip_norm)
        logs = torch.where(kept[:, None], logs, 0.0) * -coefficients[:, None]
        return (_matmul(eigvecs * logs[:, None, :], eigvecs.mT).sum(dim=0),
                torch.isfinite(inverse).all())

    def noise(self, point, inverse, normals, scale):
        """(F^-1 N F^-T, drawn), N = scale L A L^T symmetrised
        (``SPDAffineTransport.draw_one``), L the Cholesky factor of P; not drawn where
        the sampler rejects P (not finite, or no Cholesky factor)."""
        index, scales = self.gather
        finite = torch.isfinite(point.sum())
        eye = torch.eye(self.shape[0], dtype=point.dtype, device=point.device)
        lower, info = torch.linalg.cholesky_ex(torch.where(finite, point, eye))
        draw = _sandwich(_matmul(inverse, lower),
                         (normals[index] * scales).reshape(self.shape))
        return (draw + draw.T) * (scale / 2), finite & (info == 0)

    def whitened_map(self, chain, whitened, power, eager):
        """(G G^T with its factors and bound, stop): G = F Q diag(h(m)), ``whitened`` =
        F^-1 V F^-T = Q diag(m) Q^T, h = exp(. / 2) (power None: Exp_P(V)) or
        (.)^(power / 2) (Exp_P(power Log_P(V))), as ``compiled_spd._whitened_map``.
        Where the bound exceeds ``SPD_CONDITION_LIMIT``: eagerly the loop's
        ``floor_spectrum`` (which raises what the loop raises at a point that is not
        finite), else ``stop``. A point that is not finite is kept: the next step's
        noise rejects it, as in the loop."""
        _, factor, inverse, bound = chain
        eye = torch.eye(self.shape[0], dtype=whitened.dtype, device=whitened.device)
        eigvals, eigvecs = torch.linalg.eigh(torch.where(
            torch.isfinite(whitened).all(), whitened, eye))
        halves = torch.exp(eigvals / 2) if power is None else eigvals ** (power / 2)
        factor = _matmul(factor, eigvecs * halves)
        inverse = _matmul(eigvecs.T / halves[:, None], inverse)
        point = _matmul(factor, factor.T)
        bound = bound * (halves.max() / halves.min()) ** 2
        stop = ~(bound <= SPD_CONDITION_LIMIT)
        if eager and bool(stop):
            floored, condition = floor_spectrum(point)
            if floored is not None:
                point, factor, inverse = floored
            bound = torch.full_like(bound, condition)
        return (point, factor, inverse, bound), stop

    def interpolate(self, tracked, state, fraction, eager=False):
        """(Exp_a(t Log_a(w)) of the running average a (``Geodesics.interpolate``), ok,
        stop)."""
        moved, stop = self.whitened_map(tracked, _sandwich(tracked[2], state[0]), fraction,
                                        eager)
        return moved, torch.ones_like(stop), stop
