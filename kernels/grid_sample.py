"""Bilinear grid sampling of a channels-last feature map, forward and backward.

Maths.  A feature map ``F [B, H, W, C]`` is read at ``K`` continuous points per image,
``p = (x, y) in [0, 1]^2`` (``coords [B, K, 2]``), in pixel units ``ix = x (W - 1)``,
``iy = y (H - 1)`` (``align_corners=True``), clamped to the map (``padding_mode="border"``)::

    x0 = floor(ix), x1 = x0 + 1, a = ix - x0        (the same for y: y0, y1, b)
    out[b, k, :] = (1-a)(1-b) F[y0, x0] + a (1-b) F[y0, x1] + (1-a) b F[y1, x0] + a b F[y1, x1]

(a neighbour outside the map has weight 0; after clamping that only happens at the last
row / column, where its weight is 0 anyway).  The backward pass is::

    dF[y_i, x_j] += w_ij dout                                   (scatter-add, 4 per point)
    dx = (W - 1) sum_c dout_c [(1-b)(F[y0,x1] - F[y0,x0]) + b (F[y1,x1] - F[y1,x0])]_c
    dy = (H - 1) sum_c dout_c [(1-a)(F[y1,x0] - F[y0,x0]) + a (F[y1,x1] - F[y0,x1])]_c

with ``dx = 0`` where ``ix`` was clamped, the border included (torch's
``clip_coordinates_set_grad`` convention).  This is exactly
``torch.nn.functional.grid_sample(F.permute(0, 3, 1, 2), 2 p - 1, mode="bilinear",
padding_mode="border", align_corners=True)`` -- :func:`grid_sample_ref`, the oracle.

Memory traffic.  Forward: one program owns ``BLOCK_K`` points of one image and streams the
channels in ``BLOCK_C`` chunks; channels-last makes each of the 4 neighbour gathers a
contiguous ``4 C``-byte read, so traffic is ``16 B K C`` bytes in + ``4 B K C`` out (no
``[B, C, H, W]`` transpose, no materialised weights).  Backward: the same gathers for the
coordinate gradients, plus ``4 B K C`` float atomics into ``dF`` (zero-initialised, ``B H W C``
floats written once); atomics make the fp32 summation order, hence the last bits of ``dF``
where points share a pixel, run-dependent on a GPU.  With K << H W (GridS: 4 points in a 16x16
map) the cost is launch latency, and the fused backward saves the unfused chain's ~10 kernels.

Constraints.  ``feat``: ``[B, H, W, C]`` float32 (any strides); ``coords``: ``[B, K, 2]``
float32, ``(x, y)`` order; ``H, W >= 1``.

:func:`grid_sample` is differentiable in both inputs (a ``torch.autograd.Function``):
``impl="auto"`` runs the Triton kernels on CUDA tensors and :func:`grid_sample_torch` -- the
same gather / scatter-add algorithm in plain torch -- otherwise; ``"triton"`` forces the
kernels (on CPU only under ``TRITON_INTERPRET=1``); ``"reference"`` is ``F.grid_sample``.

Precision.  The Triton kernels take float32 only (fp32 weights, gathers and atomics; atomics
make the backward's summation order nondeterministic at fp32 rounding); the torch twin and the
reference also take float64.  ``impl="auto"`` is Triton for CUDA tensors at every shape: no
crossover against torch eager / ``torch.compile`` has been measured yet (``python -m
icml26.kernels.bench`` measures it on a GPU).

References.  PyTorch ``GridSampler.cpp`` (border clamping and its gradient); the authors'
``ActiveTokenSampler`` (Fediory/Grid-Sampler, ``core_idea/grid_pytorch.py``); Triton
tutorials; Liger-Kernel (torch reference + ``impl`` switch).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

try:  # triton is a hard dependency, but keep CPU-only importers alive if it is broken
    import triton
    import triton.language as tl
except ImportError:  # pragma: no cover
    triton = None

IMPLS = ("auto", "triton", "torch", "reference")


# --------------------------------------------------------------------------- references
def grid_sample_ref(feat: torch.Tensor, coords: torch.Tensor) -> torch.Tensor:
    """``F.grid_sample`` oracle. ``[B, H, W, C], [B, K, 2] -> [B, K, C]`` (autograd native)."""
    grid = (2.0 * coords - 1.0)[:, :, None, :]  # [B, K, 1, 2]
    out = F.grid_sample(feat.permute(0, 3, 1, 2), grid, mode="bilinear",
                        padding_mode="border", align_corners=True)  # [B, C, K, 1]
    return out[..., 0].permute(0, 2, 1)


def _corners(coords: torch.Tensor, h: int, w: int):
    """Pixel positions, clamp-gradient masks, floor corners and fractions (torch path)."""
    ix = coords[..., 0] * (w - 1)
    iy = coords[..., 1] * (h - 1)
    gx = ((ix > 0) & (ix < w - 1)).to(coords.dtype)  # border counts as clamped (torch)
    gy = ((iy > 0) & (iy < h - 1)).to(coords.dtype)
    ix, iy = ix.clamp(0, w - 1), iy.clamp(0, h - 1)
    x0, y0 = ix.floor(), iy.floor()
    return x0.long(), y0.long(), ix - x0, iy - y0, gx, gy


def _neighbours(feat, x0, y0):
    """The 4 neighbour rows ``[B, K, C]`` (zero outside the map) and their flat row indices
    into ``feat.reshape(B H W, C)``."""
    b, h, w, c = feat.shape
    flat = feat.reshape(b * h * w, c)
    base = (torch.arange(b, device=feat.device) * (h * w))[:, None]
    out = []
    for dy in (0, 1):
        for dx in (0, 1):
            xx, yy = x0 + dx, y0 + dy
            ok = (xx < w) & (yy < h)
            idx = base + yy.clamp(max=h - 1) * w + xx.clamp(max=w - 1)  # [B, K]
            v = flat.index_select(0, idx.reshape(-1)).reshape(*idx.shape, c) * ok[..., None]
            out.append((v, idx, ok))
    return out


def grid_sample_torch_forward(feat: torch.Tensor, coords: torch.Tensor) -> torch.Tensor:
    """The kernel's forward in plain torch: 4 gathers and the bilinear weights."""
    x0, y0, a, b_, _, _ = _corners(coords, feat.shape[1], feat.shape[2])
    (v00, *_), (v01, *_), (v10, *_), (v11, *_) = _neighbours(feat, x0, y0)
    a, b_ = a[..., None], b_[..., None]
    return (1 - a) * (1 - b_) * v00 + a * (1 - b_) * v01 + (1 - a) * b_ * v10 + a * b_ * v11


