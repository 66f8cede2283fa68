"""GPU benchmark of the fused fake-quantization-noise kernel (``kernels/quant_noise.py``).

``R`` noisy copies of a weight vector of ``N`` float32 weights, Triton kernel vs the torch
reference (eager), additive and subtractive dither. Times are ``triton.testing.do_bench``
medians; throughput counts the bytes the fused kernel must move (read ``N``, write ``R N``
float32) and is compared with a device-to-device copy of ``R N`` floats. Rows are appended to
``benchmarks/quant_noise.csv`` (created with a header when absent).

    python kernels/bench/bench_quant_noise.py [--out PATH]

Needs a CUDA GPU: without one it exits with a message and writes nothing.
"""

from __future__ import annotations

import argparse
import datetime as dt
from pathlib import Path

import torch

from icml26.kernels.bench import append_csv

FIELDS = ["timestamp", "device", "torch", "triton", "mode", "impl", "N", "R", "ms", "gbps",
          "copy_gbps", "max_err"]
DEFAULT_OUT = Path(__file__).resolve().parents[2] / "benchmarks" / "quant_noise.csv"
SHAPES = [(71_425, 512), (1 << 20, 64), (1 << 24, 8)]  # tpv's widest student; larger nets


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("bench_quant_noise: needs a CUDA GPU; nothing measured, nothing written.")
        return 0
    import triton
    from triton.testing import do_bench

    from icml26.kernels.quant_noise import quant_noise, quant_noise_ref

    dev = torch.device("cuda")
    stamp = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    rows = []
    for n, r in SHAPES:
        w = torch.randn(n, device=dev, generator=torch.Generator(device=dev).manual_seed(0))
        delta = float(w.max() - w.min()) / 255
        kw = {"delta": delta, "draws": r, "seed": 1, "w_min": float(w.min()), "levels": 255}
        src = torch.empty(r * n, device=dev)
        dst = torch.empty_like(src)
        copy_ms = do_bench(lambda s=src, d=dst: d.copy_(s))
        copy_gbps = 2 * src.numel() * 4 / (copy_ms * 1e-3) / 1e9
        for mode in ("additive", "subtractive"):
            ref = quant_noise_ref(w, mode=mode, **kw)
            for impl in ("triton", "torch"):
                def fn(w=w, kw=kw, m=mode, i=impl):
                    return quant_noise(w, mode=m, impl=i, **kw)

                err = (fn() - ref).abs().max().item()
                ms = do_bench(fn)
                rows.append({"timestamp": stamp, "device": torch.cuda.get_device_name(),
                             "torch": torch.__version__, "triton": triton.__version__,
                             "mode": mode, "impl": impl, "N": n, "R": r, "ms": f"{ms:.4f}",
                             "gbps": f"{(n + r * n) * 4 / (ms * 1e-3) / 1e9:.1f}",
                             "copy_gbps": f"{copy_gbps:.1f}", "max_err": f"{err:.2e}"})
                print({k: rows[-1][k] for k in ("mode", "impl", "N", "R", "ms", "gbps",
                                                "copy_gbps")})
    append_csv(args.out, rows, FIELDS)
    print(f"appended {len(rows)} rows to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
