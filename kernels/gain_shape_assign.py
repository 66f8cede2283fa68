"""Fused gain-shape codeword assignment and the scatter-add centroid update.

Maths.  A gain-shape codebook holds ``K`` unit shapes ``s_k`` (rows of ``[K, d]``) and gains
``g_k``; codeword ``k`` is ``c_k = g_k s_k``.  Each row ``x_n`` of ``[N, d]`` is assigned to::

    rule="cos":  k*(n) = argmax_k <x_n, s_k>                 (= argmax_k cos(x_n, s_k))
    rule="l2":   k*(n) = argmax_k 2 g_k <x_n, s_k> - g_k^2   (= argmin_k ||x_n - g_k s_k||^2)

The second form drops ``||x_n||^2``, which does not depend on ``k``.  Plain l2 k-means with
centroids ``c_k`` is the special case ``g_k = ||c_k||, s_k = c_k / ||c_k||``.  Ties go to the
lowest index (torch's ``argmax`` convention), in both implementations.  The best score is
returned too: in ``cos`` mode it is ``<x_n, s_k*>``, the l2-optimal per-token gain of the row.

The centroid update is the M-step of Lloyd's algorithm written as one scatter-add pass::

    sum_x[k] = sum_{n: k*(n)=k} w_n x_n,    sum_u[k] = sum_{n: k*(n)=k} w_n x_n / ||x_n||,
    sum_w[k] = sum_{n: k*(n)=k} w_n

from which the k-means mean (``sum_x / sum_w``), the GSKM shape (``normalize(sum_u)``) and the
l2-optimal cluster gain (``<sum_x, s_k> / sum_w``) follow in O(K d).

Memory traffic.  Assignment: an unfused implementation writes and re-reads the ``N x K``
score matrix (``8 N K`` bytes in fp32, 8x the input at K=256, d=128) and launches three
kernels.  Here one program owns ``BLOCK_N`` rows, loads them once (``d <= 256``, so a row
tile fits in registers), streams the codebook through in ``BLOCK_K`` chunks (it stays in L2:
``K d`` floats, 128 KB at K=256, d=128) and keeps a running (max, argmax) per row, so HBM
traffic is ``4 N d`` bytes in + ``12 N`` bytes out: the bandwidth bound.  At K=256 fp32
the ``2 N K d`` FLOPs dominate instead, so the kernel is compute-bound there.  The update reads
``x`` once and issues ``N (2 d + 1)`` float atomics into a ``[K, d]`` table that lives in L2;
atomics make the fp32 summation order (and so the last bits) run-dependent on a GPU.

Constraints.  ``x``: ``[N, d]`` float32, finite; ``shapes``: ``[K, d]`` float32 (unit rows for
``rule="cos"``; any rows are accepted); ``gains``: ``[K]`` float32, required for ``rule="l2"``;
``1 <= d <= 256``, ``K >= 1``.  ``tl.dot`` runs with ``input_precision="ieee"`` by default so
the fp32 scores are not rounded to TF32 (which would change argmaxes near ties on a GPU);
``precision="tf32x3"`` puts the products on tensor cores (3xTF32: a TF32 product of the high
parts plus the two cross terms, close to fp32 accuracy).  Under the interpreter both are
numpy fp32 matmuls, so only a GPU run tells them apart.

Precision. float32 only, fp32 accumulation of the ``x . s`` products (FMA order differs from
cuBLAS: best scores agree to fp32 rounding; ``tf32x3``: to about fp32 rounding); the ``cos``
rule's norm uses Triton's fast fp32 ``tl.sqrt``. ``impl="auto"`` is Triton for CUDA tensors at
every shape: no crossover against torch eager / ``torch.compile`` has been measured yet
(``python -m icml26.kernels.bench`` measures it on a GPU).

References.  Triton tutorials (matmul tiling, masks); FAISS's fused L2-argmin ("k-selection")
kernels; Liger-Kernel (torch reference + ``impl`` switch); the spec ``shared/specs/gsrq.md``.
"""

from __future__ import annotations

import torch

try:  # triton is a hard dependency, but keep CPU-only importers alive if it is broken
    import triton
    import triton.language as tl
except ImportError:  # pragma: no cover
    triton = None

MAX_DIM = 256
RULES = ("cos", "l2")
IMPLS = ("auto", "triton", "torch")
DOT_PRECISIONS = ("ieee", "tf32x3")
#: Rows per chunk of the torch reference: bounds its ``[chunk, K]`` score block (8 MB at K=256).
REF_CHUNK = 8192


