"""Triton soft Bellman backup vs its torch reference (interpreter on CPU, tiny shapes)."""

from __future__ import annotations

import pytest
import torch

from icml26.kernels.soft_bellman import soft_bellman, soft_bellman_ref

# (B grid points, S states, A actions, C opponent actions, D features)
SHAPES = {
    "regular": (4, 4, 4, 4, 2),
    "odd_tail": (3, 5, 3, 5, 3),
    "single_row": (1, 1, 2, 3, 1),
    "no_features": (2, 3, 3, 2, 0),
    "states_over_block": (2, 17, 2, 2, 1),  # S > BLOCK_T = 16: two next-state blocks
}


def inputs(b, s, a, c, d, dtype=torch.float64, seed=0):
    g = torch.Generator().manual_seed(seed)

    def rnd(*shape):
        return torch.randn(*shape, generator=g, dtype=torch.float64)

    P = torch.rand(s, a, c, s, generator=g, dtype=torch.float64)
    opp = torch.rand(b, s, c, generator=g, dtype=torch.float64)
    opp[..., 0] = 0.0  # a zero probability: 0 log 0 must be 0, never NaN
    if c == 1:
        opp[..., 0] = 1.0
    args = (rnd(b, d), rnd(s, a, c), rnd(d, s, a, c), P / P.sum(-1, keepdim=True), rnd(b, s),
            opp / opp.sum(-1, keepdim=True))
    return tuple(t.to(dtype) for t in args)


def oracle(args, tau, gamma):
    """Direct loops in float64: the definition, not the vectorised reference."""
    x, r0, feats, P, V, opp = (t.double() for t in args)
    b, s = V.shape
    a = r0.shape[1]
    value = torch.zeros(b, s, dtype=torch.float64)
    policy = torch.zeros(b, s, a, dtype=torch.float64)
    for i in range(b):
        for j in range(s):
            r = r0[j] + (x[i][:, None, None] * feats[:, j]).sum(0)
            q = ((r + gamma * (P[j] * V[i]).sum(-1)) * opp[i, j]).sum(-1)
            ent = sum(float(p * torch.log(p)) for p in opp[i, j] if p > 0)
            value[i, j] = tau * torch.logsumexp(q / tau, 0) + tau * ent
            policy[i, j] = torch.softmax(q / tau, 0)
    return value, policy


@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
def test_reference_matches_the_definition(shape):
    args = inputs(*shape, seed=1)
    value, policy = soft_bellman_ref(*args, tau=0.3, gamma=0.9)
    ov, op = oracle(args, 0.3, 0.9)
    torch.testing.assert_close(value, ov, rtol=0, atol=1e-12)
    torch.testing.assert_close(policy, op, rtol=0, atol=1e-14)


@pytest.mark.interpreter
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["fp32", "fp64"])
@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
def test_triton_matches_reference(shape, dtype, device):
    args = inputs(*shape, dtype=dtype, seed=2)
    ov, op = oracle(args, 0.3, 0.9)
    got_v, got_p = (t.cpu() for t in soft_bellman(*(t.to(device) for t in args), tau=0.3,
                                                   gamma=0.9, impl="triton"))
    assert not torch.isnan(got_v).any() and not torch.isnan(got_p).any()
    ref_v, ref_p = soft_bellman_ref(*args, tau=0.3, gamma=0.9)
    # flash-attention's rule: at most twice torch's own error in this dtype vs the float64
    # oracle, plus a floor of a few ulps of the entries' scale (values are O(10) here:
    # rewards O(1) over 1 / (1 - gamma); probabilities are <= 1)
    eps = torch.finfo(dtype).eps
    scale = float(ov.abs().max())
    assert (got_v.double() - ov).abs().max() <= 2 * (ref_v.double() - ov).abs().max() \
        + 8 * eps * scale
    assert (got_p.double() - op).abs().max() <= 2 * (ref_p.double() - op).abs().max() + 8 * eps


@pytest.mark.interpreter
def test_triton_writes_every_element(device):
    args = inputs(3, 2, 3, 3, 2, seed=3)
    value, policy = (t.cpu() for t in soft_bellman(*(t.to(device) for t in args), tau=0.5,
                                                    gamma=0.5, impl="triton"))
    assert torch.isfinite(value).all() and torch.isfinite(policy).all()
    torch.testing.assert_close(policy.sum(-1), torch.ones(3, 2, dtype=torch.float64))


@pytest.mark.interpreter
@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
def test_float64_kernel_is_float64(shape, device):
    """float64 in, float64 math: libdevice exp/log on CUDA and tau, gamma passed as float64
    (a Python float argument is float32 in a compiled kernel unless annotated), so the
    kernel is within 1e-12 relative of the float64 reference; float32 anywhere would leave
    ~1e-7 (the 7e-5 seen on an H200 before this test existed)."""
    args = inputs(*shape, seed=6)
    got_v, got_p = (t.cpu() for t in soft_bellman(*(t.to(device) for t in args), tau=0.3,
                                                   gamma=0.9, impl="triton"))
    ref_v, ref_p = soft_bellman_ref(*args, tau=0.3, gamma=0.9)
    assert got_v.dtype == got_p.dtype == torch.float64
    torch.testing.assert_close(got_v, ref_v, rtol=1e-12, atol=0)
    torch.testing.assert_close(got_p, ref_p, rtol=1e-12, atol=0)


