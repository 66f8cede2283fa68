"""Tests for icml26.gsrq: data, quantizers, bits, the tiny LM's quantized cache, claims."""

from __future__ import annotations

import importlib
import math
from dataclasses import replace

import pytest
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from icml26 import gsrq
from icml26.gsrq import (
    GSRQConfig,
    KVDataConfig,
    QuantConfig,
    bits_per_element,
    fit_rq,
    fit_stage,
    make_kv_data,
    metrics,
)
from icml26.kernels.gain_shape_assign import centroid_sums


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


def blobs(n_per=20, k=4, d=6, seed=0, spread=0.05):
    """Well-separated clusters: every sensible clustering finds them exactly."""
    g = gen(seed)
    centers = torch.randn(k, d, generator=g) * 3 + 6 * torch.eye(k, d)
    x = centers.repeat_interleave(n_per, 0) + spread * torch.randn(k * n_per, d, generator=g)
    return x, torch.arange(k).repeat_interleave(n_per)


def sse(x, x_hat):
    return float(((x - x_hat) ** 2).sum())


# --------------------------------------------------------------------------- data and bits
def test_equal_norm_data_has_equal_norms_and_heavy_tail_does_not():
    x = make_kv_data(KVDataConfig(n=512), gen())
    norms = x.norm(dim=1)
    assert x.shape == (512, 128) and x.dtype == torch.float32
    torch.testing.assert_close(norms, torch.full_like(norms, float(norms[0])), rtol=1e-5,
                               atol=0)
    heavy = make_kv_data(KVDataConfig(n=512, norm_tail=0.8), gen()).norm(dim=1)
    assert float(heavy.max() / heavy.min()) > 5  # lognormal sigma 0.8 over 512 draws


def test_data_is_anisotropic_with_outlier_channels():
    cfg = KVDataConfig(n=4096, norm_tail=0.0)
    var = make_kv_data(cfg, gen()).var(dim=0)
    top = var.topk(cfg.n_outliers).values
    assert float(top.min()) > 3 * float(var.median())


def test_data_is_reproducible_per_seed():
    cfg = KVDataConfig(n=64, dim=16)
    assert torch.equal(make_kv_data(cfg, gen(3)), make_kv_data(cfg, gen(3)))
    assert not torch.equal(make_kv_data(cfg, gen(3)), make_kv_data(cfg, gen(4)))


@pytest.mark.parametrize(("k", "m", "d", "gain", "bits"), [
    (256, 1, 128, "cluster", 0.0625), (256, 2, 128, "cluster", 0.125),
    (256, 4, 128, "cluster", 0.25), (16, 32, 128, "cluster", 1.0),
    (256, 4, 32, "cluster", 1.0), (256, 4, 128, "token", 0.25 + 4 / 128),
])
def test_bits_per_element(k, m, d, gain, bits):
    assert bits_per_element(k, m, d, gain) == pytest.approx(bits)


# --------------------------------------------------------------------------- quantizers
def test_kmeans_pp_picks_distinct_rows_of_the_data():
    x, _ = blobs()
    c = gsrq.kmeans_pp_init(x, 4, gen())
    assert all(any(torch.equal(ci, xi) for xi in x) for ci in c)
    assert len({tuple(ci.tolist()) for ci in c}) == 4


