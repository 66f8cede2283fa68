"""Tests of ``icml26.grids``: scenes, selectors, the sampler claim, claims and the mutation."""

from __future__ import annotations

import importlib
import math
from dataclasses import replace

import pytest
import torch

from icml26 import grids
from icml26.grids import (
    GridsConfig,
    SceneConfig,
    TokenPolicy,
    action_errors,
    action_targets,
    head_flops,
    make_scenes,
    with_policy,
)

TINY = GridsConfig(n_train=48, n_test=16, pretrain_steps=3, head_steps=3, batch=8,
                   ks=(8, 4))


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


def test_scenes_shapes_ranges_and_reproducibility():
    img, act = make_scenes(SceneConfig(), 6, gen(0))
    assert img.shape == (6, 3, 64, 64) and act.shape == (6, 3)
    assert img.min() >= 0 and img.max() <= 1
    assert ((act[:, :2] >= 6) & (act[:, :2] <= 57)).all()  # the margin
    assert (act[:, 2].abs() <= math.pi).all()
    img2, act2 = make_scenes(SceneConfig(), 6, gen(0))
    assert torch.equal(img, img2) and torch.equal(act, act2)
    assert not torch.equal(act, make_scenes(SceneConfig(), 6, gen(1))[1])


def test_contact_point_is_green_and_the_bar_red():
    img, act = make_scenes(SceneConfig(clutter=0), 8, gen(2))
    for i in range(8):
        x, y, th = act[i].tolist()
        tip = img[i, :, round(y), round(x)]
        assert tip[1] > 0.6 and tip[0] < 0.5, tip  # green
        bx, by = x - 8 * math.cos(th), y - 8 * math.sin(th)  # inside the bar
        if 0 <= bx < 63 and 0 <= by < 63:
            assert img[i, 0, round(by), round(bx)] > 0.6


def test_action_targets_and_errors_round_trip():
    _, act = make_scenes(SceneConfig(), 16, gen(3))
    pos, ang = action_errors(action_targets(act, 64), act, 64)
    assert pos.max() < 1e-4 and ang.max() < 1e-3
    shifted = action_targets(act, 64).clone()
    shifted[:, 0] += 3 / 63
    assert torch.allclose(action_errors(shifted, act, 64)[0], torch.full((16,), 3.0), atol=1e-4)


@pytest.mark.parametrize(("method", "k"), [("full", 36), ("grids", 4), ("topk", 4),
                                           ("avgpool", 9), ("random", 5)])
def test_every_selector_gives_k_tokens_and_coordinates(method, k):
    pol = TokenPolicy(method, k, 8, 6, 6, d_model=8)
    fmap = torch.randn(3, 6, 6, 8, generator=gen(4))
    tokens, coords = pol.select(fmap, gen(5))
    assert tokens.shape == (3, k, 8) and coords.shape == (3, k, 2)
    assert coords.min() >= 0 and coords.max() <= 1
    assert pol(fmap, gen(5)).shape == (3, 4)


def test_topk_tokens_are_the_most_salient_and_get_a_gradient():
    pol = TokenPolicy("topk", 3, 8, 4, 4, d_model=8)
    fmap = torch.randn(2, 4, 4, 8, generator=gen(6))
    pol(fmap).sum().backward()
    assert pol.saliency.mlp[0].weight.grad.abs().sum() > 0  # straight-through gate
    scores = pol.saliency(fmap)
    _, coords = pol.select(fmap)
    chosen = (coords[..., 1] * 3).round() * 4 + (coords[..., 0] * 3).round()
    assert set(chosen[0].long().tolist()) == set(scores[0].topk(3).indices.tolist())


def test_topk_scorer_has_the_scouts_capacity():
    """Issue 46: top-K's scorer is the scout's layers (position-aware token layer, MLP with
    256 hidden units), one score per token instead of 2K coordinates from the pool."""
    kw = dict(d_model=8, position_aware=True)
    topk, gs = TokenPolicy("topk", 1, 32, 4, 4, **kw), TokenPolicy("grids", 1, 32, 4, 4, **kw)
    shapes = lambda m: [tuple(p.shape) for p in m.parameters()]  # noqa: E731
    # the same layers and sizes; the last maps 256 hidden units to 1 score per token vs 2K
    assert shapes(topk.saliency)[:4] + shapes(topk.saliency)[6:] == (
        shapes(gs.scout)[:4] + shapes(gs.scout)[6:])
    assert shapes(topk.saliency)[4:6] == [(1, 256), (1,)]
    assert shapes(gs.scout)[4:6] == [(2, 256), (2,)]
    sal = grids.Saliency(8, position_aware=True)
    fmap = torch.zeros(1, 4, 4, 8)
    assert len(set(sal(fmap)[0].tolist())) == 16  # identical tokens, distinct positions


