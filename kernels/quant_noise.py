"""Fused fake-quantization noise: ``R`` dithered copies of a weight vector in one pass.

Maths.  A uniform ``b``-bit quantizer of a weight vector ``w`` has step
``delta = (max w - min w) / (2^b - 1)``. Its Monte Carlo test prediction variance needs
many noisy copies ``w + e_r``, ``r = 0..R-1``. Element ``i`` of copy ``r`` gets a uniform
draw from a counter-based hash (no RNG state, so any block of any copy can be generated
independently and the torch reference reproduces the kernel bit for bit)::

    k_r      = h((seed + r * 0x9E3779B9) mod 2^32)
    u[r, i]  = (h(h(i) xor k_r) >> 8) / 2^24                 in [0, 1), 24 exact bits
    h(x)     = three rounds of x ^= x >> 16; x *= 0x45d9f3b (mod 2^32)  (T. Mueller's hash32)

and the output is, for ``mode="additive"`` (the noise model of the paper's Monte Carlo TPV)::

    out[r, i] = w[i] + delta * (u[r, i] - 1/2)

or, for ``mode="subtractive"`` (a real fake-quantize with subtractive dither: the rounding
error is exactly uniform on ``[-delta/2, delta/2)`` and independent of ``w``, which is what
justifies ``sigma_q^2 = delta^2 / 12``)::

    d         = delta * (u - 1/2)
    k         = clamp(floor((w + d - w_min) / delta + 1/2), 0, levels)
    out[r, i] = w_min + delta * k - d

Memory traffic.  An unfused torch version materialises the integer counters, the hashes and
the uniforms as ``[R, N]`` tensors (several reads and writes of ``R N`` words each) before the
final axpy. The kernel reads ``w`` once per block (``N`` words, shared by every copy through
the cache) and writes ``R N`` words: the minimum, since the copies are the output.

Constraints.  ``w`` is 1-D float32 (``quant_noise_ref`` also takes float64, as the test
oracle) with ``N < 2^31`` elements; ``delta > 0``;
``0 <= seed < 2^31``; ``R >= 1``. Hashing runs in int64 with every product below 2^63
(32-bit operand times a 27-bit constant), so it is exact on every backend.

Precision.  float32 weights and output; the hash uniforms are integer arithmetic (exact), the
dither and rounding in fp32 with ``delta``, ``w_min``, ``levels`` as fp32 kernel scalars (the
reference takes float64 too, as the tests' oracle).  ``impl="auto"`` is Triton for CUDA tensors
at every shape: no crossover against torch eager / ``torch.compile`` has been measured yet
(``python -m icml26.kernels.bench`` measures it on a GPU).

References.  Triton tutorials (elementwise kernels, masked loads); Liger-Kernel (torch
reference + ``impl`` switch); Schuchman (1964) for subtractive dither.
"""

from __future__ import annotations

import torch

try:  # triton is a hard dependency, but keep CPU-only importers alive if it is broken
    import triton
    import triton.language as tl
except ImportError:  # pragma: no cover
    triton = None

MODES = ("additive", "subtractive")
_MASK32 = 0xFFFFFFFF
_GOLDEN = 0x9E3779B9
_MIX = 0x45D9F3B


def _hash_ref(x: torch.Tensor) -> torch.Tensor:
    """hash32 on int64 tensors holding values in ``[0, 2^32)``."""
    x = ((x ^ (x >> 16)) * _MIX) & _MASK32
    x = ((x ^ (x >> 16)) * _MIX) & _MASK32
    return x ^ (x >> 16)


def uniform_ref(n: int, draws: int, seed: int, device=None) -> torch.Tensor:
    """The kernel's uniforms ``u[r, i]`` in float64: ``-> [draws, n]``."""
    r = torch.arange(draws, dtype=torch.int64, device=device)
    i = torch.arange(n, dtype=torch.int64, device=device)
    key = _hash_ref((seed + r * _GOLDEN) & _MASK32)  # [R]
    h = _hash_ref(_hash_ref(i)[None, :] ^ key[:, None])  # [R, N]
    return (h >> 8).to(torch.float64) * (1.0 / (1 << 24))


def quant_noise_ref(w: torch.Tensor, delta: float, draws: int = 1, seed: int = 0,
                    mode: str = "additive", w_min: float = 0.0, levels: int = 0) -> torch.Tensor:
    """Plain-torch fake-quantization noise: ``[N] -> [draws, N]`` (see the module docstring)."""
    u = uniform_ref(w.numel(), draws, seed, device=w.device).to(w.dtype)
    d = delta * (u - 0.5)
    if mode == "additive":
        return w[None, :] + d
    k = torch.floor((w[None, :] + d - w_min) / delta + 0.5).clamp(0, levels)
    return w_min + delta * k - d


