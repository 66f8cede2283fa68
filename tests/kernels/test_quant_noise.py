"""Fused fake-quantization noise: Triton (interpreter on CPU, tiny shapes) vs torch reference."""

from __future__ import annotations

import pytest
import torch

from icml26.kernels.quant_noise import quant_noise, quant_noise_ref, uniform_ref

SHAPES = {"regular": (2048, 3), "odd_tail": (1000, 2), "single_element": (1, 4),
          "one_draw": (37, 1)}
MODES = ("additive", "subtractive")


def weights(n: int, seed: int = 0) -> torch.Tensor:
    return torch.randn(n, generator=torch.Generator().manual_seed(seed))


def grid_args(w: torch.Tensor, bits: int = 8) -> dict:
    levels = 2**bits - 1
    return {"delta": float(w.max() - w.min()) / levels if w.numel() > 1 else 0.01,
            "w_min": float(w.min()), "levels": levels}


@pytest.mark.interpreter
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
def test_triton_matches_reference(shape, mode, device):
    n, draws = shape
    w = weights(n)
    args = grid_args(w)
    oracle = quant_noise_ref(w.double(), args["delta"], draws, 11, mode, args["w_min"],
                             args["levels"])
    out = torch.full((draws, n), float("nan"), device=device)
    got = quant_noise(w.to(device), draws=draws, seed=11, mode=mode, impl="triton", out=out,
                      block=256, **args)
    assert got.data_ptr() == out.data_ptr()
    got = got.cpu()
    assert not torch.isnan(got).any(), "an output element was never written"
    torch_err = (quant_noise_ref(w, args["delta"], draws, 11, mode, args["w_min"],
                                 args["levels"]).double() - oracle).abs().max().item()
    triton_err = (got.double() - oracle).abs().max().item()
    # flash-attention's rule: at most twice torch's own float32 error, with a floor of two
    # float32 ulps of the largest |output| for when torch happens to be exact
    floor = 2 * torch.finfo(torch.float32).eps * float(oracle.abs().max())
    assert triton_err <= 2 * torch_err + floor


@pytest.mark.interpreter
def test_result_does_not_depend_on_block_size(device):
    w = weights(300, seed=1).to(device)
    a = quant_noise(w, 0.05, draws=2, seed=3, impl="triton", block=128)
    b = quant_noise(w, 0.05, draws=2, seed=3, impl="triton", block=512)
    torch.testing.assert_close(a, b, rtol=0, atol=0)


def test_uniforms_are_uniform_and_draws_independent():
    u = uniform_ref(20000, 3, seed=5)
    assert ((u >= 0) & (u < 1)).all()
    se = (1 / 12 / 20000) ** 0.5
    assert (u.mean(1) - 0.5).abs().max() < 5 * se
    assert ((u.var(1) - 1 / 12).abs() < 0.005).all()
    corr = torch.corrcoef(u)
    assert (corr - torch.eye(3, dtype=corr.dtype)).abs().max() < 5 / 20000**0.5
    lag = torch.corrcoef(torch.stack([u[0, :-1], u[0, 1:]]))[0, 1]
    assert abs(lag) < 5 / 20000**0.5  # neighbouring weights are not correlated


def test_same_seed_same_noise_other_seed_other_noise():
    w = weights(100)
    a, b = quant_noise(w, 0.1, 2, seed=7), quant_noise(w, 0.1, 2, seed=7)
    torch.testing.assert_close(a, b, rtol=0, atol=0)
    assert not torch.equal(a, quant_noise(w, 0.1, 2, seed=8))
    assert not torch.equal(a[0], a[1])


@pytest.mark.parametrize("mode", MODES)
def test_noise_has_the_quantization_variance(mode):
    w = weights(50000, seed=2)
    args = grid_args(w, bits=6)
    err = quant_noise(w, draws=2, seed=1, mode=mode, **args) - w
    delta = args["delta"]
    assert err.abs().max() <= delta / 2 * (1 + 1e-5)
    assert abs(float(err.mean())) < 5 * delta / (12 * err.numel()) ** 0.5
    assert abs(float(err.var()) / (delta**2 / 12) - 1) < 0.03