@pytest.mark.interpreter
def test_library_runs_through_the_triton_kernel(device):
    """The library's users of the kernel give the torch path's numbers with impl='triton',
    end to end at a tiny size: soft best responses (policy iteration; 1 state, gamma 0.3)
    and the landscape sweep (Shapley backups + NI certificate) of a 2 x 2 matrix game on a
    2 x 2 grid (gamma = 0 keeps the interpreted Shapley loop to two backups)."""
    from icml26 import panda as pg

    cfg = pg.GameConfig(n_states=1, n_actions=(2, 2), gamma=0.3)
    game, game_d = pg.make_game(cfg, seed=0), pg.make_game(cfg, seed=0, device=device)
    x = torch.tensor([[0.5, -0.5]], dtype=torch.float64)
    nu = torch.tensor([[[0.3, 0.7]]], dtype=torch.float64)
    got = pg.best_response(game_d, x.to(device), nu.to(device), "max", impl="triton")
    ref = pg.best_response(game, x, nu, "max", impl="torch")
    torch.testing.assert_close(got.policy.cpu(), ref.policy, rtol=0, atol=1e-12)
    torch.testing.assert_close(got.value.cpu(), ref.value, rtol=0, atol=1e-12)
    cfg0 = pg.GameConfig(n_states=1, n_actions=(2, 2), gamma=0.0)
    matrix = pg.make_game(cfg0, seed=0)
    land = pg.landscape(pg.make_game(cfg0, seed=0, device=device), 1.0, grid=2, impl="triton")
    phi = torch.as_tensor(land["phi"]).cpu()
    torch.testing.assert_close(phi, torch.as_tensor(pg.landscape(matrix, 1.0, grid=2)["phi"]),
                               rtol=0, atol=1e-10)
    assert land["max_ni"] < 1e-9


def test_auto_uses_torch_on_cpu(monkeypatch):
    import icml26.kernels.soft_bellman as mod

    def boom(*args, **kwargs):
        raise AssertionError("the Triton kernel must not run on CPU tensors under auto")

    monkeypatch.setattr(mod, "_soft_bellman_kernel", boom)
    args = inputs(2, 2, 2, 2, 1)
    v, p = mod.soft_bellman(*args, tau=0.3, gamma=0.9)
    rv, rp = soft_bellman_ref(*args, tau=0.3, gamma=0.9)
    torch.testing.assert_close(v, rv)
    torch.testing.assert_close(p, rp)


def test_reference_is_differentiable():
    args = list(inputs(2, 3, 2, 2, 2))
    args[-1] = torch.full_like(args[-1], 0.5)  # interior opponent: d(p log p)/dp is finite
    args = [t.clone().requires_grad_(True) for t in args]
    value, _ = soft_bellman_ref(*args, tau=0.3, gamma=0.9)
    value.sum().backward()
    assert all(t.grad is not None and torch.isfinite(t.grad).all() for t in args)


def _bad(**change):
    args = dict(zip(("x", "r0", "feats", "P", "V", "opp"), inputs(2, 3, 2, 2, 1)))
    kw = {"tau": 0.3, "gamma": 0.9, "impl": "torch"}
    for k, v in change.items():
        (args if k in args else kw)[k] = v
    return lambda: soft_bellman(**args, **kw)


@pytest.mark.parametrize("bad", [
    _bad(tau=0.0),
    _bad(gamma=1.0),
    _bad(gamma=-0.1),
    _bad(V=torch.zeros(2, 4, dtype=torch.float64)),
    _bad(opp=torch.zeros(2, 3, 2)),
    _bad(r0=torch.zeros(3, 0, 2, dtype=torch.float64)),
    _bad(impl="cuda"),
], ids=["tau_zero", "gamma_one", "gamma_negative", "value_shape", "dtype_mismatch",
        "empty_actions", "bad_impl"])
def test_bad_input_raises(bad):
    with pytest.raises(ValueError):
        bad()


@pytest.mark.gpu
@pytest.mark.parametrize("shape", [(1681, 3, 3, 3, 2), (4096, 8, 5, 7, 2), (7, 33, 16, 16, 4)])
def test_compiled_kernel_on_cuda(shape):
    args = inputs(*shape, seed=4)
    got_v, got_p = soft_bellman(*(t.cuda() for t in args), tau=0.3, gamma=0.9)
    ref_v, ref_p = soft_bellman_ref(*args, tau=0.3, gamma=0.9)
    torch.testing.assert_close(got_v.cpu(), ref_v, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(got_p.cpu(), ref_p, rtol=1e-12, atol=1e-14)
