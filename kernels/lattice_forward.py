"""Forward pass over a segmentation lattice, every language at once (UniLID's inner loop).

Maths.  A text of ``n`` characters and a vocabulary of pieces up to ``L`` characters long
define a lattice: an edge ``(t, l)`` ends at character ``t`` (1-based) and covers the piece
``x[t-l : t]`` whose vocabulary id is ``edges[b, t-1, l-1]`` (``-1``: no such piece).  For
language ``k`` with unigram log-probabilities ``logp[k, v]``, the forward variable is::

    alpha[b, 0, k] = 0
    alpha[b, t, k] = logsumexp_{l = 1..L, edge (t, l) exists}  alpha[b, t-l, k] + logp[k, e(t, l)]

so ``alpha[b, n_b, k] = log sum over segmentations of prod p_k(piece) = log p_k(x_b)``, the
marginal likelihood UniLID compares across languages.  ``semiring="max"`` replaces the
logsumexp by a max (the Viterbi score).  A position without any edge has ``alpha = -inf``;
positions past a text's end see only ``-1`` edges (padding), so one ``[B, T]`` edge tensor
holds texts of different lengths and ``alpha[b, len_b]`` is each text's score.  The backward
variable is the same recursion on the reversed lattice (``reverse_edges``).

Memory traffic.  One program per text.  Per position it reads ``L`` edge ids, ``L x K``
log-probabilities (gathered rows of the small, cache-resident ``[K, V]`` table) and ``L x K``
earlier forward values it wrote itself, and writes ``K`` values: ``O(T L K)`` per text and no
``[B, T, L, K]`` intermediate, which the unfused torch reference materialises (the gathered
weights) before its ``T`` sequential steps.

Constraints.  ``edges`` int64 ``[B, T, L]`` with ids in ``[-1, V)``; ``logp`` float32 or
float64 ``[K, V]`` (``-inf`` allowed); ``1 <= L <= 32``; ``1 <= K <= 256``.  The recursion is
sequential in ``t``: a program re-reads values it stored itself, after a
``tl.debug_barrier()``.

Precision.  The recursion runs in ``logp``'s dtype.  float64: adds, max, ``exp`` and ``log``
are float64 (libdevice ``__nv_exp``/``__nv_log`` when compiled, see ``_fp64.py``), within
1e-12 relative of the float64 reference.  float32: float32 with Triton's fast ``tl.exp``.

``impl="auto"`` is Triton for CUDA tensors at every shape: no crossover against torch eager /
``torch.compile`` has been measured yet (``python -m icml26.kernels.bench`` measures it on a
GPU).

References.  Kudo (2018), "Subword regularization" (the unigram LM lattice); Triton tutorials
(one program per row, masked loads); Liger-Kernel (torch reference + ``impl`` switch).
"""

from __future__ import annotations

import torch

try:  # triton is a hard dependency, but keep CPU-only importers alive if it is broken
    import triton
    import triton.language as tl

    from ._fp64 import exp as _exp
    from ._fp64 import log as _log
except ImportError:  # pragma: no cover
    triton = None

IMPLS = ("auto", "triton", "torch")
SEMIRINGS = ("log", "max")
MAX_PIECE_LEN = 32
MAX_LANGUAGES = 256


def lattice_forward_ref(edges: torch.Tensor, logp: torch.Tensor,
                        semiring: str = "log") -> torch.Tensor:
    """Plain torch: ``edges [B, T, L]``, ``logp [K, V]`` -> ``alpha [B, T + 1, K]``.

    Gathers the edge weights ``[B, T, L, K]`` once, then runs the ``T`` sequential steps
    vectorised over texts, edge lengths and languages.  Differentiable in ``logp`` (the
    gradient of ``sum alpha[b, len_b]`` is the expected piece counts)."""
    n_b, n_t, n_l = edges.shape
    valid = edges >= 0
    w = logp.T[edges.clamp_min(0)].masked_fill_(~valid[..., None], float("-inf"))  # [B,T,L,K]
    cols = [torch.zeros(n_b, logp.shape[0], dtype=logp.dtype, device=logp.device)]
    lengths = torch.arange(1, n_l + 1, device=edges.device)
    for t in range(1, n_t + 1):
        prev = t - lengths
        ok = prev >= 0
        a = torch.stack([cols[int(p)] for p in prev[ok]], dim=1)  # [B, l_ok, K]
        s = a + w[:, t - 1, : int(ok.sum())]
        cols.append(torch.logsumexp(s, dim=1) if semiring == "log" else s.max(dim=1).values)
    return torch.stack(cols, dim=1)