def grid_sample_torch_backward(feat: torch.Tensor, coords: torch.Tensor, grad_out: torch.Tensor
                               ) -> tuple[torch.Tensor, torch.Tensor]:
    """The kernel's backward in plain torch: scatter-add into ``dF`` and coordinate grads."""
    bsz, h, w, c = feat.shape
    x0, y0, a, b_, gx, gy = _corners(coords, h, w)
    nb = _neighbours(feat, x0, y0)
    (v00, *_), (v01, *_), (v10, *_), (v11, *_) = nb
    a3, b3 = a[..., None], b_[..., None]
    weights = ((1 - a3) * (1 - b3), a3 * (1 - b3), (1 - a3) * b3, a3 * b3)
    gfeat = torch.zeros(bsz * h * w, c, dtype=feat.dtype, device=feat.device)
    for (_, idx, ok), wt in zip(nb, weights):
        gfeat.index_add_(0, idx.reshape(-1), (grad_out * wt * ok[..., None]).reshape(-1, c))
    dvx = (1 - b3) * (v01 - v00) + b3 * (v11 - v10)
    dvy = (1 - a3) * (v10 - v00) + a3 * (v11 - v01)
    dx = (grad_out * dvx).sum(-1) * (w - 1) * gx
    dy = (grad_out * dvy).sum(-1) * (h - 1) * gy
    return gfeat.reshape(bsz, h, w, c), torch.stack([dx, dy], dim=-1)