def test_kmeans_pp_covers_separated_clusters():
    """D^2 sampling puts one seed in each of 4 far-apart clusters (almost surely)."""
    x, labels = blobs(spread=0.01)
    c = gsrq.kmeans_pp_init(x, 4, gen(1))
    hit = {int(labels[(x - ci).norm(dim=1).argmin()]) for ci in c}
    assert hit == {0, 1, 2, 3}


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), k=st.integers(2, 12))
def test_lloyd_never_increases_kmeans_distortion(seed, k):
    """Property: each Lloyd iteration of l2 k-means lowers (or keeps) the distortion."""
    x = torch.randn(80, 5, generator=gen(seed))
    prev = math.inf
    for iters in range(5):
        stage = fit_stage(x, QuantConfig(n_codes=k, method="kmeans", iters=iters), gen(seed))
        err = sse(x, gsrq.assign(x, stage)[1])
        assert err <= prev * (1 + 1e-5) + 1e-6
        prev = err


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), k=st.integers(1, 8))
def test_cluster_means_shrink_jensen(seed, k):
    """Property (the paper's premise): ||weighted mean|| <= weighted mean of norms."""
    g = gen(seed)
    x = torch.randn(60, 7, generator=g) * torch.rand(60, 1, generator=g) * 5
    idx = torch.randint(0, k, (60,), generator=g)
    w = torch.rand(60, generator=g)
    sum_x, _, sum_w = centroid_sums(x, idx, k, w)
    norm_mean = torch.zeros(k).index_add_(0, idx, w * x.norm(dim=1))
    full = sum_w > 0
    assert (sum_x[full].norm(dim=1) <= norm_mean[full] * (1 + 1e-5) + 1e-6).all()


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), delta=st.floats(-0.5, 0.5).filter(lambda v: abs(v) > 1e-3))
def test_gskm_gain_is_l2_optimal_given_the_shape(seed, delta):
    """Property: at a fixed point of GSKM (one more iteration changes nothing), scaling the
    fitted cluster gains (same codes) never lowers distortion. Before convergence it can: the
    last gains were fitted to the previous assignment (seed 397 at 6 iterations)."""
    x = torch.randn(120, 6, generator=gen(seed))
    stage = fit_stage(x, QuantConfig(n_codes=5, method="gskm", iters=40), gen(seed))
    again = fit_stage(x, QuantConfig(n_codes=5, method="gskm", iters=41), gen(seed))
    assume(torch.equal(stage.gains, again.gains) and torch.equal(stage.shapes, again.shapes))
    idx, x_hat = gsrq.assign(x, stage)
    moved = (stage.gains[idx] * (1 + delta))[:, None] * stage.shapes[idx]
    assert sse(x, moved) >= sse(x, x_hat) * (1 - 1e-5)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), stages=st.integers(1, 4))
def test_rq_kmeans_distortion_decreases_with_stages(seed, stages):
    """Property: a k-means stage never makes the residual larger (its means beat zero)."""
    x = torch.randn(100, 8, generator=gen(seed))
    res = fit_rq(x, QuantConfig(n_codes=6, stages=stages, method="kmeans", iters=5), gen(seed))
    errs = [1.0] + [m["rel_l2"] for m in res.metrics]
    assert all(b <= a + 1e-6 for a, b in zip(errs, errs[1:]))


def test_gskm_with_unit_exponent_and_l2_rule_is_kmeans():
    """p = 1 and the l2 rule turn GSKM's updates into k-means' (same seeding)."""
    x, labels = blobs()
    km = fit_stage(x, QuantConfig(n_codes=4, method="kmeans", iters=5), gen(2))
    gs = fit_stage(x, QuantConfig(n_codes=4, method="gskm", rule="l2", weight_exponent=1.0,
                                  iters=5), gen(2))
    i_km, r_km = gsrq.assign(x, km)
    i_gs, r_gs = gsrq.assign(x, gs)
    assert torch.equal(i_km, i_gs)
    torch.testing.assert_close(r_gs, r_km, rtol=1e-5, atol=1e-5)
    assert len(set(zip(i_km.tolist(), labels.tolist()))) == 4  # found the 4 blobs


def test_gskm_shapes_are_unit_and_gains_are_mean_projections():
    x = torch.randn(200, 10, generator=gen())
    stage = fit_stage(x, QuantConfig(n_codes=6, method="gskm", iters=8), gen())
    torch.testing.assert_close(stage.shapes.norm(dim=1), torch.ones(6))
    # gains equal the mean projection over the points assigned by the previous iteration,
    # so one more update from the final assignment changes them only slightly
    idx, _ = gsrq.assign(x, stage)
    proj = (x * stage.shapes[idx]).sum(1)
    mean_proj = torch.zeros(6).index_add_(0, idx, proj) / torch.bincount(idx, minlength=6)
    torch.testing.assert_close(stage.gains, mean_proj, rtol=0.1, atol=0.05)


