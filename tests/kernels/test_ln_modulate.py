"""Fused per-token LayerNorm + modulate: Triton vs the torch reference.

On CPU the Triton path runs under ``TRITON_INTERPRET=1`` (set by ``tests/conftest.py``), so
shapes stay tiny.  Tolerance: flash-attention's rule, <= 2x the fp32 torch reference's error
against an fp64 reference, plus a floor for rounding of O(1) values.
"""

from __future__ import annotations

import pytest
import torch

from icml26.kernels.ln_modulate import ln_modulate, ln_modulate_ref

pytestmark = pytest.mark.interpreter

SHAPES = [  # leading dims and D: a regular tile, odd tails, a single row, a 3-D token batch
    pytest.param((64, 32), id="regular-64x32"),
    pytest.param((37, 20), id="odd-tail-37x20"),
    pytest.param((1, 7), id="single-row-1x7"),
    pytest.param((3, 16, 48), id="tokens-3x16x48"),
]
FLOOR = 1e-5  # fp32 rounding of O(1) outputs built from D <= 48 terms


def inputs(shape, device, seed=0, offset=3.0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g) * 2 + offset  # an offset: the mean must be removed
    shift = torch.randn(shape, generator=g)
    scale = torch.randn(shape, generator=g) * 0.5
    return x.to(device), shift.to(device), scale.to(device)


def tolerance(x, shift, scale):
    exact = ln_modulate_ref(x.double().cpu(), shift.double().cpu(), scale.double().cpu())
    ref = ln_modulate_ref(x.cpu(), shift.cpu(), scale.cpu())
    return exact, 2 * (ref.double() - exact).abs().max().item() + FLOOR


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("block_m", [1, 4])
def test_triton_matches_reference(shape, block_m, device):
    x, shift, scale = inputs(shape, device)
    out = torch.full(shape, float("nan"), device=device)
    y = ln_modulate(x, shift, scale, impl="triton", block_m=block_m, out=out)
    assert y.data_ptr() == out.data_ptr()
    assert not y.isnan().any(), "elements left unwritten"
    exact, tol = tolerance(x, shift, scale)
    torch.testing.assert_close(y.cpu().double(), exact, rtol=0, atol=tol)


def test_strided_rows(device):
    """Non-contiguous token rows (a slice of a wider buffer) are read through their stride."""
    x, shift, scale = inputs((5, 2 * 24), device)
    x, shift, scale = x[:, :24], shift[:, 24:], scale[:, 12:36]
    y = ln_modulate(x, shift, scale, impl="triton")
    exact, tol = tolerance(x, shift, scale)
    torch.testing.assert_close(y.cpu().double(), exact, rtol=0, atol=tol)


def test_reference_is_layernorm_then_modulate():
    x, shift, scale = inputs((4, 9), "cpu")
    xhat = (x - x.mean(-1, keepdim=True)) / torch.sqrt(x.var(-1, unbiased=False,
                                                              keepdim=True) + 1e-6)
    torch.testing.assert_close(ln_modulate_ref(x, shift, scale), (1 + scale) * xhat + shift)
    # zero modulation is plain LayerNorm without affine
    zero = torch.zeros_like(x)
    torch.testing.assert_close(ln_modulate_ref(x, zero, zero),
                               torch.nn.functional.layer_norm(x, (9,), eps=1e-6))


def test_auto_uses_reference_when_grad_is_needed():
    x, shift, scale = inputs((3, 8), "cpu")
    scale.requires_grad_(True)
    y = ln_modulate(x, shift, scale)  # auto -> torch on CPU and under grad
    y.sum().backward()
    assert scale.grad is not None and torch.isfinite(scale.grad).all()
    with pytest.raises(ValueError, match="forward-only"):
        ln_modulate(x, shift, scale, impl="triton")


def test_bad_input_names_the_problem():
    x, shift, scale = inputs((3, 8), "cpu")
    with pytest.raises(ValueError, match="share one shape"):
        ln_modulate(x, shift[:, :4], scale)
    with pytest.raises(ValueError, match="impl must be"):
        ln_modulate(x, shift, scale, impl="cuda")
    with pytest.raises(ValueError, match="block_m"):
        ln_modulate(x, shift, scale, impl="triton", block_m=3)
    with pytest.raises(ValueError, match="eps"):
        ln_modulate(x, shift, scale, eps=0.0)
