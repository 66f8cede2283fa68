"""Place-field gradient, few-shot trade-off, HIPE kernels, the toy LM, claims and pitfalls."""

from __future__ import annotations

import dataclasses
import importlib
import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26 import place_fields as pf
from icml26.kernels.scaled_rope import scaled_rope
from icml26.place_fields import lm

GRID = pf.GridConfig()
HIPE = pf.HipeConfig()


def by_name(claims):
    return {c.name: c for c in claims}


# ------------------------------------------------------------------ F1: grid -> place
def test_decay_families_start_at_one_and_decrease():
    k = torch.linspace(0, 50, 101, dtype=torch.float64)
    for decay in pf.DECAYS:
        d = pf.decay_weight(0.1, k, decay)
        assert d[0] == 1.0 and (d[1:] < d[:-1]).all()
        torch.testing.assert_close(pf.decay_weight(0.0, k, decay), torch.ones_like(k))
    torch.testing.assert_close(pf.decay_weight(0.1, 10.0, "gaussian"),
                               torch.tensor(math.exp(-0.5), dtype=torch.float64))
    torch.testing.assert_close(pf.decay_weight(0.1, 10.0, "exp"),
                               torch.tensor(0.5, dtype=torch.float64))
    torch.testing.assert_close(pf.decay_weight(0.1, 10.0, "power"),
                               torch.tensor(math.exp(-1.0), dtype=torch.float64))


def test_grid_spacings_are_geometric():
    spacing = 2 * math.pi / pf.grid_frequencies(GRID)
    torch.testing.assert_close(spacing[1:] / spacing[:-1],
                               torch.full((4,), 1.42, dtype=torch.float64))
    assert abs(float(spacing[0]) - 0.3) < 1e-12


def test_place_field_peaks_at_its_centre_and_is_normalised():
    x = pf.track(GRID)
    fields = pf.place_field([0.0, 0.05, 0.3], GRID, x)
    i0 = int(torch.argmin((x - GRID.centre).abs()))
    assert (fields.argmax(dim=1) == i0).all()
    torch.testing.assert_close(fields.max(dim=1).values, torch.ones(3, dtype=torch.float64))
    torch.testing.assert_close(fields.min(dim=1).values, torch.zeros(3, dtype=torch.float64))


def test_phase_sum_of_rectified_cosines_keeps_the_fundamental():
    """Sum_j cos(k x0 - phi_j) [cos(k x - phi_j)]_+ = (P/4) cos(k (x - x0)) for P >= 4
    evenly spaced phases, up to harmonics P-1, P+1 of the rectified cosine."""
    cfg = dataclasses.replace(GRID, n_modules=1, phases=32)
    x = pf.track(cfg)
    field = torch.einsum("smp,mpx->sx", pf.place_weights([0.0], cfg), pf.grid_rates(x, cfg))[0]
    k = float(pf.grid_frequencies(cfg)[0])
    expect = cfg.phases / 4 * torch.cos(k * (x - cfg.centre))
    assert float((field - expect).abs().max()) < 0.02 * cfg.phases / 4


def test_fwhm_of_a_gaussian_bump():
    x = torch.linspace(-1, 1, 4001, dtype=torch.float64)
    s = torch.tensor([0.05, 0.1, 0.2], dtype=torch.float64)
    bumps = torch.exp(-(x[None] ** 2) / (2 * s[:, None] ** 2))
    widths = pf.fwhm(bumps, x, 0.0)
    torch.testing.assert_close(widths, 2 * math.sqrt(2 * math.log(2)) * s, rtol=1e-4, atol=0)


