"""Fused scaled rotary embedding (HIPE-RoPE): per-(head, frequency) scale + rotation of q and k.

Maths.  Rotary embeddings in the rotate-half layout pair channel ``f`` with ``f + D/2`` of a
head of size ``D`` and rotate the pair by the angle ``theta[t, f] = pos_t * omega_f``.  HIPE
(the hippocampus-inspired positional embedding) first multiplies both channels of the pair by a
fixed scale ``s[h, f]`` that depends on the head and the frequency::

    y[b, h, t, f]       = s[h, f] * (x1 cos(theta[t, f]) - x2 sin(theta[t, f]))
    y[b, h, t, f + D/2] = s[h, f] * (x2 cos(theta[t, f]) + x1 sin(theta[t, f]))

with ``x1 = x[b, h, t, f]``, ``x2 = x[b, h, t, f + D/2]``.  The same map is applied to q and
k, so the attention logit at relative distance ``Delta`` weights frequency ``f`` by
``s[h, f]^2``.  Plain RoPE is ``s = 1``.  The map is linear, ``y = s R(theta) x``, with an
orthogonal ``R``, so its vector-Jacobian product is the inverse rotation with the same scale,
``dx = s R(-theta) dy``: the backward pass is the same kernel with ``sin`` negated (``CONJ``).

Memory traffic.  An unfused implementation reads and writes q and k several times (scale,
``rotate_half``, two products, a sum): about 5 passes over each of q and k.  The kernel reads
each element of q and k once and writes it once, and reads the small ``[T, D/2]`` cos/sin
tables and the ``[H, D/2]`` scale once per tile for both q and k.  It is memory bound:
``4 * B*H*T*D`` element moves for q and k together (plus tables that stay in L2).

Constraints.  q and k are ``[B, H, T, D]`` with the same shape and dtype (float16, bfloat16
or float32; arithmetic in float32), ``D`` even, last dimension contiguous (other strides are
free, e.g. a transposed ``[B, T, H, D]`` projection); ``cos`` and ``sin`` are ``[T, D/2]``
float32, ``scale`` is ``[H, D/2]`` float32.  Position offsets (KV caches) are the caller's
business: pass the rows of the tables for the positions in use.

Precision.  The Triton path takes float16, bfloat16 or float32 and rotates in fp32 (tables are
fp32), storing in the input dtype; float64 goes to the reference only (the tests' oracle).
``impl="auto"`` is Triton for CUDA tensors at every shape: no crossover against torch eager /
``torch.compile`` has been measured yet (``python -m icml26.kernels.bench`` measures it on a
GPU).

References.  flash-attention's ``apply_rotary`` (tables in, rotate-half layout); the Triton
tutorials (masked tiles, one program per tile); Liger-Kernel's ``rope`` (q and k in one
launch, backward as the conjugate rotation); the HIPE scale is from the authors' OLMo fork
(``ScaledRotaryEmbedding``, github.com/AIogry/relative_PE).
"""

from __future__ import annotations

import torch

try:  # triton is a hard dependency, but keep CPU-only importers alive if it is broken
    import triton
    import triton.language as tl
except ImportError:  # pragma: no cover
    triton = None

DTYPES = (torch.float16, torch.bfloat16, torch.float32)


def scaled_rope_ref(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor,
                    scale: torch.Tensor) -> torch.Tensor:
    """Plain-torch scaled rotation of one tensor. ``[B, H, T, D] -> [B, H, T, D]``.

    Computed in float32 (or float64 for float64 input, which the tests use as the oracle)
    and cast back to ``x.dtype``; differentiable by autograd.
    """
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    half = x.shape[-1] // 2
    xf = x.to(work)
    x1, x2 = xf[..., :half], xf[..., half:]
    sc = scale.to(work)[:, None, :]  # [H, 1, D/2]
    c, s = sc * cos.to(work), sc * sin.to(work)  # [H, T, D/2]: the scale folds into the tables
    y1 = x1 * c - x2 * s
    y2 = x2 * c + x1 * s
    return torch.cat((y1, y2), dim=-1).to(x.dtype)