def test_one_stage_on_a_sphere_kmeans_shrinks_and_gskm_matches_it():
    """On equal-norm data one k-means stage returns much shorter vectors (F1), and one GSKM
    stage is nearly the same quantizer (on a sphere the cosine and l2 rules agree up to the
    small spread of centroid norms): GSKM's advantage only appears in residual stages."""
    x = make_kv_data(KVDataConfig(n=1024, dim=32), gen())
    km = fit_rq(x, QuantConfig(n_codes=16, stages=1, method="kmeans", iters=8), gen())
    gs = fit_rq(x, QuantConfig(n_codes=16, stages=1, method="gskm", iters=8), gen())
    assert km.metrics[0]["norm_ratio"] < 0.8
    assert gs.metrics[0]["rel_l2"] == pytest.approx(km.metrics[0]["rel_l2"], rel=0.01)


def test_per_token_gain_code_is_a_log_grid():
    x = make_kv_data(KVDataConfig(n=512, dim=16, norm_tail=0.8), gen())
    stage = fit_stage(x, QuantConfig(n_codes=8, method="gskm", gain="token", gain_bits=3,
                                     iters=5), gen())
    lo, hi = stage.log_range
    _, x_hat = gsrq.assign(x, stage)
    gains = x_hat.norm(dim=1)
    levels = torch.exp(lo + torch.arange(8) * (hi - lo) / 7)
    dist = (gains[:, None] - levels[None, :]).abs().min(dim=1).values
    assert float(dist.max()) < 1e-4 * float(levels.max())  # every gain is a grid level
    assert len(set(gains.round(decimals=4).tolist())) <= 8


def test_rq_reconstruct_matches_the_fit_on_its_training_data():
    x = make_kv_data(KVDataConfig(n=256, dim=16), gen())
    for gain in gsrq.GAIN_MODES:
        res = fit_rq(x, QuantConfig(n_codes=8, stages=3, gain=gain, iters=4), gen())
        torch.testing.assert_close(gsrq.rq_reconstruct(x, res.stages), res.recon)
        assert torch.equal(gsrq.rq_reconstruct(x, res.stages, 0), torch.zeros_like(x))


def test_metrics_on_exact_and_zero_reconstructions():
    x = torch.randn(20, 4, generator=gen())
    assert metrics(x, x) == pytest.approx({"cos": 1.0, "rel_l2": 0.0, "norm_ratio": 1.0})
    m = metrics(x, torch.zeros_like(x))
    assert m["rel_l2"] == pytest.approx(1.0) and m["norm_ratio"] == 0.0


def test_naive_mean_norm_gain_breaks_the_residual_stage():
    """The spec's pitfall, at unit-test size: with gain = mean ||x|| the second stage
    undoes much of the first (relative l2 far above the l2-optimal gain's)."""
    x = make_kv_data(KVDataConfig(n=1024, dim=32), gen())
    good = fit_rq(x, QuantConfig(n_codes=16, stages=2, iters=8), gen())
    bad = fit_rq(x, QuantConfig(n_codes=16, stages=2, iters=8, gain_update="mean_norm"), gen())
    assert bad.metrics[1]["rel_l2"] > 1.1 * good.metrics[1]["rel_l2"]


def test_cluster_gain_loses_l2_on_heavy_tailed_norms():
    """The spec's heavy-tail finding at unit-test size: cosine assignment with one gain per
    cluster ignores the norm spread, so its relative l2 ends far above k-means'; the per-token
    gain code repairs it."""
    x = make_kv_data(KVDataConfig(n=2048, dim=32, norm_tail=0.8), gen())
    err = {label: fit_rq(x, replace(GSRQConfig().quant(label, 16, 3), iters=8),
                         gen()).metrics[-1]["rel_l2"] for label in gsrq.VARIANTS}
    assert err["GSRQ (cluster gain)"] > 1.3 * err["RQ-kmeans"]
    assert err["GSRQ (per-token gain)"] < err["GSRQ (cluster gain)"]


