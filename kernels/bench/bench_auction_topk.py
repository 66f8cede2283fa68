"""GPU benchmark of batched auction resolution (``kernels/auction_topk.py``).

Triton (one fused pass: top-2, winner, reserve, price) vs torch eager (``torch.topk(k=2)``
then ``where``/``clamp``: the reference) vs ``torch.compile`` of the reference, for
M in 2^14..2^24 auctions and N in {5, 64} bidders, fp32.  Times are
``triton.testing.do_bench`` quantiles (median, 20%, 80%).  Throughput counts the bytes the
fused kernel must move (``4 M N`` in, ``20 M`` out) and is compared with the bandwidth of a
device-to-device copy measured on the same GPU.  Rows are appended to
``benchmarks/auction_topk.csv`` (created with a header when absent).

    python kernels/bench/bench_auction_topk.py [--out PATH] [--max-log2m 24]

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
from icml26.kernels.bench.bench_gain_shape_assign import copy_bandwidth_gbps

FIELDS = ["timestamp", "device", "torch", "triton", "impl", "M", "N", "ms", "ms_p20",
          "ms_p80", "gbps", "bound_gbps", "match"]
DEFAULT_OUT = Path(__file__).resolve().parents[2] / "benchmarks" / "auction_topk.csv"


def run(log2ms, bidders, device, bench, compile_ref=True):
    """Benchmark rows (dicts) for every (M, N, impl)."""
    from icml26.kernels.auction_topk import auction_topk, auction_topk_ref

    bound = copy_bandwidth_gbps(bench, device)
    compiled = torch.compile(auction_topk_ref) if compile_ref else None
    stamp = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    name = torch.cuda.get_device_name(device)
    rows = []
    g = torch.Generator(device=device).manual_seed(0)
    for n in bidders:
        for log2m in log2ms:
            m = 2**log2m
            s = torch.rand(m, n, device=device, generator=g)
            ref = auction_topk_ref(s, 0.05)
            impls = {"triton": lambda: auction_topk(s, 0.05, impl="triton"),  # noqa: B023
                     "torch-eager": lambda: auction_topk_ref(s, 0.05)}  # noqa: B023
            if compiled is not None:
                impls["torch-compile"] = lambda: compiled(s, 0.05)  # noqa: B023
            moved = 4 * m * n + 20 * m
            for impl, fn in impls.items():
                out = fn()
                match = float((out[0] == ref[0]).float().mean())
                ms, lo, hi = bench(fn, quantiles=[0.5, 0.2, 0.8])
                rows.append({"timestamp": stamp, "device": name, "torch": torch.__version__,
                             "triton": __import__("triton").__version__, "impl": impl,
                             "M": m, "N": n, "ms": ms, "ms_p20": lo, "ms_p80": hi,
                             "gbps": moved / (ms * 1e-3) / 1e9, "bound_gbps": bound,
                             "match": match})
            print(f"M=2^{log2m} N={n}: " + ", ".join(
                f"{r['impl']} {r['ms']:.3f} ms ({r['gbps']:.0f} GB/s)"
                for r in rows[-len(impls):]), flush=True)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--min-log2m", type=int, default=14)
    ap.add_argument("--max-log2m", type=int, default=24)
    ap.add_argument("--step", type=int, default=2, help="log2 M step (default 2)")
    ap.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    args = ap.parse_args(argv)
    if not torch.cuda.is_available():
        print("bench_auction_topk: no CUDA device found. This benchmark measures the Triton "
              "kernel on a GPU; nothing was run or written.", file=sys.stderr)
        return 2
    os.environ.pop("TRITON_INTERPRET", None)
    from triton.testing import do_bench

    rows = run(range(args.min_log2m, args.max_log2m + 1, args.step), (5, 64),
               torch.device("cuda"), do_bench, compile_ref=not args.no_compile)
    append_csv(args.out, rows, FIELDS)
    print(f"appended {len(rows)} rows to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
