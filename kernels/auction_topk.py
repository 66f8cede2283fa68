"""Batched single-slot auction resolution: row-wise top-2 of a score matrix and the
second-price payment, in one pass.

Maths.  Row ``m`` of ``scores [M, N]`` holds the ``N`` bidders' ranking scores in auction
``m`` (in the quality-weighted second-price auction, ``score = bid x quality``).  With a reserve
``r`` the auction resolves to::

    top1[m] = max_n scores[m, n],        winner[m] = argmax_n scores[m, n]
    top2[m] = max_{n != winner} scores[m, n]      (-inf when N == 1)
    winner[m] = -1 if top1[m] < r                 (no sale)
    price[m]  = max(top2[m], r) if a sale else 0  (the per-impression payment; per click it is
                                                   price / quality[winner])

Memory traffic.  The unfused torch path (``torch.topk(k=2)`` then ``clamp`` and ``where``)
reads the ``M x N`` matrix once but launches several kernels and writes the ``[M, 2]`` values
and indices to memory between them.  Here one program owns ``BLOCK_M`` rows, loads its
``[BLOCK_M, BLOCK_N]`` tile once (``N <= MAX_BIDDERS``, so a row fits in registers), takes the
max, masks the argmax and takes the max again: ``4 M N`` bytes in, ``16 M`` out.  The op is
bandwidth-bound; at the paper's ``N = 5`` the row tile is mostly masked lanes, so the gain
comes from fusing the launches, not from the reduction.

Constraints.  ``scores``: ``[M, N]`` float32, finite, ``1 <= N <= MAX_BIDDERS``; ``reserve``
a Python float.  Ties for the top go to the lowest index in the Triton kernel; the reference
takes ``torch.topk``'s index, which is unspecified on ties (tests compare winners on tie-free
inputs and values everywhere).

Precision.  float32 only; comparisons and copies (no arithmetic beyond the reserve clamp), so
values are bit-identical to the reference.  ``impl="auto"`` is Triton for CUDA tensors at every
shape: no crossover against torch eager / ``torch.compile`` has been measured yet (``python -m
icml26.kernels.bench`` measures it on a GPU).

References.  Triton tutorials (fused softmax: one row tile per program, masks); Liger-Kernel
(torch reference + ``impl`` switch); the spec ``shared/specs/ad_auctions.md``.
"""

from __future__ import annotations

import torch

try:  # triton is a hard dependency, but keep CPU-only importers alive if it is broken
    import triton
    import triton.language as tl
except ImportError:  # pragma: no cover
    triton = None

MAX_BIDDERS = 1024
IMPLS = ("auto", "triton", "torch")


# --------------------------------------------------------------------------- reference
def auction_topk_ref(scores: torch.Tensor, reserve: float = 0.0
                     ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Plain torch. ``[M, N] -> (winner [M] int64 (-1: no sale), top1 [M], top2 [M],
    price [M])`` built on ``torch.topk(k=2)``."""
    m, n = scores.shape
    if n >= 2:
        vals, idx = torch.topk(scores, 2, dim=1)
        top1, top2 = vals[:, 0], vals[:, 1]
    else:
        vals, idx = torch.topk(scores, 1, dim=1)
        top1 = vals[:, 0]
        top2 = torch.full_like(top1, float("-inf"))
    sale = top1 >= reserve
    winner = torch.where(sale, idx[:, 0], torch.full_like(idx[:, 0], -1))
    price = torch.where(sale, top2.clamp_min(reserve), torch.zeros_like(top1))
    return winner, top1, top2, price


# --------------------------------------------------------------------------- kernel
if triton is not None:

    @triton.jit
    def _auction_topk_kernel(s_ptr, win_ptr, top1_ptr, top2_ptr, price_ptr,
                             n_rows, n_cols, stride_m, stride_n, reserve,
                             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
        pid = tl.program_id(0).to(tl.int64)
        rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
        row_ok = rows < n_rows
        cols = tl.arange(0, BLOCK_N)
        col_ok = cols < n_cols
        s = tl.load(s_ptr + rows[:, None] * stride_m + cols[None, :] * stride_n,
                    mask=row_ok[:, None] & col_ok[None, :], other=float("-inf"))
        top1 = tl.max(s, axis=1)
        arg = tl.argmax(s, axis=1, tie_break_left=True)
        # mask the winner's lane only (a tie for the top keeps the other copy as top2)
        s2 = tl.where(cols[None, :] == arg[:, None], float("-inf"), s)
        top2 = tl.max(s2, axis=1)
        sale = top1 >= reserve
        winner = tl.where(sale, arg.to(tl.int64), -1)
        price = tl.where(sale, tl.maximum(top2, reserve), 0.0)
        tl.store(win_ptr + rows, winner, mask=row_ok)
        tl.store(top1_ptr + rows, top1, mask=row_ok)
        tl.store(top2_ptr + rows, top2, mask=row_ok)
        tl.store(price_ptr + rows, price, mask=row_ok)


def _use_triton(impl: str, t: torch.Tensor) -> bool:
    if impl not in IMPLS:
        raise ValueError(f"impl must be one of {IMPLS}, got {impl!r}")
    use = impl == "triton" or (impl == "auto" and t.is_cuda and triton is not None)
    if use and triton is None:
        raise RuntimeError("impl='triton' needs the triton package")
    return use


def auction_topk(scores: torch.Tensor, reserve: float = 0.0, impl: str = "auto",
                 block_m: int = 16
                 ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Resolve ``M`` single-slot second-price auctions at once.

    ``scores [M, N]`` float32 -> ``(winner [M] int64 (-1: top score below the reserve),
    top1 [M], top2 [M] (-inf when N == 1), price [M] (max(top2, reserve); 0 without a
    sale))``.  ``impl="auto"`` runs Triton on CUDA tensors and the torch reference otherwise.
    """
    if scores.ndim != 2:
        raise ValueError(f"scores must be [M, N], got shape {tuple(scores.shape)}")
    if scores.dtype != torch.float32:
        raise ValueError(f"scores must be float32, got {scores.dtype}")
    m, n = scores.shape
    if not 1 <= n <= MAX_BIDDERS:
        raise ValueError(f"the number of bidders N must be in [1, {MAX_BIDDERS}], got {n}")
    reserve = float(reserve)
    if not _use_triton(impl, scores):
        return auction_topk_ref(scores, reserve)
    winner = torch.empty(m, dtype=torch.int64, device=scores.device)
    top1, top2, price = (torch.empty(m, dtype=torch.float32, device=scores.device)
                         for _ in range(3))
    if m == 0:
        return winner, top1, top2, price
    block_n = max(2, triton.next_power_of_2(n))
    grid = (triton.cdiv(m, block_m),)
    _auction_topk_kernel[grid](scores, winner, top1, top2, price, m, n,
                               scores.stride(0), scores.stride(1), reserve,
                               BLOCK_M=block_m, BLOCK_N=block_n)
    return winner, top1, top2, price