# --------------------------------------------------------------------------- held-out scoring
#: A claims config at unit-test size: 256 rows fit, 256 more held out, d = 16, K = 16.
SMALL = GSRQConfig(data=KVDataConfig(n=256, dim=16), n_codes=16, claim_stages=2, iters=4)


def held_out_metrics(data, q, seed):
    """What rq_curve must report, recomputed here: 2n rows drawn, fit on the first n, score
    the other n."""
    x = make_kv_data(replace(data, n=2 * data.n), gsrq.data_generator(seed))
    half = data.n
    res = fit_rq(x[:half], q, gsrq.fit_generator(seed))
    return [metrics(x[half:], gsrq.rq_reconstruct(x[half:], res.stages, m))
            for m in range(1, q.stages + 1)], res.metrics


def test_curves_score_rows_the_codebooks_never_saw(tmp_path, monkeypatch):
    """A KV codebook is calibrated once and applied to new tokens: F1/F2 and the claims
    score the held-out half; the in-sample numbers are kept beside them as fit_*."""
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path))
    q = SMALL.quant("GSRQ (cluster gain)")
    rows = gsrq.rq_curve(SMALL.data, q, 3)
    held, fitted = held_out_metrics(SMALL.data, q, 3)
    for row, h, f in zip(rows, held, fitted, strict=True):
        assert {k: row[k] for k in h} == pytest.approx(h, rel=1e-6)
        assert {k: row[f"fit_{k}"] for k in h} == pytest.approx({k: f[k] for k in h})
        assert row["rel_l2"] > row["fit_rel_l2"]  # 16 codes on 256 rows overfit a little
        assert (row["n_fit"], row["n_scored"], row["shared_rows"]) == (256, 256, 0)


@pytest.mark.mutation("gsrq", "kmeans_shrinks", "gskm_direction", "gskm_l2_matched",
                      "per_token_gain_heavy_tail")
