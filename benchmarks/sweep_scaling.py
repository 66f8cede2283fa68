"""Scaling of ``icml26 sweep``: the same sweep (one fast paper, >= 16 seeds) as a plain loop of
``claims()`` calls, and on a LocalCluster of 1 and 2 worker processes.

Reports the speed-up of 2 workers over 1 (target >= 1.6x on 2 cores) and the per-task
overhead of Dask (1 worker) over the loop (target < 5%). Every mode is warmed up first (modules
imported, one ``claims()`` call at an unused seed, in the loop's process and in every worker),
so the figures compare steady-state task throughput; cluster start-up is recorded apart.
Each mode runs with a fresh ``ICML26_CACHE``, so no mode reuses another's cached results.

    python benchmarks/sweep_scaling.py [--paper recruitment] [--seeds 16]

Appends rows to ``benchmarks/sweep_scaling.csv`` with the 1-minute load average before and
after each mode: on a shared machine the numbers mean little when it is busy.
"""

from __future__ import annotations

import argparse
import csv
import os
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).parent
WARM_SEED = 10_000  # not among the swept seeds


def timed_loop(paper: str, seeds: list[int]) -> float:
    import torch

    from icml26 import sweep

    torch.set_num_threads(1)
    sweep.paper_claims(paper, WARM_SEED, "quick")
    start = time.perf_counter()
    for s in seeds:
        sweep.run_task(paper, s, "quick")
    return time.perf_counter() - start


def timed_dask(paper: str, seeds: list[int], workers: int) -> tuple[float, float]:
    from icml26 import sweep

    start = time.perf_counter()
    client = sweep.connect(workers=workers, dashboard=None)
    try:
        client.wait_for_workers(workers)
        startup = time.perf_counter() - start
        client.run(sweep.run_task, paper, WARM_SEED, "quick")  # warm every worker
        with tempfile.TemporaryDirectory() as out:
            plan = sweep.plan([paper], seeds, "quick", out=out)
            begin = time.perf_counter()
            result = sweep.Sweep(plan, client).collect()
            elapsed = time.perf_counter() - begin
        assert result.completed == len(seeds) and result.failed == 0, result
    finally:
        sweep.close(client)
    return elapsed, startup


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--paper", default="recruitment")
    ap.add_argument("--seeds", type=int, default=16)
    ap.add_argument("--out", default=str(HERE / "sweep_scaling.csv"))
    args = ap.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    seeds = list(range(args.seeds))
    rows = []
    for mode, workers in (("loop", 0), ("dask", 1), ("dask", 2)):
        os.environ["ICML26_CACHE"] = tempfile.mkdtemp(prefix="icml26-bench-")
        load0 = os.getloadavg()[0]
        if mode == "loop":
            seconds, startup = timed_loop(args.paper, seeds), 0.0
        else:
            seconds, startup = timed_dask(args.paper, seeds, workers)
        row = dict(date=datetime.now(timezone.utc).isoformat(timespec="seconds"),
                   paper=args.paper, seeds=len(seeds), mode=mode, workers=workers,
                   seconds=round(seconds, 2), per_task_s=round(seconds / len(seeds), 3),
                   cluster_start_s=round(startup, 2), cpu_count=os.cpu_count(),
                   load_1m_before=round(load0, 2), load_1m_after=round(os.getloadavg()[0], 2))
        rows.append(row)
        print(row, flush=True)
    loop, one, two = (r["seconds"] for r in rows)
    print(f"speed-up 2 workers / 1 worker: {one / two:.2f}x (target >= 1.6x)")
    print(f"Dask overhead per task (1 worker vs loop): {100 * (one / loop - 1):+.1f}% "
          f"(target < 5%)")
    path = Path(args.out)
    new = not path.exists()
    with path.open("a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        if new:
            w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    main()
