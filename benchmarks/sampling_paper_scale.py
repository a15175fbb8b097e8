"""Utpala et al.'s (2023) Table 2 at the paper's scale: 3x10^5 DP-RSGD steps per problem.

Total seconds without and with the tangent-Gaussian noise on the SPD(11) Frechet mean and
the S^783 leading eigenvector (the problems and the bare step of ``sampling.py``), written
to ``sampling_dp_rsgd_paper_scale.csv``. The paper reports 41 s and 24 s on its hardware
(context only: no ratio is taken against them).
"""

from benchmarks.sampling import run_paper_scale as run

__all__ = ["run"]
