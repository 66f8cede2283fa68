"""Bilinear grid sampling (``kernels/grid_sample.py``): Triton and its torch twin vs
``F.grid_sample``.

On CPU the Triton paths run under ``TRITON_INTERPRET=1`` (set by ``tests/conftest.py``), so
shapes stay tiny.  The reference's gradients are checked by ``torch.autograd.gradcheck`` in
float64; the hand-written backward (torch twin: gradcheck too) and the Triton kernels are held to
flash-attention's rule against a float64 oracle: <= 2x the fp32 ``F.grid_sample`` error plus a
floor, for the output, the feature gradient and the coordinate gradient.
"""

from __future__ import annotations

import pytest
import torch

from icml26.kernels.grid_sample import grid_sample, grid_sample_ref

pytestmark = pytest.mark.interpreter

SHAPES = [  # (B, H, W, C, K): a GridS-like map, odd tails, a single point, a 1-row map
    pytest.param(2, 16, 16, 32, 4, id="grids-2x16x16x32-k4"),
    pytest.param(3, 5, 7, 19, 37, id="odd-tail-3x5x7x19-k37"),
    pytest.param(1, 4, 4, 1, 1, id="single-point-1x4x4x1-k1"),
    pytest.param(2, 1, 6, 70, 9, id="one-row-2x1x6x70-k9"),
]
# fp32 rounding floor for values of O(10) summed over <= 70 channels
FLOOR = 1e-5


