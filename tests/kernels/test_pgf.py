"""Triton truncated-PGF product vs its torch reference (interpreter on CPU, tiny shapes)."""

from __future__ import annotations

import pytest
import torch

from icml26.kernels.pgf import pgf_mul, pgf_mul_ref, pgf_pow_table

SHAPES = {"regular": (8, 16), "odd_tail": (5, 13), "single_row": (1, 7), "length_one": (3, 1)}


def random_pmfs(n: int, length: int, dtype=torch.float64, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    x = torch.rand(n, length, generator=g, dtype=torch.float64)
    return (x / x.sum(-1, keepdim=True)).to(dtype)


def exact_min_sum(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """pmf of min(X + Y, L-1) by enumerating pairs (float64 oracle)."""
    n, length = a.shape
    out = torch.zeros(n, length, dtype=torch.float64)
    for i in range(length):
        for j in range(length):
            out[:, min(i + j, length - 1)] += a[:, i].double() * b[:, j].double()
    return out


@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
def test_reference_is_the_pmf_of_the_capped_sum(shape):
    a, b = random_pmfs(*shape, seed=1), random_pmfs(*shape, seed=2)
    torch.testing.assert_close(pgf_mul_ref(a, b), exact_min_sum(a, b), rtol=0, atol=1e-15)


@pytest.mark.interpreter
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["fp32", "fp64"])
@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
def test_triton_matches_reference(shape, dtype, device):
    a, b = random_pmfs(*shape, dtype=dtype, seed=3), random_pmfs(*shape, dtype=dtype, seed=4)
    oracle = exact_min_sum(a, b)
    got = pgf_mul(a.to(device), b.to(device), impl="triton").cpu()
    assert not torch.isnan(got).any(), "an output element was never written"
    torch_err = (pgf_mul_ref(a, b).double() - oracle).abs().max().item()
    triton_err = (got.double() - oracle).abs().max().item()
    # flash-attention's rule: at most twice torch's own error in this dtype, with a floor of
    # a few ulps of the largest entry (<= 1) for when torch happens to be exact
    floor = 4 * torch.finfo(dtype).eps
    assert triton_err <= 2 * torch_err + floor


@pytest.mark.interpreter
@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
def test_float64_kernel_is_float64(shape, device):
    """float64 in, float64 products and sums: <= 1e-12 relative to the float64 reference."""
    a, b = random_pmfs(*shape, seed=10), random_pmfs(*shape, seed=11)
    got = pgf_mul(a.to(device), b.to(device), impl="triton").cpu()
    assert got.dtype == torch.float64
    torch.testing.assert_close(got, pgf_mul_ref(a, b), rtol=1e-12, atol=0)


@pytest.mark.interpreter
def test_triton_writes_every_element_and_nothing_else(device):
    a, b = random_pmfs(4, 9, seed=5), random_pmfs(4, 9, seed=6)
    out = pgf_mul(a.to(device), b.to(device), impl="triton").cpu()
    assert out.shape == (4, 9) and torch.isfinite(out).all()
    torch.testing.assert_close(out.sum(-1), torch.ones(4, dtype=torch.float64))


@pytest.mark.interpreter
def test_pow_table_through_triton_matches_torch(device):
    pmf = random_pmfs(3, 6, seed=7)
    torch.testing.assert_close(pgf_pow_table(pmf.to(device), 5, impl="triton").cpu(),
                               pgf_pow_table(pmf, 5, impl="torch"), rtol=0, atol=1e-14)


def test_pow_table_matches_repeated_products():
    pmf = random_pmfs(2, 8, seed=8)
    table = pgf_pow_table(pmf, 7)
    acc = torch.zeros_like(pmf)
    acc[:, 0] = 1
    for n in range(8):
        torch.testing.assert_close(table[:, n], acc, rtol=0, atol=1e-14)
        acc = pgf_mul_ref(acc, pmf)


def test_auto_uses_torch_on_cpu(monkeypatch):
    import icml26.kernels.pgf as mod

    def boom(*args, **kwargs):
        raise AssertionError("the Triton kernel must not run on CPU tensors under auto")

    monkeypatch.setattr(mod, "_pgf_mul_kernel", boom)
    a = random_pmfs(2, 5)
    torch.testing.assert_close(mod.pgf_mul(a, a), pgf_mul_ref(a, a))


@pytest.mark.parametrize("bad", [
    lambda: pgf_mul(torch.zeros(2, 3), torch.zeros(2, 4)),
    lambda: pgf_mul(torch.zeros(2, 3), torch.zeros(2, 3, dtype=torch.float64)),
    lambda: pgf_mul(torch.zeros(3), torch.zeros(3)),
    lambda: pgf_mul(torch.zeros(2, 3), torch.zeros(2, 3), impl="cuda"),
    lambda: pgf_mul(torch.zeros(1, 300), torch.zeros(1, 300)),
], ids=["shape_mismatch", "dtype_mismatch", "not_2d", "bad_impl", "too_long"])
def test_bad_input_raises(bad):
    with pytest.raises(ValueError):
        bad()


@pytest.mark.gpu
@pytest.mark.parametrize("shape", [(4096, 41), (1681, 61), (7, 128)])
def test_compiled_kernel_on_cuda(shape):
    a = random_pmfs(*shape).cuda()
    b = random_pmfs(*shape, seed=9).cuda()
    got = pgf_mul(a, b)
    torch.testing.assert_close(got.cpu(), pgf_mul_ref(a.cpu(), b.cpu()), rtol=1e-12,
                               atol=1e-15)
