"""Time per DP-RGD iteration and peak memory per worker on SPD(8) records held by Dask.

The records (Wishart(I, 20) / 20, 8 x 8, 512 bytes each) are generated chunk by chunk
(``CHUNK_ROWS`` records, 16 MB) into a stack of ``.npy`` files on disk
(``dask.array.to_npy_stack``) and read back memory-mapped (``from_npy_stack``): the
whole array is never in memory. One DP-RGD iteration's query is the clipped sum of the
per-sample gradients -Log_P(X_i) at a public point P (clip norm 3, the memory
benchmark's setting); the rest of an iteration (noise, one exponential map) is O(1) in n.
For each n the clipped sum is timed:

- in memory (``GradientOracle.clipped_sum`` on a numpy array) where the array fits
  (n <= ``IN_MEMORY_MAX``);
- on a ``distributed.LocalCluster`` of 1 and 2 single-threaded worker processes
  (``_dask.DaskClippedSums``, what ``fit`` calls on a Dask array), each cluster fresh,
  after one warm-up sum on the smallest chunk; the peak resident memory of each worker
  (VmHWM) is read after the sums. The in-memory row's peak is the benchmark process's
  (it holds every size loaded so far).

The scheduler's per-iteration overhead is the time of a sum over ``OVERHEAD_N`` records
in one chunk. Wall-clock seconds, BLAS single-threaded (``OMP_NUM_THREADS=1``), on a
shared 2-core machine: the load average is recorded with every row. The median of 3
iterations at n <= 10^5, one iteration above (10^8: about 20 minutes each).

Disk: everything the benchmark writes (the record stacks, Dask's ``temporary-directory``
of the scheduler and workers) lies in one folder made by ``tempfile.mkdtemp`` (set
``TMPDIR`` to choose the disk), removed at the end, also on an error or SIGTERM. A size
is refused before anything is written if the disk would keep less than
``FREE_DISK_MARGIN`` bytes free.
The workers keep no data on disk (``memory_limit=0``: no spilling). ``run`` refuses to
run in a child process: the workers are spawned processes that import the main script
again, so a script calling ``run`` without ``if __name__ == "__main__":`` would have
each worker write the records once more (at 10^8 records, 51 GB each).
"""

import logging
import multiprocessing
import os
import resource
import shutil
import signal
import statistics
import sys
import tempfile
import time

import numpy as np

from benchmarks.accounting import write_csv

DIM = 8
CHUNK_ROWS = 32_768
CLIP_NORM = 3.0
IN_MEMORY_MAX = 2 * 10**6
FREE_DISK_MARGIN = 12 * 10**9
OVERHEAD_N = 1_000
SIZES = (10**5, 10**6, 10**7, 10**8)
QUICK_SIZES = (10**4,)
WORKERS = (1, 2)


def _wishart_chunk(block, seed_base):
    """SPD(8) records for one chunk, from a seed fixed by the chunk's place (public)."""
    rows = block.shape[0]
    rng = np.random.default_rng(seed_base + int(block[0, 0, 0]))
    draws = rng.standard_normal((rows, 20, DIM))
    return np.einsum("kij,kil->kjl", draws, draws) / 20


def write_records(n_samples, directory):
    """Generate n SPD(8) records chunk by chunk into ``directory``; returns the lazy array."""
    import dask
    import dask.array as da

    starts = da.arange(n_samples, chunks=CHUNK_ROWS)[:, None, None] // CHUNK_ROWS
    index = da.broadcast_to(starts, (n_samples, DIM, DIM)).astype(float)
    records = index.map_blocks(_wishart_chunk, 0, dtype=float)
    with dask.config.set(scheduler="threads", num_workers=1):
        da.to_npy_stack(directory, records, axis=0)
    return da.from_npy_stack(directory, mmap_mode="r")


