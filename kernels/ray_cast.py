"""Batched 2-D ray casting against line segments and circles (first hit per ray).

Maths.  Ray ``r`` of scene ``b`` starts at the sensor origin ``o_b`` with unit direction
``d_r`` (shared by every scene: a LiDAR's beam pattern).  For a segment ``a -> a + e``::

    den = d x e,   t = ((a - o) x e) / den,   u = ((a - o) x d) / den
    hit  iff  den != 0,  t > T_MIN,  0 <= u <= 1

(``x`` is the 2-D cross product).  For a circle of centre ``c`` and radius ``rho > 0``::

    q = o - c,  beta = q . d,  disc = beta^2 - (q . q - rho^2)
    hit  iff  disc >= 0  and  t > T_MIN,  t = -beta - sqrt(disc)  (or -beta + sqrt(disc)
    when the first root is behind the sensor, i.e. the sensor is inside the circle)

The scan is the per-ray minimum ``t*(b, r) = min(max_range, min_j t_j)`` and the index of the
primitive that attains it (segments ``0..S-1``, then circles ``S..S+C-1``; ``-1``: no hit
closer than ``max_range``).  Ties go to the lowest index in both implementations.  A
degenerate segment (``e = 0``, so ``den = 0``) and a circle of radius ``<= 0`` never hit: they
pad ragged scenes and make a primitive non-occluding without changing any other ray's bits.

Memory traffic.  The reference broadcasts an ``[B, R, S]`` (and ``[B, R, C]``) intersection
tensor, ~10 temporaries of it, then reduces: ``O(B R (S + C))`` floats written and read back.
The kernel runs one program per block of ``BLOCK_R`` rays of one scene, loads that scene's
primitives one at a time as scalars (they stay in L1/L2: ``4 S + 3 C`` floats per scene) and
keeps a running (min, argmin) in registers, so HBM traffic is the ``B R`` outputs plus the
primitives: the bound is the ``O(B R (S + C))`` arithmetic, not memory.

Constraints.  float32 everywhere; ``origins [B, 2]``, ``dirs [R, 2]`` (unit rows),
``segments [B, S, 4]`` as ``(ax, ay, bx, by)``, ``circles [B, C, 3]`` as ``(cx, cy, rho)``;
``S + C >= 1``, ``max_range > 0``.

Precision.  float32 only (fp32 intersections, Triton's fast fp32 ``tl.sqrt``); ``ray_cast_ref``
also runs in float64, as the tests' oracle.  ``impl="auto"`` is Triton for CUDA tensors at every
shape: no crossover against torch eager / ``torch.compile`` has been measured yet (``python -m
icml26.kernels.bench`` measures it on a GPU).

References.  Triton tutorials (one program per row block, masks); the spec
``shared/specs/coval.md`` (batched 2-D ray casting, "one program per block of rays").
"""

from __future__ import annotations

import torch

try:  # triton is a hard dependency, but keep CPU-only importers alive if it is broken
    import triton
    import triton.language as tl
except ImportError:  # pragma: no cover
    triton = None

IMPLS = ("auto", "triton", "torch")
#: hits closer than this to the sensor are ignored (a surface through the sensor)
T_MIN = 1e-6