# --------------------------------------------------------------------------- references
def gain_shape_assign_ref(x: torch.Tensor, shapes: torch.Tensor,
                          gains: torch.Tensor | None = None,
                          rule: str = "cos") -> tuple[torch.Tensor, torch.Tensor]:
    """Plain-torch assignment. ``[N, d], [K, d], [K] -> (idx [N] int64, best [N] float32)``.

    Scores are computed block by block over rows (never the whole ``N x K`` at once), with
    ``torch.max``'s first-index tie rule.
    """
    n = x.shape[0]
    idx = torch.empty(n, dtype=torch.int64, device=x.device)
    best = torch.empty(n, dtype=x.dtype, device=x.device)
    for lo in range(0, n, REF_CHUNK):
        dots = x[lo : lo + REF_CHUNK] @ shapes.T  # [chunk, K]
        if rule == "l2":  # 2 g <x, s> - g^2, in place (same rounding as the expression)
            dots.mul_(2.0 * gains).sub_(gains * gains)
        best[lo : lo + REF_CHUNK], idx[lo : lo + REF_CHUNK] = dots.max(dim=1)
    return idx, best


def centroid_sums_ref(x: torch.Tensor, idx: torch.Tensor, n_codes: int,
                      weights: torch.Tensor | None = None, unit: bool = False
                      ) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor]:
    """Plain-torch scatter-add. ``[N, d], [N], K, [N] -> (sum_x [K, d], sum_u [K, d] | None,
    sum_w [K])`` with ``sum_u`` the weighted sum of unit rows (``None`` unless ``unit``)."""
    w = torch.ones(x.shape[0], dtype=x.dtype, device=x.device) if weights is None else weights
    sum_x = torch.zeros(n_codes, x.shape[1], dtype=x.dtype, device=x.device)
    sum_x.index_add_(0, idx, x if weights is None else w[:, None] * x)
    sum_w = torch.zeros(n_codes, dtype=x.dtype, device=x.device).index_add_(0, idx, w)
    sum_u = None
    if unit:
        norm = x.norm(dim=1, keepdim=True)
        u = torch.where(norm > 0, x / norm.clamp_min(torch.finfo(x.dtype).tiny), 0.0)
        sum_u = torch.zeros_like(sum_x).index_add_(0, idx, w[:, None] * u)
    return sum_x, sum_u, sum_w


# --------------------------------------------------------------------------- kernels
if triton is not None:

    @triton.jit
    def _gain_shape_assign_kernel(x_ptr, s_ptr, g_ptr, idx_ptr, best_ptr,
                                  n_rows, n_codes, dim,
                                  stride_xn, stride_xd, stride_sk, stride_sd,
                                  BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                                  BLOCK_D: tl.constexpr, L2_RULE: tl.constexpr,
                                  DOT_PRECISION: tl.constexpr):
        pid = tl.program_id(0).to(tl.int64)
        rows = pid * BLOCK_N + tl.arange(0, BLOCK_N)
        row_ok = rows < n_rows
        dd = tl.arange(0, BLOCK_D)
        d_ok = dd < dim
        # the row tile is loaded once and reused against every codebook chunk
        x = tl.load(x_ptr + rows[:, None] * stride_xn + dd[None, :] * stride_xd,
                    mask=row_ok[:, None] & d_ok[None, :], other=0.0)
        best = tl.full([BLOCK_N], float("-inf"), tl.float32)
        arg = tl.zeros([BLOCK_N], tl.int64)
        for k0 in range(0, n_codes, BLOCK_K):
            codes = k0 + tl.arange(0, BLOCK_K)
            code_ok = codes < n_codes
            s = tl.load(s_ptr + codes[None, :].to(tl.int64) * stride_sk
                        + dd[:, None] * stride_sd,
                        mask=d_ok[:, None] & code_ok[None, :], other=0.0)  # [BLOCK_D, BLOCK_K]
            dots = tl.dot(x, s, input_precision=DOT_PRECISION)  # [BLOCK_N, BLOCK_K], fp32
            if L2_RULE:
                g = tl.load(g_ptr + codes, mask=code_ok, other=0.0)
                score = 2.0 * g[None, :] * dots - (g * g)[None, :]
            else:
                score = dots
            score = tl.where(code_ok[None, :], score, float("-inf"))
            chunk_best = tl.max(score, axis=1)
            chunk_arg = tl.argmax(score, axis=1, tie_break_left=True).to(tl.int64) + k0
            better = chunk_best > best  # strict: an equal score in a later chunk loses
            best = tl.where(better, chunk_best, best)
            arg = tl.where(better, chunk_arg, arg)
        tl.store(idx_ptr + rows, arg, mask=row_ok)
        tl.store(best_ptr + rows, best, mask=row_ok)

    @triton.jit
    def _centroid_sums_kernel(x_ptr, idx_ptr, w_ptr, sum_x_ptr, sum_u_ptr, sum_w_ptr,
                              n_rows, dim, stride_xn, stride_xd,
                              BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
                              UNIT: tl.constexpr):
        pid = tl.program_id(0).to(tl.int64)
        rows = pid * BLOCK_N + tl.arange(0, BLOCK_N)
        row_ok = rows < n_rows
        dd = tl.arange(0, BLOCK_D)
        d_ok = dd < dim
        mask = row_ok[:, None] & d_ok[None, :]
        x = tl.load(x_ptr + rows[:, None] * stride_xn + dd[None, :] * stride_xd,
                    mask=mask, other=0.0)
        code = tl.load(idx_ptr + rows, mask=row_ok, other=0)
        w = tl.load(w_ptr + rows, mask=row_ok, other=0.0)
        out = code[:, None] * dim + dd[None, :]  # sums are contiguous [K, dim]
        tl.atomic_add(sum_x_ptr + out, w[:, None] * x, mask=mask)
        if UNIT:
            norm = tl.sqrt(tl.sum(x * x, axis=1))
            scale = tl.where(norm > 0, w / tl.where(norm > 0, norm, 1.0), 0.0)
            tl.atomic_add(sum_u_ptr + out, scale[:, None] * x, mask=mask)
        tl.atomic_add(sum_w_ptr + code, w, mask=row_ok)