def _peak_rss_mb():
    """This process's peak resident memory (VmHWM: unlike ``ru_maxrss``, it restarts at
    ``exec``, so a spawned worker's does not include its parent's)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _timed(call, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _problem():
    from geomstats.geometry.spd_matrices import SPDMatrices

    from geomstats_dp.optim import SquaredDistanceLoss

    space = SPDMatrices(DIM)
    point = np.eye(DIM) * 1.1
    return SquaredDistanceLoss(space), point


def time_in_memory(records, repeats):
    """Seconds of one clipped sum over the records loaded in memory."""
    from geomstats_dp._backend import to_backend
    from geomstats_dp.optim.oracle import GradientOracle

    loss, point = _problem()
    data = to_backend(np.asarray(records))
    n_samples = data.shape[0]
    weights = to_backend(np.full(n_samples, 1.0 / n_samples))
    oracle = GradientOracle(loss, data, weights, None, np.random.default_rng(0))
    return _timed(lambda: oracle.clipped_sum(to_backend(point), CLIP_NORM), repeats)


def time_on_cluster(records, n_workers, repeats):
    """(seconds of one clipped sum, overhead seconds, peak MB per worker)."""
    import dask.array as da
    import distributed

    from geomstats_dp._dask import DaskClippedSums
    from geomstats_dp.optim.oracle import clipped_sum_in_chunks

    loss, point = _problem()
    with distributed.LocalCluster(n_workers=n_workers, threads_per_worker=1,
                                  processes=True, dashboard_address=None,
                                  memory_limit=0,
                                  silence_logs=logging.ERROR) as cluster, \
            distributed.Client(cluster) as client:
        client.run(os.environ.__setitem__, "OMP_NUM_THREADS", "1")
        tiny = da.from_array(np.asarray(records[:OVERHEAD_N]), chunks=(OVERHEAD_N, DIM, DIM))
        tiny_sums = DaskClippedSums(loss, tiny, np.full(OVERHEAD_N, 1.0 / OVERHEAD_N),
                                     clipped_sum_in_chunks)
        tiny_sums(point, CLIP_NORM)  # warm-up: imports on the workers
        overhead = _timed(lambda: tiny_sums(point, CLIP_NORM), 5)
        n_samples = records.shape[0]
        sums = DaskClippedSums(loss, records, np.full(n_samples, 1.0 / n_samples),
                               clipped_sum_in_chunks)
        seconds = _timed(lambda: sums(point, CLIP_NORM), repeats)
        peaks = client.run(_peak_rss_mb)
    return seconds, overhead, max(peaks.values())


def _check_free_disk(folder, n_bytes):
    """Refuse to write ``n_bytes`` into ``folder`` if less than the margin would stay free."""
    free = shutil.disk_usage(folder).free
    if free - n_bytes < FREE_DISK_MARGIN:
        raise RuntimeError(
            f"writing {n_bytes / 1e9:.1f} GB of records into {folder} would leave "
            f"{(free - n_bytes) / 1e9:.1f} GB free, less than the "
            f"{FREE_DISK_MARGIN / 1e9:.0f} GB margin; set TMPDIR to a larger disk"
        )


def _row(base, path, workers, seconds, overhead, peak_mb):
    row = {**base, "path": path, "workers": workers,
           "seconds_per_iteration": round(seconds, 3),
           "overhead_seconds": round(overhead, 4), "peak_mb_per_worker": round(peak_mb, 1),
           "loadavg_1min": round(os.getloadavg()[0], 2)}
    print(row, flush=True)
    return row


def measure(n_samples, scratch):
    """Rows for ``n_samples`` records written under ``scratch`` and deleted after."""
    n_bytes = n_samples * DIM * DIM * 8
    _check_free_disk(scratch, n_bytes)
    directory = os.path.join(scratch, f"records_{n_samples}")
    repeats = 3 if n_samples <= 10**5 else 1
    rows = []
    try:
        start = time.perf_counter()
        records = write_records(n_samples, directory)
        base = {"n": n_samples, "data_mb": round(n_bytes / 1e6, 1),
                "generate_seconds": round(time.perf_counter() - start, 1)}
        if n_samples <= IN_MEMORY_MAX:
            seconds = time_in_memory(records, repeats)
            rows.append(_row(base, "in_memory", 0, seconds, 0.0, _peak_rss_mb()))
        for n_workers in WORKERS:
            seconds, overhead, peak = time_on_cluster(records, n_workers, repeats)
            rows.append(_row(base, "dask_distributed", n_workers, seconds, overhead, peak))
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    return rows


def _exit_on_sigterm(signum, frame):
    sys.exit(128 + signum)


def run(output_dir, quick=False):
    """Write ``dask_scaling[_quick].csv`` and ``.png``."""
    if multiprocessing.current_process().name != "MainProcess":
        raise RuntimeError(
            "benchmarks.dask_scaling.run must be called from the main process (guard a "
            "script calling it with `if __name__ == \"__main__\":`), not from a spawned "
            "child such as a Dask worker importing the main script again"
        )
    import dask

    prefix = "dask_scaling_quick" if quick else "dask_scaling"
    scratch = tempfile.mkdtemp(prefix="dask_scaling-")
    previous = signal.signal(signal.SIGTERM, _exit_on_sigterm)
    try:
        with dask.config.set({"temporary-directory": scratch}):
            rows = [row for n_samples in (QUICK_SIZES if quick else SIZES)
                    for row in measure(n_samples, scratch)]
    finally:
        signal.signal(signal.SIGTERM, previous)
        shutil.rmtree(scratch, ignore_errors=True)
    write_csv(output_dir / f"{prefix}.csv", rows)
    _plot(rows, output_dir / f"{prefix}.png")


def _plot(rows, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for label, path_name, workers in (("in memory", "in_memory", 0),
                                      ("Dask, 1 worker", "dask_distributed", 1),
                                      ("Dask, 2 workers", "dask_distributed", 2)):
        chosen = [r for r in rows if r["path"] == path_name and r["workers"] == workers]
        if not chosen:
            continue
        n = [r["n"] for r in chosen]
        axes[0].plot(n, [r["seconds_per_iteration"] for r in chosen], "o-", label=label)
        axes[1].plot(n, [r["peak_mb_per_worker"] for r in chosen], "o-", label=label)
    axes[0].set(xscale="log", yscale="log", xlabel="records n (SPD(8))",
                ylabel="seconds per DP-RGD iteration")
    axes[1].set(xscale="log", xlabel="records n (SPD(8))",
                ylabel="peak resident MB (per worker / process)")
    for ax in axes:
        ax.legend()
        ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
