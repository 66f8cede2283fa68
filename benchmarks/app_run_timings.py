"""Wall and CPU seconds of an app's default Run from an empty cache (a record, never a claim).

Builds ``icml26.dashboards.<slug>.Explorer()`` at its defaults with a fresh private
``ICML26_CACHE``, presses Run (one thread) and appends the Run's wall and process CPU seconds,
the load average over the Run and the final stage text to ``benchmarks/app_run_timings.csv``.
CPU seconds are what a Run costs on an idle core; wall seconds on a shared machine include
waiting for the cores (hence the load average).

    OMP_NUM_THREADS=1 python benchmarks/app_run_timings.py selfflow [--no-write]
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib
import os
import platform
import tempfile
import time
from pathlib import Path

OUT = Path(__file__).resolve().parent / "app_run_timings.csv"
FIELDS = ["timestamp", "machine", "cores", "app", "wall_s", "cpu_s", "load_1min", "stage"]


def measure(slug: str) -> dict:
    os.environ["ICML26_CACHE"] = tempfile.mkdtemp(prefix=f"icml26_{slug}_")
    import torch

    torch.set_num_threads(1)
    app = importlib.import_module(f"icml26.dashboards.{slug}")
    e = app.Explorer()
    wall, cpu = time.perf_counter(), time.process_time()
    e.param.trigger("run")
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    # a view that raises while redrawing fails the Run after run_done counted it
    if e.run_done != 1 or not e._stage.object.startswith("Run done"):
        raise SystemExit(f"{slug}: the Run failed: {e.error_message()} ({e._stage.object})")
    return {"timestamp": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "machine": platform.processor() or platform.machine(), "cores": os.cpu_count(),
            "app": slug, "wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
            "load_1min": round(os.getloadavg()[0], 1), "stage": e._stage.object}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("slug")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args(argv)
    row = measure(args.slug)
    print(row, flush=True)
    if not args.no_write:
        from icml26.kernels.bench import append_csv

        append_csv(OUT, [row], FIELDS)
        print(f"appended 1 row to {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
