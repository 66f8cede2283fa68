"""GPU benchmark of batched 2-D ray casting (``kernels/ray_cast.py``).

Triton (one program per block of rays, a running min over primitives) vs the torch reference
(broadcast ``[B, R, S]`` / ``[B, R, C]`` intersections, then a first-index min) vs
``torch.compile`` of the reference, for B scenes in 2^4..2^12, R = 720 beams, S = 48 segments,
C = 8 circles (the coval scene layout), fp32.  Times are ``triton.testing.do_bench`` quantiles
(median, 20%, 80%).  Throughput counts ray-primitive tests per second; ``match`` is the fraction
of hit ids equal to the reference's.  Rows are appended to ``benchmarks/ray_cast.csv``.

    python kernels/bench/bench_ray_cast.py [--out PATH] [--max-log2b 12]

Needs a CUDA GPU: without one it exits with a message and writes nothing.
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import os
import sys
from pathlib import Path

import torch

from icml26.kernels.bench import append_csv

FIELDS = ["timestamp", "device", "torch", "triton", "impl", "B", "R", "S", "C", "ms", "ms_p20",
          "ms_p80", "gtests_per_s", "match"]
DEFAULT_OUT = Path(__file__).resolve().parents[2] / "benchmarks" / "ray_cast.csv"


def scenes(b, r, s, c, device, seed=0):
    """Random scenes: segments and circles within 10 m of sensors near the origin."""
    g = torch.Generator(device=device).manual_seed(seed)
    origins = torch.randn(b, 2, device=device, generator=g) * 0.3
    ang = (torch.arange(r, device=device) + 0.5) * (2 * math.pi / r)
    dirs = torch.stack([ang.cos(), ang.sin()], 1)
    segs = torch.randn(b, s, 4, device=device, generator=g) * 5
    circ = torch.cat([torch.randn(b, c, 2, device=device, generator=g) * 5,
                      torch.rand(b, c, 1, device=device, generator=g)], 2)
    return origins, dirs, segs, circ


def run(log2bs, r, s, c, device, bench, compile_ref=True):
    from icml26.kernels.ray_cast import ray_cast, ray_cast_ref

    compiled = torch.compile(ray_cast_ref) if compile_ref else None
    stamp = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    name = torch.cuda.get_device_name(device)
    rows = []
    for log2b in log2bs:
        b = 2**log2b
        args = scenes(b, r, s, c, device)
        _, ref_id = ray_cast_ref(*args, 20.0)
        impls = {"triton": lambda: ray_cast(*args, 20.0, impl="triton"),  # noqa: B023
                 "torch-eager": lambda: ray_cast_ref(*args, 20.0)}  # noqa: B023
        if compiled is not None:
            impls["torch-compile"] = lambda: compiled(*args, 20.0)  # noqa: B023
        for impl, fn in impls.items():
            _, ids = fn()
            match = float((ids == ref_id).float().mean())
            ms, lo, hi = bench(fn, quantiles=[0.5, 0.2, 0.8])
            rows.append({"timestamp": stamp, "device": name, "torch": torch.__version__,
                         "triton": __import__("triton").__version__, "impl": impl, "B": b,
                         "R": r, "S": s, "C": c, "ms": ms, "ms_p20": lo, "ms_p80": hi,
                         "gtests_per_s": b * r * (s + c) / (ms * 1e-3) / 1e9, "match": match})
        print(f"B=2^{log2b}: " + ", ".join(f"{x['impl']} {x['ms']:.3f} ms (match "
                                           f"{x['match']:.4f})" for x in rows[-len(impls):]),
              flush=True)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--min-log2b", type=int, default=4)
    ap.add_argument("--max-log2b", type=int, default=12)
    ap.add_argument("--step", type=int, default=2, help="log2 B step (default 2)")
    ap.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    args = ap.parse_args(argv)
    if not torch.cuda.is_available():
        print("bench_ray_cast: no CUDA device found. This benchmark measures the Triton "
              "kernel on a GPU; nothing was run or written.", file=sys.stderr)
        return 2
    os.environ.pop("TRITON_INTERPRET", None)
    from triton.testing import do_bench

    rows = run(range(args.min_log2b, args.max_log2b + 1, args.step), 720, 48, 8,
               torch.device("cuda"), do_bench, compile_ref=not args.no_compile)
    append_csv(args.out, rows, FIELDS)
    print(f"appended {len(rows)} rows to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
