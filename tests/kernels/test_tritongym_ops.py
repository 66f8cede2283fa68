"""The eight mini-TritonGym oracle kernels vs their torch references.

On CPU the Triton paths run under ``TRITON_INTERPRET=1`` (set by ``tests/conftest.py``), so
shapes stay tiny: regular (a multiple of the block), odd tail, single row / element, and a
strided input.  Outputs are pre-filled with NaN (an element never written fails).  Tolerance:
flash-attention's rule, <= 2x the fp32 torch error against an fp64 reference, plus a floor.
"""

from __future__ import annotations

import pytest
import torch

from icml26.kernels import tritongym_ops as K

pytestmark = pytest.mark.interpreter

FLOOR = 1e-5  # fp32 rounding of O(1)-O(10) values over <= 64-term sums
SIZES_1D = [pytest.param(256, id="regular-256"), pytest.param(300, id="odd-tail-300"),
            pytest.param(1, id="single-1")]
SIZES_ROWS = [pytest.param(4, 64, id="regular-4x64"), pytest.param(5, 37, id="odd-tail-5x37"),
              pytest.param(1, 1, id="single-1x1"), pytest.param(3, 100, id="odd-3x100")]
SIZES_MM = [pytest.param(32, 32, 32, id="regular-32x32x32"),
            pytest.param(20, 40, 24, id="odd-tail-20x40x24"), pytest.param(1, 3, 5, id="tiny")]


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


def inputs_for(op, dims, device, strided=False):
    g = gen(len(op))
    if op in ("add", "gelu"):
        return [torch.randn(dims[0], generator=g).to(device) for _ in range(2 if op == "add"
                                                                            else 1)]
    if op == "matmul":
        m, k, n = dims
        b = torch.randn(n, k, generator=g).to(device).T if strided else \
            torch.randn(k, n, generator=g).to(device)
        return [torch.randn(m, k, generator=g).to(device), b]
    r, c = dims
    x = torch.randn(r, c + (7 if strided else 0), generator=g).to(device)[:, :c]
    n_w = {"layernorm": 2, "rmsnorm": 1}.get(op, 0)
    return [x] + [torch.randn(c, generator=g).to(device) for _ in range(n_w)]


def check_close(op, inputs):
    out = K.run_op(op, *inputs, impl="triton")
    ref = K.REFERENCES[op](*[t.cpu() for t in inputs])
    oracle = K.REFERENCES[op](*[t.cpu().double() for t in inputs]) if op != "layernorm" else \
        torch.nn.functional.layer_norm(inputs[0].cpu().double(), (inputs[0].shape[1],),
                                       inputs[1].cpu().double(), inputs[2].cpu().double(),
                                       K.EPS)
    assert out.shape == ref.shape and not out.isnan().any(), "elements left unwritten"
    ref_err = (ref.double() - oracle).abs().max().item()
    err = (out.cpu().double() - oracle).abs().max().item()
    assert err <= 2 * ref_err + FLOOR, (err, ref_err)


@pytest.mark.parametrize("op", ["add", "gelu"])
@pytest.mark.parametrize("n", SIZES_1D)
def test_elementwise_match_reference(op, n, device):
    check_close(op, inputs_for(op, (n,), device))


@pytest.mark.parametrize("op", ["softmax", "layernorm", "rmsnorm", "rowsum", "cumsum"])
@pytest.mark.parametrize(("r", "c"), SIZES_ROWS)
@pytest.mark.parametrize("strided", [False, True], ids=["contiguous", "row-stride"])
def test_row_ops_match_reference(op, r, c, strided, device):
    check_close(op, inputs_for(op, (r, c), device, strided))


@pytest.mark.parametrize(("m", "k", "n"), SIZES_MM)
@pytest.mark.parametrize("strided", [False, True], ids=["contiguous", "b-transposed"])
def test_matmul_matches_reference(m, k, n, strided, device):
    check_close("matmul", inputs_for("matmul", (m, k, n), device, strided))


def test_softmax_is_stable_on_large_logits(device):
    """Max subtraction: logits near 1000 overflow exp() without it."""
    x = (torch.randn(3, 40, generator=gen()) + 1000.0).to(device)
    out = K.softmax(x, impl="triton")
    torch.testing.assert_close(out.cpu(), torch.softmax(x.cpu(), -1), rtol=1e-5, atol=1e-6)


def test_wrappers_dispatch_and_auto_uses_torch_on_cpu():
    x = torch.randn(4, 8, generator=gen())
    assert torch.equal(K.rowsum(x, impl="auto"), x.sum(-1))
    assert torch.equal(K.cumsum(x), x.cumsum(-1))
    for fn in (K.add, K.gelu, K.softmax, K.layernorm, K.rmsnorm, K.matmul):
        assert callable(fn)


def test_kernel_source_is_the_jit_function():
    for op in K.OPS:
        src = K.kernel_source(op)
        assert src.startswith("@triton.jit") and f"def {K.kernel_name(op)}(" in src


@pytest.mark.parametrize(("op", "inputs", "match"), [
    ("softmax", [torch.ones(3, 4, dtype=torch.float64)], "float32"),
    ("add", [torch.ones(3), torch.ones(4)], "one shape"),
    ("matmul", [torch.ones(3, 4), torch.ones(5, 2)], r"\[M, K\]"),
    ("layernorm", [torch.ones(3, 4), torch.ones(4)], "takes 3"),
    ("rowsum", [torch.ones(4, 3).T], "unit column stride"),
    ("rmsnorm", [torch.ones(3, 4), torch.ones(5)], "weights"),
    ("nope", [torch.ones(3)], "op must be"),
])
def test_bad_input_raises(op, inputs, match):
    with pytest.raises(ValueError, match=match):
        K.run_op(op, *inputs, impl="triton")


def test_bad_impl_raises():
    with pytest.raises(ValueError, match="impl"):
        K.add(torch.ones(3), torch.ones(3), impl="cuda")