# --------------------------------------------------------------------------- wrappers
def _use_triton(impl: str, t: torch.Tensor) -> bool:
    if impl not in IMPLS:
        raise ValueError(f"impl must be one of {IMPLS}, got {impl!r}")
    use = impl == "triton" or (impl == "auto" and t.is_cuda and triton is not None)
    if use and triton is None:  # pragma: no cover
        raise RuntimeError("impl='triton' needs the triton package")
    return use


def _check_rows(x: torch.Tensor, name: str = "x") -> None:
    if x.ndim != 2:
        raise ValueError(f"{name} must be [N, d], got shape {tuple(x.shape)}")
    if x.dtype != torch.float32:
        raise ValueError(f"{name} must be float32, got {x.dtype}")
    if not 1 <= x.shape[1] <= MAX_DIM:
        raise ValueError(f"{name}: d must be in [1, {MAX_DIM}], got {x.shape[1]}")


def gain_shape_assign(x: torch.Tensor, shapes: torch.Tensor, gains: torch.Tensor | None = None,
                      rule: str = "cos", impl: str = "auto", block_n: int = 32,
                      block_k: int = 32, out: tuple[torch.Tensor, torch.Tensor] | None = None,
                      precision: str = "ieee") -> tuple[torch.Tensor, torch.Tensor]:
    """Nearest gain-shape codeword of every row, without an ``N x K`` score matrix.

    ``x [N, d]``, ``shapes [K, d]``, ``gains [K]`` (``rule="l2"``) -> ``(idx [N] int64,
    best [N] float32)``. ``impl="auto"`` runs Triton on CUDA tensors and the torch reference
    otherwise; ``"triton"`` forces the kernel (on CPU only under ``TRITON_INTERPRET=1``).
    ``out=(idx, best)`` writes into given buffers (tests pre-fill them with -1 / NaN).
    ``precision`` is the Triton path's ``tl.dot`` input precision: ``"ieee"`` (default: fp32
    FMAs, no tensor cores) or ``"tf32x3"`` (three TF32 tensor-core products, about fp32
    accuracy; the tensor-core path issue 29 asks for, not timed yet, so not the default).
    """
    _check_rows(x)
    _check_rows(shapes, "shapes")
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}, got {rule!r}")
    if shapes.shape[1] != x.shape[1]:
        raise ValueError(f"shapes must have d={x.shape[1]} columns like x, got "
                         f"{shapes.shape[1]}")
    if shapes.shape[0] < 1:
        raise ValueError("the codebook needs K >= 1 codewords, got K=0")
    if rule == "l2":
        if gains is None or gains.shape != (shapes.shape[0],) or gains.dtype != torch.float32:
            raise ValueError(f"rule='l2' needs float32 gains of shape ({shapes.shape[0]},), got "
                             f"{None if gains is None else (tuple(gains.shape), gains.dtype)}")
    if len({x.device, shapes.device} | ({gains.device} if gains is not None else set())) > 1:
        raise ValueError("x, shapes and gains must be on one device")
    n, d = x.shape
    if out is not None:
        idx, best = out
        if idx.shape != (n,) or idx.dtype != torch.int64 or best.shape != (n,) or \
                best.dtype != torch.float32:
            raise ValueError(f"out must be (int64 [{n}], float32 [{n}]) buffers")
    if not _use_triton(impl, x):
        ref_idx, ref_best = gain_shape_assign_ref(x, shapes, gains if rule == "l2" else None,
                                                  rule)
        if out is None:
            return ref_idx, ref_best
        idx.copy_(ref_idx)
        best.copy_(ref_best)
        return idx, best
    if precision not in DOT_PRECISIONS:
        raise ValueError(f"precision must be one of {DOT_PRECISIONS}, got {precision!r}")
    for b, name in ((block_n, "block_n"), (block_k, "block_k")):
        if b < 16 or b & (b - 1):
            raise ValueError(f"{name} must be a power of two >= 16 (tl.dot), got {b}")
    if out is None:
        idx = torch.empty(n, dtype=torch.int64, device=x.device)
        best = torch.empty(n, dtype=torch.float32, device=x.device)
    if n == 0:
        return idx, best
    g = gains.contiguous() if rule == "l2" else shapes.new_zeros(1)
    block_d = max(16, triton.next_power_of_2(d))
    grid = (triton.cdiv(n, block_n),)
    _gain_shape_assign_kernel[grid](x, shapes, g, idx, best, n, shapes.shape[0], d,
                                    x.stride(0), x.stride(1), shapes.stride(0),
                                    shapes.stride(1), BLOCK_N=block_n, BLOCK_K=block_k,
                                    BLOCK_D=block_d, L2_RULE=rule == "l2",
                                    DOT_PRECISION=precision)
    return idx, best