def test_avgpool_needs_a_square_k_and_averages_cells():
    with pytest.raises(ValueError, match="square"):
        TokenPolicy("avgpool", 8, 8, 4, 4)
    pol = TokenPolicy("avgpool", 4, 2, 4, 4, d_model=8)
    fmap = torch.arange(32.0).reshape(1, 4, 4, 2)
    tokens, coords = pol.select(fmap)
    torch.testing.assert_close(tokens[0, 0], fmap[0, :2, :2].reshape(4, 2).mean(0))
    torch.testing.assert_close(coords[0, 0], torch.tensor([1 / 6, 1 / 6]))


def test_scout_starts_on_a_grid_and_learns_through_the_sampler():
    pol = TokenPolicy("grids", 4, 8, 6, 6, d_model=8, noise_scale=0.0)
    fmap = torch.randn(2, 6, 6, 8, generator=gen(7))
    _, coords = pol.select(fmap)
    corners = torch.tensor([[0.25, 0.25], [0.75, 0.25], [0.25, 0.75], [0.75, 0.75]])
    torch.testing.assert_close(coords[0], corners, atol=0.05, rtol=0)
    pol(fmap).square().sum().backward()
    assert pol.scout.mlp[2].weight.grad.abs().sum() > 0


def test_rounded_coordinates_cut_the_scouts_gradient():
    """The mutation's mechanism: nearest-neighbour sampling leaves the scout without a
    gradient, so its points cannot move."""
    pol = TokenPolicy("grids", 4, 8, 6, 6, d_model=8, noise_scale=0.0, round_coords=True)
    fmap = torch.randn(2, 6, 6, 8, generator=gen(8))
    _, coords = pol.select(fmap)
    assert torch.equal(coords * 5, (coords * 5).round())
    pol(fmap).square().sum().backward()
    assert pol.scout.mlp[2].weight.grad is None or pol.scout.mlp[2].weight.grad.abs().sum() == 0


def test_noisy_probes_only_while_training():
    pol = TokenPolicy("grids", 4, 8, 6, 6, d_model=8, noise_scale=0.5)
    fmap = torch.randn(2, 6, 6, 8, generator=gen(9))
    a, b = pol.select(fmap, gen(1))[1], pol.select(fmap, gen(2))[1]
    assert not torch.equal(a, b)
    pol.eval()
    assert torch.equal(pol.select(fmap, gen(1))[1], pol.select(fmap, gen(2))[1])


def test_encoder_token_grid_per_design():
    """Second design: 16-px tokens, a 4x4 map; first design: 4-px tokens, 16x16."""
    img = torch.rand(2, 3, 64, 64, generator=gen(10))
    assert grids.Encoder(8, 16)(img).shape == (2, 4, 4, 8)
    assert grids.Encoder(8, 4)(img).shape == (2, 16, 16, 8)
    assert GridsConfig().side == 4 and grids.FIRST_DESIGN.side == 16
    with pytest.raises(ValueError, match="patch"):
        replace(TINY, patch=12).validate()


def test_token_centres_map_to_patch_centres_in_pixels():
    cfg = GridsConfig()
    px = grids.to_px(cfg, torch.tensor([[0.0, 0.0], [1 / 3, 1.0]]))
    torch.testing.assert_close(px, torch.tensor([[7.5, 7.5], [23.5, 55.5]]))
    torch.testing.assert_close(grids.to_px(grids.FIRST_DESIGN, torch.tensor([[1.0, 0.0]])),
                               torch.tensor([[61.5, 1.5]]))


def test_position_aware_scout_sees_where_a_feature_is():
    """Moving one distinct token to another cell moves the position-aware scout's points; the
    bare mean-pool (the first design's stall) cannot tell the two maps apart."""
    fmap = torch.zeros(1, 4, 4, 8)
    fmap[0, 0, 0] = torch.randn(8, generator=gen(11))
    moved = fmap.roll(shifts=(3, 2), dims=(1, 2))
    aware = TokenPolicy("grids", 4, 8, 4, 4, d_model=8, noise_scale=0.0, position_aware=True)
    bare = TokenPolicy("grids", 4, 8, 4, 4, d_model=8, noise_scale=0.0)
    assert not torch.allclose(aware.select(fmap)[1], aware.select(moved)[1])
    torch.testing.assert_close(bare.select(fmap)[1], bare.select(moved)[1])


