"""GPU benchmark of the eight mini-TritonGym oracle kernels (``kernels/tritongym_ops.py``).

Oracle Triton kernel vs torch eager (the reference) at realistic sizes, fp32:
add / gelu on 2^24 elements, the row operators on [8192, 1024] (rowsum, cumsum, softmax,
layernorm, rmsnorm) and the matmul on 1024^3 (16x16x16 tiles: a correctness oracle, not a
tuned GEMM, so expect it far below cuBLAS).  Times are ``triton.testing.do_bench`` quantiles
(median, 20%, 80%); GB/s counts the bytes each kernel must move (inputs once, output once).
These are the latencies ``profile`` reports on CUDA, and the oracle side of Perf@1.
Rows are appended to ``benchmarks/tritongym_ops.csv`` (created with a header when absent).

    python kernels/bench/bench_tritongym_ops.py [--out PATH]

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

FIELDS = ["timestamp", "device", "torch", "triton", "op", "impl", "size", "ms", "ms_p20",
          "ms_p80", "gbps", "max_err"]
DEFAULT_OUT = Path(__file__).resolve().parents[2] / "benchmarks" / "tritongym_ops.csv"


def cases(device) -> dict:
    """op -> (size label, inputs) at benchmark sizes."""
    g = torch.Generator(device=device).manual_seed(0)

    def rnd(*shape):
        return torch.randn(*shape, device=device, generator=g)

    rows, cols, n = 8192, 1024, 2**24
    return {"add": ("2^24", [rnd(n), rnd(n)]), "gelu": ("2^24", [rnd(n)]),
            "softmax": ("8192x1024", [rnd(rows, cols)]),
            "layernorm": ("8192x1024", [rnd(rows, cols), rnd(cols), rnd(cols)]),
            "rmsnorm": ("8192x1024", [rnd(rows, cols), rnd(cols)]),
            "rowsum": ("8192x1024", [rnd(rows, cols)]),
            "cumsum": ("8192x1024", [rnd(rows, cols)]),
            "matmul": ("1024^3", [rnd(1024, 1024), rnd(1024, 1024)])}


def run(device, bench) -> list[dict]:
    from icml26.kernels import tritongym_ops as K

    stamp = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    name = torch.cuda.get_device_name(device)
    rows = []
    for op, (size, inputs) in cases(device).items():
        ref = K.REFERENCES[op](*inputs)
        out = K.run_op(op, *inputs, impl="triton")
        err = float((out - ref).abs().max())
        moved = 4 * (sum(t.numel() for t in inputs) + ref.numel())
        for impl in ("triton", "torch"):
            ms, lo, hi = bench(lambda i=impl: K.run_op(op, *inputs, impl=i),  # noqa: B023
                               quantiles=[0.5, 0.2, 0.8])
            rows.append({"timestamp": stamp, "device": name, "torch": torch.__version__,
                         "triton": __import__("triton").__version__, "op": op, "impl": impl,
                         "size": size, "ms": ms, "ms_p20": lo, "ms_p80": hi,
                         "gbps": moved / (ms * 1e-3) / 1e9, "max_err": err})
        print(f"{op} {size}: " + ", ".join(f"{r['impl']} {r['ms']:.3f} ms "
                                           f"({r['gbps']:.0f} GB/s)" for r in rows[-2:]),
              flush=True)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    if not torch.cuda.is_available():
        print("bench_tritongym_ops: no CUDA device found. This benchmark measures the Triton "
              "kernels on a GPU; nothing was run or written.", file=sys.stderr)
        return 2
    os.environ.pop("TRITON_INTERPRET", None)
    from triton.testing import do_bench

    rows = run(torch.device("cuda"), do_bench)
    append_csv(args.out, rows, FIELDS)
    print(f"appended {len(rows)} rows to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