# --------------------------------------------------------------------------- reference
def _first_min(t: torch.Tensor, max_range: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-row min over the last axis and the lowest index attaining it (-1 if >= max)."""
    best = t.min(dim=-1).values
    ids = torch.arange(t.shape[-1], device=t.device)
    big = torch.iinfo(torch.int64).max
    arg = torch.where(t == best.unsqueeze(-1), ids, big).min(dim=-1).values
    hit = best < max_range
    return torch.where(hit, best, torch.full_like(best, max_range)), torch.where(hit, arg, -1)


def ray_cast_ref(origins: torch.Tensor, dirs: torch.Tensor, segments: torch.Tensor,
                 circles: torch.Tensor, max_range: float
                 ) -> tuple[torch.Tensor, torch.Tensor]:
    """Plain torch. ``[B, 2], [R, 2], [B, S, 4], [B, C, 3] -> (t [B, R], hit id [B, R] int64)``.

    Broadcasts every (ray, primitive) pair, then a first-index min.  Works in any float dtype
    (the tests use it in float64 as the oracle).
    """
    inf = torch.tensor(float("inf"), dtype=dirs.dtype, device=dirs.device)
    ox, oy = origins[:, 0, None, None], origins[:, 1, None, None]  # [B, 1, 1]
    dx, dy = dirs[None, :, 0, None], dirs[None, :, 1, None]  # [1, R, 1]
    parts = []
    if segments.shape[1]:
        ax, ay = segments[:, None, :, 0], segments[:, None, :, 1]  # [B, 1, S]
        ex, ey = segments[:, None, :, 2] - ax, segments[:, None, :, 3] - ay
        wx, wy = ax - ox, ay - oy
        den = dx * ey - dy * ex
        ok_den = den != 0
        safe = torch.where(ok_den, den, torch.ones_like(den))
        t = (wx * ey - wy * ex) / safe
        u = (wx * dy - wy * dx) / safe
        ok = ok_den & (t > T_MIN) & (u >= 0) & (u <= 1)
        parts.append(torch.where(ok, t, inf))
    if circles.shape[1]:
        qx = ox - circles[:, None, :, 0]
        qy = oy - circles[:, None, :, 1]
        rho = circles[:, None, :, 2]
        beta = qx * dx + qy * dy
        disc = beta * beta - (qx * qx + qy * qy - rho * rho)
        root = torch.sqrt(torch.clamp(disc, min=0))
        near, far = -beta - root, -beta + root
        t = torch.where(near > T_MIN, near, far)
        ok = (rho > 0) & (disc >= 0) & (t > T_MIN)
        parts.append(torch.where(ok, t, inf))
    return _first_min(torch.cat(parts, dim=-1), max_range)


# --------------------------------------------------------------------------- kernel
if triton is not None:

    @triton.jit
    def _ray_cast_kernel(orig_ptr, dir_ptr, seg_ptr, circ_ptr, t_ptr, id_ptr,
                         n_rays, n_seg, n_circ, max_range, t_min,
                         stride_ob, stride_dr, stride_sb, stride_ss, stride_cb, stride_cc,
                         stride_tb, BLOCK_R: tl.constexpr):
        pid_r = tl.program_id(0).to(tl.int64)
        b = tl.program_id(1).to(tl.int64)
        rays = pid_r * BLOCK_R + tl.arange(0, BLOCK_R)
        ok_r = rays < n_rays
        dx = tl.load(dir_ptr + rays * stride_dr, mask=ok_r, other=1.0)
        dy = tl.load(dir_ptr + rays * stride_dr + 1, mask=ok_r, other=0.0)
        ox = tl.load(orig_ptr + b * stride_ob)
        oy = tl.load(orig_ptr + b * stride_ob + 1)
        best = tl.full([BLOCK_R], float("inf"), tl.float32)
        arg = tl.full([BLOCK_R], -1, tl.int64)
        for j in range(0, n_seg):
            base = seg_ptr + b * stride_sb + j * stride_ss
            ax = tl.load(base)
            ay = tl.load(base + 1)
            ex = tl.load(base + 2) - ax
            ey = tl.load(base + 3) - ay
            wx = ax - ox
            wy = ay - oy
            den = dx * ey - dy * ex
            ok_den = den != 0
            safe = tl.where(ok_den, den, 1.0)
            t = (wx * ey - wy * ex) / safe
            u = (wx * dy - wy * dx) / safe
            ok = ok_den & (t > t_min) & (u >= 0) & (u <= 1)
            better = ok & (t < best)  # strict: an equal later primitive loses
            best = tl.where(better, t, best)
            arg = tl.where(better, j, arg)
        for k in range(0, n_circ):
            base = circ_ptr + b * stride_cb + k * stride_cc
            qx = ox - tl.load(base)
            qy = oy - tl.load(base + 1)
            rho = tl.load(base + 2)
            beta = qx * dx + qy * dy
            disc = beta * beta - (qx * qx + qy * qy - rho * rho)
            root = tl.sqrt(tl.maximum(disc, 0.0))
            near = -beta - root
            far = -beta + root
            t = tl.where(near > t_min, near, far)
            ok = (disc >= 0) & (t > t_min) & (tl.zeros_like(t) + rho > 0)
            better = ok & (t < best)
            best = tl.where(better, t, best)
            arg = tl.where(better, n_seg + k, arg)
        hit = best < max_range
        tl.store(t_ptr + b * stride_tb + rays, tl.where(hit, best, max_range), mask=ok_r)
        tl.store(id_ptr + b * stride_tb + rays, tl.where(hit, arg, -1), mask=ok_r)


# --------------------------------------------------------------------------- wrapper
def _use_triton(impl: str, t: torch.Tensor) -> bool:
    if impl not in IMPLS:
        raise ValueError(f"impl must be one of {IMPLS}, got {impl!r}")
    use = impl == "triton" or (impl == "auto" and t.is_cuda and triton is not None)
    if use and triton is None:  # pragma: no cover
        raise RuntimeError("impl='triton' needs the triton package")
    return use


def _check(origins, dirs, segments, circles, max_range) -> None:
    for name, x, tail in (("origins", origins, (2,)), ("dirs", dirs, (2,)),
                          ("segments", segments, (4,)), ("circles", circles, (3,))):
        if x.dtype != torch.float32:
            raise ValueError(f"{name} must be float32, got {x.dtype}")
        if tuple(x.shape[-1:]) != tail:
            raise ValueError(f"{name} must end in a dimension of {tail[0]}, got "
                             f"{tuple(x.shape)}")
    if origins.ndim != 2 or dirs.ndim != 2 or segments.ndim != 3 or circles.ndim != 3:
        raise ValueError("expected origins [B, 2], dirs [R, 2], segments [B, S, 4], "
                         f"circles [B, C, 3]; got {tuple(origins.shape)}, "
                         f"{tuple(dirs.shape)}, {tuple(segments.shape)}, "
                         f"{tuple(circles.shape)}")
    b = origins.shape[0]
    if segments.shape[0] != b or circles.shape[0] != b:
        raise ValueError(f"segments and circles need B={b} scenes like origins, got "
                         f"{segments.shape[0]} and {circles.shape[0]}")
    if segments.shape[1] + circles.shape[1] < 1:
        raise ValueError("a scene needs at least one segment or circle")
    if not max_range > 0:
        raise ValueError(f"max_range must be > 0, got {max_range!r}")
    if len({origins.device, dirs.device, segments.device, circles.device}) > 1:
        raise ValueError("origins, dirs, segments and circles must be on one device")


def ray_cast(origins: torch.Tensor, dirs: torch.Tensor, segments: torch.Tensor,
             circles: torch.Tensor, max_range: float, impl: str = "auto", block_r: int = 128,
             out: tuple[torch.Tensor, torch.Tensor] | None = None
             ) -> tuple[torch.Tensor, torch.Tensor]:
    """First hit of every ray of every scene.

    ``origins [B, 2]``, ``dirs [R, 2]``, ``segments [B, S, 4]``, ``circles [B, C, 3]`` ->
    ``(t [B, R] float32 in (0, max_range], hit id [B, R] int64 in [-1, S + C))``.
    ``impl="auto"`` runs Triton on CUDA tensors and the torch reference otherwise;
    ``"triton"`` forces the kernel (on CPU only under ``TRITON_INTERPRET=1``).
    ``out=(t, id)`` writes into given buffers (tests pre-fill them with NaN / -2).
    """
    _check(origins, dirs, segments, circles, max_range)
    b, r = origins.shape[0], dirs.shape[0]
    if out is not None:
        t, ids = out
        if t.shape != (b, r) or t.dtype != torch.float32 or ids.shape != (b, r) or \
                ids.dtype != torch.int64:
            raise ValueError(f"out must be (float32 [{b}, {r}], int64 [{b}, {r}]) buffers")
    if not _use_triton(impl, origins):
        ref_t, ref_id = ray_cast_ref(origins, dirs, segments, circles, max_range)
        if out is None:
            return ref_t, ref_id
        t.copy_(ref_t)
        ids.copy_(ref_id)
        return t, ids
    if block_r < 1 or block_r & (block_r - 1):
        raise ValueError(f"block_r must be a power of two, got {block_r}")
    if out is None:
        t = torch.empty(b, r, dtype=torch.float32, device=origins.device)
        ids = torch.empty(b, r, dtype=torch.int64, device=origins.device)
    if b == 0 or r == 0:
        return t, ids
    if t.stride(1) != 1 or ids.stride() != t.stride():
        raise ValueError("out buffers must be row-major with equal strides")
    n_seg, n_circ = segments.shape[1], circles.shape[1]
    # an empty primitive list gets a never-read placeholder (the loop runs 0 times)
    segments = segments.contiguous() if n_seg else segments.new_zeros(b, 1, 4)
    circles = circles.contiguous() if n_circ else circles.new_zeros(b, 1, 3)
    origins, dirs = origins.contiguous(), dirs.contiguous()
    grid = (triton.cdiv(r, block_r), b)
    _ray_cast_kernel[grid](origins, dirs, segments, circles, t, ids, r, n_seg, n_circ,
                           float(max_range), T_MIN, origins.stride(0), dirs.stride(0),
                           segments.stride(0), segments.stride(1), circles.stride(0),
                           circles.stride(1), t.stride(0), BLOCK_R=block_r)
    return t, ids