def test_second_design_readout_leaves_the_encoder_to_the_token_objectives(tmp_path, monkeypatch):
    """With ``readout_detached`` the readout's loss sends no gradient into the encoder: the
    encoder trained with and without the readout term is the same."""
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path))
    exp = importlib.import_module("icml26.grids.experiments")
    data = grids.scenes(TINY, 0)
    a = exp.pretrain_encoder(TINY, 0, data)["encoder"]
    monkeypatch.setattr(exp, "loss_fn", lambda pred, tgt: 0.0 * pred.sum())
    b = exp.pretrain_encoder(TINY, 0, data)["encoder"]
    for name in ("patch.weight", "merge.weight", "conv3.weight", "dense.weight"):
        torch.testing.assert_close(a[name], b[name], msg=name)
    first = replace(TINY, patch=4, readout_detached=False)
    monkeypatch.undo()
    c = exp.pretrain_encoder(first, 0, data)["encoder"]
    monkeypatch.setattr(exp, "loss_fn", lambda pred, tgt: 0.0 * pred.sum())
    d = exp.pretrain_encoder(first, 0, data)["encoder"]
    assert not torch.allclose(c["patch.weight"], d["patch.weight"])


def test_head_flops_formula_and_the_flops_figure():
    assert head_flops(4, 32) == 2 * (24 * 5 * 32 ** 2 + 4 * 25 * 32)
    rows = grids.figure_flops_data(GridsConfig())
    ratios = [r["ratio"] for r in rows]
    assert ratios == sorted(ratios) and rows[-1]["ratio"] == 1.0


def _cheap_claims(monkeypatch):
    """The claims without the trained policies (their rows fail fast): the sampler and FLOPs
    claims only, in well under a second."""
    def skip(*a, **k):
        raise RuntimeError("policies skipped")

    monkeypatch.setattr(importlib.import_module("icml26.grids.claims"), "claim_rows", skip)
    return {c.name: c for c in grids.claims_for(TINY, 0)}


@pytest.mark.mutation("grids", "sampler_gradients_exact")
def test_sampler_claim_measures_a_broken_backward(monkeypatch):
    """The sampler claim can fail: a coordinate gradient off by 1% is caught."""
    assert _cheap_claims(monkeypatch)["sampler_gradients_exact"].holds
    gs = importlib.import_module("icml26.kernels.grid_sample")
    real = gs.grid_sample_torch_backward

    def off(feat, coords, grad_out):
        gf, gc = real(feat, coords, grad_out)
        return gf, gc * 1.01

    monkeypatch.setattr(gs, "grid_sample_torch_backward", off)
    assert grids.sampler_gradient_error(0)["d_coords"] > 1.0
    bad = _cheap_claims(monkeypatch)["sampler_gradients_exact"]
    assert not bad.holds, bad.note


@pytest.mark.mutation("grids", "flops_cut")
def test_mutation_tokens_not_dropped_before_the_head_fails_flops_cut(monkeypatch):
    """The head fed all 16 tokens whatever K (the selection's output not what the head
    reads): its FLOPs do not fall, the ratio at the headline's K = 1 is 1.0 instead of 0.109
    (issue 46: measured against all the run's 16 tokens, not 256)."""
    assert _cheap_claims(monkeypatch)["flops_cut"].holds
    figs = importlib.import_module("icml26.grids.figures")
    real = figs.head_flops
    monkeypatch.setattr(figs, "head_flops", lambda n, d, layers=2: real(16, d, layers))
    bad = _cheap_claims(monkeypatch)["flops_cut"]
    assert not bad.holds and bad.measured == 1.0, bad.note


def test_flops_cut_is_measured_at_the_runs_tokens(monkeypatch):
    """Issue 46: the headline's K (the largest with K / tokens < 10%) over all the map's
    tokens, the configuration the experiment runs."""
    assert GridsConfig().few_k == 1 and grids.FIRST_DESIGN.few_k == 25
    for cfg in (GridsConfig(), grids.FIRST_DESIGN):
        assert cfg.few_k / cfg.side ** 2 < 0.1 <= (cfg.few_k + 1) / cfg.side ** 2
    flops = _cheap_claims(monkeypatch)["flops_cut"]
    assert flops.measured == head_flops(1, 32) / head_flops(16, 32)


def test_success_radius_is_the_all_tokens_median_on_validation_scenes():
    """Issue 46: r is fixed from the all-tokens model's validation errors alone (the test
    errors and every other method play no part); success is scored at r."""
    full = {"val_pos_px": torch.tensor([1.0, 2.0, 3.0, 4.0, 100.0]),
            "pos_px": torch.tensor([0.5, 2.5, 3.5, 9.0])}
    r = grids.success_radius(GridsConfig(), full)
    assert r == 3.0
    assert grids.success_radius(GridsConfig(), {**full, "pos_px": full["pos_px"] * 10}) == r
    row = grids.with_success({"pos_px": torch.tensor([2.9, 3.0, 3.1, 0.0])}, r)
    assert row["success"] == 0.5 and row["radius_px"] == 3.0
    with pytest.raises(ValueError, match="success_quantile"):
        replace(TINY, success_quantile=1.0).validate()


