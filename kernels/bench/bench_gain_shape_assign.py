"""GPU benchmark of the fused gain-shape assignment (``kernels/gain_shape_assign.py``).

Triton vs torch eager (``x @ s.T`` -> scores -> ``max``, which materialises ``N x K``) vs
``torch.compile`` of the same eager function, for N in 2^14..2^22, K in {16, 256}, d = 128,
fp32, the l2 rule.  Times are ``triton.testing.do_bench`` quantiles (median, 20%, 80%).
Throughput counts the bytes the fused kernel must move (``4 N d`` in, ``12 N`` out, the
codebook once) and is compared with the bandwidth of a device-to-device copy measured on the
same GPU; TFLOP/s counts ``2 N K d``.  Rows are appended to
``benchmarks/gain_shape_assign.csv`` (created with a header when absent).

    python kernels/bench/bench_gain_shape_assign.py [--out PATH] [--max-log2n 22]

Needs a CUDA GPU: without one it exits with a message and writes nothing.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
from pathlib import Path

import torch

from icml26.kernels.bench import append_csv

FIELDS = ["timestamp", "device", "torch", "triton", "op", "impl", "rule", "N", "K", "d",
          "ms", "ms_p20", "ms_p80", "gbps", "tflops", "bound_gbps", "match"]
DEFAULT_OUT = Path(__file__).resolve().parents[2] / "benchmarks" / "gain_shape_assign.csv"


def eager_assign(x: torch.Tensor, shapes: torch.Tensor, gains: torch.Tensor):
    """The unfused baseline: the full ``[N, K]`` score matrix, then a row max."""
    scores = 2.0 * gains * (x @ shapes.T) - gains * gains
    best, idx = scores.max(dim=1)
    return idx, best


def copy_bandwidth_gbps(bench, device, numel: int = 2**28) -> float:
    """Achievable HBM bandwidth: read + write of a 1 GiB device-to-device copy."""
    src = torch.empty(numel, dtype=torch.float32, device=device)
    dst = torch.empty_like(src)
    ms = bench(lambda: dst.copy_(src), quantiles=[0.5, 0.2, 0.8])[0]
    return 2 * src.numel() * 4 / (ms * 1e-3) / 1e9


def run(log2ns, codes, dim, device, bench, compile_eager=True, copy_numel=2**28):
    """Benchmark rows (dicts) for every (N, K, impl)."""
    from icml26.kernels.gain_shape_assign import centroid_sums, gain_shape_assign

    bound = copy_bandwidth_gbps(bench, device, copy_numel)
    compiled = torch.compile(eager_assign) if compile_eager else None
    stamp = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else str(device)
    rows = []
    g = torch.Generator(device=device).manual_seed(0)
    for k in codes:
        shapes = torch.nn.functional.normalize(
            torch.randn(k, dim, device=device, generator=g), dim=1)
        gains = torch.rand(k, device=device, generator=g) + 0.5
        for log2n in log2ns:
            n = 2**log2n
            x = torch.randn(n, dim, device=device, generator=g)
            ref_idx, _ = eager_assign(x, shapes, gains)
            impls = {
                "triton": lambda: gain_shape_assign(x, shapes, gains, "l2", impl="triton"),  # noqa: B023
                "torch-eager": lambda: eager_assign(x, shapes, gains),  # noqa: B023
            }
            if compiled is not None:
                impls["torch-compile"] = lambda: compiled(x, shapes, gains)  # noqa: B023
            moved = 4 * n * dim + 12 * n + 4 * k * (dim + 1)
            for impl, fn in impls.items():
                idx, _ = fn()
                match = float((idx == ref_idx).float().mean())
                ms, lo, hi = bench(fn, quantiles=[0.5, 0.2, 0.8])
                rows.append(_row(stamp, name, "assign", impl, n, k, dim, ms, lo, hi, moved,
                                 2 * n * k * dim, bound, match))
            idx = ref_idx
            upd = {"triton": lambda: centroid_sums(x, idx, k, unit=True, impl="triton"),  # noqa: B023
                   "torch-eager": lambda: centroid_sums(x, idx, k, unit=True, impl="torch")}  # noqa: B023
            for impl, fn in upd.items():
                ms, lo, hi = bench(fn, quantiles=[0.5, 0.2, 0.8])
                rows.append(_row(stamp, name, "centroid_sums", impl, n, k, dim, ms, lo, hi,
                                 4 * n * dim + 12 * n + 8 * k * (dim + 1), 4 * n * dim, bound,
                                 float("nan")))
            print(f"N=2^{log2n} K={k}: " + ", ".join(
                f"{r['op']}/{r['impl']} {r['ms']:.3f} ms ({r['gbps']:.0f} GB/s)"
                for r in rows[-len(impls) - 2:]), flush=True)
    return rows


def _row(stamp, name, op, impl, n, k, dim, ms, lo, hi, moved, flops, bound, match):
    return {"timestamp": stamp, "device": name, "torch": torch.__version__,
            "triton": __import__("triton").__version__, "op": op, "impl": impl, "rule": "l2",
            "N": n, "K": k, "d": dim, "ms": ms, "ms_p20": lo, "ms_p80": hi,
            "gbps": moved / (ms * 1e-3) / 1e9, "tflops": flops / (ms * 1e-3) / 1e12,
            "bound_gbps": bound, "match": match}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--min-log2n", type=int, default=14)
    ap.add_argument("--max-log2n", type=int, default=22)
    ap.add_argument("--step", type=int, default=2, help="log2 N step (default 2)")
    ap.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    args = ap.parse_args(argv)
    if not torch.cuda.is_available():
        print("bench_gain_shape_assign: no CUDA device found. This benchmark measures the "
              "Triton kernel on a GPU; nothing was run or written. (CPU timings: "
              "benchmarks/gsrq_cpu_assign.py.)", file=sys.stderr)
        return 2
    os.environ.pop("TRITON_INTERPRET", None)
    from triton.testing import do_bench

    device = torch.device("cuda")
    rows = run(range(args.min_log2n, args.max_log2n + 1, args.step), (16, 256), 128, device,
               do_bench, compile_eager=not args.no_compile)
    append_csv(args.out, rows, FIELDS)
    print(f"appended {len(rows)} rows to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