def test_subtractive_dither_rounds_onto_the_grid():
    w = weights(500, seed=4)
    args = grid_args(w, bits=4)
    u = uniform_ref(500, 1, seed=9).float()
    d = args["delta"] * (u - 0.5)
    q = quant_noise(w, draws=1, seed=9, mode="subtractive", **args) + d
    k = (q - args["w_min"]) / args["delta"]
    assert (k - k.round()).abs().max() < 1e-3 and k.min() > -1e-3
    assert k.max() < args["levels"] + 1e-3


@pytest.mark.interpreter
def test_library_monte_carlo_tpv_runs_through_triton(device):
    from icml26 import tpv

    model = tpv.MLP.build(3, 4, 2, generator=torch.Generator().manual_seed(0))
    x = torch.randn(16, 3, generator=torch.Generator().manual_seed(1))
    via_triton = tpv.tpv_quant_mc(model.to(device), x.to(device), bits=6, draws=4, seed=2,
                                  impl="triton")
    model.cpu()
    via_torch = tpv.tpv_quant_mc(model, x, bits=6, draws=4, seed=2, impl="torch")
    assert via_triton[0] > 0
    assert abs(via_triton[0] - via_torch[0]) <= 1e-6 * via_torch[0]


def test_auto_uses_torch_on_cpu(monkeypatch):
    import icml26.kernels.quant_noise as mod

    def boom(*args, **kwargs):
        raise AssertionError("the Triton kernel must not run on CPU tensors under auto")

    monkeypatch.setattr(mod, "_quant_noise_kernel", boom)
    w = weights(10)
    torch.testing.assert_close(mod.quant_noise(w, 0.1, 2, 3), quant_noise_ref(w, 0.1, 2, 3))


@pytest.mark.parametrize("bad", [
    lambda: quant_noise(torch.zeros(2, 3), 0.1),
    lambda: quant_noise(torch.zeros(3, dtype=torch.float64), 0.1),
    lambda: quant_noise(torch.zeros(3), 0.0),
    lambda: quant_noise(torch.zeros(3), float("nan")),
    lambda: quant_noise(torch.zeros(3), 0.1, draws=0),
    lambda: quant_noise(torch.zeros(3), 0.1, seed=-1),
    lambda: quant_noise(torch.zeros(3), 0.1, mode="stochastic"),
    lambda: quant_noise(torch.zeros(3), 0.1, mode="subtractive", levels=0),
    lambda: quant_noise(torch.zeros(3), 0.1, impl="cuda"),
    lambda: quant_noise(torch.zeros(3), 0.1, draws=2, out=torch.empty(3, 2)),
], ids=["not_1d", "float64", "zero_step", "nan_step", "no_draws", "negative_seed",
        "bad_mode", "no_levels", "bad_impl", "bad_out"])
def test_bad_input_raises(bad):
    with pytest.raises(ValueError):
        bad()


@pytest.mark.gpu
@pytest.mark.parametrize("n, draws", [(1 << 20, 8), (12345, 3)])
def test_compiled_kernel_on_cuda(n, draws):
    w = weights(n).cuda()
    args = grid_args(w.cpu())
    add = quant_noise(w, draws=draws, seed=4, **args)
    ref = quant_noise_ref(w.cpu().double(), args["delta"], draws, 4, "additive")
    # fp32 kernel vs fp64 oracle: a few float32 ulps of the largest |output|
    assert (add.cpu().double() - ref).abs().max() <= 8e-7 * float(ref.abs().max())
    sub = quant_noise(w, draws=draws, seed=4, mode="subtractive", **args).cpu()
    ref = quant_noise_ref(w.cpu(), draws=draws, seed=4, mode="subtractive", **args)
    # a rounding tie may fall either way under fused multiply-adds: allow 1 in 10^4 to move
    # by one grid step, everything else must agree to float32 rounding
    off = (sub - ref).abs() > 1e-5 * float(ref.abs().max())
    assert off.float().mean() < 1e-4
    assert ((sub - w.cpu()).abs() <= args["delta"] / 2 * (1 + 1e-4)).all()
