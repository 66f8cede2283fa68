"""Batched 2-D ray casting: Triton vs the torch reference (and an fp64 oracle).

On CPU the Triton path runs under ``TRITON_INTERPRET=1`` (set by ``tests/conftest.py``), so
shapes stay tiny.  Hit ids must match the reference exactly away from near-ties (random
primitives: a tie within float32 rounding is vanishingly rare, and the tests check it did not
occur); ranges are held to flash-attention's rule: <= 2x the fp32 torch error against fp64,
plus a floor.  Exact ties (a primitive duplicated) must go to the lowest index.
"""

from __future__ import annotations

import math

import pytest
import torch

from icml26.kernels.ray_cast import ray_cast, ray_cast_ref

pytestmark = pytest.mark.interpreter

SHAPES = [  # (B scenes, R rays, S segments, C circles)
    pytest.param(2, 64, 8, 4, id="regular-2x64x8x4"),
    pytest.param(3, 37, 5, 3, id="odd-tail-3x37x5x3"),
    pytest.param(1, 1, 3, 2, id="single-ray-1x1x3x2"),
    pytest.param(2, 40, 6, 0, id="segments-only-2x40x6x0"),
    pytest.param(2, 40, 0, 5, id="circles-only-2x40x0x5"),
]
MAX_RANGE = 9.0
# fp32 rounding floor for ranges of O(10) m from a few products and one division / sqrt
RANGE_FLOOR = 1e-5


def scene(b, r, s, c, device, seed=3):
    g = torch.Generator().manual_seed(seed)
    origins = torch.randn(b, 2, generator=g) * 0.3
    ang = torch.rand(r, generator=g) * 2 * math.pi
    dirs = torch.stack([ang.cos(), ang.sin()], 1)
    segs = torch.randn(b, s, 4, generator=g) * 4
    cen = torch.randn(b, c, 2, generator=g) * 2.5
    rad = torch.rand(b, c, 1, generator=g) * 1.5
    rad[:, ::3] = 0.0  # padding circles: never hit
    if s:
        segs[:, -1, 2:] = segs[:, -1, :2]  # a degenerate (padding) segment: never hit
    return (origins.to(device), dirs.to(device), segs.to(device),
            torch.cat([cen, rad], 2).to(device))


def prefilled(b, r, device):
    return (torch.full((b, r), float("nan"), device=device),
            torch.full((b, r), -2, dtype=torch.int64, device=device))


@pytest.mark.parametrize(("b", "r", "s", "c"), SHAPES)
def test_matches_reference_and_fp64(b, r, s, c, device):
    args = scene(b, r, s, c, device)
    t, ids = ray_cast(*args, MAX_RANGE, impl="triton", block_r=16, out=prefilled(b, r, device))
    cpu = [a.cpu() for a in args]
    ref_t, ref_id = ray_cast_ref(*cpu, MAX_RANGE)
    t64, id64 = ray_cast_ref(*(a.double() for a in cpu), MAX_RANGE)
    assert not t.isnan().any() and (ids >= -1).all(), "rays left unwritten"
    assert (ref_id == id64).all(), "the fp32 reference met a near-tie: pick another seed"
    torch.testing.assert_close(ids.cpu(), ref_id, rtol=0, atol=0)
    ref_err = (ref_t.double() - t64).abs().max().item()
    err = (t.cpu().double() - t64).abs().max().item()
    assert err <= 2 * ref_err + RANGE_FLOOR


def test_scene_has_hits_and_misses(device):
    """The comparison above is only meaningful if rays hit segments, circles and nothing."""
    _, ids = ray_cast_ref(*scene(2, 64, 8, 4, "cpu"), MAX_RANGE)
    assert (ids == -1).any() and ((ids >= 0) & (ids < 8)).any() and (ids >= 8).any()


@pytest.mark.parametrize("block_r", [16, 64])
def test_exact_tie_goes_to_lowest_index(block_r, device):
    """Every primitive duplicated (copy j + S equals j): the first copy must win, as in the
    reference, whichever block the ray is in."""
    o, d, segs, circ = scene(2, 50, 6, 4, device, seed=1)
    segs2, circ2 = torch.cat([segs, segs], 1), torch.cat([circ, circ], 1)
    t, ids = ray_cast(o, d, segs2, circ2, MAX_RANGE, impl="triton", block_r=block_r)
    ref_t, ref_id = ray_cast_ref(o.cpu(), d.cpu(), segs2.cpu(), circ2.cpu(), MAX_RANGE)
    torch.testing.assert_close(ids.cpu(), ref_id, rtol=0, atol=0)
    hit_seg = (ref_id >= 0) & (ref_id < 12)
    assert (ref_id[hit_seg] < 6).all() and ((ref_id[ref_id >= 12] - 12) < 4).all()


def test_known_geometry(device):
    """A wall at x = 2 and a circle of radius 0.5 at (0, 3): exact ranges."""
    o = torch.zeros(1, 2, device=device)
    d = torch.tensor([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]], device=device)
    segs = torch.tensor([[[2.0, -1.0, 2.0, 1.0]]], device=device)
    circ = torch.tensor([[[0.0, 3.0, 0.5]]], device=device)
    for impl in ("torch", "triton"):
        t, ids = ray_cast(o, d, segs, circ, 10.0, impl=impl)
        torch.testing.assert_close(t.cpu(), torch.tensor([[2.0, 2.5, 10.0]]))
        assert ids.cpu().tolist() == [[0, 1, -1]]


def test_sensor_inside_circle_hits_far_side(device):
    o = torch.zeros(1, 2, device=device)
    d = torch.tensor([[1.0, 0.0]], device=device)
    circ = torch.tensor([[[0.5, 0.0, 1.0]]], device=device)
    segs = torch.zeros(1, 0, 4, device=device)
    for impl in ("torch", "triton"):
        t, _ = ray_cast(o, d, segs, circ, 10.0, impl=impl)
        torch.testing.assert_close(t.cpu(), torch.tensor([[1.5]]))


def test_bad_input_raises(device):
    o, d, segs, circ = scene(2, 8, 3, 2, device)
    with pytest.raises(ValueError, match="float32"):
        ray_cast(o.double(), d, segs, circ, 5.0)
    with pytest.raises(ValueError, match="scenes"):
        ray_cast(o[:1], d, segs, circ, 5.0)
    with pytest.raises(ValueError, match="max_range"):
        ray_cast(o, d, segs, circ, 0.0)
    with pytest.raises(ValueError, match="impl"):
        ray_cast(o, d, segs, circ, 5.0, impl="cuda")
    with pytest.raises(ValueError, match="power of two"):
        ray_cast(o, d, segs, circ, 5.0, impl="triton", block_r=12)