def test_mutation_scoring_on_the_fitting_rows_fails_the_claims(tmp_path, monkeypatch):
    """Mutation: score the codebooks on the rows they were fitted on (the old in-sample
    measurement).  The claims must fail (NaN, with the reason), not report rosier numbers."""
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path))
    experiments = importlib.import_module("icml26.gsrq.experiments")
    monkeypatch.setattr(experiments, "split_rows",
                        lambda x: (x[: len(x) // 2], x[: len(x) // 2]))
    out = {c.name: c for c in gsrq.claims_for(SMALL, 0, lm=False)}
    assert len(out) == 4
    for c in out.values():
        assert math.isnan(c.measured) and not c.holds and "in-sample" in c.note
    q = SMALL.quant("RQ-kmeans")
    row = gsrq.rq_curve(SMALL.data, q, 0)[-1]
    assert row["shared_rows"] == row["n_scored"] and row["rel_l2"] == row["fit_rel_l2"]
    with pytest.raises(AssertionError):  # and the recomputation above sees it too
        assert row["rel_l2"] == pytest.approx(held_out_metrics(SMALL.data, q, 0)[0][-1]
                                              ["rel_l2"], rel=1e-6)


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(("cfg", "match"), [
    (QuantConfig(n_codes=0), "n_codes"),
    (QuantConfig(stages=0), "stages"),
    (QuantConfig(method="pq"), "method"),
    (QuantConfig(rule="ip"), "rule"),
    (QuantConfig(method="kmeans", gain="token"), "gskm"),
    (QuantConfig(gain_update="none"), "gain_update"),
    (QuantConfig(weight_exponent=math.nan), "weight_exponent"),
])
def test_bad_quant_configs(cfg, match):
    with pytest.raises(ValueError, match=match):
        cfg.validate()


def test_bad_data_raises():
    x = torch.randn(10, 4)
    with pytest.raises(ValueError, match="K=11 must be <= the number of rows N=10"):
        fit_rq(x, QuantConfig(n_codes=11), gen())
    bad = x.clone()
    bad[3, 1] = float("nan")
    with pytest.raises(ValueError, match=r"rows \[3\] contain NaN"):
        fit_rq(bad, QuantConfig(n_codes=2), gen())
    with pytest.raises(ValueError, match="float32"):
        fit_rq(x.double(), QuantConfig(n_codes=2), gen())
    with pytest.raises(ValueError, match=r"\[N, d\]"):
        fit_rq(torch.randn(5), QuantConfig(n_codes=2), gen())
    with pytest.raises(ValueError, match="weights"):
        fit_rq(x, QuantConfig(n_codes=2), gen(), weights=-torch.ones(10))
    with pytest.raises(ValueError, match="n_codes"):
        bits_per_element(0, 1, 8)
    with pytest.raises(ValueError, match="norm_tail"):
        make_kv_data(KVDataConfig(norm_tail=-1.0), gen())


def test_codebook_dimension_mismatch_raises():
    res = fit_rq(torch.randn(40, 8, generator=gen()), QuantConfig(n_codes=4, stages=1,
                                                                  iters=2), gen())
    with pytest.raises(ValueError, match="d=6 but the codebooks have d=8"):
        gsrq.rq_reconstruct(torch.randn(5, 6), res.stages)
    with pytest.raises(ValueError, match="d=6"):
        gsrq.assign(torch.randn(5, 6), res.stages[0])


def test_scale_is_validated():
    with pytest.raises(ValueError, match="scale"):
        gsrq.claims(0, scale="huge")


# --------------------------------------------------------------------------- tiny LM
def test_passkey_windows_carry_the_key_at_both_ends():
    from icml26.gsrq import tiny_lm as lm

    cfg = lm.TinyLMConfig()
    win, has, digits = lm.sample_windows(torch.arange(1000) % 90, cfg, 8, gen(),
                                         passkey_fraction=1.0)
    text = ["".join(lm.ALPHABET[i] for i in row) for row in win]
    assert has.all()
    for t, d in zip(text, digits):
        key = "".join(str(int(v)) for v in d)
        assert t.startswith(f"{lm.PASSKEY_PREFIX}{key}.") and t.endswith(f" pass key {key}")
        assert len(t) == cfg.context + 1


def test_multi_key_windows_recall_every_key_in_order():
    """The second design's task (issue 47): n_keys lines open a key window and are recalled
    in order at its end; answer_offsets point at exactly the recalled digits."""
    from icml26.gsrq import tiny_lm as lm

    cfg = lm.TinyLMConfig(context=96, n_keys=4, passkey_digits=4)
    win, has, digits = lm.sample_windows(torch.arange(1000) % 90, cfg, 6, gen(),
                                         passkey_fraction=1.0)
    assert has.all() and digits.shape == (6, 16)
    for row, d in zip(win, digits):
        text = "".join(lm.ALPHABET[i] for i in row)
        keys = " ".join(f"{n}=" + "".join(str(int(v)) for v in d[4 * j : 4 * j + 4])
                        for j, n in enumerate("abcd"))
        assert text.startswith(f" {keys}.") and text.endswith(f" {keys}")
        assert len(text) == cfg.context + 1
        targets = row[1:]  # the model predicts ids[1:]
        at = lm.answer_offsets(cfg) + cfg.context
        assert "".join(lm.ALPHABET[i] for i in targets[at]) == "".join(map(str, d.tolist()))
    single = lm.TinyLMConfig()
    assert lm.answer_offsets(single).tolist() == list(range(-single.passkey_digits, 0))


@pytest.mark.parametrize("head_size", [0, 48])
def test_quantized_parallel_forward_equals_decoding_with_a_quantized_cache(head_size):
    """The claim behind F3's fast evaluation: quantize-on-write decoding == one forward (with
    head_size: K/V wider than d_model / n_heads, the second design's head dim 128 on a
    128-wide residual with one head is the case head_size = d_model)."""
    from icml26.gsrq import tiny_lm as lm

    cfg = lm.TinyLMConfig(context=40, passkey_digits=2, head_size=head_size)
    torch.manual_seed(0)
    model = lm.TinyLM(cfg).eval()
    ids = torch.randint(0, len(lm.ALPHABET), (3, 40), generator=gen())
    kv = lm.collect_kv(model, ids)
    books = {(layer, name): fit_rq(kv[name][layer], QuantConfig(n_codes=8, stages=2,
                                                                  iters=3), gen()).stages
             for layer in range(cfg.n_layers) for name in ("k", "v")}
    hook = lm.quantized_hook(books, 2)
    with torch.no_grad():
        parallel = model(ids, kv_hook=hook)
        exact = model(ids)
    stepwise = lm.decode_logits(model, ids, hook)
    torch.testing.assert_close(stepwise, parallel, rtol=1e-4, atol=1e-4)
    assert (parallel - exact).abs().max() > 1e-3  # the quantization did change the logits
    assert kv["mass"][0].shape == (3 * cfg.n_heads * 40,)
    assert kv["k"][0].shape == (3 * cfg.n_heads * 40, head_size or 32)
    torch.testing.assert_close(kv["mass"][0].mean(), torch.tensor(1.0))


# --------------------------------------------------------------------------- claims
def expected_claims_hold(seed):
    out = gsrq.claims(seed)
    names = {c.name for c in out}
    assert {"kmeans_shrinks", "gskm_direction", "gskm_l2_matched",
            "per_token_gain_heavy_tail", "tiny_lm_one_bit"} <= names
    binding = {c.name: c for c in out if c.name in ("kmeans_shrinks", "gskm_direction",
                                                     "gskm_l2_matched")}
    assert all(c.expected for c in binding.values())
    bad = [c for c in out if c.expected and not c.holds]
    assert not bad, [(c.name, c.measured, c.note) for c in bad]
    return out


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_expected_claims_hold(seed):
    expected_claims_hold(seed)


def test_fits_are_deterministic_per_seed():
    """Same seed, same numbers (computed twice, no cache); another seed differs."""
    cfg = QuantConfig(n_codes=8, stages=2, gain="token", iters=3)

    def run(seed):
        x = make_kv_data(KVDataConfig(n=256, dim=16, norm_tail=0.8), gen(seed))
        return fit_rq(x, cfg, gen(10_007 + seed)).metrics

    assert run(0) == run(0)
    assert run(0) != run(1)


@pytest.mark.slow
@pytest.mark.mutation("gsrq", "gskm_l2_matched")
def test_mutation_naive_gain_breaks_l2_matching():
    """Mutation: the naive norm-preserving gain (g = mean ||x||) must FAIL gskm_l2_matched."""
    cfg = replace(gsrq.config_for("quick"), gain_update="mean_norm")
    out = {c.name: c for c in gsrq.claims_for(cfg, 0, lm=False)}
    assert out["gskm_l2_matched"].expected and not out["gskm_l2_matched"].holds
    assert out["gskm_l2_matched"].measured > 1.2  # not a near miss: the residuals break


def synthetic_claims(cfg=None):
    return {c.name: c for c in gsrq.claims_for(cfg or gsrq.config_for("quick"), 0, lm=False)}


@pytest.mark.slow
@pytest.mark.mutation("gsrq", "kmeans_shrinks")
def test_mutation_norm_preserving_baseline_fails_shrinkage(monkeypatch):
    """Mutation: the RQ-kmeans baseline rescales each centroid to its members' mean norm (a
    norm-preserving k-means, the shrinkage "fixed" in the baseline): kmeans_shrinks must
    FAIL. The other synthetic claims hold (the baseline only gets worse). 7-17 s."""
    quant = GSRQConfig.quant

    def norm_preserving(self, label, n_codes=None, stages=None):
        q = quant(self, label, n_codes, stages)
        return (replace(q, method="gskm", rule="l2", gain_update="mean_norm")
                if label == "RQ-kmeans" else q)

    monkeypatch.setattr(GSRQConfig, "quant", norm_preserving)
    out = synthetic_claims()
    assert not out["kmeans_shrinks"].holds and out["kmeans_shrinks"].measured > 1.0
    assert out["gskm_direction"].holds and out["gskm_l2_matched"].holds


@pytest.mark.mutation("gsrq", "gskm_direction")
def test_mutation_gskm_replaced_by_kmeans_fails_direction(monkeypatch):
    """Mutation: GSRQ's codebooks fall back to l2 k-means (the gain-shape split switched
    off): gskm_direction must FAIL (gain exactly 0); l2 stays matched (ratio 1). ~0 s once
    the unmutated claims are cached, else ~6 s."""
    monkeypatch.setitem(gsrq.VARIANTS, "GSRQ (cluster gain)", gsrq.VARIANTS["RQ-kmeans"])
    out = synthetic_claims()
    assert not out["gskm_direction"].holds and out["gskm_direction"].measured == 0.0
    assert out["gskm_l2_matched"].holds and out["kmeans_shrinks"].holds


@pytest.mark.mutation("gsrq", "per_token_gain_heavy_tail")
def test_mutation_per_token_gain_dropped_fails_heavy_tail(monkeypatch):
    """Mutation: the per-token variant loses its gain code and its l2-rule residual stages,
    i.e. it becomes the cluster-gain GSRQ (cosine assignment, one gain per cluster): on
    heavy-tailed norms its l2 leaves the 1.05x band and per_token_gain_heavy_tail must FAIL
    (-0.056 on seed 0). (Dropping only the gain code while keeping the l2 rule everywhere
    still passes, +0.004: the claim does not isolate the gain code from the l2 rule.)"""
    monkeypatch.setitem(gsrq.VARIANTS, "GSRQ (per-token gain)",
                        gsrq.VARIANTS["GSRQ (cluster gain)"])
    out = synthetic_claims()
    assert not out["per_token_gain_heavy_tail"].holds
    assert out["gskm_direction"].holds


@pytest.mark.slow
@pytest.mark.mutation("gsrq", "tiny_lm_one_bit")
def test_mutation_gsrq_replaced_by_kmeans_fails_the_tiny_lm_claim(monkeypatch):
    """Mutation: the credited GSRQ (per-token gain) falls back to RQ-kmeans, i.e. the
    gain-shape codebooks and the gain code are switched off: tiny_lm_one_bit must FAIL (it
    then compares RQ-kmeans with itself plus a K = 16 stage, so it cannot win on both
    perplexity and recall). Needs the trained tiny LM (about 3 min from an empty cache)."""
    cfg = gsrq.config_for("quick")
    monkeypatch.setitem(gsrq.VARIANTS, cfg.lm_variant, gsrq.VARIANTS["RQ-kmeans"])
    out = {c.name: c for c in gsrq.claims_for(cfg, 0)}
    assert not out["tiny_lm_one_bit"].holds, out["tiny_lm_one_bit"].note


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU error")
def test_cuda_without_a_gpu_fails_fast_naming_the_flag(monkeypatch):
    def no_work(*a, **k):
        raise AssertionError("work started before the device was checked")

    monkeypatch.setattr(importlib.import_module("icml26.gsrq.claims"), "claims_for", no_work)
    with pytest.raises(ValueError, match="--device"):
        gsrq.claims(0, device="cuda")
    with pytest.raises(ValueError, match="--device"):
        gsrq.claims_for(SMALL, 0, device="cuda")


def test_a_failed_computation_gives_nan_claims(monkeypatch):
    def boom(*a, **k):
        raise RuntimeError("diverged")

    monkeypatch.setattr(importlib.import_module("icml26.gsrq.claims"),
                        "figure_rate_distortion_data", boom)
    out = gsrq.claims_for(GSRQConfig(), 0, lm=False)
    assert len(out) == 4 and all(math.isnan(c.measured) and not c.holds for c in out)
    assert "diverged" in out[0].note