# --------------------------------------------------------------------------- kernel
if triton is not None:

    @triton.jit
    def _lattice_forward_kernel(e_ptr, w_ptr, a_ptr, n_pos, n_len, n_lang,
                                stride_eb, stride_et, stride_el, stride_wk, stride_wv,
                                stride_ab, stride_at, stride_ak,
                                BLOCK_L: tl.constexpr, BLOCK_K: tl.constexpr,
                                MAX_SEMIRING: tl.constexpr, F64: tl.constexpr):
        b = tl.program_id(0).to(tl.int64)
        ll = tl.arange(0, BLOCK_L)  # edge length - 1
        kk = tl.arange(0, BLOCK_K)
        k_ok = kk < n_lang
        a_row = a_ptr + b * stride_ab
        tl.store(a_row + kk * stride_ak, tl.zeros([BLOCK_K], a_ptr.dtype.element_ty),
                 mask=k_ok)
        for t in range(1, n_pos + 1):
            tl.debug_barrier()  # alpha[t - l] was stored by this program: make it visible
            l_ok = (ll < n_len) & (ll < t)  # start position t - l - 1 >= 0
            ids = tl.load(e_ptr + b * stride_eb + (t - 1) * stride_et + ll * stride_el,
                          mask=l_ok, other=-1)
            e_ok = l_ok & (ids >= 0)
            m2 = e_ok[:, None] & k_ok[None, :]
            w = tl.load(w_ptr + kk[None, :] * stride_wk + ids[:, None] * stride_wv,
                        mask=m2, other=float("-inf"))
            prev = tl.load(a_row + (t - 1 - ll)[:, None] * stride_at + kk[None, :] * stride_ak,
                           mask=m2, other=float("-inf"))
            s = tl.where(m2, prev + w, float("-inf"))
            m = tl.max(s, axis=0)  # [BLOCK_K]
            if MAX_SEMIRING:
                out = m
            else:
                finite = m > float("-inf")
                m_safe = tl.where(finite, m, 0.0)
                tot = tl.sum(tl.where(m2, _exp(s - m_safe[None, :], F64), 0.0), axis=0)
                tot = tl.where(finite, tot, 1.0)  # no log(0) on rows without an edge
                out = tl.where(finite, m_safe + _log(tot, F64), float("-inf"))
            tl.store(a_row + t * stride_at + kk * stride_ak,
                     out.to(a_ptr.dtype.element_ty), mask=k_ok)


# --------------------------------------------------------------------------- wrappers
def _check(edges: torch.Tensor, logp: torch.Tensor, semiring: str) -> None:
    if semiring not in SEMIRINGS:
        raise ValueError(f"semiring must be one of {SEMIRINGS}, got {semiring!r}")
    if edges.ndim != 3 or edges.dtype != torch.int64:
        raise ValueError(f"edges must be int64 [B, T, L], got {edges.dtype} "
                         f"{tuple(edges.shape)}")
    if logp.ndim != 2 or logp.dtype not in (torch.float32, torch.float64):
        raise ValueError(f"logp must be float32/float64 [K, V], got {logp.dtype} "
                         f"{tuple(logp.shape)}")
    if not 1 <= edges.shape[2] <= MAX_PIECE_LEN:
        raise ValueError(f"L (max piece length) must be in [1, {MAX_PIECE_LEN}], got "
                         f"{edges.shape[2]}")
    if not 1 <= logp.shape[0] <= MAX_LANGUAGES:
        raise ValueError(f"K (languages) must be in [1, {MAX_LANGUAGES}], got {logp.shape[0]}")
    if edges.device != logp.device:
        raise ValueError(f"edges and logp must be on one device, got {edges.device} and "
                         f"{logp.device}")
    if edges.numel() and (int(edges.min()) < -1 or int(edges.max()) >= logp.shape[1]):
        raise ValueError(f"edge ids must be in [-1, {logp.shape[1]}), got "
                         f"[{int(edges.min())}, {int(edges.max())}]")


