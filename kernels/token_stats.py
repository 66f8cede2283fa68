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

Precision.  Any float dtype in, all math in fp32 (online max / sum-exp with Triton's fast
``tl.exp``/``tl.log``), float32 out: the same contract as ``token_stats_ref``
(``log_softmax(logits.float())``), so float64 logits are *not* computed in float64 on either
path.  ``impl="auto"`` is Triton for CUDA tensors at every shape: no crossover against torch
eager / ``torch.compile`` has been measured yet (``python -m icml26.kernels.bench`` measures it
on a GPU).

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

    @triton.jit
    def _token_stats_rows_kernel(z_ptr, y_ptr, logp_ptr, mean_ptr, var_ptr, n_rows, stride_z,
                                 n_cols, BLOCK_M: tl.constexpr, BLOCK_V: tl.constexpr):
        # BLOCK_M whole rows per program (n_cols <= BLOCK_V): one load of a
        # [BLOCK_M, BLOCK_V] tile, the three statistics as row reductions of it
        rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
        row_ok = rows < n_rows
        cols = tl.arange(0, BLOCK_V)
        mask = row_ok[:, None] & (cols < n_cols)[None, :]
        z = tl.load(z_ptr + rows[:, None] * stride_z + cols[None, :], mask=mask,
                    other=-float("inf")).to(tl.float32)
        mx = tl.max(z, 1)
        mx = tl.where(mx == -float("inf"), 0.0, mx)  # padding rows: keep them finite
        total = tl.sum(tl.exp(z - mx[:, None]), 1)
        lse = mx + tl.log(tl.where(total > 0, total, 1.0))  # padding rows: lse = 0, p = 0
        lp = z - lse[:, None]
        p = tl.exp(lp)
        mean = tl.sum(p * tl.where(p > 0, lp, 0.0), 1)  # no 0 * -inf on masked entries
        d = tl.where(p > 0, lp - mean[:, None], 0.0)
        var = tl.sum(p * d * d, 1)
        y = tl.load(y_ptr + rows, mask=row_ok, other=0)
        zy = tl.load(z_ptr + rows * stride_z + y, mask=row_ok, other=0.0).to(tl.float32)
        tl.store(logp_ptr + rows, zy - lse, mask=row_ok)
        tl.store(mean_ptr + rows, mean, mask=row_ok)
        tl.store(var_ptr + rows, var, mask=row_ok)


#: elements of the ``[rows, BLOCK_V]`` tile one program of the many-rows kernel loads
ROWS_TILE = 4096
MAX_ROWS_PER_PROGRAM = 64


def rows_per_program_for(n_cols: int, block_v: int) -> int:
    """Default rows per program: 1 when a row needs several chunks (the streaming kernel),
    else as many whole rows as fill a ``ROWS_TILE``-element tile (a power of two, <= 64):
    32 rows at DetectRouter's 96 characters, 4 at ``V = 1024``."""
    if block_v < n_cols:
        return 1
    return max(1, min(MAX_ROWS_PER_PROGRAM, ROWS_TILE // block_v))


def _use_triton(impl: str, t: torch.Tensor) -> bool:
    if impl not in IMPLS:
        raise ValueError(f"impl must be one of {IMPLS}, got {impl!r}")
    use = impl == "triton" or (impl == "auto" and t.is_cuda and triton is not None)
    if use and triton is None:
        raise RuntimeError("impl='triton' needs the triton package")
    return use


def token_stats(logits: torch.Tensor, target: torch.Tensor, impl: str = "auto",
                block_v: int | None = None, rows_per_program: int | None = None
                ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(log p(y), E[log p], Var[log p])`` per row of ``logits [N, V]`` with ``target [N]``.

    ``impl="auto"`` runs Triton on CUDA tensors and the torch reference otherwise; ``block_v``
    (a power of two) is the chunk of the vocabulary one iteration loads (default: the whole row
    up to 1024, so character vocabularies take one pass over HBM).  ``rows_per_program`` (a
    power of two; default :func:`rows_per_program_for`): when a row is one chunk, one program
    takes that many whole rows (small vocabularies: one row per program is launch-bound); 1
    forces the one-row streaming kernel.  Which default is fastest is unmeasured (no GPU run
    yet): the rule is the design, not a measured crossover.
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
    if rows_per_program is None:
        rows_per_program = rows_per_program_for(v, block_v)
    if rows_per_program < 1 or rows_per_program & (rows_per_program - 1):
        raise ValueError(f"rows_per_program must be a power of two >= 1, got "
                         f"{rows_per_program}")
    if rows_per_program > 1 and block_v < v:
        raise ValueError(f"rows_per_program > 1 needs whole rows in one chunk: block_v >= V = "
                         f"{v}, got {block_v}")
    logits = logits if logits.stride(-1) == 1 else logits.contiguous()
    target = target.to(torch.int64).contiguous()
    out = [torch.full((n,), float("nan"), dtype=torch.float32, device=logits.device)
           for _ in range(3)]
    if n and rows_per_program > 1:
        _token_stats_rows_kernel[(triton.cdiv(n, rows_per_program),)](
            logits, target, *out, n, logits.stride(0), v, BLOCK_M=rows_per_program,
            BLOCK_V=block_v)
    elif n:
        _token_stats_kernel[(n,)](logits, target, *out, logits.stride(0), v, BLOCK_V=block_v)
    return out[0], out[1], out[2]
