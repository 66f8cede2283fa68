"""Fused gain-shape assignment and scatter-add centroid sums: Triton vs the torch reference.

On CPU the Triton paths run under ``TRITON_INTERPRET=1`` (set by ``tests/conftest.py``), so
shapes stay tiny.  Assignment inputs are small integers (scores are then exact in fp32, so
ties really occur and must be broken like torch's ``argmax``: lowest index) or Gaussian
(the chosen codeword must match the reference exactly; best scores are held to
flash-attention's rule: <= 2x the fp32 torch error against fp64, plus a floor).
"""

from __future__ import annotations

import pytest
import torch

from icml26.kernels.gain_shape_assign import (
    RULES,
    centroid_sums,
    centroid_sums_ref,
    gain_shape_assign,
    gain_shape_assign_ref,
)

pytestmark = pytest.mark.interpreter

SHAPES = [  # (N, K, d): regular tiles, odd tails in every dimension, a single row
    pytest.param(64, 16, 32, id="regular-64x16x32"),
    pytest.param(37, 19, 20, id="odd-tail-37x19x20"),
    pytest.param(1, 5, 7, id="single-row-1x5x7"),
    pytest.param(70, 40, 128, id="multi-chunk-70x40x128"),
]
# fp32 rounding floor for scores of O(10) built from d <= 128 products
SCORE_FLOOR = 1e-5


