"""GPU benchmark of the lattice forward pass (``kernels/lattice_forward.py``).

Triton (one program per text, all languages at once) vs the torch reference (gathers the
``[B, T, L, K]`` edge weights, then ``T`` sequential vectorised steps) eager and, outside
``--quick``, under ``torch.compile`` (its ``T``-step Python loop unrolls: a long compile), on
random lattices shaped like UniLID's: ``T = 160`` characters, pieces up to ``L = 8``, ``K`` in
{22 (the paper's languages), 128}, ``V = 2000``, B in {512, 4096, 32768} (quick: 512, 32768),
fp32.  Bytes moved by the fused kernel: ``8 B T L`` edge ids in, ``4 B (T + 1) K`` out.

    python -m icml26.kernels.bench --only lattice_forward [--quick] [--out DIR]
"""

from __future__ import annotations

import sys

import torch

from icml26.kernels.bench import harness
from icml26.kernels.bench.harness import Case

SHAPES = [(b, 160, 8, k, 2000) for k in (22, 128) for b in (512, 4096, 32768)]
QUICK = [(b, 160, 8, k, 2000) for k in (22, 128) for b in (512, 32768)]


def random_lattice(n_b: int, n_t: int, n_l: int, n_k: int, n_v: int, device,
                   seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Edges ``[B, T, L]`` (every length-1 edge present, ~40% of the longer ones) and a
    log-probability table ``[K, V]``."""
    g = torch.Generator().manual_seed(seed)
    edges = torch.randint(0, n_v, (n_b, n_t, n_l), generator=g)
    edges[:, :, 1:][torch.rand(n_b, n_t, n_l - 1, generator=g) > 0.4] = -1
    logp = torch.log_softmax(torch.randn(n_k, n_v, generator=g), 1)
    return edges.to(device), logp.to(device)


def cases(quick: bool = False):
    dev = harness.DEVICE
    from icml26.kernels.lattice_forward import lattice_forward, lattice_forward_ref

    comp = None if quick else harness.compiled(lattice_forward_ref)
    for n_b, n_t, n_l, n_k, n_v in (QUICK if quick else SHAPES):
        edges, logp = random_lattice(n_b, n_t, n_l, n_k, n_v, dev)
        ref = lattice_forward_ref(edges, logp)[:, -1]
        impls = {"triton": lambda e=edges, w=logp: lattice_forward(e, w, impl="triton"),
                 "torch-eager": lambda e=edges, w=logp: lattice_forward_ref(e, w)}
        if comp is not None:
            impls["torch-compile"] = lambda e=edges, w=logp: comp(e, w)
        yield Case("lattice_forward", f"B={n_b} T={n_t} L={n_l} K={n_k} V={n_v}", "fp32",
                   impls, bytes_moved=8 * n_b * n_t * n_l + 4 * n_b * (n_t + 1) * n_k,
                   error=lambda out, ref=ref: float((out[:, -1] - ref).abs().max()),
                   note="" if comp is not None else "torch.compile not run under --quick")


if __name__ == "__main__":
    from icml26.kernels.bench.cli import main_for

    sys.exit(main_for("lattice_forward"))
