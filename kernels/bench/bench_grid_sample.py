"""GPU benchmark of bilinear grid sampling (``kernels/grid_sample.py``), forward + backward.

Triton (the fused forward and the fused backward: gathers, scatter-add into the map and the
coordinate gradients) vs ``F.grid_sample`` on a ``[B, C, H, W]`` copy (cuDNN/ATen; the permute
is counted, as a channels-last caller pays it) vs the torch twin (gathers + ``scatter_add_``).
Shapes: GridS's (``H = W = 16``, ``C`` in {32, 1152 (SigLIP)}, ``K`` in {4, 16, 64}) at batch
``B`` in 2^6..2^12, fp32.  Times are ``triton.testing.do_bench`` quantiles (median, 20%, 80%)
of one forward + backward (``op="fwd+bwd"``) and of the forward alone (``op="fwd"``).  Bytes
moved per forward: ``16 B K C`` (4 neighbour rows) + ``4 B K C`` out; the backward adds the
same gathers, ``16 B K C`` of atomics and the ``4 B H W C`` zero-fill of ``dF``.  ``match``
is the max abs difference of the outputs and both gradients vs ``F.grid_sample``.  Rows are
appended to ``benchmarks/grid_sample.csv`` (created with a header when absent).

    python kernels/bench/bench_grid_sample.py [--out PATH] [--max-log2b 12]

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

FIELDS = ["timestamp", "device", "torch", "triton", "op", "impl", "B", "H", "W", "C", "K",
          "ms", "ms_p20", "ms_p80", "gbps", "bound_gbps", "match"]
DEFAULT_OUT = Path(__file__).resolve().parents[2] / "benchmarks" / "grid_sample.csv"


def copy_bandwidth_gbps(bench, device, numel: int = 2**28) -> float:
    """Achievable HBM bandwidth: read + write of a 1 GiB device-to-device copy."""
    src = torch.empty(numel, dtype=torch.float32, device=device)
    dst = torch.empty_like(src)
    ms = bench(lambda: dst.copy_(src), quantiles=[0.5, 0.2, 0.8])[0]
    return 2 * src.numel() * 4 / (ms * 1e-3) / 1e9


def run(log2bs, chans, ks, device, bench, hw=16, copy_numel=2**28):
    """Benchmark rows (dicts) for every (B, C, K, impl, op)."""
    from icml26.kernels.grid_sample import grid_sample

    bound = copy_bandwidth_gbps(bench, device, copy_numel)
    stamp = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    name = torch.cuda.get_device_name(device)
    rows = []
    g = torch.Generator(device=device).manual_seed(0)
    for c in chans:
        for k in ks:
            for log2b in log2bs:
                b = 2**log2b
                feat = torch.randn(b, hw, hw, c, device=device, generator=g, requires_grad=True)
                coords = torch.rand(b, k, 2, device=device, generator=g).requires_grad_()
                grad = torch.randn(b, k, c, device=device, generator=g)
                results = {}
                for impl in ("triton", "reference", "torch"):
                    fn = lambda: grid_sample(feat, coords, impl=impl)  # noqa: B023, E731

                    def both(fn=fn, feat=feat, coords=coords, grad=grad):
                        return torch.autograd.grad(fn(), (feat, coords), grad)

                    out = fn()
                    results[impl] = (out.detach(), *both())
                    fwd_bytes = 20 * b * k * c
                    for op, f, moved in (("fwd", fn, fwd_bytes),
                                         ("fwd+bwd", both, 2 * fwd_bytes + 16 * b * k * c
                                          + 4 * b * hw * hw * c)):
                        with torch.no_grad() if op == "fwd" else torch.enable_grad():
                            ms, lo, hi = bench(f, quantiles=[0.5, 0.2, 0.8])
                        rows.append({"timestamp": stamp, "device": name,
                                     "torch": torch.__version__,
                                     "triton": __import__("triton").__version__, "op": op,
                                     "impl": impl, "B": b, "H": hw, "W": hw, "C": c, "K": k,
                                     "ms": ms, "ms_p20": lo, "ms_p80": hi,
                                     "gbps": moved / (ms * 1e-3) / 1e9, "bound_gbps": bound,
                                     "match": float("nan")})
                ref = results["reference"]
                for impl in ("triton", "torch"):
                    err = max((a - r).abs().max().item() for a, r in zip(results[impl], ref))
                    for r in rows[-6:]:
                        if r["impl"] == impl:
                            r["match"] = err
                print(f"C={c} K={k} B=2^{log2b}: " + ", ".join(
                    f"{r['impl']}/{r['op']} {r['ms']:.3f} ms" for r in rows[-6:]), flush=True)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--min-log2b", type=int, default=6)
    ap.add_argument("--max-log2b", type=int, default=12)
    ap.add_argument("--step", type=int, default=3, help="log2 B step (default 3)")
    args = ap.parse_args(argv)
    if not torch.cuda.is_available():
        print("bench_grid_sample: no CUDA device found. This benchmark measures the Triton "
              "kernels on a GPU; nothing was run or written. (CPU timings: "
              "benchmarks/grids_cpu_sample.py.)", file=sys.stderr)
        return 2
    os.environ.pop("TRITON_INTERPRET", None)
    from triton.testing import do_bench

    rows = run(range(args.min_log2b, args.max_log2b + 1, args.step), (32, 1152), (4, 16, 64),
               torch.device("cuda"), do_bench)
    append_csv(args.out, rows, FIELDS)
    print(f"appended {len(rows)} rows to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
