"""CPU cost of PANDA's quick-scale claims (a record, never a claim).

Runs ``icml26.panda.run_experiment`` (no cache) for the given seeds with one thread and
appends, per seed, the process CPU seconds and wall seconds of the whole experiment and the
wall seconds of each method's run to ``benchmarks/panda/panda_timings.csv``. CPU seconds are the
better budget proxy on a shared machine (wall time there includes waiting for the cores).

    OMP_NUM_THREADS=1 python benchmarks/panda/panda_timings.py [--seeds 0 1] [--no-write]
"""

from __future__ import annotations

import argparse
import datetime as dt
import platform
import time
from pathlib import Path

import torch

from icml26 import panda as lib
from icml26.kernels.bench import append_csv

OUT = Path(__file__).resolve().parent / "panda_timings.csv"
FIELDS = ["timestamp", "machine", "torch", "seed", "cpu_s", "wall_s", "panda_s", "ignore_s",
          "unrolled_s", "implicit_s", "panda_iterations"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    cfg = lib.config_for("quick")
    stamp = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    rows = []
    for seed in args.seeds:
        cpu, wall = time.process_time(), time.perf_counter()
        exp = lib.run_experiment(cfg, seed)
        row = {"timestamp": stamp, "machine": platform.processor() or platform.machine(),
               "torch": torch.__version__, "seed": seed,
               "cpu_s": round(time.process_time() - cpu, 2),
               "wall_s": round(time.perf_counter() - wall, 2),
               "panda_iterations": cfg.panda.iterations}
        for m in lib.METHODS:
            row[f"{m}_s"] = round(exp["traces"][m]["seconds"], 2)
        rows.append(row)
        print(row, flush=True)
    if not args.no_write:
        append_csv(OUT, rows, FIELDS)
        print(f"appended {len(rows)} rows to {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