if triton is not None:

    @triton.jit
    def _scaled_rope_kernel(q_ptr, k_ptr, oq_ptr, ok_ptr, cos_ptr, sin_ptr, scale_ptr,
                            stride_qb, stride_qh, stride_qt,
                            stride_kb, stride_kh, stride_kt,
                            stride_oqb, stride_oqh, stride_oqt,
                            stride_okb, stride_okh, stride_okt,
                            stride_ct, stride_st, stride_sh,
                            n_heads, seq_len, half,
                            BLOCK_T: tl.constexpr, BLOCK_F: tl.constexpr, CONJ: tl.constexpr):
        pid_t = tl.program_id(0).to(tl.int64)
        pid_bh = tl.program_id(1).to(tl.int64)
        b = pid_bh // n_heads
        h = pid_bh % n_heads
        t = pid_t * BLOCK_T + tl.arange(0, BLOCK_T)
        f = tl.arange(0, BLOCK_F)
        mask = (t[:, None] < seq_len) & (f[None, :] < half)
        c = tl.load(cos_ptr + t[:, None] * stride_ct + f[None, :], mask=mask, other=0.0)
        s = tl.load(sin_ptr + t[:, None] * stride_st + f[None, :], mask=mask, other=0.0)
        if CONJ:  # backward: rotate by -theta
            s = -s
        sc = tl.load(scale_ptr + h * stride_sh + f, mask=f < half, other=0.0)[None, :]
        cs = c * sc  # the scale folds into the rotation: s R(theta)
        ss = s * sc

        q_row = q_ptr + b * stride_qb + h * stride_qh + t[:, None] * stride_qt + f[None, :]
        q1 = tl.load(q_row, mask=mask, other=0.0).to(tl.float32)
        q2 = tl.load(q_row + half, mask=mask, other=0.0).to(tl.float32)
        oq_row = oq_ptr + b * stride_oqb + h * stride_oqh + t[:, None] * stride_oqt + f[None, :]
        tl.store(oq_row, (q1 * cs - q2 * ss).to(oq_ptr.dtype.element_ty), mask=mask)
        tl.store(oq_row + half, (q2 * cs + q1 * ss).to(oq_ptr.dtype.element_ty), mask=mask)

        k_row = k_ptr + b * stride_kb + h * stride_kh + t[:, None] * stride_kt + f[None, :]
        k1 = tl.load(k_row, mask=mask, other=0.0).to(tl.float32)
        k2 = tl.load(k_row + half, mask=mask, other=0.0).to(tl.float32)
        ok_row = ok_ptr + b * stride_okb + h * stride_okh + t[:, None] * stride_okt + f[None, :]
        tl.store(ok_row, (k1 * cs - k2 * ss).to(ok_ptr.dtype.element_ty), mask=mask)
        tl.store(ok_row + half, (k2 * cs + k1 * ss).to(ok_ptr.dtype.element_ty), mask=mask)


