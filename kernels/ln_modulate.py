"""Fused per-token LayerNorm + modulate: ``y = (1 + scale) * LN(x) + shift``.

Maths.  For each token row ``x_n`` of ``[N, D]`` (``N = B * T`` tokens) with its own
conditioning ``shift_n, scale_n`` (``[N, D]``, e.g. from a per-token timestep embedding, as in
Self-Flow's ``modulate_per_token``)::

    mu_n = mean_d x_nd,   var_n = mean_d (x_nd - mu_n)^2
    xhat_nd = (x_nd - mu_n) / sqrt(var_n + eps)
    y_nd = (1 + scale_nd) * xhat_nd + shift_nd

LayerNorm without its own affine (DiT's ``elementwise_affine=False``): the affine part is the
per-token modulation.

Memory traffic.  Unfused, torch reads ``x`` for the statistics, writes ``xhat``, then reads
``xhat``, ``scale`` and ``shift`` and writes ``y`` (plus a temporary ``(1 + scale)``): about
``7 N D`` floats moved.  The kernel gives one program a block of rows, loads ``x``, ``scale``
and ``shift`` once, keeps the row in registers for the two reductions, and writes ``y``:
``4 N D`` floats, the bandwidth bound of the op.

Constraints.  ``x, shift, scale``: float32 or bf16/fp16, the same shape ``[..., D]`` (leading
dims flattened to rows), ``1 <= D <= 8192`` (a row must fit one block).  Statistics and the
output arithmetic are fp32; ``y`` has ``x``'s dtype.  Forward only: the kernel is used for
inference (probing, sampling); training runs the torch reference (autograd), and
:func:`ln_modulate` refuses ``impl="triton"`` on inputs that require grad rather than silently
dropping the gradient.

Precision.  float32, bf16 or fp16 storage; mean, variance, ``1/sqrt(var + eps)`` (fast fp32
``tl.sqrt``) and the modulation in fp32, the output cast to ``x.dtype`` (as the reference).  No
float64 path.  ``impl="auto"`` is Triton for CUDA tensors at every shape: no crossover against
torch eager / ``torch.compile`` has been measured yet (``python -m icml26.kernels.bench``
measures it on a GPU).

References.  Triton tutorial "Layer Normalization"; DiT (Peebles & Xie, adaLN ``modulate``);
black-forest-labs/Self-Flow ``modulate_per_token``; Liger-Kernel (reference + ``impl`` switch).
"""

from __future__ import annotations

import torch

try:  # triton is a hard dependency, but keep CPU-only importers alive if it is broken
    import triton
    import triton.language as tl
except ImportError:  # pragma: no cover
    triton = None

IMPLS = ("auto", "triton", "torch")
MAX_DIM = 8192
DTYPES = (torch.float32, torch.float16, torch.bfloat16)


# --------------------------------------------------------------------------- reference
def ln_modulate_ref(x: torch.Tensor, shift: torch.Tensor, scale: torch.Tensor,
                    eps: float = 1e-6) -> torch.Tensor:
    """Plain torch: ``[..., D] x3 -> [..., D]``; statistics in fp32, output in ``x.dtype``."""
    xf = x.float()
    xhat = torch.nn.functional.layer_norm(xf, (x.shape[-1],), eps=eps)
    return (xhat * (1 + scale.float()) + shift.float()).to(x.dtype)