def inputs(b, h, w, c, k, device, seed=0, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    feat = torch.randn(b, h, w, c, generator=g, dtype=dtype)
    coords = torch.rand(b, k, 2, generator=g, dtype=dtype) * 1.3 - 0.15  # some clamped
    grad = torch.randn(b, k, c, generator=g, dtype=dtype)
    return feat.to(device), coords.to(device), grad.to(device)


def forward_backward(fn, feat, coords, grad):
    f = feat.detach().clone().requires_grad_()
    p = coords.detach().clone().requires_grad_()
    out = fn(f, p)
    gf, gp = torch.autograd.grad(out, (f, p), grad)
    return [t.detach().cpu().double() for t in (out, gf, gp)]


@pytest.mark.parametrize("impl", ["reference", "torch"])
def test_gradcheck_float64(impl):
    """gradcheck of the reference (and of the torch twin's hand-written backward), with
    points away from the non-differentiable grid lines (gradcheck's finite differences)."""
    g = torch.Generator().manual_seed(1)
    feat = torch.randn(2, 5, 6, 3, generator=g, dtype=torch.float64, requires_grad=True)
    cells = torch.randint(0, 4, (2, 7, 2), generator=g).double()
    frac = 0.1 + 0.8 * torch.rand(2, 7, 2, generator=g, dtype=torch.float64)
    coords = ((cells + frac) / torch.tensor([5.0, 4.0], dtype=torch.float64)).requires_grad_()
    assert torch.autograd.gradcheck(lambda f, p: grid_sample(f, p, impl=impl), (feat, coords))


@pytest.mark.parametrize("impl", ["triton", "torch"])
@pytest.mark.parametrize(("b", "h", "w", "c", "k"), SHAPES)
def test_forward_and_both_gradients_match_reference(b, h, w, c, k, impl, device):
    feat, coords, grad = inputs(b, h, w, c, k, device)
    got = forward_backward(lambda f, p: grid_sample(f, p, impl=impl), feat, coords, grad)
    ref = forward_backward(grid_sample_ref, feat.cpu(), coords.cpu(), grad.cpu())
    oracle = forward_backward(grid_sample_ref, feat.cpu().double(), coords.cpu().double(),
                              grad.cpu().double())
    for name, t, r, o in zip(("out", "d_feat", "d_coords"), got, ref, oracle):
        assert not t.isnan().any(), f"{name}: NaN (unwritten elements)"
        ref_err = (r - o).abs().max().item()
        err = (t - o).abs().max().item()
        assert err <= 2 * ref_err + FLOOR, f"{name}: err {err:.3g} vs torch {ref_err:.3g}"


def test_forward_writes_every_element(device):
    """The forward kernel into a NaN-prefilled buffer leaves no element unwritten."""
    from icml26.kernels.grid_sample import grid_sample_triton_forward

    feat, coords, _ = inputs(3, 5, 7, 19, 37, device)
    out = torch.full((3, 37, 19), float("nan"), device=device)
    grid_sample_triton_forward(feat, coords, out=out)
    torch.testing.assert_close(out.cpu(), grid_sample_ref(feat.cpu(), coords.cpu()),
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("impl", ["triton", "torch"])
def test_grid_nodes_and_borders_follow_torch(impl, device):
    """At exact grid nodes the floor corner is the node itself; at and beyond the border the
    coordinate gradient is 0 (torch's clip convention), inside it is not."""
    feat, _, grad = inputs(1, 4, 5, 3, 5, device, seed=2)
    coords = torch.tensor([[[0.5, 1 / 3], [0.0, 0.5], [1.0, 0.5], [1.2, -0.1], [0.3, 0.6]]],
                          device=device)
    got = forward_backward(lambda f, p: grid_sample(f, p, impl=impl), feat, coords, grad)
    ref = forward_backward(grid_sample_ref, feat.cpu(), coords.cpu(), grad.cpu())
    for t, r in zip(got, ref):
        torch.testing.assert_close(t, r, rtol=1e-5, atol=1e-5)
    assert got[2][0, 1, 0] == 0 and got[2][0, 2, 0] == 0 and (got[2][0, 3] == 0).all()
    assert got[2][0, 4].abs().min() > 0


def test_sampling_at_token_centres_reads_the_tokens(device):
    feat, _, _ = inputs(2, 4, 6, 5, 1, device, seed=3)
    ys, xs = torch.meshgrid(torch.arange(4), torch.arange(6), indexing="ij")
    coords = torch.stack([xs.reshape(-1) / 5, ys.reshape(-1) / 3], -1).float()
    coords = coords.expand(2, -1, -1).to(device)
    for impl in ("triton", "torch"):
        out = grid_sample(feat, coords, impl=impl)
        torch.testing.assert_close(out.cpu(), feat.cpu().reshape(2, 24, 5), rtol=0, atol=1e-6)


def test_empty_inputs(device):
    feat = torch.randn(2, 3, 3, 4, device=device)
    coords = torch.zeros(2, 0, 2, device=device, requires_grad=True)
    for impl in ("triton", "torch"):
        out = grid_sample(feat, coords, impl=impl)
        assert out.shape == (2, 0, 4)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"feat": torch.ones(2, 3, 3)}, r"\[B, H, W, C\]"),
    ({"coords": torch.ones(2, 4, 3)}, "coords must be"),
    ({"coords": torch.ones(1, 4, 2)}, "coords must be"),
    ({"coords": torch.ones(2, 4, 2, dtype=torch.float64)}, "dtype"),
    ({"impl": "cuda"}, "impl"),
    ({"feat": torch.ones(2, 3, 3, 4, dtype=torch.float64),
      "coords": torch.ones(2, 4, 2, dtype=torch.float64), "impl": "triton"}, "float32"),
])
def test_rejects_bad_input(kwargs, match):
    args = {"feat": torch.ones(2, 3, 3, 4), "coords": torch.ones(2, 4, 2), "impl": "torch",
            **kwargs}
    with pytest.raises(ValueError, match=match):
        grid_sample(**args)


def test_grids_policy_end_to_end_through_the_kernel(device):
    """A GridS policy with impl="triton" gives the torch path's output and gradients."""
    from icml26.grids import TokenPolicy

    torch.manual_seed(0)
    tri = TokenPolicy("grids", 4, 8, 6, 6, d_model=8, noise_scale=0.0, impl="triton").to(device)
    ref = TokenPolicy("grids", 4, 8, 6, 6, d_model=8, noise_scale=0.0, impl="torch")
    ref.load_state_dict(tri.state_dict())
    fmap = torch.randn(3, 6, 6, 8, generator=torch.Generator().manual_seed(1))
    outs = []
    for pol, x in ((tri, fmap.to(device)), (ref, fmap)):
        out = pol(x)
        out.square().sum().backward()
        outs.append((out.detach().cpu(), pol.scout.mlp[2].weight.grad.cpu()))
    torch.testing.assert_close(outs[0][0], outs[1][0], rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(outs[0][1], outs[1][1], rtol=1e-3, atol=1e-5)
