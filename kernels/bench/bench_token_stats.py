"""GPU benchmark of the fused per-token statistics (``kernels/token_stats.py``).

Triton vs torch eager (``log_softmax`` -> ``p`` -> ``p l`` -> centred ``p l^2``, each an
``[N, V]`` tensor) vs ``torch.compile`` of the same function, for N in 2^14..2^22 rows,
V in {96 (the characters of ``detectrouter``), 32768 (an LLM vocabulary, N capped so the
logits fit)}, fp32.  Times are ``triton.testing.do_bench`` quantiles (median, 20%, 80%);
throughput counts the bytes the fused kernel must move (``4 N V`` in, ``20 N`` in/out) against
a device-to-device copy's bandwidth.  Rows are appended to ``benchmarks/token_stats.csv``.

    python kernels/bench/bench_token_stats.py [--out PATH] [--max-log2n 22]

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

FIELDS = ["timestamp", "device", "torch", "triton", "impl", "N", "V", "ms", "ms_p20",
          "ms_p80", "gbps", "bound_gbps", "max_err"]
DEFAULT_OUT = Path(__file__).resolve().parents[2] / "benchmarks" / "token_stats.csv"
MAX_LOGITS = 2**31  # bytes of the largest logits tensor benchmarked


def run(log2ns, vocabs, device, bench, compile_eager=True):
    """Benchmark rows (dicts) for every (N, V, impl)."""
    from icml26.kernels.token_stats import token_stats, token_stats_ref

    src = torch.empty(2**28, device=device)
    dst = torch.empty_like(src)
    bound = 2 * src.numel() * 4 / (bench(lambda: dst.copy_(src), quantiles=[0.5])[0] * 1e-3) / 1e9
    compiled = torch.compile(token_stats_ref) if compile_eager else None
    stamp = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    name = torch.cuda.get_device_name(device)
    rows = []
    g = torch.Generator(device=device).manual_seed(0)
    for v in vocabs:
        for log2n in log2ns:
            n = 2**log2n
            if 4 * n * v > MAX_LOGITS:
                continue
            z = torch.randn(n, v, device=device, generator=g) * 3
            y = torch.randint(0, v, (n,), device=device, generator=g)
            ref = token_stats_ref(z.double(), y)
            impls = {"triton": lambda: token_stats(z, y, impl="triton"),  # noqa: B023
                     "torch-eager": lambda: token_stats_ref(z, y)}  # noqa: B023
            if compiled is not None:
                impls["torch-compile"] = lambda: compiled(z, y)  # noqa: B023
            for impl, fn in impls.items():
                err = max(float((a.double() - b).abs().max()) for a, b in zip(fn(), ref))
                ms, lo, hi = bench(fn, quantiles=[0.5, 0.2, 0.8])
                rows.append({"timestamp": stamp, "device": name, "torch": torch.__version__,
                             "triton": __import__("triton").__version__, "impl": impl, "N": n,
                             "V": v, "ms": ms, "ms_p20": lo, "ms_p80": hi,
                             "gbps": (4 * n * v + 20 * n) / (ms * 1e-3) / 1e9,
                             "bound_gbps": bound, "max_err": err})
            print(f"N=2^{log2n} V={v}: " + ", ".join(
                f"{r['impl']} {r['ms']:.3f} ms ({r['gbps']:.0f} GB/s)"
                for r in rows[-len(impls):]), flush=True)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--min-log2n", type=int, default=14)
    ap.add_argument("--max-log2n", type=int, default=22)
    ap.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    args = ap.parse_args(argv)
    if not torch.cuda.is_available():
        print("bench_token_stats: no CUDA device found. This benchmark measures the Triton "
              "kernel on a GPU; nothing was run or written.", file=sys.stderr)
        return 2
    os.environ.pop("TRITON_INTERPRET", None)
    from triton.testing import do_bench

    rows = run(range(args.min_log2n, args.max_log2n + 1, 2), (96, 32768), torch.device("cuda"),
               do_bench, compile_eager=not args.no_compile)
    append_csv(args.out, rows, FIELDS)
    print(f"appended {len(rows)} rows to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
