"""The tensor kernels of the pytorch warm route (``optim.torch_jacobi``), run eagerly,
against LAPACK (``torch.linalg.eigh``)."""

import numpy as np
import pytest

from tests.conftest import shifted

torch = pytest.importorskip("torch")
torch_jacobi = pytest.importorskip("geomstats_dp.optim.torch_jacobi")

pytestmark = pytest.mark.backend_independent


def records(seed, k=6, n=4):
    """k random SPD(n) matrices, batch first, and the same batch last."""
    rng = np.random.default_rng(seed)
    factors = torch.as_tensor(rng.standard_normal((k, n, n)))
    matrices = factors @ factors.transpose(1, 2) + 0.5 * torch.eye(n, dtype=torch.float64)
    return matrices, matrices.permute(1, 2, 0).contiguous()


def diagonalised(batch_last):
    """(A, V) after the sweeps that bring the ratio to 1e-7, from the identity basis."""
    n = batch_last.shape[0]
    eye = torch.eye(n, dtype=torch.float64)
    basis = eye[..., None].expand_as(batch_last).contiguous()
    matrices, vectors, ratio = torch_jacobi.frame(batch_last, basis, eye, eye)
    torch.testing.assert_close(matrices, batch_last, rtol=0, atol=0)
    for _ in range(12):
        if ratio <= 1e-7:
            return matrices, vectors
        matrices, vectors, ratio = torch_jacobi.sweep(matrices, vectors)
    raise AssertionError("no convergence")


def test_sweeps_find_lapacks_eigenvalues_and_an_orthogonal_basis():
    batch_first, batch_last = records(shifted(0))
    matrices, vectors = diagonalised(batch_last)
    eigenvalues = torch.diagonal(matrices.permute(2, 0, 1), dim1=1, dim2=2)
    expected = torch.linalg.eigvalsh(batch_first)
    np.testing.assert_allclose(eigenvalues.sort(-1).values, expected, rtol=1e-12)
    bases = vectors.permute(2, 0, 1)
    eye = torch.eye(4, dtype=torch.float64).expand_as(bases)
    np.testing.assert_allclose(bases.transpose(1, 2) @ bases, eye, atol=1e-13)


def test_the_logarithm_with_its_first_order_term_is_lapacks():
    """At a basis that leaves an off-diagonal part of about 1e-8 (no sweep), log D alone
    is wrong at 1e-8; with the Daleckii-Krein term it is LAPACK's to rounding."""
    batch_first, _ = records(shifted(1))
    eigenvalues, eigenvectors = torch.linalg.eigh(batch_first)
    rng = np.random.default_rng(shifted(2))
    skew = torch.as_tensor(rng.standard_normal((6, 4, 4))) * 1e-8
    rotation = torch.linalg.matrix_exp(skew - skew.transpose(1, 2))
    bases = eigenvectors @ rotation  # nearly the eigenvectors
    near = (bases.transpose(1, 2) @ batch_first @ bases).permute(1, 2, 0).contiguous()
    logarithms, norms = torch_jacobi.logs(near)
    logs = bases @ logarithms.permute(2, 0, 1) @ bases.transpose(1, 2)
    expected = eigenvectors @ torch.diag_embed(eigenvalues.log()) @ eigenvectors.transpose(1, 2)
    np.testing.assert_allclose(logs, expected, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(norms, eigenvalues.log().norm(dim=-1), rtol=1e-12)
    diagonal_only = torch.diag_embed(torch.diagonal(logarithms.permute(2, 0, 1), dim1=1,
                                                    dim2=2))
    assert (bases @ diagonal_only @ bases.transpose(1, 2) - expected).abs().max() > 1e-10


def test_the_weighted_total_leaves_out_non_finite_norms_and_zero_coefficients():
    _, batch_last = records(shifted(3))
    matrices, vectors = diagonalised(batch_last)
    logarithms, norms = torch_jacobi.logs(matrices)
    coefficients = torch.as_tensor(np.random.default_rng(shifted(4)).uniform(0.5, 2.0, 6))
    coefficients[2] = 0.0
    vectors[..., 4] = torch.nan  # a record without a finite logarithm
    norms[4] = torch.nan
    total = torch_jacobi.weighted_total(vectors, logarithms, norms, coefficients)
    bases, logs = vectors.permute(2, 0, 1), logarithms.permute(2, 0, 1)
    kept = [0, 1, 3, 5]
    expected = (coefficients[kept, None, None] * bases[kept] @ logs[kept]
                @ bases[kept].transpose(1, 2)).sum(0)
    np.testing.assert_allclose(total, expected, rtol=1e-12)


def test_the_ratio_leaves_out_a_record_that_is_not_a_number():
    _, batch_last = records(shifted(5))
    eye = torch.eye(4, dtype=torch.float64)
    basis = eye[..., None].expand_as(batch_last).contiguous()
    _, _, ratio = torch_jacobi.frame(batch_last, basis, eye, eye)
    batch_last[..., 3] = torch.nan
    _, _, without = torch_jacobi.frame(batch_last, basis, eye, eye)
    assert 0 < without <= ratio and torch.isfinite(without)