def lattice_forward(edges: torch.Tensor, logp: torch.Tensor, semiring: str = "log",
                    impl: str = "auto", out: torch.Tensor | None = None) -> torch.Tensor:
    """Forward variables of every text under every language's unigram distribution.

    ``edges [B, T, L]`` int64 piece ids (-1: no edge), ``logp [K, V]`` -> ``alpha [B, T+1, K]``
    in ``logp``'s dtype (the kernel accumulates in that dtype).  ``impl="auto"`` runs Triton
    on CUDA tensors and the torch reference otherwise; ``"triton"`` forces the kernel (on
    CPU only under ``TRITON_INTERPRET=1``).
    ``out`` is a buffer to write into (tests pre-fill it with NaN).
    """
    if impl not in IMPLS:
        raise ValueError(f"impl must be one of {IMPLS}, got {impl!r}")
    _check(edges, logp, semiring)
    use = impl == "triton" or (impl == "auto" and logp.is_cuda and triton is not None)
    if not use:
        alpha = lattice_forward_ref(edges, logp, semiring)
        if out is None:
            return alpha
        out.copy_(alpha)
        return out
    if triton is None:  # pragma: no cover
        raise RuntimeError("impl='triton' needs the triton package")
    n_b, n_t, n_l = edges.shape
    n_k = logp.shape[0]
    if out is None:
        out = torch.empty(n_b, n_t + 1, n_k, dtype=logp.dtype, device=logp.device)
    elif out.shape != (n_b, n_t + 1, n_k) or out.dtype != logp.dtype:
        raise ValueError(f"out must be {logp.dtype} {(n_b, n_t + 1, n_k)}, got {out.dtype} "
                         f"{tuple(out.shape)}")
    if n_b == 0:
        return out
    _lattice_forward_kernel[(n_b,)](
        edges, logp, out, n_t, n_l, n_k,
        edges.stride(0), edges.stride(1), edges.stride(2), logp.stride(0), logp.stride(1),
        out.stride(0), out.stride(1), out.stride(2),
        BLOCK_L=triton.next_power_of_2(n_l), BLOCK_K=triton.next_power_of_2(n_k),
        MAX_SEMIRING=semiring == "max", F64=logp.dtype == torch.float64)
    return out


def reverse_edges(edges: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """The lattice of each reversed text: the edge ending at ``t`` with length ``l`` becomes
    the edge ending at ``n - t + l`` (same id, same length).  ``lattice_forward`` on it gives
    the backward variables: ``beta[b, s] = alpha_rev[b, n_b - s]``."""
    n_b, n_t, n_l = edges.shape
    out = torch.full_like(edges, -1)
    t = torch.arange(1, n_t + 1, device=edges.device)[None, :, None]
    ln = torch.arange(1, n_l + 1, device=edges.device)[None, None, :]
    n = lengths.to(edges.device)[:, None, None]
    new_t = n - t + ln  # 1-based end position in the reversed text
    ok = (edges >= 0) & (t <= n) & (ln <= t)  # an edge starting before the text is none
    b_idx = torch.arange(n_b, device=edges.device)[:, None, None].expand_as(edges)
    l_idx = (ln - 1).expand_as(edges)
    out[b_idx[ok], (new_t - 1).expand_as(edges)[ok], l_idx[ok]] = edges[ok]
    return out