def integer_inputs(n, k, d, device, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(-3, 4, (n, d), generator=g).float()
    # few distinct codewords, each repeated at several indices: exact ties are common
    distinct = max(1, k // 3)
    which = torch.randint(0, distinct, (k,), generator=g)
    shapes = torch.randint(-2, 3, (distinct, d), generator=g).float()[which]
    gains = torch.randint(1, 4, (distinct,), generator=g).float()[which]
    return x.to(device), shapes.to(device), gains.to(device)


def gaussian_inputs(n, k, d, device, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, d, generator=g)
    shapes = torch.nn.functional.normalize(torch.randn(k, d, generator=g), dim=1)
    gains = torch.rand(k, generator=g) * 2
    return x.to(device), shapes.to(device), gains.to(device)


def prefilled(n, device):
    return (torch.full((n,), -1, dtype=torch.int64, device=device),
            torch.full((n,), float("nan"), dtype=torch.float32, device=device))


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize(("n", "k", "d"), SHAPES)
def test_assign_exact_on_integer_scores_with_ties(n, k, d, rule, device):
    x, shapes, gains = integer_inputs(n, k, d, device)
    idx, best = gain_shape_assign(x, shapes, gains, rule, impl="triton",
                                  block_n=16, block_k=16, out=prefilled(n, device))
    ref_idx, ref_best = gain_shape_assign_ref(x.cpu(), shapes.cpu(), gains.cpu(), rule)
    assert (idx.cpu() >= 0).all() and not best.isnan().any(), "rows left unwritten"
    torch.testing.assert_close(idx.cpu(), ref_idx, rtol=0, atol=0)
    torch.testing.assert_close(best.cpu(), ref_best, rtol=0, atol=0)


def test_integer_inputs_do_contain_ties(device):
    """The tie test above is only meaningful if some rows have several best codewords."""
    x, shapes, gains = integer_inputs(64, 16, 32, device)
    scores = 2 * gains.cpu() * (x.cpu() @ shapes.cpu().T) - gains.cpu() ** 2
    n_best = (scores == scores.max(1, keepdim=True).values).sum(1)
    assert (n_best > 1).float().mean() > 0.5


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize(("n", "k", "d"), SHAPES)
def test_assign_matches_reference_on_gaussian_data(n, k, d, rule, device):
    x, shapes, gains = gaussian_inputs(n, k, d, device, seed=1)
    idx, best = gain_shape_assign(x, shapes, gains, rule, impl="triton",
                                  out=prefilled(n, device))
    ref_idx, ref_best = gain_shape_assign_ref(x.cpu(), shapes.cpu(), gains.cpu(), rule)
    torch.testing.assert_close(idx.cpu(), ref_idx, rtol=0, atol=0)
    # flash-attention's rule on the best score, against an fp64 oracle
    x64, s64, g64 = x.cpu().double(), shapes.cpu().double(), gains.cpu().double()
    _, best64 = gain_shape_assign_ref(x64, s64, g64, rule)
    ref_err = (ref_best.double() - best64).abs().max().item()
    err = (best.cpu().double() - best64).abs().max().item()
    assert err <= 2 * ref_err + SCORE_FLOOR


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize(("n", "k", "d"), SHAPES)
def test_tf32x3_tensor_core_path_matches_reference(n, k, d, rule, device):
    """``precision="tf32x3"`` (tensor cores on a GPU; numpy fp32 under the interpreter): the
    chosen code attains the fp64 best score and the best score obeys flash-attention's rule
    (a near-tie may pick the other code: 3xTF32 rounds differently from fp32 FMAs), and on
    integer scores (exact in TF32) everything is exact, ties to the lowest index."""
    x, shapes, gains = gaussian_inputs(n, k, d, device, seed=4)
    idx, best = gain_shape_assign(x, shapes, gains, rule, impl="triton", precision="tf32x3",
                                  out=prefilled(n, device))
    x64, s64, g64 = x.cpu().double(), shapes.cpu().double(), gains.cpu().double()
    scores64 = x64 @ s64.T if rule == "cos" else 2 * g64 * (x64 @ s64.T) - g64**2
    _, best64 = gain_shape_assign_ref(x64, s64, g64, rule)
    _, ref_best = gain_shape_assign_ref(x.cpu(), shapes.cpu(), gains.cpu(), rule)
    bound = 2 * (ref_best.double() - best64).abs().max().item() + SCORE_FLOOR
    assert (idx.cpu() >= 0).all() and not best.isnan().any(), "rows left unwritten"
    assert (best.cpu().double() - best64).abs().max().item() <= bound
    attained = scores64.gather(1, idx.cpu()[:, None])[:, 0]
    assert (best64 - attained).max().item() <= bound
    xi, si, gi = integer_inputs(n, k, d, device)
    idx, best = gain_shape_assign(xi, si, gi, rule, impl="triton", precision="tf32x3",
                                  out=prefilled(n, device))
    ref_idx, ref_best = gain_shape_assign_ref(xi.cpu(), si.cpu(), gi.cpu(), rule)
    torch.testing.assert_close(idx.cpu(), ref_idx, rtol=0, atol=0)
    torch.testing.assert_close(best.cpu(), ref_best, rtol=0, atol=0)


@pytest.mark.parametrize("block_k", [16, 64])
def test_assign_tie_across_codebook_chunks_goes_to_lowest_index(block_k, device):
    """Duplicated codewords (code j == code j + 40), in the same K-chunk (block_k=64) or in
    different chunks (block_k=16): the first copy must win, as in torch.  Integer inputs keep
    the duplicated scores bit-identical (Gaussian ones can differ in the last ulp)."""
    g = torch.Generator().manual_seed(2)
    x = torch.randint(-3, 4, (33, 24), generator=g).float().to(device)
    shapes = torch.randint(-2, 3, (40, 24), generator=g).float().to(device)
    gains = torch.randint(1, 4, (40,), generator=g).float().to(device)
    shapes = torch.cat([shapes, shapes])  # code j and j + 40 are identical
    gains = torch.cat([gains, gains])
    for rule in RULES:
        idx, _ = gain_shape_assign(x, shapes, gains, rule, impl="triton", block_k=block_k,
                                   out=prefilled(33, device))
        assert (idx.cpu() < 40).all()
        torch.testing.assert_close(idx.cpu(), gain_shape_assign_ref(
            x.cpu(), shapes.cpu(), gains.cpu(), rule)[0], rtol=0, atol=0)


def test_assign_empty_input(device):
    x = torch.zeros(0, 8, device=device)
    idx, best = gain_shape_assign(x, torch.ones(3, 8, device=device), impl="triton")
    assert idx.shape == (0,) and best.shape == (0,)


@pytest.mark.parametrize("unit", [False, True], ids=["sums", "sums+unit"])
@pytest.mark.parametrize(("n", "k", "d"), SHAPES)
def test_centroid_sums_match_reference(n, k, d, unit, device):
    g = torch.Generator().manual_seed(3)
    x = torch.randn(n, d, generator=g)
    x[0] = 0.0  # a zero row contributes no direction (and no NaN)
    idx = torch.randint(0, k, (n,), generator=g)
    w = torch.rand(n, generator=g)
    sx, su, sw = centroid_sums(x.to(device), idx.to(device), k, w.to(device), unit=unit,
                               impl="triton")
    rx, ru, rw = centroid_sums_ref(x, idx, k, w, unit)
    ox, ou, ow = centroid_sums_ref(x.double(), idx, k, w.double(), unit)
    floor = 1e-6  # fp32 rounding of sums of <= 70 terms of O(1)
    for got, ref, oracle in ((sx, rx, ox), (sw, rw, ow)) + (((su, ru, ou),) if unit else ()):
        ref_err = (ref.double() - oracle).abs().max().item()
        assert (got.cpu().double() - oracle).abs().max().item() <= 2 * ref_err + floor
    assert (su is None) == (not unit)


def test_centroid_counts_are_exact(device):
    """Unit weights: the weight sums are integer counts, exact in fp32."""
    idx = torch.tensor([0, 2, 2, 2, 4, 0, 4, 4, 4, 1], dtype=torch.int64)
    x = torch.ones(10, 3)
    _, _, counts = centroid_sums(x.to(device), idx.to(device), 6, impl="triton")
    torch.testing.assert_close(counts.cpu(), torch.tensor([2.0, 1, 3, 0, 4, 0]), rtol=0, atol=0)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"shapes": torch.ones(4, 5)}, "d=6"),
    ({"shapes": torch.ones(0, 6)}, "K >= 1"),
    ({"rule": "dot"}, "rule"),
    ({"rule": "l2", "gains": None}, "gains"),
    ({"impl": "cuda"}, "impl"),
    ({"x": torch.ones(3, 6, dtype=torch.float64)}, "float32"),
    ({"impl": "triton", "precision": "tf32"}, "precision"),
])
def test_assign_rejects_bad_input(kwargs, match):
    args = {"x": torch.ones(3, 6), "shapes": torch.ones(4, 6), "gains": torch.ones(4),
            "rule": "cos", **kwargs}
    with pytest.raises(ValueError, match=match):
        gain_shape_assign(**args)