def test_fwhm_keeps_to_the_peak_that_contains_the_centre():
    x = torch.linspace(0, 1, 1001, dtype=torch.float64)
    two_peaks = torch.exp(-((x - 0.3) ** 2) / 0.001) + torch.exp(-((x - 0.7) ** 2) / 0.001)
    f = two_peaks[None] / two_peaks.max()
    peak = float(pf.fwhm(f, x, 0.3)[0])
    span = float(pf.fwhm(f, x, 0.3, method="span")[0])
    assert abs(peak - 2 * math.sqrt(0.001 * math.log(2))) < 1e-3
    assert span > 0.4  # the naive threshold merges both peaks
    assert float(pf.fwhm(f, x, 0.5)[0]) == 0.0  # centre below half maximum: no field


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-1.0, 1.0), min_size=3, max_size=40), st.integers(0, 39))
def test_fwhm_is_non_negative_and_bounded(values, centre):
    f = torch.tensor(values, dtype=torch.float64)
    f = ((f - f.min()) / (f.max() - f.min()).clamp(min=1e-12))[None]
    x = torch.linspace(0, 1, f.shape[1], dtype=torch.float64)
    for method in ("peak", "span"):
        w = pf.fwhm(f, x, float(x[min(centre, f.shape[1] - 1)]), method)
        assert (w >= 0).all() and (w <= 1.0 + 1e-12).all()


def test_figure_1_reproduces_the_spec_prototype():
    data = pf.figure_field_gradient_data(GRID)
    assert abs(data["fwhm"][0] - 0.20) < 0.01 and abs(data["fwhm"][-1] - 0.52) < 0.01
    assert np.all(np.diff(data["fwhm"]) > 0)
    assert data["fields"].shape == (6, data["x"].size)


def test_2d_field_peaks_at_the_centre():
    out = pf.place_field_2d(0.1, GRID, n=41)
    i = np.unravel_index(np.argmax(out["field"]), out["field"].shape)
    assert i == (20, 20) and out["field"].max() == 1.0


# ------------------------------------------------------------------ F2: few-shot regression
@settings(max_examples=30, deadline=None)
@given(st.integers(1, 8), st.integers(1, 12), st.floats(1e-3, 1.0), st.integers(0, 10_000))
def test_ridge_solve_matches_lstsq(n, c, ridge, seed):
    g = torch.Generator().manual_seed(seed)
    phi = torch.rand(2, n, c, generator=g, dtype=torch.float64)
    y = torch.randn(2, n, 3, generator=g, dtype=torch.float64)
    phi_t = torch.rand(2, 5, c, generator=g, dtype=torch.float64)
    got = pf.ridge_predict(phi, y, phi_t, ridge)
    aug = torch.cat([phi, math.sqrt(ridge) * torch.eye(c, dtype=torch.float64).expand(2, c, c)],
                    dim=1)
    rhs = torch.cat([y, torch.zeros(2, c, 3, dtype=torch.float64)], dim=1)
    w = torch.linalg.lstsq(aug, rhs).solution
    torch.testing.assert_close(got, phi_t @ w, rtol=1e-7, atol=1e-9)


def test_masked_rows_equal_solving_the_smaller_problem():
    g = torch.Generator().manual_seed(1)
    phi = torch.rand(7, 5, generator=g, dtype=torch.float64)
    y = torch.randn(7, 2, generator=g, dtype=torch.float64)
    phi_t = torch.rand(4, 5, generator=g, dtype=torch.float64)
    mask = torch.arange(7) < 4
    torch.testing.assert_close(pf.ridge_predict(phi, y, phi_t, 0.1, mask),
                               pf.ridge_predict(phi[:4], y[:4], phi_t, 0.1))


def test_gp_targets_have_unit_variance_and_the_right_length_scale():
    g = torch.Generator().manual_seed(0)
    f = pf.gp_sample_fn(torch.tensor([0.1], dtype=torch.float64), 400, 512, g)
    x = torch.tensor([[0.3, 0.35, 0.6]], dtype=torch.float64).expand(400, -1)
    y = f(x)[0]  # [R, 3]
    assert abs(float(y.var()) - 1) < 0.1
    corr = float((y[:, 0] * y[:, 1]).mean())  # exp(-0.05² / 2·0.1²) = 0.88
    assert abs(corr - math.exp(-0.125)) < 0.1


def test_tradeoff_is_seeded_and_small_configs_run():
    cfg = pf.RegressionConfig(sigmas=(0.01, 0.05, 0.3), ells=(0.05, 0.2), n_train=(20,),
                              trials=4, n_centres=50, n_test=32, n_fourier=64)
    a, b = pf.figure_tradeoff_data(cfg, seed=3), pf.figure_tradeoff_data(cfg, seed=3)
    np.testing.assert_array_equal(a["mse"], b["mse"])
    assert a["mse"].shape == (3, 1, 2) and np.isfinite(a["mse"]).all()
    assert not np.array_equal(a["mse"], pf.figure_tradeoff_data(cfg, seed=4)["mse"])


