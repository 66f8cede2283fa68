"""GPU benchmark of the fused per-token LayerNorm + modulate (``kernels/ln_modulate.py``).

Triton vs torch eager (``layer_norm`` then ``(1 + scale) * xhat + shift``) vs
``torch.compile`` of the same function, for N = B*T tokens in 2^12..2^22 and D in {128, 1152}
(SiT-XL's width), fp32 and bf16.  Times are ``triton.testing.do_bench`` quantiles (median,
20%, 80%); throughput counts the ``4 N D`` elements the fused kernel must move.  Rows are
appended to ``benchmarks/ln_modulate.csv``.

    python kernels/bench/bench_ln_modulate.py [--out PATH] [--max-log2n 22]

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

FIELDS = ["timestamp", "device", "torch", "triton", "impl", "dtype", "N", "D", "ms", "ms_p20",
          "ms_p80", "gbps", "max_err"]
DEFAULT_OUT = Path(__file__).resolve().parents[2] / "benchmarks" / "ln_modulate.csv"


def run(log2ns, dims, dtypes, device, bench, compile_eager=True):
    """Benchmark rows (dicts) for every (dtype, D, N, impl)."""
    from icml26.kernels.ln_modulate import ln_modulate, ln_modulate_ref

    compiled = torch.compile(ln_modulate_ref) if compile_eager else None
    stamp = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    name = torch.cuda.get_device_name(device)
    rows = []
    for dtype in dtypes:
        for d in dims:
            for log2n in log2ns:
                n = 2**log2n
                x, sh, sc = (torch.randn(n, d, device=device, dtype=dtype) for _ in range(3))
                ref = ln_modulate_ref(x.double(), sh.double(), sc.double())
                impls = {"triton": lambda: ln_modulate(x, sh, sc, impl="triton"),  # noqa: B023
                         "torch-eager": lambda: ln_modulate_ref(x, sh, sc)}  # noqa: B023
                if compiled is not None:
                    impls["torch-compile"] = lambda: compiled(x, sh, sc)  # noqa: B023
                for impl, fn in impls.items():
                    err = float((fn().double() - ref).abs().max())
                    ms, lo, hi = bench(fn, quantiles=[0.5, 0.2, 0.8])
                    rows.append({"timestamp": stamp, "device": name,
                                 "torch": torch.__version__,
                                 "triton": __import__("triton").__version__, "impl": impl,
                                 "dtype": str(dtype).removeprefix("torch."), "N": n, "D": d,
                                 "ms": ms, "ms_p20": lo, "ms_p80": hi,
                                 "gbps": 4 * n * d * x.element_size() / (ms * 1e-3) / 1e9,
                                 "max_err": err})
                print(f"{dtype} D={d} N=2^{log2n}: " + ", ".join(
                    f"{r['impl']} {r['ms']:.3f} ms ({r['gbps']:.0f} GB/s)"
                    for r in rows[-len(impls):]), flush=True)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--min-log2n", type=int, default=12)
    ap.add_argument("--max-log2n", type=int, default=22)
    ap.add_argument("--step", type=int, default=2, help="log2 N step (default 2)")
    ap.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    args = ap.parse_args(argv)
    if not torch.cuda.is_available():
        print("bench_ln_modulate: no CUDA device found. This benchmark measures the Triton "
              "kernel on a GPU; nothing was run or written.", file=sys.stderr)
        return 2
    os.environ.pop("TRITON_INTERPRET", None)
    from triton.testing import do_bench

    rows = run(range(args.min_log2n, args.max_log2n + 1, args.step), (128, 1152),
               (torch.float32, torch.bfloat16), torch.device("cuda"), do_bench,
               compile_eager=not args.no_compile)
    append_csv(args.out, rows, FIELDS)
    print(f"appended {len(rows)} rows to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