# --------------------------------------------------------------------------- kernels
if triton is not None:

    @triton.jit
    def _corner_setup(c_ptr, b, kk, k_ok, xmax, ymax, stride_cb, stride_ck, stride_cd):
        """Clamped pixel coordinates, floor corners, fractions and clamp-gradient masks."""
        base = c_ptr + b * stride_cb + kk * stride_ck
        x = tl.load(base, mask=k_ok, other=0.0)
        y = tl.load(base + stride_cd, mask=k_ok, other=0.0)
        ix = x * xmax
        iy = y * ymax
        gx = ((ix > 0) & (ix < xmax)).to(tl.float32)  # the border counts as clamped (torch)
        gy = ((iy > 0) & (iy < ymax)).to(tl.float32)
        ix = tl.minimum(tl.maximum(ix, 0.0), xmax)
        iy = tl.minimum(tl.maximum(iy, 0.0), ymax)
        fx, fy = tl.floor(ix), tl.floor(iy)
        return fx.to(tl.int64), fy.to(tl.int64), ix - fx, iy - fy, gx, gy

    @triton.jit
    def _grid_sample_fwd_kernel(f_ptr, c_ptr, o_ptr, n_points, height, width, n_chan,
                                xmax, ymax,
                                stride_fb, stride_fh, stride_fw, stride_fc,
                                stride_cb, stride_ck, stride_cd,
                                stride_ob, stride_ok, stride_oc,
                                BLOCK_K: tl.constexpr, BLOCK_C: tl.constexpr):
        b = tl.program_id(0).to(tl.int64)
        kk = tl.program_id(1).to(tl.int64) * BLOCK_K + tl.arange(0, BLOCK_K)
        k_ok = kk < n_points
        x0, y0, a, bb, _, _ = _corner_setup(c_ptr, b, kk, k_ok, xmax, ymax, stride_cb,
                                            stride_ck, stride_cd)
        ok01 = k_ok & (x0 + 1 < width)
        ok10 = k_ok & (y0 + 1 < height)
        ok11 = ok01 & ok10
        p00 = f_ptr + b * stride_fb + y0 * stride_fh + x0 * stride_fw  # [BLOCK_K] pointers
        w00 = ((1 - a) * (1 - bb))[:, None]
        w01 = (a * (1 - bb))[:, None]
        w10 = ((1 - a) * bb)[:, None]
        w11 = (a * bb)[:, None]
        for c0 in range(0, n_chan, BLOCK_C):
            cc = c0 + tl.arange(0, BLOCK_C)
            c_ok = cc < n_chan
            off = p00[:, None] + cc[None, :] * stride_fc
            m = k_ok[:, None] & c_ok[None, :]
            v00 = tl.load(off, mask=m, other=0.0)
            v01 = tl.load(off + stride_fw, mask=ok01[:, None] & c_ok[None, :], other=0.0)
            v10 = tl.load(off + stride_fh, mask=ok10[:, None] & c_ok[None, :], other=0.0)
            v11 = tl.load(off + stride_fh + stride_fw, mask=ok11[:, None] & c_ok[None, :],
                          other=0.0)
            out = w00 * v00 + w01 * v01 + w10 * v10 + w11 * v11
            tl.store(o_ptr + b * stride_ob + kk[:, None] * stride_ok + cc[None, :] * stride_oc,
                     out, mask=m)

    @triton.jit
    def _grid_sample_bwd_kernel(f_ptr, c_ptr, g_ptr, gf_ptr, gc_ptr,
                                n_points, height, width, n_chan, xmax, ymax,
                                stride_fb, stride_fh, stride_fw, stride_fc,
                                stride_cb, stride_ck, stride_cd,
                                stride_gb, stride_gk, stride_gc,
                                BLOCK_K: tl.constexpr, BLOCK_C: tl.constexpr):
        b = tl.program_id(0).to(tl.int64)
        kk = tl.program_id(1).to(tl.int64) * BLOCK_K + tl.arange(0, BLOCK_K)
        k_ok = kk < n_points
        x0, y0, a, bb, gx, gy = _corner_setup(c_ptr, b, kk, k_ok, xmax, ymax, stride_cb,
                                              stride_ck, stride_cd)
        ok01 = k_ok & (x0 + 1 < width)
        ok10 = k_ok & (y0 + 1 < height)
        ok11 = ok01 & ok10
        p00 = f_ptr + b * stride_fb + y0 * stride_fh + x0 * stride_fw
        # dF is a contiguous [B, H, W, C] buffer
        q00 = gf_ptr + ((b * height + y0) * width + x0) * n_chan
        a2, b2 = a[:, None], bb[:, None]
        dx = tl.zeros([BLOCK_K], tl.float32)
        dy = tl.zeros([BLOCK_K], tl.float32)
        for c0 in range(0, n_chan, BLOCK_C):
            cc = c0 + tl.arange(0, BLOCK_C)
            c_ok = cc < n_chan
            m = k_ok[:, None] & c_ok[None, :]
            m01 = ok01[:, None] & c_ok[None, :]
            m10 = ok10[:, None] & c_ok[None, :]
            m11 = ok11[:, None] & c_ok[None, :]
            g = tl.load(g_ptr + b * stride_gb + kk[:, None] * stride_gk
                        + cc[None, :] * stride_gc, mask=m, other=0.0)
            off = p00[:, None] + cc[None, :] * stride_fc
            v00 = tl.load(off, mask=m, other=0.0)
            v01 = tl.load(off + stride_fw, mask=m01, other=0.0)
            v10 = tl.load(off + stride_fh, mask=m10, other=0.0)
            v11 = tl.load(off + stride_fh + stride_fw, mask=m11, other=0.0)
            dx += tl.sum(g * ((1 - b2) * (v01 - v00) + b2 * (v11 - v10)), axis=1)
            dy += tl.sum(g * ((1 - a2) * (v10 - v00) + a2 * (v11 - v01)), axis=1)
            q = q00[:, None] + cc[None, :]
            tl.atomic_add(q, g * (1 - a2) * (1 - b2), mask=m)
            tl.atomic_add(q + n_chan, g * a2 * (1 - b2), mask=m01)
            tl.atomic_add(q + width * n_chan, g * (1 - a2) * b2, mask=m10)
            tl.atomic_add(q + (width + 1) * n_chan, g * a2 * b2, mask=m11)
        out = gc_ptr + (b * n_points + kk) * 2  # contiguous [B, K, 2]
        tl.store(out, dx * xmax * gx, mask=k_ok)
        tl.store(out + 1, dy * ymax * gy, mask=k_ok)