def test_validation_scenes_are_neither_training_nor_test_scenes():
    data = grids.scenes(TINY, 0)
    assert data["val_img"].shape == (TINY.n_val, 3, 64, 64)
    assert not any(torch.equal(data["val_act"][0], a) for a in data["act"])


def test_cuda_without_a_gpu_fails_fast_naming_the_flag():
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    with pytest.raises(ValueError, match="--device"):
        grids.claims(0, device="cuda")
    with pytest.raises(ValueError, match="--device"):
        grids.claims_for(TINY, 0, device="cuda")


def test_bad_configs_raise():
    with pytest.raises(ValueError, match="scout_input"):
        with_policy(TINY, scout_input="max").validate()
    with pytest.raises(ValueError, match="temperature"):
        with_policy(TINY, temperature=0.0).validate()
    with pytest.raises(ValueError, match="k must be"):
        replace(TINY, ks=(512,)).validate()
    with pytest.raises(ValueError, match="contact_radius"):
        SceneConfig(contact_radius=20).validate()
    with pytest.raises(ValueError, match="scale"):
        grids.config_for("huge")
    with pytest.raises(ValueError, match="method"):
        TokenPolicy("best", 4, 8, 6, 6)


def test_tiny_claims_run_end_to_end_and_are_deterministic(tmp_path, monkeypatch):
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path))
    a = grids.claims_for(TINY, 0)
    assert sorted(c.name for c in a) == sorted(grids.CLAIM_SPECS)
    assert all(not math.isnan(c.measured) for c in a)
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path / "again"))
    assert [c.measured for c in grids.claims_for(TINY, 0)] == [c.measured for c in a]


def test_tiny_figure_rows(tmp_path, monkeypatch):
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path))
    rows = grids.figure_error_data(TINY, 0, methods=("grids", "avgpool"))
    assert [(r["method"], r["k"]) for r in rows] == [("full", 16), ("grids", 8), ("grids", 4),
                                                    ("avgpool", 4)]
    f3 = grids.figure_coords_data(TINY, 0, n_show=3)
    assert f3["images"].shape == (3, 3, 64, 64) and f3["coords"].shape == (3, 4, 2)


def test_a_failed_computation_gives_nan_claims(monkeypatch):
    def boom(*a, **k):
        raise RuntimeError("diverged")

    monkeypatch.setattr(importlib.import_module("icml26.grids.claims"), "claim_rows", boom)
    out = {c.name: c for c in grids.claims_for(TINY, 0)}
    for name in ("pruning_loses_geometry", "grids1_matches_full"):
        assert math.isnan(out[name].measured) and not out[name].holds
        assert "diverged" in out[name].note
    assert out["sampler_gradients_exact"].holds


# CI seeds (0, 1) on which an expected claim fails (evidence: benchmarks/grids/grids_diagnosis.csv
# and grids_seeds.csv); a CI seed listed here is a strict xfail, so a change of status is always
# revisited.  Issue 46 (top-K's scorer with the scout's capacity), seed 1: top-K@4's saliency
# still does not find the contact token (its nearest kept token 16.8 px away) but the 16-px
# tokens carry the position well enough that it is only 1.07x GridS@4's error (second design:
# 1.24).  Seed 0 holds narrowly (1.516).
BLOCKED_SEEDS = {1: "pruning_loses_geometry 1.07: top-K@4 10.77 px vs GridS@4 10.09 px"}


@pytest.mark.slow
@pytest.mark.parametrize("seed", [pytest.param(s, marks=pytest.mark.xfail(
    s in BLOCKED_SEEDS, strict=True, reason=BLOCKED_SEEDS.get(s, ""))) for s in (0, 1)])
def test_expected_claims_hold(seed):
    bad = [c for c in grids.claims(seed) if c.expected and not c.holds]
    assert not bad, [(c.name, c.measured, c.note) for c in bad]


@pytest.mark.slow
@pytest.mark.mutation("grids", "pruning_loses_geometry")
def test_mutation_rounded_coordinates_break_pruning_loses_geometry():
    """Mutation (issue): sample at rounded coordinates, so no gradient reaches the scout ->
    its points stay on the initial grid -> GridS@4 is no better than top-K@4."""
    cfg = with_policy(grids.config_for("quick"), round_coords=True)
    out = {c.name: c for c in grids.claims_for(cfg, 0)}
    claim = out["pruning_loses_geometry"]
    assert claim.expected and not claim.holds, claim.note