def centroid_sums(x: torch.Tensor, idx: torch.Tensor, n_codes: int,
                  weights: torch.Tensor | None = None, unit: bool = False, impl: str = "auto",
                  block_n: int = 32) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor]:
    """Scatter-add M-step: per-code weighted sums of rows (and of unit rows) and of weights.

    ``x [N, d]``, ``idx [N]`` in ``[0, K)``, ``weights [N] >= 0`` (default 1) ->
    ``(sum_x [K, d], sum_u [K, d] or None, sum_w [K])``.
    """
    _check_rows(x)
    if n_codes < 1:
        raise ValueError(f"n_codes must be >= 1, got {n_codes}")
    if idx.shape != (x.shape[0],) or idx.dtype != torch.int64:
        raise ValueError(f"idx must be int64 of shape ({x.shape[0]},), got "
                         f"{idx.dtype} {tuple(idx.shape)}")
    if weights is not None and (weights.shape != (x.shape[0],) or weights.dtype != x.dtype):
        raise ValueError(f"weights must be float32 of shape ({x.shape[0]},), got "
                         f"{weights.dtype} {tuple(weights.shape)}")
    if x.shape[0] and (int(idx.min()) < 0 or int(idx.max()) >= n_codes):
        raise ValueError(f"idx must lie in [0, {n_codes}), got [{int(idx.min())}, "
                         f"{int(idx.max())}]")
    if not _use_triton(impl, x):
        return centroid_sums_ref(x, idx, n_codes, weights, unit)
    if block_n < 1 or block_n & (block_n - 1):
        raise ValueError(f"block_n must be a power of two, got {block_n}")
    n, d = x.shape
    w = torch.ones(n, dtype=x.dtype, device=x.device) if weights is None else weights
    sum_x = torch.zeros(n_codes, d, dtype=x.dtype, device=x.device)
    sum_u = torch.zeros_like(sum_x) if unit else sum_x.new_zeros(1)
    sum_w = torch.zeros(n_codes, dtype=x.dtype, device=x.device)
    if n:
        _centroid_sums_kernel[(triton.cdiv(n, block_n),)](
            x, idx.contiguous(), w.contiguous(), sum_x, sum_u, sum_w, n, d,
            x.stride(0), x.stride(1), BLOCK_N=block_n,
            BLOCK_D=triton.next_power_of_2(d), UNIT=unit)
    return sum_x, (sum_u if unit else None), sum_w
