"""Private principal components: PrivateERM on the sphere (k = 1) or the Stiefel manifold.

The loss of one record z (a row of X, scaled to norm <= ``data_norm``) at an orthonormal
basis W [p, k] is f(W; z) = -|W^T z|^2, minimised over the data by the leading
k-dimensional principal subspace (Han et al. 2024, principal eigenvector for k = 1).
Its Euclidean gradient is -2 z z^T W, and its Riemannian gradient

    grad f(W; z) = -2 (I - W W^T) z (W^T z)^T

is the same for the sphere's metric (k = 1) and for the Stiefel canonical metric (it is
horizontal, W^T grad = 0, where the canonical metric is Frobenius). Its norm is
2 |(I - W W^T) z| |W^T z| <= |z|^2 (the two factors are the legs of a right triangle
with hypotenuse |z|, and 2ab <= a^2 + b^2), attained when z makes an angle of 45 degrees
with span(W). So a public row-norm bound B gives the clip norm C = B^2, tighter by half
than the 2 B^2 of Han et al.
"""

import geomstats.backend as gs
import numpy as np
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.stiefel import Stiefel

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp._validation import (
    check_finite_array,
    check_positive_finite,
    check_positive_int,
    check_probability,
)
from geomstats_dp.learning._data import check_array, check_sample_count
from geomstats_dp.learning.erm import GRADIENT_FITTED, PrivateERM
from geomstats_dp.optim import PerSampleLoss
from geomstats_dp.privacy import GaussianEvent, calibrate_gaussian

# The Rayleigh quotient contracts at the rate of the eigengap, not at the unit rate of
# d^2 / 2: 6x the Frechet mean's steps (on digits and a spiked model, 4x and 8x were best)
PCA_ITER_FACTOR = 6
PCA_FITTED = GRADIENT_FITTED + ("components_", "mean_", "data_norm_", "n_features_in_")


def start_basis(n_features, n_components):
    """The fixed, data-independent start: an orthonormal basis drawn once with seed 0.

    Not a coordinate basis: on images, coordinate directions are often constant pixels,
    where every record's gradient vanishes (a saddle point the run never leaves).

    Returns
    -------
    basis : numpy.ndarray, shape=[n_features] (one component) or [n_features, k]
    """
    rng = np.random.default_rng(0)
    basis = np.linalg.qr(rng.standard_normal((n_features, n_components)))[0]
    return basis[:, 0] if n_components == 1 else basis


def scale_rows(X, bound):
    """Scale the rows of X longer than ``bound`` down to it (a per-record map)."""
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    return X * np.minimum(1.0, bound / np.maximum(norms, 1e-300))


class PCALoss(PerSampleLoss):
    """f(W; z) = -|W^T z|^2 on the sphere (W [p]) or the Stiefel manifold (W [p, k]).

    Parameters
    ----------
    space : Hypersphere or Stiefel
    data_norm : float or None
        Rows are scaled down to this norm by ``check_data`` (None: not scaled).
    """

    def __init__(self, space, data_norm=None):
        super().__init__(space)
        self.data_norm = data_norm

    def check_data(self, data):
        """Finite rows [n, p], scaled to norm <= data_norm."""
        rows = to_numpy(data)
        check_finite_array(rows, "X")
        if self.data_norm is not None:
            rows = scale_rows(rows, self.data_norm)
        return to_backend(rows)

    def _projections(self, point, data):
        """W^T z_i: [k] for the sphere ([n] per point), [n, k] for Stiefel."""
        if point.ndim == 1:
            return gs.einsum("np,p->n", data, point)
        return gs.einsum("np,pk->nk", data, point)

    def values(self, point, data):
        """-|W^T z_i|^2, shape=[n]."""
        projections = self._projections(point, data)
        if point.ndim == 1:
            return -(projections**2)
        return -gs.sum(projections**2, axis=-1)

    def gradients(self, point, data):
        """-2 (I - W W^T) z_i (W^T z_i)^T, shape=[n, *space.shape]."""
        projections = self._projections(point, data)
        if point.ndim == 1:
            residuals = data - gs.einsum("n,p->np", projections, point)
            return -2 * gs.einsum("np,n->np", residuals, projections)
        residuals = data - gs.einsum("nk,pk->np", projections, point)
        return -2 * gs.einsum("np,nk->npk", residuals, projections)


