"""GPU benchmark of the fused HIPE-RoPE kernel (``kernels/scaled_rope.py``).

Forward (q and k together) and backward of the Triton kernel vs the torch reference in eager
mode and under ``torch.compile``, for OLMo-like shapes ``[B, H, T, D]`` (H = 8, D = 64 and 128,
T up to 8192), bf16 and fp32.  Times are ``triton.testing.do_bench`` medians.  Throughput counts
the bytes the fused kernel must move (read q, k and write both: ``4 B H T D`` elements) and is
compared with a device-to-device copy on the same GPU.  Rows are appended to
``benchmarks/scaled_rope.csv`` (created with a header when absent).

    python kernels/bench/bench_scaled_rope.py [--out PATH]

Needs a CUDA GPU: without one it exits with a message and writes nothing.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from pathlib import Path

import torch

from icml26.kernels.bench import append_csv

FIELDS = ["timestamp", "device", "torch", "triton", "pass", "impl", "dtype", "B", "H", "T",
          "D", "ms", "gbps", "copy_gbps", "max_err"]
DEFAULT_OUT = Path(__file__).resolve().parents[2] / "benchmarks" / "scaled_rope.csv"
SHAPES = [(8, 8, 512, 64), (4, 8, 2048, 64), (2, 8, 8192, 64), (4, 8, 2048, 128)]


def bench_shape(shape, dtype, dev, do_bench, compiled, ref_both) -> list[dict]:
    """Forward and backward rows for one ``(B, H, T, D)`` and dtype."""
    from icml26.kernels.scaled_rope import scaled_rope, scaled_rope_ref

    b, h, t, d = shape
    g = torch.Generator(device=dev).manual_seed(0)
    q = torch.randn(b, h, t, d, device=dev, generator=g).to(dtype)
    k = torch.randn(b, h, t, d, device=dev, generator=g).to(dtype)
    omega = 1e4 ** (-torch.arange(0, d, 2, device=dev, dtype=torch.float64) / d)
    ang = torch.arange(t, device=dev, dtype=torch.float64)[:, None] * omega
    cos, sin = ang.cos().float(), ang.sin().float()
    sc = torch.rand(h, d // 2, device=dev, generator=g) + 0.5
    exact = scaled_rope_ref(q.double(), cos.double(), sin.double(), sc.double())
    bytes_moved = 4 * q.numel() * q.element_size()
    base = {"dtype": str(dtype).split(".")[-1], "B": b, "H": h, "T": t, "D": d}
    impls = {"triton": lambda: scaled_rope(q, k, cos, sin, sc, impl="triton"),
             "torch": lambda: ref_both(q, k, cos, sin, sc),
             "compile": lambda: compiled(q, k, cos, sin, sc)}
    rows = []
    for impl, fn in impls.items():
        err = (fn()[0].double() - exact).abs().max().item()
        ms = do_bench(fn)
        rows.append({**base, "pass": "forward", "impl": impl, "ms": ms, "max_err": err,
                     "gbps": bytes_moved / (ms * 1e-3) / 1e9})
    gq, gk = torch.randn_like(q), torch.randn_like(k)
    for impl in ("triton", "torch"):
        qq, kk = q.clone().requires_grad_(), k.clone().requires_grad_()
        oq, ok = scaled_rope(qq, kk, cos, sin, sc, impl=impl)

        def backward(oq=oq, ok=ok, qq=qq, kk=kk):
            return torch.autograd.grad((oq, ok), (qq, kk), (gq, gk), retain_graph=True)

        ms = do_bench(backward)
        rows.append({**base, "pass": "backward", "impl": impl, "ms": ms,
                     "max_err": float("nan"), "gbps": bytes_moved / (ms * 1e-3) / 1e9})
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("bench_scaled_rope: needs a CUDA GPU; nothing measured, nothing written.")
        return 0
    import triton
    from triton.testing import do_bench

    from icml26.kernels.scaled_rope import scaled_rope_ref

    def ref_both(q, k, c, s, sc):
        return scaled_rope_ref(q, c, s, sc), scaled_rope_ref(k, c, s, sc)

    compiled = torch.compile(ref_both)
    dev = torch.device("cuda")
    src = torch.empty(2**28, device=dev)
    dst = torch.empty_like(src)
    copy_gbps = 2 * src.numel() * 4 / (do_bench(lambda: dst.copy_(src)) * 1e-3) / 1e9
    stamp = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    name = torch.cuda.get_device_name(dev)
    rows = []
    for dtype in (torch.bfloat16, torch.float32):
        for shape in SHAPES:
            rows += bench_shape(shape, dtype, dev, do_bench, compiled, ref_both)
    for r in rows:
        r.update(timestamp=stamp, device=name, torch=torch.__version__,
                 triton=triton.__version__, copy_gbps=copy_gbps)
        print(f"{r['pass']:8s} {r['impl']:8s} {r['dtype']:9s} {r['B']}x{r['H']}x{r['T']}x{r['D']}"
              f" {r['ms']:8.4f} ms {r['gbps']:8.1f} GB/s (copy {copy_gbps:.0f})")
    append_csv(args.out, rows, FIELDS)
    return 0


if __name__ == "__main__":
    sys.exit(main())
