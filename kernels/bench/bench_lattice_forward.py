"""GPU benchmark of the lattice forward pass (``kernels/lattice_forward.py``).

Triton (one program per text, all languages at once) vs the torch reference (gathers the
``[B, T, L, K]`` edge weights, then ``T`` sequential vectorised steps) on random lattices
shaped like UniLID's: texts of ``T`` characters, pieces up to ``L = 8``, ``K`` languages, a
vocabulary of ``V = 2000``, fp32.  Times are ``triton.testing.do_bench`` quantiles (median,
20%, 80%); ``match`` is the largest absolute difference of the log-likelihoods
``alpha[b, T]`` between the two.  Throughput counts the bytes the fused kernel must move
(``8 B T L`` edge ids in, ``4 B (T + 1) K`` forward values out; the table is cache-resident).
Rows are appended to ``benchmarks/lattice_forward.csv`` (created with a header when absent).

    python kernels/bench/bench_lattice_forward.py [--out PATH]

Needs a CUDA GPU: without one it exits with a message and writes nothing (CPU timings of the
torch path: ``benchmarks/unilid_timings.py``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
from pathlib import Path

import torch

from icml26.kernels.bench import append_csv

FIELDS = ["timestamp", "device", "torch", "triton", "impl", "B", "T", "L", "K", "V", "ms",
          "ms_p20", "ms_p80", "gbps", "match"]
DEFAULT_OUT = Path(__file__).resolve().parents[2] / "benchmarks" / "lattice_forward.csv"


def random_lattice(n_b: int, n_t: int, n_l: int, n_k: int, n_v: int, device,
                   seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Edges ``[B, T, L]`` (every length-1 edge present, ~40% of the longer ones) and a
    log-probability table ``[K, V]``."""
    g = torch.Generator().manual_seed(seed)
    edges = torch.randint(0, n_v, (n_b, n_t, n_l), generator=g)
    edges[:, :, 1:][torch.rand(n_b, n_t, n_l - 1, generator=g) > 0.4] = -1
    logp = torch.log_softmax(torch.randn(n_k, n_v, generator=g), 1)
    return edges.to(device), logp.to(device)


def run(shapes, device, bench) -> list[dict]:
    from icml26.kernels.lattice_forward import lattice_forward

    stamp = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else str(device)
    rows = []
    for n_b, n_t, n_l, n_k, n_v in shapes:
        edges, logp = random_lattice(n_b, n_t, n_l, n_k, n_v, device)
        ref = lattice_forward(edges, logp, impl="torch")[:, -1]
        moved = 8 * n_b * n_t * n_l + 4 * n_b * (n_t + 1) * n_k
        for impl in ("triton", "torch"):
            got = lattice_forward(edges, logp, impl=impl)[:, -1]
            match = float((got - ref).abs().max())
            ms, lo, hi = bench(lambda: lattice_forward(edges, logp, impl=impl),  # noqa: B023
                               quantiles=[0.5, 0.2, 0.8])
            rows.append({"timestamp": stamp, "device": name, "torch": torch.__version__,
                         "triton": __import__("triton").__version__, "impl": impl, "B": n_b,
                         "T": n_t, "L": n_l, "K": n_k, "V": n_v, "ms": ms, "ms_p20": lo,
                         "ms_p80": hi, "gbps": moved / (ms * 1e-3) / 1e9, "match": match})
        print(f"B={n_b} T={n_t} K={n_k}: " + ", ".join(
            f"{r['impl']} {r['ms']:.3f} ms" for r in rows[-2:]), flush=True)
    return rows


SHAPES = [(b, 160, 8, k, 2000) for k in (22, 128) for b in (512, 4096, 32768)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    if not torch.cuda.is_available():
        print("bench_lattice_forward: no CUDA device found. This benchmark measures the "
              "Triton kernel on a GPU; nothing was run or written. (CPU timings: "
              "benchmarks/unilid_timings.py.)", file=sys.stderr)
        return 2
    os.environ.pop("TRITON_INTERPRET", None)
    from triton.testing import do_bench

    rows = run(SHAPES, torch.device("cuda"), do_bench)
    append_csv(args.out, rows, FIELDS)
    print(f"appended {len(rows)} rows to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