if triton is not None:

    @triton.jit
    def _hash(x):
        x = ((x ^ (x >> 16)) * 0x45D9F3B) & 0xFFFFFFFF
        x = ((x ^ (x >> 16)) * 0x45D9F3B) & 0xFFFFFFFF
        return x ^ (x >> 16)

    @triton.jit
    def _quant_noise_kernel(w_ptr, out_ptr, n, stride_out, seed, delta, w_min, levels,
                            SUBTRACTIVE: tl.constexpr, BLOCK: tl.constexpr):
        block = tl.program_id(0).to(tl.int64)
        r = tl.program_id(1).to(tl.int64)
        offs = block * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        w = tl.load(w_ptr + offs, mask=mask, other=0.0)
        key = _hash((seed + r * 0x9E3779B9) & 0xFFFFFFFF)
        h = _hash(_hash(offs) ^ key)
        u = (h >> 8).to(tl.float32) * (1.0 / 16777216.0)
        d = delta * (u - 0.5)
        if SUBTRACTIVE:
            k = tl.floor((w + d - w_min) / delta + 0.5)
            k = tl.minimum(tl.maximum(k, 0.0), levels)
            out = w_min + delta * k - d
        else:
            out = w + d
        tl.store(out_ptr + r * stride_out + offs, out, mask=mask)


def _check(w: torch.Tensor, delta: float, draws: int, seed: int, mode: str, levels: int) -> None:
    if w.ndim != 1:
        raise ValueError(f"w must be a 1-D weight vector [N], got shape {tuple(w.shape)}")
    if w.dtype != torch.float32:
        raise ValueError(f"w must be float32 (the reference alone also takes float64 as an "
                         f"oracle), got {w.dtype}")
    if w.numel() >= 2**31:
        raise ValueError(f"w must have fewer than 2^31 elements, got {w.numel()}")
    if not (float(delta) > 0 and float(delta) < float("inf")):
        raise ValueError(f"delta (the quantization step) must be finite and > 0, got {delta}")
    if int(draws) != draws or draws < 1:
        raise ValueError(f"draws must be an integer >= 1, got {draws!r}")
    if int(seed) != seed or not 0 <= seed < 2**31:
        raise ValueError(f"seed must be an integer in [0, 2^31), got {seed!r}")
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    if mode == "subtractive" and (int(levels) != levels or levels < 1):
        raise ValueError(f"subtractive mode needs levels = 2^bits - 1 >= 1, got {levels!r}")


def quant_noise(w: torch.Tensor, delta: float, draws: int = 1, seed: int = 0,
                mode: str = "additive", w_min: float = 0.0, levels: int = 0,
                impl: str = "auto", out: torch.Tensor | None = None,
                block: int = 1024) -> torch.Tensor:
    """``draws`` fake-quantization-noise copies of ``w``: ``[N] -> [draws, N]``.

    ``mode="additive"``: ``w + delta (u - 1/2)``; ``mode="subtractive"``: dithered
    quantize-dequantize onto the grid ``w_min + delta k``, ``k = 0..levels``. Copy ``r`` is a
    pure function of ``(seed, r, i)``, so results do not depend on ``impl`` or ``block``.
    ``impl="auto"`` runs Triton on CUDA tensors and the torch reference otherwise.
    """
    _check(w, delta, draws, seed, mode, levels)
    if impl not in ("auto", "triton", "torch"):
        raise ValueError(f"impl must be 'auto', 'triton' or 'torch', got {impl!r}")
    n = w.numel()
    if out is not None and (out.shape != (draws, n) or out.dtype != w.dtype
                            or out.device != w.device or out.stride(1) != 1):
        raise ValueError(f"out must be a [{draws}, {n}] {w.dtype} tensor on {w.device} with "
                         f"unit column stride, got {tuple(out.shape)} {out.dtype}")
    use_triton = impl == "triton" or (impl == "auto" and w.is_cuda and triton is not None)
    if not use_triton:
        res = quant_noise_ref(w, float(delta), draws, seed, mode, float(w_min), int(levels))
        if out is None:
            return res
        out.copy_(res)
        return out
    if triton is None:  # pragma: no cover
        raise RuntimeError("impl='triton' needs the triton package")
    w = w.contiguous()
    if out is None:
        out = torch.empty(draws, n, dtype=w.dtype, device=w.device)
    if n == 0:
        return out
    block = min(block, triton.next_power_of_2(n))
    grid = (triton.cdiv(n, block), draws)
    _quant_noise_kernel[grid](w, out, n, out.stride(0), int(seed), float(delta),
                              float(w_min), float(levels),
                              SUBTRACTIVE=mode == "subtractive", BLOCK=block)
    return out