def _check(q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor,
           scale: torch.Tensor) -> None:
    if q.ndim != 4 or q.shape != k.shape:
        raise ValueError(f"q and k must both be [B, H, T, D] with equal shapes, got "
                         f"{tuple(q.shape)} and {tuple(k.shape)}")
    bsz, heads, seq, dim = q.shape
    if dim % 2 or dim == 0:
        raise ValueError(f"head size D must be even and positive, got {dim}")
    if q.dtype != k.dtype or q.dtype not in (*DTYPES, torch.float64):
        raise ValueError(f"q and k must share a float dtype in {DTYPES}, got {q.dtype}, "
                         f"{k.dtype}")
    if cos.shape != (seq, dim // 2) or sin.shape != (seq, dim // 2):
        raise ValueError(f"cos and sin must be [T, D/2] = {(seq, dim // 2)}, got "
                         f"{tuple(cos.shape)} and {tuple(sin.shape)}")
    if scale.shape != (heads, dim // 2):
        raise ValueError(f"scale must be [H, D/2] = {(heads, dim // 2)}, got "
                         f"{tuple(scale.shape)}")
    devices = {q.device, k.device, cos.device, sin.device, scale.device}
    if len(devices) != 1:
        raise ValueError(f"all inputs must be on one device, got {sorted(map(str, devices))}")


def _launch(q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor,
            scale: torch.Tensor, conj: bool,
            out: tuple[torch.Tensor, torch.Tensor] | None = None
            ) -> tuple[torch.Tensor, torch.Tensor]:
    """Launch the kernel; ``out`` = preallocated contiguous ``(oq, ok)`` (tests pass NaNs)."""
    if q.dtype not in DTYPES:
        raise ValueError(f"impl='triton' needs q, k in {DTYPES}, got {q.dtype}")
    if q.stride(-1) != 1:
        q = q.contiguous()
    if k.stride(-1) != 1:
        k = k.contiguous()
    cos = cos.to(torch.float32).contiguous()
    sin = sin.to(torch.float32).contiguous()
    scale = scale.to(torch.float32).contiguous()
    bsz, heads, seq, dim = q.shape
    half = dim // 2
    if out is None:
        out = (torch.empty_like(q, memory_format=torch.contiguous_format),
               torch.empty_like(k, memory_format=torch.contiguous_format))
    oq, ok = out
    if q.numel() == 0:
        return oq, ok
    block_f = triton.next_power_of_2(half)
    block_t = max(1, min(triton.next_power_of_2(seq), max(1, 4096 // block_f), 64))
    grid = (triton.cdiv(seq, block_t), bsz * heads)
    _scaled_rope_kernel[grid](
        q, k, oq, ok, cos, sin, scale,
        q.stride(0), q.stride(1), q.stride(2),
        k.stride(0), k.stride(1), k.stride(2),
        oq.stride(0), oq.stride(1), oq.stride(2),
        ok.stride(0), ok.stride(1), ok.stride(2),
        cos.stride(0), sin.stride(0), scale.stride(0),
        heads, seq, half,
        BLOCK_T=block_t, BLOCK_F=block_f, CONJ=conj)
    return oq, ok


class ScaledRopeFunction(torch.autograd.Function):
    """Triton forward and backward; the backward is the inverse rotation with the same scale.

    ``cos``, ``sin`` and ``scale`` are fixed buffers (no gradient), as in HIPE.
    """

    @staticmethod
    def forward(ctx, q, k, cos, sin, scale):
        ctx.save_for_backward(cos, sin, scale)
        return _launch(q, k, cos, sin, scale, conj=False)

    @staticmethod
    def backward(ctx, grad_q, grad_k):
        cos, sin, scale = ctx.saved_tensors
        if grad_q is None and grad_k is None:  # pragma: no cover - autograd never does this
            return None, None, None, None, None
        if grad_q is None:
            grad_q = torch.zeros_like(grad_k)
        if grad_k is None:
            grad_k = torch.zeros_like(grad_q)
        dq, dk = _launch(grad_q, grad_k, cos, sin, scale, conj=True)
        return dq, dk, None, None, None


def scaled_rope(q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor,
                scale: torch.Tensor, impl: str = "auto") -> tuple[torch.Tensor, torch.Tensor]:
    """Scale by ``scale[h, f]`` and rotate q and k: ``([B,H,T,D], [B,H,T,D]) -> same``.

    ``impl="auto"`` runs the Triton kernel (with its autograd backward) on CUDA tensors and
    the torch reference otherwise; ``"triton"`` forces the kernel (on CPU only under
    ``TRITON_INTERPRET=1``); ``"torch"`` forces the reference.
    """
    _check(q, k, cos, sin, scale)
    if impl not in ("auto", "triton", "torch"):
        raise ValueError(f"impl must be 'auto', 'triton' or 'torch', got {impl!r}")
    use_triton = impl == "triton" or (impl == "auto" and q.is_cuda and triton is not None
                                      and q.dtype in DTYPES)
    if not use_triton:
        return scaled_rope_ref(q, cos, sin, scale), scaled_rope_ref(k, cos, sin, scale)
    if triton is None:  # pragma: no cover
        raise RuntimeError("impl='triton' needs the triton package")
    return ScaledRopeFunction.apply(q, k, cos, sin, scale)
