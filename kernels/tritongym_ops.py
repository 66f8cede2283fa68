"""The eight operators of mini-TritonGym: torch references and oracle Triton kernels.

Operators (all fp32 in, fp32 out; ``[R, C]`` is rows x columns, one program per row for the
row operators)::

    add        out = x + y                                   x, y: [n]
    gelu       out = 0.5 x (1 + erf(x / sqrt 2))             x: [n]   (exact GELU)
    softmax    out[r] = exp(x[r] - max x[r]) / sum exp(...)  x: [R, C]
    layernorm  out[r] = (x[r] - mean) rsqrt(var + eps) w + b x: [R, C], w, b: [C]
    rmsnorm    out[r] = x[r] rsqrt(mean(x[r]^2) + eps) w     x: [R, C], w: [C]
    rowsum     out[r] = sum_c x[r, c]                        x: [R, C] -> [R]
    cumsum     out[r, c] = sum_{c' <= c} x[r, c']            x: [R, C]
    matmul     out = a @ b  (tl.dot on 16x16x16 tiles)       a: [M, K], b: [K, N] -> [M, N]

Memory traffic: every kernel reads its inputs once and writes its output once (the row
operators hold a whole row in registers, ``C <= 4096``), so each is bandwidth-bound except
the matmul, whose ``2 M N K`` FLOPs dominate at large sizes.

Style (it matters here: ``icml26.tritongym`` mutates this SOURCE TEXT to make buggy
"generations", so the kernels are written so that each bug class is one textual edit):
bounds are ``< n_rows`` / ``< n_cols`` / ``< n_elements`` / ``< n_inner - k0`` comparisons
stored in named masks; every ``tl.load`` / ``tl.store`` passes ``mask=<name>`` (and a literal
``other=``); loads are cast ``.to(tl.float32)`` (fp32 accumulation); row pointers use
``row * stride_xm``; the norms compute ``tl.rsqrt(var + eps)`` with ``eps`` a runtime argument
(never constexpr); softmax subtracts ``tl.max(x, axis=0)``.  ``program_id(...).to(tl.int64)``
before pointer math.

Constraints: fp32 CPU/CUDA tensors; the row operators take rows with unit column stride
(any row stride); ``C <= 4096``.  Wrappers ``<op>(..., impl="auto"|"triton"|"torch")``: ``auto``
runs Triton on CUDA tensors and the torch reference otherwise.  ``launch(op, kernel, inputs,
out)`` runs a given kernel object (the oracle or a compiled mutant) into a given output.

Precision: float32 only (fp32 accumulation; Triton's fast ``tl.exp``, ``tl.erf``, ``tl.rsqrt``);
these are the oracle kernels.  ``impl="auto"`` is Triton for CUDA tensors at every shape: no
crossover against torch eager / ``torch.compile`` has been measured yet (``python -m
icml26.kernels.bench`` measures it on a GPU).

References: the Triton tutorials (vector add, fused softmax, layer norm, matmul), Liger-Kernel
(torch reference + ``impl`` switch), the spec ``shared/specs/tritongym.md``.
"""

from __future__ import annotations

import inspect
import textwrap

import torch

try:  # triton is a hard dependency, but keep CPU-only importers alive if it is broken
    import triton
    import triton.language as tl
except ImportError:  # pragma: no cover
    triton = None

OPS = ("add", "gelu", "softmax", "layernorm", "rmsnorm", "rowsum", "cumsum", "matmul")
IMPLS = ("auto", "triton", "torch")
EPS = 1e-5  #: the norms' epsilon (torch's layer_norm default)
BLOCK_1D = 128  #: elements per program of add and gelu
BLOCK_MM = 16  #: the matmul's tile (BM = BN = BK; tl.dot needs >= 16)
MAX_COLS = 4096


