"""CPU record for unilid: the lattice forward pass and the claims' cost.

* ``lattice_forward``: the torch reference at UniLID's shape (the 22-label test set: 440 texts
  of up to ~160 characters, pieces <= 8, K = 22, V = 2000) and, for scale, the Triton
  kernel under ``TRITON_INTERPRET=1`` at a tiny shape (the interpreter is a correctness tool,
  not a speed path: ``impl="auto"`` never picks it on CPU);
* ``claims``: one seed's claims from an empty cache (a temporary ``ICML26_CACHE``), wall
  and process CPU seconds (the machine is shared, so wall time varies with the load).

Times are the minimum of ``--repeats`` runs with one thread; records, never claims.
Appends to ``benchmarks/unilid/unilid_timings.csv``.

    OMP_NUM_THREADS=1 python benchmarks/unilid/unilid_timings.py [--seeds 0 1]
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

OUT = Path(__file__).with_suffix(".csv")
FIELDS = ["timestamp", "machine", "torch", "what", "impl", "B", "T", "K", "seconds",
          "cpu_seconds", "note"]


def best_time(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def kernel_rows(repeats: int) -> list[dict]:
    os.environ.setdefault("TRITON_INTERPRET", "1")  # before the kernel module is imported
    from icml26.kernels.bench.bench_lattice_forward import random_lattice
    from icml26.kernels.lattice_forward import lattice_forward

    rows = []
    for impl, (b, t, k) in (("torch", (440, 160, 22)), ("torch", (8, 32, 4)),
                            ("triton-interpreter", (8, 32, 4))):
        edges, logp = random_lattice(b, t, 8, k, 2000, "cpu")
        sec = best_time(lambda: lattice_forward(edges, logp, impl=impl.split("-")[0]),  # noqa: B023
                        repeats)
        rows.append({"what": "lattice_forward", "impl": impl, "B": b, "T": t, "K": k,
                     "seconds": sec, "cpu_seconds": "", "note": "L=8, V=2000, fp32"})
        print(f"lattice_forward {impl} B={b} T={t} K={k}: {sec:.4f} s", flush=True)
    return rows


def claims_row(seed: int) -> dict:
    code = ("import resource, time; t = time.perf_counter(); from icml26 import unilid; "
            f"unilid.claims({seed}); r = resource.getrusage(resource.RUSAGE_SELF); "
            "print(time.perf_counter() - t, r.ru_utime + r.ru_stime)")
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "ICML26_CACHE": cache, "OMP_NUM_THREADS": "1"}
        out = subprocess.run([sys.executable, "-c", code], env=env, check=True,
                             capture_output=True, text=True).stdout.split()
    wall, cpu = float(out[-2]), float(out[-1])
    print(f"claims seed {seed} (empty cache): {wall:.1f} s wall, {cpu:.1f} s CPU", flush=True)
    return {"what": "claims", "impl": f"seed {seed}", "B": "", "T": "", "K": 22,
            "seconds": wall, "cpu_seconds": cpu, "note": "quick scale, empty cache"}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seeds", type=int, nargs="*", default=[0, 1])
    args = ap.parse_args(argv)
    from icml26.kernels.bench import append_csv

    stamp = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    rows = kernel_rows(args.repeats) + [claims_row(s) for s in args.seeds]
    common = {"timestamp": stamp, "machine": platform.node() or platform.machine(),
              "torch": torch.__version__}
    append_csv(OUT, [{**common, **r} for r in rows], FIELDS, digits=4)
    print(f"appended {len(rows)} rows to {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
