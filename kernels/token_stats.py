"""Fused per-token statistics of Fast-DetectGPT's analytic criterion, from logits.

Maths.  For one row of logits ``z [V]`` (a model's prediction of the token at one position)
and the observed token ``y``, with ``l = log_softmax(z)`` and ``p = exp(l)``::

    logp = l[y]                       log-probability of the observed token
    mean = sum_v p_v l_v              E_{x~p}[log p(x)]      (minus the entropy)
    var  = sum_v p_v l_v^2 - mean^2   Var_{x~p}[log p(x)]

Fast-DetectGPT (Bao et al., ICLR 2024) scores a text by the analytic conditional curvature
``(sum_t logp_t - sum_t mean_t) / sqrt(sum_t var_t)``; DetectRouter (arXiv 2602.01240) computes
it under each surrogate of its pool.  The variance is formed as ``sum p (l - mean)^2`` in the
second pass (not ``E[l^2] - mean^2``), which never goes negative by cancellation.

Memory traffic.  The unfused torch path materialises ``log_softmax`` (one ``[N, V]`` write and
read), then ``p``, ``p l`` and ``p l^2`` (three more ``[N, V]`` tensors): about ``6 N V`` floats
of traffic for ``N V`` floats of input.  Here one program owns one row and streams it in
``BLOCK_V`` chunks three times (online max / sum-exp, then the mean, then the centred second
moment); at the character vocabularies used here a row is one chunk, so it is read from HBM
once and the rest hits L1/L2: ``4 N V`` bytes in + ``12 N`` out, the bandwidth bound.

Constraints.  ``logits``: ``[N, V]`` float32 (or any float dtype, accumulated in fp32), finite
or ``-inf`` (a masked token; at least one finite entry per row); ``target``: ``[N]`` int64 in
``[0, V)``.  Returns three float32 ``[N]`` tensors.

References.  Triton tutorials (fused softmax, online max/sum-exp); Liger-Kernel (torch
reference + ``impl`` switch); Fast-DetectGPT's ``get_sampling_discrepancy_analytic``.
"""

from __future__ import annotations

import torch

try:  # triton is a hard dependency, but keep CPU-only importers alive if it is broken
    import triton
    import triton.language as tl
except ImportError:  # pragma: no cover
    triton = None

IMPLS = ("auto", "triton", "torch")


# --------------------------------------------------------------------------- reference
def token_stats_ref(logits: torch.Tensor, target: torch.Tensor
                    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Plain torch. ``[N, V], [N] -> (logp [N], mean [N], var [N])``, all float32."""
    lp = torch.log_softmax(logits.float(), dim=-1)
    p = lp.exp()
    plp = torch.where(p > 0, p * lp, torch.zeros_like(lp))  # 0 * -inf = 0
    mean = plp.sum(-1)
    dev = torch.where(p > 0, lp - mean[:, None], torch.zeros_like(lp))
    var = (p * dev * dev).sum(-1)
    return lp.gather(-1, target[:, None]).squeeze(-1), mean, var


# --------------------------------------------------------------------------- Triton
if triton is not None:

    @triton.jit
    def _token_stats_kernel(z_ptr, y_ptr, logp_ptr, mean_ptr, var_ptr, stride_z, n_cols,
                            BLOCK_V: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        base = z_ptr + row * stride_z
        cols = tl.arange(0, BLOCK_V)
        # pass 1: online max and sum of exp
        m = tl.full((BLOCK_V,), -float("inf"), tl.float32)
        s = tl.zeros((BLOCK_V,), tl.float32)
        for lo in range(0, n_cols, BLOCK_V):
            z = tl.load(base + lo + cols, mask=lo + cols < n_cols,
                        other=-float("inf")).to(tl.float32)
            m_new = tl.maximum(m, z)
            safe = tl.where(m_new == -float("inf"), 0.0, m_new)
            s = s * tl.exp(m - safe) + tl.exp(z - safe)
            m = m_new
        mx = tl.max(m, 0)
        lse = mx + tl.log(tl.sum(s * tl.exp(m - mx), 0))
        # pass 2: mean of log p
        acc = tl.zeros((BLOCK_V,), tl.float32)
        for lo in range(0, n_cols, BLOCK_V):
            z = tl.load(base + lo + cols, mask=lo + cols < n_cols,
                        other=-float("inf")).to(tl.float32)
            lp = z - lse
            p = tl.exp(lp)
            acc += p * tl.where(p > 0, lp, 0.0)  # no 0 * -inf on masked entries
        mean = tl.sum(acc, 0)
        # pass 3: centred second moment
        acc2 = tl.zeros((BLOCK_V,), tl.float32)
        for lo in range(0, n_cols, BLOCK_V):
            z = tl.load(base + lo + cols, mask=lo + cols < n_cols,
                        other=-float("inf")).to(tl.float32)
            lp = z - lse
            p = tl.exp(lp)
            d = tl.where(p > 0, lp - mean, 0.0)
            acc2 += p * d * d
        y = tl.load(y_ptr + row)
        zy = tl.load(base + y).to(tl.float32)
        tl.store(logp_ptr + row, zy - lse)
        tl.store(mean_ptr + row, mean)
        tl.store(var_ptr + row, tl.sum(acc2, 0))


def _use_triton(impl: str, t: torch.Tensor) -> bool:
    if impl not in IMPLS:
        raise ValueError(f"impl must be one of {IMPLS}, got {impl!r}")
    use = impl == "triton" or (impl == "auto" and t.is_cuda and triton is not None)
    if use and triton is None:
        raise RuntimeError("impl='triton' needs the triton package")
    return use


def token_stats(logits: torch.Tensor, target: torch.Tensor, impl: str = "auto",
                block_v: int | None = None
                ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(log p(y), E[log p], Var[log p])`` per row of ``logits [N, V]`` with ``target [N]``.

    ``impl="auto"`` runs Triton on CUDA tensors and the torch reference otherwise; ``block_v``
    (a power of two) is the chunk of the vocabulary one iteration loads (default: the whole row
    up to 1024, so character vocabularies take one pass over HBM).
    """
    if logits.ndim != 2:
        raise ValueError(f"logits must be [N, V], got shape {tuple(logits.shape)}")
    if target.shape != logits.shape[:1]:
        raise ValueError(f"target must be [N] = [{logits.shape[0]}], got "
                         f"{tuple(target.shape)}")
    if not logits.dtype.is_floating_point:
        raise ValueError(f"logits must be a float tensor, got {logits.dtype}")
    n, v = logits.shape
    if n and (int(target.min()) < 0 or int(target.max()) >= v):
        raise ValueError(f"target ids must lie in [0, {v})")
    if not _use_triton(impl, logits):
        return token_stats_ref(logits, target)
    if block_v is None:
        block_v = min(triton.next_power_of_2(max(v, 1)), 1024)
    if block_v & (block_v - 1):
        raise ValueError(f"block_v must be a power of two, got {block_v}")
    logits = logits if logits.stride(-1) == 1 else logits.contiguous()
    target = target.to(torch.int64).contiguous()
    out = [torch.full((n,), float("nan"), dtype=torch.float32, device=logits.device)
           for _ in range(3)]
    if n:
        _token_stats_kernel[(n,)](logits, target, *out, logits.stride(0), v, BLOCK_V=block_v)
    return out[0], out[1], out[2]