# --------------------------------------------------------------------------- references
def add_ref(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return x + y


def gelu_ref(x: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.gelu(x)


def softmax_ref(x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x, dim=-1)


def layernorm_ref(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, EPS)


def rmsnorm_ref(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + EPS) * w


def rowsum_ref(x: torch.Tensor) -> torch.Tensor:
    return x.sum(dim=-1)


def cumsum_ref(x: torch.Tensor) -> torch.Tensor:
    return x.cumsum(dim=-1)


def matmul_ref(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return a @ b


REFERENCES = {"add": add_ref, "gelu": gelu_ref, "softmax": softmax_ref,
              "layernorm": layernorm_ref, "rmsnorm": rmsnorm_ref, "rowsum": rowsum_ref,
              "cumsum": cumsum_ref, "matmul": matmul_ref}


def output_shape(op: str, inputs: list[torch.Tensor]) -> tuple[int, ...]:
    """The shape of ``op``'s output for ``inputs``."""
    if op == "rowsum":
        return (inputs[0].shape[0],)
    if op == "matmul":
        return (inputs[0].shape[0], inputs[1].shape[1])
    return tuple(inputs[0].shape)


# --------------------------------------------------------------------------- kernels
if triton is not None:

    @triton.jit
    def _add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
        pid = tl.program_id(0).to(tl.int64)
        offs = pid * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n_elements
        x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        y = tl.load(y_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        tl.store(out_ptr + offs, x + y, mask=mask)

    @triton.jit
    def _gelu_kernel(x_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
        pid = tl.program_id(0).to(tl.int64)
        offs = pid * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n_elements
        x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        y = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
        tl.store(out_ptr + offs, y, mask=mask)

    @triton.jit
    def _softmax_kernel(x_ptr, out_ptr, n_cols, stride_xm, stride_om, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * stride_xm + cols, mask=mask, other=-1e30).to(tl.float32)
        z = x - tl.max(x, axis=0)
        num = tl.exp(z)
        den = tl.sum(num, axis=0)
        tl.store(out_ptr + row * stride_om + cols, num / den, mask=mask)

    @triton.jit
    def _layernorm_kernel(x_ptr, w_ptr, b_ptr, out_ptr, n_cols, stride_xm, stride_om, eps,
                          BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * stride_xm + cols, mask=mask, other=0.0).to(tl.float32)
        mean = tl.sum(x, axis=0) / n_cols
        diff = tl.where(mask, x - mean, 0.0)
        var = tl.sum(diff * diff, axis=0) / n_cols
        rstd = tl.rsqrt(var + eps)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(out_ptr + row * stride_om + cols, diff * rstd * w + b, mask=mask)

    @triton.jit
    def _rmsnorm_kernel(x_ptr, w_ptr, out_ptr, n_cols, stride_xm, stride_om, eps,
                        BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * stride_xm + cols, mask=mask, other=0.0).to(tl.float32)
        var = tl.sum(x * x, axis=0) / n_cols
        rstd = tl.rsqrt(var + eps)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(out_ptr + row * stride_om + cols, x * rstd * w, mask=mask)

    @triton.jit
    def _rowsum_kernel(x_ptr, out_ptr, n_cols, stride_xm, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * stride_xm + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(out_ptr + row, tl.sum(x, axis=0))

    @triton.jit
    def _cumsum_kernel(x_ptr, out_ptr, n_cols, stride_xm, stride_om, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * stride_xm + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(out_ptr + row * stride_om + cols, tl.cumsum(x, axis=0), mask=mask)

    @triton.jit
    def _matmul_kernel(a_ptr, b_ptr, c_ptr, n_rows, n_cols, n_inner,
                       stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                       BLOCK: tl.constexpr):
        pid_m = tl.program_id(0).to(tl.int64)
        pid_n = tl.program_id(1).to(tl.int64)
        offs_m = pid_m * BLOCK + tl.arange(0, BLOCK)
        offs_n = pid_n * BLOCK + tl.arange(0, BLOCK)
        offs_k = tl.arange(0, BLOCK)
        mask_m = offs_m < n_rows
        mask_n = offs_n < n_cols
        acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
        for k0 in range(0, n_inner, BLOCK):
            mask_k = offs_k < n_inner - k0
            a_mask = mask_m[:, None] & mask_k[None, :]
            b_mask = mask_k[:, None] & mask_n[None, :]
            a = tl.load(a_ptr + offs_m[:, None] * stride_am + (k0 + offs_k)[None, :] * stride_ak,
                        mask=a_mask, other=0.0).to(tl.float32)
            b = tl.load(b_ptr + (k0 + offs_k)[:, None] * stride_bk + offs_n[None, :] * stride_bn,
                        mask=b_mask, other=0.0).to(tl.float32)
            acc += tl.dot(a, b, input_precision="ieee")
        c_mask = mask_m[:, None] & mask_n[None, :]
        tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn, acc,
                 mask=c_mask)

    KERNELS = {"add": _add_kernel, "gelu": _gelu_kernel, "softmax": _softmax_kernel,
               "layernorm": _layernorm_kernel, "rmsnorm": _rmsnorm_kernel,
               "rowsum": _rowsum_kernel, "cumsum": _cumsum_kernel, "matmul": _matmul_kernel}
else:  # pragma: no cover
    KERNELS = {}


def kernel_source(op: str) -> str:
    """The oracle kernel's source text (``@triton.jit`` line included), dedented."""
    check_op(op)
    fn = getattr(KERNELS[op], "fn", KERNELS[op])
    return textwrap.dedent(inspect.getsource(fn))


def kernel_name(op: str) -> str:
    return f"_{op}_kernel"


# --------------------------------------------------------------------------- launchers
def check_op(op: str) -> None:
    if op not in OPS:
        raise ValueError(f"op must be one of {OPS}, got {op!r}")


def launch(op: str, kernel, inputs: list[torch.Tensor], out: torch.Tensor) -> torch.Tensor:
    """Run ``kernel`` (the oracle or a compiled mutant of it) for ``op`` into ``out``.

    Grids: ``cdiv(n, 128)`` programs for add/gelu, one per row for the row operators,
    ``cdiv(M, 16) x cdiv(N, 16)`` for the matmul.  Block sizes come from the shapes only.
    """
    check_op(op)
    x = inputs[0]
    if op in ("add", "gelu"):
        grid = (triton.cdiv(x.numel(), BLOCK_1D),)
        kernel[grid](*inputs, out, x.numel(), BLOCK=BLOCK_1D)
        return out
    if op == "matmul":
        a, b = inputs
        grid = (triton.cdiv(a.shape[0], BLOCK_MM), triton.cdiv(b.shape[1], BLOCK_MM))
        kernel[grid](a, b, out, a.shape[0], b.shape[1], a.shape[1], a.stride(0), a.stride(1),
                     b.stride(0), b.stride(1), out.stride(0), out.stride(1), BLOCK=BLOCK_MM)
        return out
    rows, cols = x.shape
    block = triton.next_power_of_2(cols)
    if op == "rowsum":
        kernel[(rows,)](x, out, cols, x.stride(0), BLOCK=block)
    elif op in ("softmax", "cumsum"):
        kernel[(rows,)](x, out, cols, x.stride(0), out.stride(0), BLOCK=block)
    elif op == "layernorm":
        kernel[(rows,)](x, inputs[1], inputs[2], out, cols, x.stride(0), out.stride(0), EPS,
                        BLOCK=block)
    else:  # rmsnorm
        kernel[(rows,)](x, inputs[1], out, cols, x.stride(0), out.stride(0), EPS, BLOCK=block)
    return out


def _check_inputs(op: str, inputs: list[torch.Tensor]) -> None:
    n_in = {"add": 2, "layernorm": 3, "rmsnorm": 2, "matmul": 2}.get(op, 1)
    if len(inputs) != n_in:
        raise ValueError(f"{op} takes {n_in} tensors, got {len(inputs)}")
    if any(t.dtype != torch.float32 for t in inputs):
        raise ValueError(f"{op}: inputs must be float32, got {[t.dtype for t in inputs]}")
    if len({t.device for t in inputs}) > 1:
        raise ValueError(f"{op}: inputs must be on one device")
    x = inputs[0]
    if op in ("add", "gelu"):
        if any(t.ndim != 1 or not t.is_contiguous() for t in inputs):
            raise ValueError(f"{op}: inputs must be contiguous 1-D tensors")
        if op == "add" and inputs[1].shape != x.shape:
            raise ValueError(f"add: x and y must have one shape, got {tuple(x.shape)} and "
                             f"{tuple(inputs[1].shape)}")
    elif op == "matmul":
        if x.ndim != 2 or inputs[1].ndim != 2 or x.shape[1] != inputs[1].shape[0]:
            raise ValueError(f"matmul needs [M, K] @ [K, N], got {tuple(x.shape)} and "
                             f"{tuple(inputs[1].shape)}")
    else:
        if x.ndim != 2 or x.stride(1) != 1:
            raise ValueError(f"{op}: x must be [R, C] with unit column stride")
        if not 1 <= x.shape[1] <= MAX_COLS:
            raise ValueError(f"{op}: C must be in [1, {MAX_COLS}], got {x.shape[1]}")
        for t in inputs[1:]:
            if t.shape != (x.shape[1],) or not t.is_contiguous():
                raise ValueError(f"{op}: weights must be contiguous [{x.shape[1]}]")


def run_op(op: str, *inputs: torch.Tensor, impl: str = "auto") -> torch.Tensor:
    """``op`` on ``inputs``: the oracle Triton kernel or the torch reference (see ``impl``)."""
    check_op(op)
    if impl not in IMPLS:
        raise ValueError(f"impl must be one of {IMPLS}, got {impl!r}")
    inputs = list(inputs)
    _check_inputs(op, inputs)
    use = impl == "triton" or (impl == "auto" and inputs[0].is_cuda and triton is not None)
    if not use:
        return REFERENCES[op](*inputs)
    if triton is None:  # pragma: no cover
        raise RuntimeError("impl='triton' needs the triton package")
    out = torch.empty(output_shape(op, inputs), dtype=torch.float32, device=inputs[0].device)
    if out.numel() == 0:
        return out
    return launch(op, KERNELS[op], inputs, out)


def add(x, y, impl="auto"):
    return run_op("add", x, y, impl=impl)


def gelu(x, impl="auto"):
    return run_op("gelu", x, impl=impl)


def softmax(x, impl="auto"):
    return run_op("softmax", x, impl=impl)


def layernorm(x, w, b, impl="auto"):
    return run_op("layernorm", x, w, b, impl=impl)


def rmsnorm(x, w, impl="auto"):
    return run_op("rmsnorm", x, w, impl=impl)


def rowsum(x, impl="auto"):
    return run_op("rowsum", x, impl=impl)


def cumsum(x, impl="auto"):
    return run_op("cumsum", x, impl=impl)


def matmul(a, b, impl="auto"):
    return run_op("matmul", a, b, impl=impl)