# --------------------------------------------------------------------------- kernel
if triton is not None:

    @triton.jit
    def _ln_modulate_kernel(x_ptr, shift_ptr, scale_ptr, y_ptr, n_rows, n_cols,
                            stride_x, stride_sh, stride_sc, stride_y, eps,
                            BLOCK_M: tl.constexpr, BLOCK_D: tl.constexpr):
        pid = tl.program_id(0).to(tl.int64)
        rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
        cols = tl.arange(0, BLOCK_D)
        row_ok = rows < n_rows
        col_ok = cols < n_cols
        mask = row_ok[:, None] & col_ok[None, :]
        x = tl.load(x_ptr + rows[:, None] * stride_x + cols[None, :], mask=mask,
                    other=0.0).to(tl.float32)
        mean = tl.sum(x, axis=1) / n_cols
        diff = tl.where(mask, x - mean[:, None], 0.0)
        var = tl.sum(diff * diff, axis=1) / n_cols
        rstd = 1.0 / tl.sqrt(var + eps)
        sh = tl.load(shift_ptr + rows[:, None] * stride_sh + cols[None, :], mask=mask,
                     other=0.0).to(tl.float32)
        sc = tl.load(scale_ptr + rows[:, None] * stride_sc + cols[None, :], mask=mask,
                     other=0.0).to(tl.float32)
        y = diff * rstd[:, None] * (1.0 + sc) + sh
        tl.store(y_ptr + rows[:, None] * stride_y + cols[None, :],
                 y.to(y_ptr.dtype.element_ty), mask=mask)


# --------------------------------------------------------------------------- wrapper
def _use_triton(impl: str, t: torch.Tensor) -> bool:
    if impl not in IMPLS:
        raise ValueError(f"impl must be one of {IMPLS}, got {impl!r}")
    use = impl == "triton" or (impl == "auto" and t.is_cuda and triton is not None)
    if use and triton is None:  # pragma: no cover
        raise RuntimeError("impl='triton' needs the triton package")
    return use


def _rows(t: torch.Tensor) -> torch.Tensor:
    t = t.reshape(-1, t.shape[-1])
    return t if t.stride(-1) == 1 else t.contiguous()


def ln_modulate(x: torch.Tensor, shift: torch.Tensor, scale: torch.Tensor, eps: float = 1e-6,
                impl: str = "auto", block_m: int = 4,
                out: torch.Tensor | None = None) -> torch.Tensor:
    """``(1 + scale) * LayerNorm(x) + shift`` per token; ``[..., D]`` in, ``[..., D]`` out.

    ``impl="auto"`` runs Triton on CUDA tensors when no gradient is needed and the torch
    reference otherwise (training, CPU); ``"triton"`` forces the kernel (on CPU only under
    ``TRITON_INTERPRET=1``); ``"torch"`` the reference.  ``out`` (same shape, contiguous)
    receives the result (tests pre-fill it with NaN).
    """
    if x.shape != shift.shape or x.shape != scale.shape:
        raise ValueError(f"x, shift and scale must share one shape, got {tuple(x.shape)}, "
                         f"{tuple(shift.shape)}, {tuple(scale.shape)}")
    if x.ndim < 1 or not 1 <= x.shape[-1] <= MAX_DIM:
        raise ValueError(f"the last dimension D must be in [1, {MAX_DIM}], got "
                         f"{tuple(x.shape)}")
    if x.dtype not in DTYPES:
        raise ValueError(f"x must be one of {DTYPES}, got {x.dtype}")
    if not eps > 0:
        raise ValueError(f"eps must be > 0, got {eps}")
    grad = torch.is_grad_enabled() and any(t.requires_grad for t in (x, shift, scale))
    if impl == "auto" and grad:
        impl = "torch"
    if not _use_triton(impl, x):
        y = ln_modulate_ref(x, shift, scale, eps)
        if out is None:
            return y
        return out.copy_(y)
    if grad:
        raise ValueError("impl='triton' is forward-only; inputs that require grad must use "
                         "impl='torch' (or 'auto', which does)")
    if block_m < 1 or block_m & (block_m - 1):
        raise ValueError(f"block_m must be a power of two >= 1, got {block_m}")
    xr, shr, scr = _rows(x), _rows(shift), _rows(scale)
    n, d = xr.shape
    y = torch.empty_like(xr) if out is None else out.view(n, d)
    if out is not None and (out.shape != x.shape or not out.is_contiguous()):
        raise ValueError("out must be contiguous and of x's shape")
    grid = (triton.cdiv(n, block_m),)
    _ln_modulate_kernel[grid](xr, shr, scr, y, n, d, xr.stride(0), shr.stride(0),
                              scr.stride(0), y.stride(0), eps,
                              BLOCK_M=block_m, BLOCK_D=triton.next_power_of_2(d))
    return y.view(x.shape) if out is None else out
