"""``python -m icml26.kernels.bench [--quick] [--only OP ...] [--out DIR]``: every kernel's
benchmark in one run, one CSV per kernel plus ``summary.md`` in ``DIR``.

Each ``bench_<op>.py`` provides ``cases(quick) -> iterable of harness.Case`` (the paper's
shapes and shapes at scale; ``--quick``: the paper's shape and the largest one) and runs alone
as ``python kernels/bench/bench_<op>.py [--quick] [--out DIR]`` (the same as ``--only op``).
Without CUDA: one line on stderr, exit code 2, nothing written.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import importlib
import sys
import time
from pathlib import Path

from . import harness

# run order: the kernels issue 29 found losing to torch.compile first, the never-benched pgf,
# then the winners, the TritonGym oracles last (a run stopped by a time limit keeps the first)
OPS = ("gain_shape_assign", "token_stats", "soft_bellman", "scaled_rope", "ln_modulate",
       "bellman_interp", "grid_sample", "pgf", "auction_topk", "quant_noise", "lattice_forward",
       "ray_cast", "tritongym_ops")
DEFAULT_ROOT = Path(__file__).resolve().parents[2] / "benchmarks" / "gpu"


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m icml26.kernels.bench",
                                 description="Every kernel's GPU benchmark against torch "
                                 "eager and torch.compile: one CSV per kernel plus "
                                 "summary.md. Needs CUDA (exit code 2 without it).")
    ap.add_argument("--quick", action="store_true",
                    help="the paper's shape and the largest shape of each kernel only")
    ap.add_argument("--only", nargs="+", metavar="OP", choices=OPS, default=None,
                    help=f"kernels to run (default: all): {', '.join(OPS)}")
    ap.add_argument("--out", type=Path, default=None,
                    help="output folder (default: benchmarks/gpu/bench-<UTC date>)")
    return ap


def parse_args(argv=None) -> argparse.Namespace:
    args = parser().parse_args(argv)
    args.only = list(dict.fromkeys(args.only)) if args.only else list(OPS)
    if args.out is None:
        args.out = DEFAULT_ROOT / f"bench-{dt.datetime.now(dt.timezone.utc):%Y-%m-%d}"
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    code = harness.cuda_or_exit()
    if code is not None:
        return code
    import torch

    meta = harness.run_metadata()
    copy_gbps = harness.copy_bandwidth_gbps()
    print(f"{meta['device']} (torch {meta['torch']}, triton {meta['triton']}): copy "
          f"{copy_gbps:.0f} GB/s", flush=True)
    all_rows, failed = [], []
    for op in args.only:
        start = time.perf_counter()
        rows = []
        try:
            mod = importlib.import_module(f"icml26.kernels.bench.bench_{op}")
            for case in mod.cases(args.quick):
                new = harness.time_case(case, copy_gbps)
                rows += new
                print(f"{op} {case.shape} {case.dtype} {case.pass_}: " + ", ".join(
                    f"{r['impl']} {r['ms']:.4f} ms" for r in new), flush=True)
                del case
        except Exception as exc:  # noqa: BLE001 - one kernel's crash must not stop the rest
            failed.append(op)
            print(f"{op}: FAILED {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
        if rows:
            harness.write_csv(args.out / f"{op}.csv", rows, meta)
        all_rows += rows
        gc.collect()
        torch.cuda.empty_cache()
        # rewritten after every kernel: a run stopped by a time limit keeps what it measured
        harness.write_summary(args.out / "summary.md", all_rows, meta, copy_gbps)
        print(f"{op}: {len(rows)} rows in {time.perf_counter() - start:.1f} s", flush=True)
    harness.write_summary(args.out / "summary.md", all_rows, meta, copy_gbps)
    print(f"wrote {args.out}/summary.md ({len(all_rows)} rows)"
          + (f"; FAILED: {' '.join(failed)}" if failed else ""))
    return 1 if failed else 0


def main_for(op: str, argv=None) -> int:
    """A single script's entry point: ``bench_<op>.py [--quick] [--out DIR]``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    return main([*argv, "--only", op])