class PrivatePCA(PrivateERM):
    """Differentially private principal components, shaped like scikit-learn's PCA.

    Privacy: replace-one adjacency on the rows of X; (epsilon, delta)-DP release of
    ``components_`` (and ``mean_`` when ``centered=False``). Each row is scaled down to the
    public norm ``data_norm`` B (a per-record map, so the guarantee holds for any data);
    the per-sample Riemannian gradients then have norm <= B^2 (module docstring), the
    clip norm, and PrivateERM's DP Riemannian optimisation runs on the sphere (k = 1) or
    on the Stiefel manifold with its canonical metric (k > 1), from a data-independent
    start. ``centered=False`` first spends ``mean_budget_fraction`` of epsilon on a
    private mean (Gaussian mechanism on the scaled rows, sensitivity 2B/n, its own ledger
    event; diffprivlib's convention), subtracts it and rescales the rows to B.

    Parameters
    ----------
    n_components : int
        k, between 1 and n_features - 1.
    epsilon, delta : float
    data_norm : float, optional
        B, a public bound on the row norms. None scales no row and lets PrivateERM infer
        the clip norm from the data (the largest gradient norm at the start) with a
        PrivacyLeakWarning: not private.
    centered : bool
        True: the data are centred already (publicly), nothing is subtracted.
    mean_budget_fraction : float
        With ``centered=False``, the fraction of epsilon spent on the mean, in (0, 1).
    method, n_iter, step_size, batch_size, inner_steps, sampling, dataset_size, output,
    noise_method, budget, random_state, secure, verbose
        As in ``PrivateERM``. Defaults: DP-RGD steps 0.75 s / B^2 (s the noise-aware
        shrink), 6x the Frechet mean's number of steps (``PCA_ITER_FACTOR``).

    Attributes
    ----------
    components_ : numpy.ndarray, shape=[n_components, n_features]
        Orthonormal rows spanning the released subspace.
    mean_ : numpy.ndarray, shape=[n_features]
        The private mean (zeros when ``centered=True``).
    data_norm_ : float or None
    n_features_in_ : int
    estimate_, budget_, noise_multiplier_, noise_multipliers_, n_iter_,
    n_gradient_evaluations_, clip_norm_, events_, noise_ratio_
        As in ``PrivateERM`` (``estimate_`` is W, [p] or [p, k]).
    """

    _FITTED = PCA_FITTED

    def __init__(self, n_components=1, epsilon=1.0, delta=1e-5, data_norm=None,
                 centered=True, mean_budget_fraction=0.1, method="rgd", n_iter=None,
                 step_size=None, batch_size=None, inner_steps=None,
                 sampling="without_replacement", dataset_size=None, output=None,
                 noise_method="transport", budget=None, random_state=None, secure=False,
                 verbose=False):
        self.n_components = n_components
        self.epsilon = epsilon
        self.delta = delta
        self.data_norm = data_norm
        self.centered = centered
        self.mean_budget_fraction = mean_budget_fraction
        self.method = method
        self.n_iter = n_iter
        self.step_size = step_size
        self.batch_size = batch_size
        self.inner_steps = inner_steps
        self.sampling = sampling
        self.dataset_size = dataset_size
        self.output = output
        self.noise_method = noise_method
        self.budget = budget
        self.random_state = random_state
        self.secure = secure
        self.verbose = verbose
        self._remember_budget()

    # PrivateERM reads these; PCA fixes them from its own parameters.
    @property
    def space(self):
        """The sphere S^(p-1) (k = 1) or Stiefel(p, k), set by ``fit``."""
        return self._space

    @property
    def clip_norm(self):
        """B^2, the bound on the per-sample gradient norms (None: inferred by the core)."""
        return None if self._data_norm is None else self._data_norm**2

    clip_norm_single = None
    clip_quantile = clip_budget_fraction = None
    gradient = None
    gradient_kind = "riemannian"

    @property
    def init_point(self):
        """``start_basis``: data-independent."""
        return start_basis(self.n_features_in_, self.n_components)

    def fit(self, X, y=None):
        """Release private principal components of ``X``.

        Parameters
        ----------
        X : array-like, shape=[n_samples, n_features]
        y : None
            Ignored.

        Returns
        -------
        self
        """
        return super().fit(X)

    def _check_input(self, X, y, sample_weight):
        data = check_array(X, "X")
        if data.ndim != 2:
            raise ValueError(f"X must have shape [n_samples, n_features], got {data.shape}")
        check_sample_count(len(data), "X")
        n_features = data.shape[1]
        k = check_positive_int(self.n_components, "n_components")
        if k >= n_features:
            raise ValueError(
                f"n_components must be < n_features = {n_features}, got {k}"
            )
        self._data_norm = None
        if self.data_norm is not None:
            self._data_norm = check_positive_finite(self.data_norm, "data_norm")
        if not self.centered:
            check_probability(self.mean_budget_fraction, "mean_budget_fraction")
            if self._data_norm is None:
                raise ValueError(
                    "centered=False needs a public data_norm: the private mean's "
                    "sensitivity is 2 data_norm / n"
                )
        self.n_features_in_ = n_features
        self._space = Hypersphere(n_features - 1) if k == 1 else Stiefel(n_features, k)
        return data, None

    def _make_loss(self):
        return PCALoss(self.space, self._data_norm)

    @property
    def _optimisation_epsilon(self):
        if self.centered:
            return self.epsilon
        return self.epsilon * (1 - self.mean_budget_fraction)

    def _mean_noise_multiplier(self):
        return calibrate_gaussian(self.epsilon * self.mean_budget_fraction, self.delta, 1)

    def _preliminary_events(self, n_samples):
        if self.centered:
            return ()
        sensitivity = 2 * self._data_norm / n_samples
        return (GaussianEvent(self._mean_noise_multiplier(), sensitivity=sensitivity,
                              label="PrivatePCA: mean"),)

    def _prepare(self, data, rng):
        rows = to_numpy(data)
        mean = np.zeros(rows.shape[1])
        if not self.centered:
            sigma = self._mean_noise_multiplier() * 2 * self._data_norm / len(rows)
            mean = rows.mean(axis=0) + sigma * np.asarray(rng.standard_normal(rows.shape[1]))
            rows = scale_rows(rows - mean, self._data_norm)
        return to_backend(rows), {"mean_": mean}

    def _finish(self, fitted):
        basis = to_numpy(fitted["estimate_"])
        fitted["components_"] = basis.reshape(self.n_features_in_, -1).T
        fitted["data_norm_"] = self._data_norm
        fitted["n_features_in_"] = self.n_features_in_
        return fitted

    def _smoothness(self):
        """The Rayleigh quotient's Riemannian Hessian has norm <= 2 lambda_1 <= 2 B^2:
        steps 0.75 s / B^2 (DP-RGD), 1.5 / L with L = 2 B^2."""
        return self.clip_norm / 1.5

    def _settings(self, n_samples):
        n_iter, batch_size, inner_steps, output = super()._settings(n_samples)
        return (self.n_iter or PCA_ITER_FACTOR * n_iter), batch_size, inner_steps, output

    def transform(self, X):
        """Project X on the released components (post-processing).

        Parameters
        ----------
        X : array-like, shape=[n_samples, n_features]

        Returns
        -------
        X_new : numpy.ndarray, shape=[n_samples, n_components]
        """
        data = check_array(X, "X")
        if data.ndim != 2 or data.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X must have shape [n_samples, {self.n_features_in_}], got {data.shape}"
            )
        return (data - self.mean_) @ self.components_.T


def explained_variance_ratio(components, X):
    """w^T C w / lambda_1 summed over components: the share of the top-k variance captured.

    Parameters
    ----------
    components : numpy.ndarray, shape=[k, p]
    X : numpy.ndarray, shape=[n, p]
        Centred data (not private: a utility measurement).

    Returns
    -------
    ratio : float
    """
    covariance = X.T @ X / len(X)
    eigenvalues = np.linalg.eigvalsh(covariance)[::-1]
    captured = np.trace(components @ covariance @ components.T)
    return float(captured / eigenvalues[: len(components)].sum())
