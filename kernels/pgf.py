"""Batched truncated products of probability generating functions (PGFs).

Maths.  Row ``n`` of ``a`` and ``b`` holds the pmf of a count on ``{0, ..., L-1}``, where the
last entry is a *lumped* tail: ``a[n, L-1] = P(X >= L-1)``.  The product of the two PGFs,
truncated at degree ``L-1`` with the tail lumped, is the pmf of ``min(X + Y, L-1)``::

    c[n, k]   = sum_{i + j = k}  a[n, i] b[n, j]        for k < L-1
    c[n, L-1] = sum_{i + j >= L-1} a[n, i] b[n, j]       (lumped, never dropped)

Lumping commutes with addition (``min(min(X,c)+min(Y,c), c) = min(X+Y, c)`` for counts), so
repeated truncated products give exactly the truncated pmf of a sum: this is the inner loop
of the recruitment DP (the distribution of recruits from a frontier of ``m`` people).

Memory traffic.  Each row reads ``2L`` and writes ``L`` numbers and does ``L^2``
multiply-adds; with ``L <= 128`` a row fits in registers, so the kernel runs one program per
row and computes the full ``[2L, L]`` anti-diagonal tile on chip: the ``N x L x L`` outer
products of an unfused torch implementation never touch memory.

Constraints.  ``a`` and ``b`` are ``[N, L]`` with the same float dtype (float32 or float64;
accumulation in that dtype, float64 on the DP path), ``1 <= L <= 256``.

Precision.  Products and sums in the input dtype: float64 (the DP's) is float64 throughout (no
transcendentals, no float scalars), within 1e-12 relative of the float64 reference; float32 is
float32.  ``impl="auto"`` is Triton for CUDA tensors at every shape: no crossover against torch
eager / ``torch.compile`` has been measured yet (``python -m icml26.kernels.bench`` measures it
on a GPU).

References.  Triton tutorials (one program per row, masked loads); Liger-Kernel (wrapper
with a torch reference and ``impl`` switch).
"""

from __future__ import annotations

import torch

try:  # triton is a hard dependency, but keep CPU-only importers alive if it is broken
    import triton
    import triton.language as tl
except ImportError:  # pragma: no cover
    triton = None

MAX_LEN = 256


def pgf_mul_ref(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Plain-torch truncated PGF product with the tail lumped. ``[N, L] x [N, L] -> [N, L]``."""
    n_rows, length = a.shape
    full = torch.zeros(n_rows, 2 * length - 1, dtype=a.dtype, device=a.device)
    for i in range(length):  # L shifted axpys over the whole batch; float64 grouped conv1d
        full[:, i : i + length] += a[:, i : i + 1] * b  # on CPU is ~100x slower than this
    out = full[:, :length].clone()
    out[:, length - 1] = full[:, length - 1 :].sum(dim=1)
    return out


if triton is not None:

    @triton.jit
    def _pgf_mul_kernel(a_ptr, b_ptr, c_ptr, stride_a, stride_b, stride_c, length,
                        BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        i = tl.arange(0, BLOCK)  # index into a
        k = tl.arange(0, 2 * BLOCK)  # degree of the untruncated product
        a = tl.load(a_ptr + row * stride_a + i, mask=i < length, other=0.0)
        j = k[:, None] - i[None, :]  # b's index on the anti-diagonal k
        b_mask = (j >= 0) & (j < length) & (i[None, :] < length)
        b = tl.load(b_ptr + row * stride_b + j, mask=b_mask, other=0.0)
        full = tl.sum(b * a[None, :], axis=1)  # [2*BLOCK] coefficients of the product
        tail = tl.sum(tl.where(k >= length - 1, full, 0.0), axis=0)
        out = tl.where(k == length - 1, tail, full)
        tl.store(c_ptr + row * stride_c + k, out, mask=k < length)


def _check(a: torch.Tensor, b: torch.Tensor) -> None:
    if a.ndim != 2 or a.shape != b.shape:
        raise ValueError(f"a and b must both be [N, L] with equal shapes, got "
                         f"{tuple(a.shape)} and {tuple(b.shape)}")
    if a.dtype != b.dtype or a.dtype not in (torch.float32, torch.float64):
        raise ValueError(f"a and b must share dtype float32 or float64, got {a.dtype}, {b.dtype}")
    if not 1 <= a.shape[1] <= MAX_LEN:
        raise ValueError(f"length L must be in [1, {MAX_LEN}], got {a.shape[1]}")
    if a.device != b.device:
        raise ValueError(f"a and b must be on one device, got {a.device} and {b.device}")


def pgf_mul(a: torch.Tensor, b: torch.Tensor, impl: str = "auto") -> torch.Tensor:
    """Truncated, tail-lumped PGF product of each row pair: the pmf of ``min(X+Y, L-1)``.

    ``impl="auto"`` runs Triton on CUDA tensors and the torch reference otherwise;
    ``"triton"`` forces the kernel (on CPU only under ``TRITON_INTERPRET=1``).
    """
    _check(a, b)
    if impl not in ("auto", "triton", "torch"):
        raise ValueError(f"impl must be 'auto', 'triton' or 'torch', got {impl!r}")
    use_triton = impl == "triton" or (impl == "auto" and a.is_cuda and triton is not None)
    if not use_triton:
        return pgf_mul_ref(a, b)
    if triton is None:  # pragma: no cover
        raise RuntimeError("impl='triton' needs the triton package")
    a, b = a.contiguous(), b.contiguous()
    n_rows, length = a.shape
    out = torch.empty_like(a)
    if n_rows == 0:
        return out
    block = triton.next_power_of_2(length)
    _pgf_mul_kernel[(n_rows,)](a, b, out, a.stride(0), b.stride(0), out.stride(0), length,
                               BLOCK=block)
    return out


def pgf_pow_table(pmf: torch.Tensor, max_power: int, impl: str = "auto") -> torch.Tensor:
    """All convolution powers of each row: ``[R, L] -> [R, max_power + 1, L]``.

    Entry ``[r, n]`` is the truncated, lumped pmf of a sum of ``n`` i.i.d. draws from row
    ``r`` (``n = 0`` is the point mass at 0). Doubling: powers ``n+1..2n`` are the powers
    ``1..n`` times power ``n``, one batched product each, so ``ceil(log2(max_power))+1``
    launches in all.
    """
    rows, length = pmf.shape
    out = torch.zeros(rows, max_power + 1, length, dtype=pmf.dtype, device=pmf.device)
    out[:, 0, 0] = 1.0
    if max_power == 0:
        return out
    out[:, 1] = pmf
    have = 1
    while have < max_power:
        todo = min(have, max_power - have)  # powers have+1 .. have+todo
        lhs = out[:, 1 : todo + 1].reshape(-1, length)
        rhs = out[:, have : have + 1].expand(rows, todo, length).reshape(-1, length)
        out[:, have + 1 : have + todo + 1] = pgf_mul(lhs, rhs, impl=impl).reshape(
            rows, todo, length)
        have += todo
    return out
