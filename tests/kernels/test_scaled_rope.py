"""Fused HIPE-RoPE (scale + rotation of q and k) vs its torch reference.

Triton runs under the interpreter on CPU at tiny shapes; the autograd backward (the inverse
rotation with the same scale) is checked against autograd of the reference.
"""

from __future__ import annotations

import pytest
import torch

import icml26.kernels.scaled_rope as mod
from icml26.kernels.scaled_rope import ScaledRopeFunction, scaled_rope, scaled_rope_ref

# (B, H, T, D): a regular tile, a tail in T and a non-power-of-two half (D/2 = 5), one row
SHAPES = {"regular": (2, 3, 8, 16), "odd_tail": (1, 2, 7, 10), "single_row": (1, 1, 1, 4)}


def inputs(shape, seed: int = 0, dtype=torch.float32, transposed: bool = False):
    """q, k ``[B, H, T, D]`` (q optionally a transposed ``[B, T, H, D]`` view), tables, scale."""
    b, h, t, d = shape
    g = torch.Generator().manual_seed(seed)
    if transposed:
        q = torch.randn(b, t, h, d, generator=g).transpose(1, 2)
    else:
        q = torch.randn(b, h, t, d, generator=g)
    k = torch.randn(b, h, t, d, generator=g)
    omega = 10.0 ** (-torch.arange(d // 2, dtype=torch.float64) / max(1, d // 2 - 1))
    angle = torch.arange(t, dtype=torch.float64)[:, None] * omega[None, :]
    scale = 0.5 + torch.rand(h, d // 2, generator=g)
    return (q.to(dtype), k.to(dtype), angle.cos().float(), angle.sin().float(), scale)


def on(device, *tensors):
    """The same tensors on ``device`` (strides kept: a transposed view stays one)."""
    return tuple(t.to(device) for t in tensors)


def oracle(x, cos, sin, scale):
    """float64 reference: the same formula on upcast inputs."""
    return scaled_rope_ref(x.double(), cos.double(), sin.double(), scale.double())


def test_reference_is_a_scaled_rotation():
    q, k, cos, sin, scale = inputs((1, 2, 5, 8), seed=1)
    out = scaled_rope_ref(q, cos, sin, scale)
    half = 4
    # each (f, f + D/2) pair keeps its norm times the scale
    pair_in = q[..., :half] ** 2 + q[..., half:] ** 2
    pair_out = out[..., :half] ** 2 + out[..., half:] ** 2
    torch.testing.assert_close(pair_out, pair_in * scale[:, None, :] ** 2)
    # ones and zero angle: identity
    ident = scaled_rope_ref(q, torch.ones_like(cos), torch.zeros_like(sin), torch.ones_like(scale))
    torch.testing.assert_close(ident, q)


def test_logit_depends_only_on_relative_position():
    """<R(t1) s q, R(t2) s k> is a function of t1 - t2: what makes it a relative PE."""
    q, k, cos, sin, scale = inputs((1, 1, 12, 8), seed=2)
    q = q[:, :, :1].expand(-1, -1, 12, -1)  # same content at every position
    k = k[:, :, :1].expand(-1, -1, 12, -1)
    rq, rk = scaled_rope(q, k, cos, sin, scale, impl="torch")
    logits = (rq[0, 0] @ rk[0, 0].T).double()
    for delta in range(-3, 4):
        diag = torch.diagonal(logits, offset=-delta)
        torch.testing.assert_close(diag, diag[0].expand_as(diag), rtol=1e-5, atol=1e-5)


@pytest.mark.interpreter
@pytest.mark.parametrize("transposed", [False, True], ids=["contiguous", "strided_q"])
@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
def test_triton_forward_matches_reference(shape, transposed, device):
    q, k, cos, sin, scale = inputs(shape, seed=3, transposed=transposed)
    got_q, got_k = (t.cpu() for t in scaled_rope(*on(device, q, k, cos, sin, scale),
                                                  impl="triton"))
    for got, x in ((got_q, q), (got_k, k)):
        assert not torch.isnan(got).any(), "an output element was never written"
        exact = oracle(x, cos, sin, scale)
        torch_err = (scaled_rope_ref(x, cos, sin, scale).double() - exact).abs().max().item()
        triton_err = (got.double() - exact).abs().max().item()
        # flash-attention's rule: at most twice torch's fp32 error, plus a floor of a few
        # fp32 ulps of the largest |output| (a scaled rotation of N(0,1) entries, <~ 10)
        floor = 8 * torch.finfo(torch.float32).eps * max(1.0, exact.abs().max().item())
        assert triton_err <= 2 * torch_err + floor


@pytest.mark.interpreter
def test_triton_writes_every_element_of_nan_prefilled_outputs(device):
    q, k, cos, sin, scale = inputs((1, 2, 7, 10), seed=4)
    out = (torch.full(q.shape, float("nan"), device=device),
           torch.full(k.shape, float("nan"), device=device))
    got_q, got_k = mod._launch(*on(device, q, k, cos, sin, scale), conj=False, out=out)
    assert got_q is out[0] and torch.isfinite(got_q).all() and torch.isfinite(got_k).all()
    torch.testing.assert_close(got_q.cpu(), scaled_rope_ref(q, cos, sin, scale))


@pytest.mark.interpreter
@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
def test_triton_backward_matches_autograd_of_reference(shape, device):
    q, k, cos, sin, scale = inputs(shape, seed=5)
    g = torch.Generator().manual_seed(6)
    gq, gk = torch.randn(q.shape, generator=g), torch.randn(k.shape, generator=g)

    def grads(impl, dev):
        qq, kk = (t.clone().requires_grad_() for t in on(dev, q, k))
        oq, ok = scaled_rope(qq, kk, *on(dev, cos, sin, scale), impl=impl)
        loss = (oq * gq.to(dev)).sum() + (ok * gk.to(dev)).sum()
        return [t.cpu() for t in torch.autograd.grad(loss, (qq, kk))]

    tri, ref = grads("triton", device), grads("torch", "cpu")
    for a, b, gx in zip(tri, ref, (gq, gk)):
        assert not torch.isnan(a).any()
        # exact VJP: s R(-theta) g, in float64
        exact = oracle(gx, cos, -sin, scale)
        torch_err = (b.double() - exact).abs().max().item()
        floor = 8 * torch.finfo(torch.float32).eps * max(1.0, exact.abs().max().item())
        assert (a.double() - exact).abs().max().item() <= 2 * torch_err + floor


@pytest.mark.interpreter
def test_backward_is_the_inverse_rotation(device):
    """With scale 1 the map is orthogonal: backward(forward(x)) returns x."""
    q, k, cos, sin, _ = inputs((1, 2, 5, 8), seed=7)
    q, k, cos, sin, ones = on(device, q, k, cos, sin, torch.ones(2, 4))
    oq, ok = ScaledRopeFunction.apply(q, k, cos, sin, ones)
    bq, bk = mod._launch(oq, ok, cos, sin, ones, conj=True)
    torch.testing.assert_close(bq, q, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(bk, k, rtol=1e-5, atol=1e-5)


@pytest.mark.interpreter
def test_transformer_trains_through_the_triton_path(device):
    """The library's Transformer uses the kernel: one tiny forward/backward through Triton
    equals the torch path."""
    from dataclasses import replace

    from icml26.place_fields import lm

    cfg = replace(lm.LMConfig(), vocab=8, seq_len=6, d_model=8, n_heads=2, head_dim=4,
                  windows=(1, 2), sizes=(4,), steps=1, batch=2)
    scale = torch.stack([cfg.scale("rope"), cfg.scale("hipe_multi")])
    x = torch.randint(cfg.vocab, (2, 3, cfg.seq_len), generator=torch.Generator().manual_seed(0))
    losses, grads = [], []
    for impl, dev in (("triton", device), ("torch", "cpu")):
        model = lm.HipeTransformer(cfg, scale, torch.Generator().manual_seed(1), impl=impl)
        model = model.to(dev)
        loss = model.member_loss(x.to(dev))
        grads.append(torch.autograd.grad(loss.sum(), model.qkv[0])[0].cpu())
        losses.append(loss.detach().cpu())
    torch.testing.assert_close(losses[0], losses[1], rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(grads[0], grads[1], rtol=1e-4, atol=1e-6)


def test_auto_uses_torch_on_cpu(monkeypatch):
    def boom(*args, **kwargs):
        raise AssertionError("the Triton kernel must not run on CPU tensors under auto")

    monkeypatch.setattr(mod, "_launch", boom)
    q, k, cos, sin, scale = inputs((1, 2, 3, 4))
    got_q, _ = mod.scaled_rope(q, k, cos, sin, scale)
    torch.testing.assert_close(got_q, scaled_rope_ref(q, cos, sin, scale))


@pytest.mark.parametrize("bad", [
    lambda q, k, c, s, sc: scaled_rope(q, k[:, :, :-1], c, s, sc),
    lambda q, k, c, s, sc: scaled_rope(q[..., :3], k[..., :3], c, s, sc),
    lambda q, k, c, s, sc: scaled_rope(q, k.double(), c, s, sc),
    lambda q, k, c, s, sc: scaled_rope(q, k, c[:-1], s, sc),
    lambda q, k, c, s, sc: scaled_rope(q, k, c, s, sc[:1]),
    lambda q, k, c, s, sc: scaled_rope(q[0], k[0], c, s, sc),
    lambda q, k, c, s, sc: scaled_rope(q, k, c, s, sc, impl="cuda"),
], ids=["shape_mismatch", "odd_head_dim", "dtype_mismatch", "short_table", "scale_shape",
        "not_4d", "bad_impl"])
def test_bad_input_raises(bad):
    with pytest.raises(ValueError):
        bad(*inputs((1, 2, 3, 4)))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["fp32", "bf16"])
@pytest.mark.parametrize("shape", [(4, 8, 512, 64), (2, 12, 333, 128), (1, 1, 1, 16)])
def test_compiled_kernel_on_cuda(shape, dtype):
    q, k, cos, sin, scale = (x.cuda() for x in inputs(shape, seed=8, dtype=dtype))
    got_q, got_k = scaled_rope(q, k, cos, sin, scale)
    for got, x in ((got_q, q), (got_k, k)):
        exact = oracle(x, cos, sin, scale)
        torch_err = (scaled_rope_ref(x, cos, sin, scale).double() - exact).abs().max().item()
        floor = 8 * torch.finfo(dtype).eps * max(1.0, exact.abs().max().item())
        assert (got.double() - exact).abs().max().item() <= 2 * torch_err + floor
    qq, kk = q.clone().requires_grad_(), k.clone().requires_grad_()
    oq, ok = scaled_rope(qq, kk, cos, sin, scale)
    dq, dk = torch.autograd.grad(oq.float().sum() + ok.float().sum(), (qq, kk))
    assert torch.isfinite(dq).all() and torch.isfinite(dk).all()