def _blocks(k: int, c: int) -> tuple[int, int]:
    return (min(32, triton.next_power_of_2(max(k, 1))),
            min(64, triton.next_power_of_2(max(c, 1))))


def grid_sample_triton_forward(feat: torch.Tensor, coords: torch.Tensor,
                               out: torch.Tensor | None = None) -> torch.Tensor:
    """Launch the forward kernel; ``out`` (``[B, K, C]``) may be given pre-filled (tests)."""
    bsz, h, w, c = feat.shape
    k = coords.shape[1]
    if out is None:
        out = torch.empty(bsz, k, c, dtype=feat.dtype, device=feat.device)
    if out.numel():
        bk, bc = _blocks(k, c)
        _grid_sample_fwd_kernel[(bsz, triton.cdiv(k, bk))](
            feat, coords, out, k, h, w, c, float(w - 1), float(h - 1), *feat.stride(),
            *coords.stride(), *out.stride(),
            BLOCK_K=bk, BLOCK_C=bc)
    return out


def grid_sample_triton_backward(feat: torch.Tensor, coords: torch.Tensor,
                                grad_out: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Launch the backward kernel: ``(dF [B, H, W, C], dcoords [B, K, 2])``."""
    bsz, h, w, c = feat.shape
    k = coords.shape[1]
    gfeat = torch.zeros(bsz, h, w, c, dtype=feat.dtype, device=feat.device)
    gcoords = torch.empty(bsz, k, 2, dtype=feat.dtype, device=feat.device)
    if grad_out.numel():
        bk, bc = _blocks(k, c)
        _grid_sample_bwd_kernel[(bsz, triton.cdiv(k, bk))](
            feat, coords, grad_out, gfeat, gcoords, k, h, w, c, float(w - 1), float(h - 1),
            *feat.stride(),
            *coords.stride(), *grad_out.stride(), BLOCK_K=bk, BLOCK_C=bc)
    else:
        gcoords.zero_()
    return gfeat, gcoords


# --------------------------------------------------------------------------- autograd + wrapper
class GridSampleFunction(torch.autograd.Function):
    """Bilinear sampling with the hand-written backward (Triton or its torch twin)."""

    @staticmethod
    def forward(ctx, feat, coords, use_triton):
        ctx.save_for_backward(feat, coords)
        ctx.use_triton = use_triton
        if use_triton:
            return grid_sample_triton_forward(feat, coords)
        return grid_sample_torch_forward(feat, coords)

    @staticmethod
    def backward(ctx, grad_out):
        feat, coords = ctx.saved_tensors
        grad_out = grad_out.contiguous()
        if ctx.use_triton:
            gfeat, gcoords = grid_sample_triton_backward(feat, coords, grad_out)
        else:
            gfeat, gcoords = grid_sample_torch_backward(feat, coords, grad_out)
        return (gfeat if ctx.needs_input_grad[0] else None,
                gcoords if ctx.needs_input_grad[1] else None, None)


def _use_triton(impl: str, t: torch.Tensor) -> bool:
    if impl not in IMPLS:
        raise ValueError(f"impl must be one of {IMPLS}, got {impl!r}")
    use = impl == "triton" or (impl == "auto" and t.is_cuda and triton is not None)
    if use and triton is None:  # pragma: no cover
        raise RuntimeError("impl='triton' needs the triton package")
    return use


def check_inputs(feat: torch.Tensor, coords: torch.Tensor, dtypes=(torch.float32,)) -> None:
    """Raise ``ValueError`` on a bad shape or dtype (named in the message)."""
    if feat.ndim != 4 or min(feat.shape[1:3], default=0) < 1:
        raise ValueError(f"feat must be [B, H, W, C] with H, W >= 1, got {tuple(feat.shape)}")
    if coords.ndim != 3 or coords.shape[2] != 2 or coords.shape[0] != feat.shape[0]:
        raise ValueError(f"coords must be [B={feat.shape[0]}, K, 2] (x, y), got "
                         f"{tuple(coords.shape)}")
    for name, t in (("feat", feat), ("coords", coords)):
        if t.dtype not in dtypes:
            raise ValueError(f"{name} must be one of {dtypes}, got {t.dtype}")
    if coords.dtype != feat.dtype:
        raise ValueError(f"coords must have feat's dtype {feat.dtype}, got {coords.dtype}")


def grid_sample(feat: torch.Tensor, coords: torch.Tensor, impl: str = "auto") -> torch.Tensor:
    """Differentiable bilinear sampling. ``feat [B, H, W, C]``, ``coords [B, K, 2]`` in
    ``[0, 1]`` as ``(x, y)`` -> ``[B, K, C]``; gradients reach both inputs.

    ``impl``: ``"auto"`` (Triton on CUDA, the torch twin otherwise), ``"triton"``, ``"torch"``
    (float32 or float64) or ``"reference"`` (``F.grid_sample``).
    """
    use = _use_triton(impl, feat)
    check_inputs(feat, coords, (torch.float32,) if use else (torch.float32, torch.float64))
    if impl == "reference":
        return grid_sample_ref(feat, coords)
    return GridSampleFunction.apply(feat, coords, use)