# ------------------------------------------------------------------ F3: HIPE kernels
@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0.0, 300.0), min_size=1, max_size=8),
       st.sampled_from([16, 32, 64, 128]), st.floats(100.0, 1e6),
       st.sampled_from(pf.DECAYS))
def test_hipe_scales_are_normalised_per_head(sigmas, head_dim, base, decay):
    s = pf.hipe_scale(sigmas, head_dim, base, decay)
    assert s.shape == (len(sigmas), head_dim // 2) and torch.isfinite(s).all()
    torch.testing.assert_close((s.double() ** 2).mean(dim=1),
                               torch.ones(len(sigmas), dtype=torch.float64), rtol=1e-5, atol=0)


def test_without_normalisation_sigma_acts_as_a_temperature():
    raw = pf.hipe_gain([4.0, 64.0], normalise=False).mean(dim=1)
    assert float(raw[0] / raw[1]) > 5  # the logit scale would change 5x with sigma


def test_hipe_kernel_is_the_logit_of_the_kernel_module():
    """K_h(Delta) from the lib equals <s R(t) q, s R(t - Delta) k> through scaled_rope with
    q = k = (1, .., 1 | 0, .., 0): the positional part the Transformer sees."""
    sigmas, hd, t_len = [3.0, 12.0], 16, 40
    omega = pf.rope_frequencies(hd, 1e4)
    angle = torch.arange(t_len, dtype=torch.float64)[:, None] * omega[None]
    scale = pf.hipe_scale(sigmas, hd, 1e4, "gaussian").double()
    unit = torch.cat([torch.ones(hd // 2), torch.zeros(hd // 2)]).double()
    q = unit.expand(1, 2, t_len, hd)
    rq, rk = scaled_rope(q, q, angle.cos(), angle.sin(), scale, impl="torch")
    logits = rq[0] @ rk[0].transpose(-1, -2)  # [H, T, T]
    kernel = pf.positional_kernel(pf.hipe_gain(sigmas, hd, 1e4), omega, t_len - 1)
    for delta in (0, 1, 5, 20):
        torch.testing.assert_close(logits[:, t_len - 1, t_len - 1 - delta], kernel[:, delta])


def test_rope_kernel_is_the_unscaled_case():
    omega = pf.rope_frequencies(64, 1e4)
    k = pf.positional_kernel(torch.ones(1, 32, dtype=torch.float64), omega, 10)[0]
    assert abs(float(k[0]) - 32) < 1e-12
    assert abs(float(k[3]) - float(torch.cos(3 * omega).sum())) < 1e-12


def test_gaussian_half_width_is_1_18_sigma():
    stats = pf.hipe_kernel_stats(HIPE, "gaussian", [8.0, 32.0])
    np.testing.assert_allclose(stats["half_width"] / [8.0, 32.0], 1.1774, atol=0.01)


def test_figure_3_shapes():
    data = pf.figure_hipe_kernels_data(HIPE)
    assert data["rope"].shape == (513,) and data["gaussian"]["shown"].shape == (3, 513)
    assert data["rope"][0] == 1.0


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize("bad", [
    lambda: pf.place_field([-0.1], GRID),
    lambda: pf.place_field([0.1], dataclasses.replace(GRID, n_modules=0)),
    lambda: pf.place_field([0.1], dataclasses.replace(GRID, ratio=1.0)),
    lambda: pf.place_field([0.1], dataclasses.replace(GRID, ratio=0.8)),
    lambda: pf.place_field([0.1], dataclasses.replace(GRID, decay="cauchy")),
    lambda: pf.place_field([], GRID),
    lambda: pf.hipe_scale([]),
    lambda: pf.hipe_scale([4.0, -1.0]),
    lambda: pf.hipe_scale([4.0], head_dim=15),
    lambda: pf.hipe_scale([4.0], base=1.0),
    lambda: pf.figure_tradeoff_data(pf.RegressionConfig(ridge=0.0)),
    lambda: pf.figure_tradeoff_data(pf.RegressionConfig(sigmas=(-0.01, 0.1))),
    lambda: pf.config_for("huge"),
    lambda: pf.claims_for(pf.PlaceFieldsConfig(), parts=("f9",)),
    lambda: pf.LMConfig(n_heads=0).validate(),
    lambda: pf.LMConfig(windows=(200,)).validate(),
    lambda: pf.adapt.adapt_data(pf.LMConfig(shift_windows=(200,)), 0),
    lambda: pf.LMConfig(hipe_layers=3).validate(),
    lambda: pf.LMConfig(protocol="finetune").validate(),
    lambda: pf.parse_sigmas("4, x"),
], ids=["negative_sigma", "zero_modules", "ratio_one", "ratio_below_one", "unknown_decay",
        "no_sigmas", "empty_head_sigmas", "negative_head_sigma", "odd_head_dim", "base_one",
        "zero_ridge", "negative_regression_sigma", "unknown_scale", "unknown_part",
        "zero_heads", "window_beyond_context", "shift_beyond_context", "hipe_above_depth",
        "unknown_protocol", "sigma_not_a_number"])
def test_bad_input_raises_value_error(bad):
    with pytest.raises(ValueError):
        bad()


# ------------------------------------------------------------------ the toy LM (F4)
TINY = dataclasses.replace(pf.LMConfig(), vocab=8, seq_len=12, d_model=8, n_heads=2,
                           head_dim=4, windows=(1, 3), shift_windows=(2, 6), sizes=(8, 32),
                           steps=3, batch=4, n_val=16, n_test=16, warmup=1, pretrain_steps=3,
                           adapt_batch=4, eval_every=1)
TINY_SCRATCH = dataclasses.replace(TINY, protocol="scratch", n_layers=1)


def test_task_copies_through_the_table_at_the_drawn_lag():
    cfg = dataclasses.replace(TINY, noise=0.0, windows=(1,))
    g = torch.Generator().manual_seed(0)
    table = torch.randperm(cfg.vocab, generator=g)
    x = pf.make_task(cfg, 50, g, table)
    assert (x[:, 1:] == table[x[:, :-1]]).all()
    assert x.min() >= 0 and x.max() < cfg.vocab


def test_lag_prior_is_a_distribution_of_windows():
    p = pf.lag_prior(pf.LMConfig())
    assert abs(float(p.sum()) - 1) < 1e-12 and p[0] == 0
    assert abs(float(p[1]) - (1 / 3 + 1 / 12 + 1 / 48)) < 1e-12


def test_bayes_loss_is_below_uniform_and_reached_by_nothing_better():
    cfg = pf.LMConfig()
    data = pf.task_data(dataclasses.replace(cfg, sizes=(4,), n_val=64), 0)
    bayes = pf.bayes_loss(cfg, data["val"], data["table"])
    assert 1.5 < bayes < math.log(cfg.vocab)
    wrong = pf.bayes_loss(cfg, data["val"], torch.roll(data["table"], 1))
    assert wrong > bayes


def test_members_train_independently():
    """The loss of member 0 has no gradient on member 1's parameters."""
    scale = torch.stack([TINY.scale("rope"), TINY.scale("hipe_multi")])
    model = pf.HipeTransformer(TINY, scale, torch.Generator().manual_seed(0), impl="torch")
    x = torch.randint(TINY.vocab, (2, 3, TINY.seq_len))
    loss = model.member_loss(x)
    assert loss.shape == (2,)
    grads = torch.autograd.grad(loss[0], [p for p in model.parameters()])
    for grad in grads:
        assert grad[1].abs().max() == 0 and grad[0].abs().max() > 0


def test_paper_scale_documents_the_gpu_run():
    cfg = pf.config_for("paper")
    cfg.lm.validate()
    cfg.lm.check_windows("shift_windows")
    cfg.regression.validate()
    assert (cfg.lm.n_layers, cfg.lm.hipe_layers, cfg.lm.d_model, cfg.lm.seq_len) == \
        (4, 2, 64, 256)
    assert cfg.lm.head_sigmas("hipe_multi")[0] == 2.0 and cfg.lm.n_seeds == 3


def test_second_design_is_the_issue_47_protocol():
    """Context >= 128, several locality scales, HIPE in the upper layer only, the first
    design kept as a preset that only differs where the write-up says."""
    cfg = pf.LMConfig()
    assert cfg.protocol == "adapt" and cfg.seq_len >= 128 and len(cfg.shift_windows) >= 3
    assert cfg.hipe_layers < cfg.n_layers and cfg.sigma_max == cfg.seq_len
    first = pf.first_design_config()
    assert (first.protocol, first.seq_len, first.n_layers, first.steps, first.batch) == \
        ("scratch", 32, 1, 300, 16)
    assert first.sizes == (256, 1024, 4096, 16384)


def test_layer_scale_keeps_rope_below_the_hipe_layers():
    cfg = pf.LMConfig()
    for v in pf.VARIANTS:
        s = cfg.layer_scale(v)
        assert s.shape == (2, cfg.n_heads, cfg.head_dim // 2)
        assert torch.equal(s[0], torch.ones_like(s[0])) and torch.equal(s[1], cfg.scale(v))
    assert not torch.equal(cfg.layer_scale("hipe_multi")[1], torch.ones(4, 8))


def test_shared_init_gives_every_member_the_same_weights():
    scale = torch.stack([TINY.layer_scale(v) for v in pf.VARIANTS], dim=1)
    model = pf.HipeTransformer(TINY, scale, torch.Generator().manual_seed(0), impl="torch",
                               shared_init=True)
    for par in model.parameters():
        assert torch.equal(par[0], par[1]) and torch.equal(par[0], par[2])


def test_hipe_multi_sigmas_are_geometric():
    cfg = pf.LMConfig()
    sig = cfg.head_sigmas("hipe_multi")
    assert sig[0] == cfg.sigma_min and abs(sig[-1] - cfg.sigma_max) < 1e-9
    assert np.allclose(np.diff(np.log(sig)), np.log(sig[1] / sig[0]))
    assert torch.equal(cfg.scale("rope"), torch.ones(cfg.n_heads, cfg.head_dim // 2))


@pytest.mark.parametrize("cfg", [TINY, TINY_SCRATCH], ids=["adapt", "scratch"])
def test_training_is_seeded_and_cached(cfg, tmp_path, monkeypatch):
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path))
    a = lm.seed_results(cfg, 0)
    b = lm.train_seed(cfg, 0)
    np.testing.assert_array_equal(a["val_loss"], b["val_loss"])
    assert np.isfinite(a["val_loss"]).all() and len(a["members"]) == 6
    assert any(tmp_path.rglob(f"{lm.cache_key(cfg)}-*-s0.pt"))
    frame = lm.figure_data_efficiency_data(cfg, 0, n_seeds=2)
    assert len(frame) == 6 and np.isfinite(frame["mean"]).all()
    claim = pf.efficiency_claim(frame, cfg, 0)
    assert claim.name == "hipe_data_efficiency" and math.isfinite(claim.measured)
    assert lm.cached_or_shipped_frame(cfg, seeds=(0, 1)) is not None  # from the cache


def test_adaptation_keeps_the_early_stopped_checkpoint():
    """One rule for every member: the best validation loss over step 0 and every check,
    reached at ``best_step``; the test loss is scored at that checkpoint."""
    res = lm.train_seed(dataclasses.replace(TINY, steps=6, eval_every=2), 0)
    np.testing.assert_allclose(res["val_curve"].min(axis=0), res["select_loss"], rtol=1e-6)
    at = [list(res["eval_steps"]).index(b) for b in res["best_step"]]
    np.testing.assert_allclose(res["val_curve"][at, range(len(at))], res["select_loss"])
    assert list(res["eval_steps"]) == [0, 2, 4, 6] and np.isfinite(res["val_loss"]).all()
    assert res["source_val"].shape == (3,) and res["zero_shot"].shape == (6,)


@pytest.mark.mutation("place_fields", "hipe_data_efficiency")
def test_mutation_hipe_switched_off_gives_no_gain(monkeypatch):
    """HIPE's scale replaced by RoPE's: the three variants are then bit-identical (same
    initial weights, same pretraining and adaptation batches, same early-stopping rule, so
    the comparison is paired), and the headline must FAIL (slack exactly 0)."""
    monkeypatch.setattr(pf.LMConfig, "scale",
                        lambda self, v: torch.ones(self.n_heads, self.head_dim // 2))
    runs = [lm.train_seed(TINY, s) for s in (0, 1)]
    for r in runs:
        by_member = dict(zip(map(tuple, r["members"]), r["val_loss"]))
        for v, k in by_member:
            assert by_member[(v, k)] == by_member[("rope", k)]
    frame = lm.frame_from_losses(TINY, [0, 1], [r["val_loss"] for r in runs])
    claim = pf.efficiency_claim(frame, TINY, 0)
    assert claim.measured == 0.0 and not claim.holds


def test_efficiency_claim_holds_when_hipe_is_better_by_more_than_an_se():
    """The claim is not rigged to fail: a HIPE-multi 0.05 nats below RoPE everywhere (with
    seed-to-seed spread) holds."""
    cfg = pf.LMConfig()
    mem = lm.members(cfg)
    base = np.array([[3.0 - 0.1 * i for i, _ in enumerate(mem)], [3.1 - 0.1 * i for i, _ in
                                                                  enumerate(mem)]])
    losses = base.copy()
    for j, (v, k) in enumerate(mem):
        if v == "hipe_multi":
            rope = mem.index(("rope", k))
            losses[:, j] = base[:, rope] - np.array([0.05, 0.06])
    claim = pf.efficiency_claim(lm.frame_from_losses(cfg, [0, 1], losses), cfg, 0)
    assert claim.holds and claim.measured == pytest.approx(0.05)


def test_diagnosis_record_is_committed():
    diag = lm.diagnosis_record()
    assert set(diag["seed"]) == {0, 1} and set(diag["steps"]) == {300, 1200, 2400}
    assert set(diag["size"]) == set(pf.first_design_config().sizes)
    second = lm.diagnosis_record("place_fields_second_design.csv")
    assert {0, 1, 100, 101, 102, 103, 104} <= set(second["seed"])
    assert set(second["k"]) == set(pf.LMConfig().sizes)


def test_failed_training_gives_a_nan_claim(monkeypatch):
    def broken(*args, **kwargs):
        raise FloatingPointError("non-finite training loss")

    monkeypatch.setattr(lm, "seed_results", broken)
    claim = pf.lm_claim(TINY, 0)
    assert math.isnan(claim.measured) and not claim.holds and "failed" in claim.note


# ------------------------------------------------------------------ claims and mutations
def test_f1_and_f3_claims_hold_at_the_spec_setting():
    claims = by_name(pf.claims_for(pf.PlaceFieldsConfig(lm=TINY), parts=("f1", "f3")))
    for name in ("fwhm_monotone", "fwhm_continuous", "fwhm_range", "hipe_gaussian_width",
                 "hipe_gaussian_fit", "hipe_monotone", "rope_not_monotone"):
        assert claims[name].holds, claims[name]
    assert not claims["hipe_exp_monotone"].holds  # the documented Gibbs ripple
    assert not claims["hipe_other_decays_fit"].holds  # exp at sigma = 4, the same band cut


@pytest.mark.mutation("place_fields", "fwhm_monotone", "fwhm_continuous", "fwhm_range")
def test_mutation_naive_half_maximum_breaks_the_gradient():
    """Pitfall: a threshold that merges secondary peaks at small sigma (rho 0.81, 16
    distinct widths, range 1.11x: all three F1 claims fail)."""
    cfg = pf.PlaceFieldsConfig(grid=dataclasses.replace(GRID, fwhm_method="span"), lm=TINY)
    claims = by_name(pf.claims_for(cfg, parts=("f1",)))
    for name in ("fwhm_monotone", "fwhm_continuous", "fwhm_range"):
        assert not claims[name].holds, claims[name]


@pytest.mark.mutation("place_fields", "fwhm_monotone", "fwhm_continuous", "fwhm_range")
def test_mutation_without_the_projection_decay_there_is_no_gradient(monkeypatch):
    """The mechanism switched off: grid->place projections that do not decay with frequency
    (D = 1 for every sigma). Every sigma then gives the same field, so no F1 claim holds
    (rho NaN, 1 distinct width, range 1.0). <1 s."""
    grid = importlib.import_module("icml26.place_fields.grid")
    decay = grid.decay_weight
    monkeypatch.setattr(grid, "decay_weight", lambda s, k, d: torch.ones_like(decay(s, k, d)))
    claims = by_name(pf.claims_for(pf.PlaceFieldsConfig(lm=TINY), parts=("f1",)))
    for name in ("fwhm_monotone", "fwhm_continuous", "fwhm_range"):
        assert not claims[name].holds, claims[name]
    assert claims["fwhm_range"].measured == pytest.approx(1.0)


@pytest.mark.mutation("place_fields", "sigma_star_tracks_ell", "mse_u_shaped")
def test_mutation_features_that_ignore_sigma_show_no_tradeoff(monkeypatch):
    """Mutation: the place-cell features do not see sigma (every sigma gets the median
    width: a broadcasting bug). The MSE is then flat in sigma (ends / min = 1.0) and sigma*
    does not move with ell (rho NaN): both F2 claims must FAIL. 8 trials (both hold
    unmutated at that size), ~3-5 s."""
    regression = importlib.import_module("icml26.place_fields.regression")
    cfg = pf.PlaceFieldsConfig(regression=dataclasses.replace(pf.RegressionConfig(), trials=8),
                               lm=TINY)
    good = by_name(pf.claims_for(cfg, parts=("f2",)))
    assert good["sigma_star_tracks_ell"].holds and good["mse_u_shaped"].holds
    features = regression.place_features
    monkeypatch.setattr(regression, "place_features",
                        lambda x, sigma, c: features(x, sigma.median().expand_as(sigma), c))
    bad = by_name(pf.claims_for(cfg, parts=("f2",)))
    assert not bad["sigma_star_tracks_ell"].holds and not bad["mse_u_shaped"].holds
    assert bad["mse_u_shaped"].measured == pytest.approx(1.0)


@pytest.mark.mutation("place_fields", "hipe_monotone", "hipe_gaussian_fit",
                      "hipe_gaussian_width")
def test_mutation_hipe_without_its_decay_is_rope(monkeypatch):
    """The mechanism switched off: HIPE's per-frequency decay D(sigma, omega) = 1, so its
    logit weights are RoPE's (times omega) and its kernel oscillates: hipe_monotone (largest
    upward step 0.50), the Gaussian fit (R² -1.9) and width must FAIL. <1 s."""
    hipe = importlib.import_module("icml26.place_fields.hipe")
    decay = hipe.decay_weight
    monkeypatch.setattr(hipe, "decay_weight", lambda s, k, d: torch.ones_like(decay(s, k, d)))
    claims = by_name(pf.claims_for(pf.PlaceFieldsConfig(lm=TINY), parts=("f3",)))
    for name in ("hipe_monotone", "hipe_gaussian_fit", "hipe_gaussian_width"):
        assert not claims[name].holds, claims[name]
    assert claims["rope_not_monotone"].holds  # the contrast does not go through the decay


@pytest.mark.mutation("place_fields", "rope_not_monotone")
def test_mutation_kernels_compared_on_too_short_a_range():
    """Mutation: the kernels are compared on [0, 5] tokens only, where RoPE's kernel has not
    turned up yet; the contrast that shows monotonicity is not automatic disappears, and
    rope_not_monotone must FAIL (largest upward step 0). <1 s."""
    cfg = pf.PlaceFieldsConfig(hipe=dataclasses.replace(HIPE, max_dist=5), lm=TINY)
    claim = by_name(pf.claims_for(cfg, parts=("f3",)))["rope_not_monotone"]
    assert not claim.holds and claim.measured == 0.0


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU error")
def test_cuda_without_a_gpu_fails_fast_naming_the_flag(monkeypatch):
    def no_work(*args, **kwargs):
        raise AssertionError("work started before the device was checked")

    claims_module = importlib.import_module("icml26.place_fields.claims")
    monkeypatch.setattr(claims_module, "claims_for", no_work)
    with pytest.raises(ValueError, match="--device"):
        pf.claims(0, device="cuda")
    monkeypatch.undo()
    monkeypatch.setattr(claims_module, "claims_f1", no_work)
    with pytest.raises(ValueError, match="--device"):
        pf.claims_for(pf.PlaceFieldsConfig(lm=TINY), 0, device="cuda")


@pytest.mark.mutation("place_fields", "hipe_gaussian_fit", "hipe_gaussian_width")
def test_mutation_dropping_omega_breaks_the_gaussian_fit():
    """Pitfall: g = D(sigma omega) without the factor omega."""
    cfg = pf.PlaceFieldsConfig(hipe=dataclasses.replace(HIPE, with_omega=False), lm=TINY)
    claims = by_name(pf.claims_for(cfg, parts=("f3",)))
    assert not claims["hipe_gaussian_fit"].holds
    assert not claims["hipe_gaussian_width"].holds


@pytest.mark.mutation("place_fields", "hipe_gaussian_fit", "hipe_gaussian_width")
def test_mutation_frequency_coverage_breaks_the_gaussian_fit():
    """Pitfall: sigma below the band RoPE covers (sigma < 2 with base 1e4, d = 64)."""
    cfg = pf.PlaceFieldsConfig(hipe=dataclasses.replace(HIPE, sigmas=(1.0, 4.0)), lm=TINY)
    claims = by_name(pf.claims_for(cfg, parts=("f3",)))
    assert not claims["hipe_gaussian_fit"].holds
    assert not claims["hipe_gaussian_width"].holds


#: The spec's F3 window: "HIPE kernels decrease monotonically on [0, 3 sigma]", the only
#: window it states for a HIPE kernel; the fit claims use it too.
SPEC_WINDOW = 3.0


def spec_window_r2(hipe: pf.HipeConfig) -> float:
    """Worst R² of the exp and power kernels on [0, 3 sigma], computed here from the kernel
    sum itself (not from the claim's config)."""
    omega = pf.rope_frequencies(hipe.head_dim, hipe.base)
    worst = math.inf
    for decay in ("exp", "power"):
        gain = pf.hipe_gain(hipe.sigmas, hipe.head_dim, hipe.base, decay)
        kernel = pf.positional_kernel(gain, omega, hipe.max_dist)
        for row, sigma in zip(kernel / kernel[:, :1], hipe.sigmas):
            n = int(min(SPEC_WINDOW * sigma, hipe.max_dist)) + 1
            delta = torch.arange(n, dtype=torch.float64)
            worst = min(worst, pf.r_squared(row[:n], pf.closed_form_kernel(decay, sigma, delta)))
    return worst


def test_other_decays_fit_is_measured_on_the_specs_window():
    claim = by_name(pf.claims_for(pf.PlaceFieldsConfig(lm=TINY), parts=("f3",)))[
        "hipe_other_decays_fit"]
    assert claim.measured == pytest.approx(spec_window_r2(HIPE), abs=1e-12)
    assert "[0, 3 sigma]" in claim.note
    assert not claim.holds and not claim.expected  # honest failure: exp at sigma = 4
    sweep = pf.figure_fit_windows_data(HIPE)
    row = list(sweep["window"]).index(SPEC_WINDOW)
    assert min(sweep["exp"]["worst"][row], sweep["power"]["worst"][row]) == claim.measured


def test_mutation_window_chosen_by_the_result_is_detected():
    """Mistake: pick the fit window where the claim passes (what [0, 5 sigma] did)."""
    sweep = pf.figure_fit_windows_data(HIPE)
    worst = np.minimum(sweep["exp"]["worst"], sweep["power"]["worst"])
    chosen = float(sweep["window"][int(np.argmax(worst))])
    mutated = dataclasses.replace(HIPE, window=chosen)
    claim = by_name(pf.claims_for(pf.PlaceFieldsConfig(hipe=mutated, lm=TINY), parts=("f3",)))[
        "hipe_other_decays_fit"]
    assert chosen != SPEC_WINDOW and claim.holds  # the chosen window rescues the claim ...
    with pytest.raises(AssertionError):  # ... and the window test above catches it
        assert claim.measured == pytest.approx(spec_window_r2(HIPE), abs=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_expected_claims_hold(seed):
    claims = pf.claims(seed)
    names = [c.name for c in claims]
    assert len(names) == len(set(names))
    for c in claims:
        assert c.paper == "place_fields"
        if c.expected:
            assert c.holds, c
    binding = {"fwhm_monotone", "fwhm_continuous", "fwhm_range", "sigma_star_tracks_ell",
               "mse_u_shaped", "hipe_gaussian_width", "hipe_gaussian_fit", "hipe_monotone",
               "rope_not_monotone"}
    assert binding <= {c.name for c in claims if c.expected}
    assert "hipe_data_efficiency" in names