def test_centroid_sums_reject_bad_input():
    x = torch.ones(4, 3)
    with pytest.raises(ValueError, match="idx must lie"):
        centroid_sums(x, torch.tensor([0, 1, 2, 5]), 3)
    with pytest.raises(ValueError, match="n_codes"):
        centroid_sums(x, torch.zeros(4, dtype=torch.int64), 0)


@pytest.mark.parametrize("label", ["RQ-kmeans", "GSRQ (cluster gain)", "GSRQ (per-token gain)"])
def test_gsrq_fit_end_to_end_through_the_kernels(label, device):
    """The library's RQ fit with impl="triton" (assignment + centroid sums in Triton) equals
    the torch path at a tiny size."""
    from dataclasses import replace

    from icml26 import gsrq

    x = gsrq.make_kv_data(gsrq.KVDataConfig(n=48, dim=16), torch.Generator().manual_seed(0))
    cfg = replace(gsrq.GSRQConfig().quant(label, n_codes=4, stages=2), iters=2)
    tri = gsrq.fit_rq(x.to(device), cfg, torch.Generator().manual_seed(1), impl="triton")
    ref = gsrq.fit_rq(x, cfg, torch.Generator().manual_seed(1), impl="torch")
    torch.testing.assert_close(tri.recon.cpu(), ref.recon, rtol=1e-4, atol=1e-5)
    for a, b in zip(tri.metrics, ref.metrics):
        assert a == pytest.approx(b, rel=1e-4)
