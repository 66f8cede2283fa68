"""Tests for icml26.detectrouter: corpus, language models, criterion, AUROC, router, claims."""

from __future__ import annotations

import importlib
import math
from dataclasses import replace

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26 import detectrouter as D
from icml26.detectrouter import diagnose, experiments
from icml26.detectrouter import router as router_mod

claims_mod = importlib.import_module("icml26.detectrouter.claims")

TINY = D.DetectRouterConfig(
    zoo=D.ZooConfig(length=64, prefix=16, n_test=12, n_human=24, n_white=16, n_black=8,
                    pool=(D.ModelSpec("2-gram pydoc", "ngram", 2, ("pydoc",)),
                          D.ModelSpec("4-gram docstrings", "ngram", 4, ("docstrings",)),
                          D.ModelSpec("GRU-16 pydoc", "gru", 16, ("pydoc",))),
                    black_box=(D.SourceSpec(D.ModelSpec("3-gram sklearn", "ngram", 3,
                                                        ("sklearn",)), 0.9),),
                    gru=D.GRUTrain(steps=3, batch=4, window=16)),
    router=D.RouterConfig(steps=5, max_features=200))


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


@pytest.fixture(scope="module")
def tiny_data(tmp_path_factory):
    import os

    # a scratch cache for the tiny zoo only: held for the whole module, it sent the module's
    # quick-scale claim tests to an empty cache (the zoo retrained: 35 s each)
    old = os.environ.get("ICML26_CACHE")
    os.environ["ICML26_CACHE"] = str(tmp_path_factory.mktemp("cache"))
    try:
        data = D.zoo_data(TINY.zoo, 0)
    finally:
        if old is None:
            os.environ.pop("ICML26_CACHE")
        else:
            os.environ["ICML26_CACHE"] = old
    return data


# --------------------------------------------------------------------------- corpus
def test_encode_decode_round_trip_and_unknowns():
    text = "Hello, world! ~ 42"
    assert D.decode(D.encode(text)) == text
    ids = D.encode("a\tb")
    assert ids.dtype == np.uint8 and ids[1] == 0 and D.decode(ids) == "a?b"


@pytest.mark.parametrize("name", D.CORPORA)
def test_corpora_ship_with_packages_and_are_clean_prose(name):
    text = D.raw_corpus(name)
    assert len(text) > 30_000 and "  " not in text
    assert all(32 <= ord(c) < 127 for c in text[:5000])
    p = D.passages(name, 192)
    assert p.shape[1] == 192 and len(p) >= 100 and p.min() >= 1


def test_splits_are_disjoint_and_seeded():
    from icml26.detectrouter.corpus import split_passages

    a = split_passages("sklearn", 192, (0.1, 0.2), gen(1))
    b = split_passages("sklearn", 192, (0.1, 0.2), gen(1))
    assert all(np.array_equal(a[k], b[k]) for k in a)
    rows = {r.tobytes() for k in a for r in a[k]}
    assert len(rows) == sum(len(v) for v in a.values())  # no passage in two splits
    with pytest.raises(ValueError, match="corpus"):
        D.raw_corpus("wikipedia")


# --------------------------------------------------------------------------- models
TRAIN = D.passages("pydoc", 64)[:200]


@pytest.mark.parametrize("order", [1, 2, 4])
def test_ngram_distributions_sum_to_one(order):
    lm = D.NgramLM(order, TRAIN)
    lp = lm.log_probs(TRAIN[:5])
    assert lp.shape == (5, 63, D.VOCAB)
    torch.testing.assert_close(lp.exp().sum(-1), torch.ones(5, 63), rtol=1e-4, atol=1e-4)


def test_higher_order_ngram_fits_its_training_text_better():
    x = torch.as_tensor(TRAIN[:20, 1:].astype(np.int64))[..., None]
    nll = [float(-D.NgramLM(o, TRAIN).log_probs(TRAIN[:20]).gather(-1, x).mean())
           for o in (1, 3, 6)]
    assert nll[0] > nll[1] > nll[2]


def test_samples_keep_the_prefix_and_are_seeded():
    lm = D.NgramLM(3, TRAIN)
    a = lm.sample(TRAIN[:4, :10], 20, 0.8, gen(2))
    assert a.shape == (4, 30) and np.array_equal(a[:, :10], TRAIN[:4, :10])
    assert a[:, 10:].min() >= 1  # the unknown id is never drawn
    assert np.array_equal(a, lm.sample(TRAIN[:4, :10], 20, 0.8, gen(2)))


def test_gru_trains_and_samples():
    m = D.train_gru(TRAIN, 16, D.GRUTrain(steps=2, batch=4, window=16), gen())
    lp = m.log_probs(TRAIN[:3])
    assert lp.shape == (3, 63, D.VOCAB)
    torch.testing.assert_close(lp.exp().sum(-1), torch.ones(3, 63), rtol=1e-4, atol=1e-4)
    assert m.sample(TRAIN[:2, :8], 5, 1.0, gen()).shape == (2, 13)


def test_bad_order_raises():
    with pytest.raises(ValueError, match="order"):
        D.NgramLM(9, TRAIN)


# --------------------------------------------------------------------------- criterion
def test_fast_detect_criterion_is_the_analytic_curvature():
    lm = D.NgramLM(3, TRAIN)
    x = TRAIN[:3]
    lp = lm.log_probs(x)[:, 9:].double()
    y = torch.as_tensor(x[:, 10:].astype(np.int64))
    logp = lp.gather(-1, y[..., None]).squeeze(-1)
    p = lp.exp()
    mu = (p * lp).sum(-1)
    var = (p * (lp - mu[..., None]) ** 2).sum(-1)
    want = ((logp.sum(1) - mu.sum(1)) / var.sum(1).sqrt()).numpy()
    np.testing.assert_allclose(D.criterion(lm, x, 10), want, rtol=1e-4)
    np.testing.assert_allclose(D.criterion(lm, x, 10, "likelihood"), logp.mean(1).numpy(),
                               rtol=1e-5)


def test_sharpened_samples_score_above_human_text():
    lm = D.NgramLM(4, TRAIN)
    human = D.passages("pydoc", 64)[200:260]
    machine = lm.sample(human[:, :16], 48, 0.7, gen())
    assert D.auroc(D.criterion(lm, human, 16), D.criterion(lm, machine, 16)) > 0.9


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-5, 5), min_size=1, max_size=20),
       st.lists(st.floats(-5, 5), min_size=1, max_size=20))
def test_auroc_is_the_mann_whitney_probability(h, m):
    want = np.mean([(b > a) + 0.5 * (b == a) for a in h for b in m])
    assert D.auroc(np.array(h), np.array(m)) == pytest.approx(want)
    assert D.auroc(np.array(m), np.array(h)) == pytest.approx(1 - want)


def test_auroc_needs_both_classes():
    with pytest.raises(ValueError, match="at least one"):
        D.auroc(np.array([]), np.array([1.0]))


# --------------------------------------------------------------------------- router
def texts(s: str, n: int = 10) -> np.ndarray:
    return D.encode((s * 20)[:120])[None].repeat(n, 0)


def test_router_learns_separable_sources():
    a, b = texts("the quick brown fox jumps over the lazy dog "), texts("1234 5678 9012 ")
    fr = D.fit_router(np.concatenate([a, b]), np.repeat([0, 1], 10), None, None, 2,
                      D.RouterConfig(steps=60, max_features=100, stats=False), gen())
    assert fr.route(a).tolist() == [0] * 10 and fr.route(b).tolist() == [1] * 10


def test_stage2_pulls_black_box_texts_to_their_best_scoring_surrogate():
    a, b = texts("the quick brown fox jumps over the lazy dog "), texts("1234 5678 9012 ")
    c = texts("ZZZZ QQQQ XXXX zzzz qqqq xxxx ")
    scores = np.tile([[0.0, 5.0, 0.0]], (10, 1))  # surrogate 1 detects the black-box texts
    routes = [D.fit_router(np.concatenate([a, b]), np.repeat([0, 1], 10), c, scores, 3,
                           D.RouterConfig(steps=80, max_features=100, stage2_weight=w,
                                          stats=False),
                           gen()).route(c) for w in (0.0, 3.0)]
    assert (routes[1] == 1).all()


def test_router_routes_by_the_statistics_when_the_text_says_nothing():
    """Identical texts, statistics that name the generator: only the stats router can tell."""
    x = texts("the quick brown fox jumps over the lazy dog ", 30)
    labels = np.repeat([0, 1, 2], 10)
    st = np.eye(3)[labels] * 4.0 + np.random.default_rng(0).normal(0, 0.1, (30, 3))
    cfg = D.RouterConfig(steps=80, max_features=100, stats=True)
    fr = D.fit_router(x, labels, None, None, 3, cfg, gen(), white_stats=st)
    assert (fr.route(x, st) == labels).mean() == 1.0
    blind = D.fit_router(x, labels, None, None, 3, replace(cfg, stats=False), gen())
    assert (blind.route(x) == labels).mean() < 0.5


def test_several_prototypes_per_surrogate_take_the_nearest():
    r = router_mod.Router(2, 2, 2, m=2)
    with torch.no_grad():
        r.proj.weight.copy_(torch.eye(2))
        r.proj.bias.zero_()
        r.prototypes.copy_(torch.tensor([[0.0, 0.0], [9.0, 9.0], [5.0, 0.0], [0.0, 5.0]]))
    d = r(torch.tensor([[8.0, 9.0]]))
    assert d.tolist() == [[1.0, 80.0]]  # surrogate 0: [9, 9]; surrogate 1: [0, 5]


# --------------------------------------------------------------------------- combinations
def synthetic_scores(seed=0, n=200, k=3):
    """Human texts z ~ N(0, 1) under every surrogate; machine texts shifted by +3 under
    surrogate 1 and by -1 under the others (a max-z detector sees the shift, a mean-z one
    hardly); the statistics are the z-scores themselves."""
    rng = np.random.default_rng(seed)
    h = rng.normal(0, 1, (n, k))
    m = rng.normal(0, 1, (n, k)) + np.where(np.arange(k) == 1, 3.0, -1.0)
    return (h, h), (m, m)


def test_combinations_score_and_choose_by_validation():
    (tr_h, tr_m), (te_h, te_m) = synthetic_scores(0), synthetic_scores(1)
    out = D.combinations(tr_h, tr_m, te_h, te_m, seed=0)
    assert set(out["val"]) == set(out["test"]) == set(D.COMBINATIONS)
    assert out["chosen"] == max(out["val"], key=out["val"].get)
    assert out["auroc"] == out["test"][out["chosen"]]
    assert out["test"]["logistic"] > 0.95 > out["test"]["mean-z"]  # weights the one surrogate
    assert out["test"]["mean-z"] == D.auroc(te_h[0].mean(1), te_m[0].mean(1))
    again = D.combinations(tr_h, tr_m, te_h, te_m, seed=0)  # deterministic from the seed
    assert again["val"] == out["val"] and again["test"] == out["test"]


def test_combination_ties_go_to_the_simpler():
    """Scores that only one surrogate carries, equal under all: mean-z = max-z = logistic on
    validation (all 1.0): the rule takes mean-z."""
    col = np.r_[np.zeros(40), np.ones(40)][:, None].repeat(3, 1)
    h, m = (col[:40], col[:40]), (col[40:] + 5, col[40:] + 5)
    out = D.combinations(h, m, h, m, seed=0)
    assert out["val"] == {"mean-z": 1.0, "max-z": 1.0, "logistic": 1.0}
    assert out["chosen"] == "mean-z"


# --------------------------------------------------------------------------- diagnosis
def test_domain_auroc_is_one_half_without_a_corpus_effect_and_sees_a_shift(tiny_data):
    flat = dict(tiny_data, human_scores=np.zeros_like(tiny_data["human_scores"]))
    present = np.isin(np.arange(3), tiny_data["human_corpus"])  # a tiny sample may miss one
    m = diagnose.domain_auroc(flat, TINY)
    np.testing.assert_array_equal(m[present], 0.5)
    assert np.isnan(m[~present]).all()
    c0 = int(np.flatnonzero(present)[0])
    shifted = tiny_data["human_scores"].copy()
    shifted[tiny_data["human_corpus"] == c0] += 1e3
    m = diagnose.domain_auroc(dict(tiny_data, human_scores=shifted), TINY)
    others = present & (np.arange(3) != c0)
    assert (m[c0] == 1.0).all() and (m[others] < 1.0).all()


def test_likelihood_gap_is_zero_for_reference_like_text(tiny_data):
    ref = tiny_data["ref_scores"]
    d = dict(tiny_data, scores={s: np.broadcast_to(ref.mean(0), v.shape)
                                for s, v in tiny_data["scores"].items()})
    np.testing.assert_allclose(diagnose.likelihood_gap(d), 0.0, atol=1e-9)


def test_blackbox_routing_rows(tiny_data):
    r = D.evaluate(TINY, 0, tiny_data)
    rows = diagnose.blackbox_routing(tiny_data, TINY, 0, r)
    k = len(TINY.zoo.pool)
    assert [row["source"] for row in rows] == r["sources"]
    for i, row in enumerate(rows):
        assert 1 <= row["best_rank"] <= k and 0 <= row["routed_to_best"] <= 1
        assert row["black_box"] == (i >= k) and ("target_names_best" in row) == (i >= k)
    # the refitted router is evaluate's: the same share routed to the best surrogate
    conf = r["stage2"]["confusion"]
    assert [round(row["routed_to_best"] * TINY.zoo.n_test) for row in rows] == \
        [conf[i, b] for i, b in enumerate(r["best"])]


# --------------------------------------------------------------------------- experiments
def test_zoo_data_shapes(tiny_data):
    z = TINY.zoo
    k, n_src = len(z.pool), len(z.sources())
    assert tiny_data["human"].shape == (z.n_human, z.length)
    assert tiny_data["human_scores"].shape == (z.n_human, k, len(D.CRITERIA))
    assert len(tiny_data["texts"]) == n_src
    for name, x in tiny_data["texts"].items():
        assert x.shape == (z.n_test, z.length)
        assert tiny_data["scores"][name].shape == (z.n_test, k, len(D.CRITERIA))
    assert set(tiny_data["router_scores"]) == {s.model.name for s in z.sources()}
    assert set(tiny_data["human_corpus"]) <= set(range(len(D.CORPORA)))
    assert len(tiny_data["human_corpus"]) == z.n_human


def test_znorm_centres_human_reference_scores(tiny_data):
    z = D.znormed(tiny_data, TINY)
    ref = tiny_data["ref_scores"][:, :, 0]
    np.testing.assert_allclose((ref - z["mu"]) / z["sd"], (ref - ref.mean(0)) / ref.std(0))
    raw = D.znormed(tiny_data, replace(TINY, znorm=False))
    np.testing.assert_array_equal(raw["human"], tiny_data["human_scores"][:, :, 0])


def test_evaluate_outputs(tiny_data):
    r = D.evaluate(TINY, 0, tiny_data)
    k = len(TINY.zoo.pool)
    assert r["matrix"].shape == (k + 1, k) and ((0 <= r["matrix"]) & (r["matrix"] <= 1)).all()
    assert len(r["fixed"]) == k and 0 <= r["oracle"] <= 1
    assert r["combination"]["test"]["mean-z"] == pytest.approx(r["ensemble"])
    assert r["combination"]["chosen"] in D.COMBINATIONS
    for stage in ("stage1", "stage2", "text"):
        conf = r[stage]["confusion"]
        assert conf.shape == (k + 2, k)
        assert conf[:-1].sum(1).tolist() == [TINY.zoo.n_test] * (k + 1)
        assert conf[-1].sum() == TINY.zoo.n_human


def test_fixed_auroc_does_not_depend_on_znorm(tiny_data):
    a = D.evaluate(TINY, 0, tiny_data)
    b = D.evaluate(replace(TINY, znorm=False), 0, tiny_data)
    np.testing.assert_allclose(a["matrix"], b["matrix"])
    np.testing.assert_allclose(a["fixed"], b["fixed"])


def test_claims_on_tiny_config_are_well_formed(tiny_data, monkeypatch):
    monkeypatch.setattr(experiments, "zoo_data", lambda cfg, seed, device="cpu": tiny_data)
    monkeypatch.setattr(claims_mod, "zoo_data", lambda cfg, seed, device="cpu": tiny_data)
    cl = D.claims_for(TINY, 0)
    assert [c.name for c in cl] == list(D.CLAIM_SPECS)
    assert all(not math.isnan(c.measured) for c in cl)


def test_a_failed_computation_gives_nan_claims(monkeypatch):
    def boom(cfg, seed, device="cpu"):
        raise RuntimeError("zoo exploded")

    monkeypatch.setattr(claims_mod, "zoo_data", boom)
    cl = D.claims_for(TINY, 0)
    assert len(cl) == len(D.CLAIM_SPECS) and not any(c.holds for c in cl)
    assert "zoo exploded" in cl[0].note


def test_cuda_without_a_gpu_fails_fast_naming_the_flag():
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    with pytest.raises(ValueError, match="--device"):
        D.claims(0, device="cuda")
    with pytest.raises(ValueError, match="--device"):
        D.claims_for(TINY, 0, device="cuda")


@pytest.mark.mutation("detectrouter", "mismatch_matters", "no_universal_surrogate")
def test_mutation_every_surrogate_scored_by_one_model_fails_the_alignment_claims(
        tiny_data, monkeypatch):
    """The scoring loop binds one model for the whole pool (a late-binding bug; the same as a
    pool without diversity): every column of the AUROC matrix is the same, so the mismatch and
    the no-universal-surrogate gaps are exactly 0."""
    same = {k: (v[:, :1].repeat(v.shape[1], 1) if k.endswith("scores") else v)
            for k, v in tiny_data.items() if k not in ("scores", "router_scores")}
    for k in ("scores", "router_scores"):
        same[k] = {s: v[:, :1].repeat(v.shape[1], 1) for s, v in tiny_data[k].items()}
    monkeypatch.setattr(claims_mod, "zoo_data", lambda cfg, seed, device="cpu": same)
    monkeypatch.setattr(claims_mod, "evaluation",
                        lambda cfg, seed, device="cpu": D.evaluate(cfg, seed, same))
    cl = {c.name: c for c in D.claims_for(TINY, 0)}
    for name in ("mismatch_matters", "no_universal_surrogate"):
        assert not cl[name].holds and cl[name].measured == pytest.approx(0.0), cl[name]


@pytest.mark.mutation("detectrouter", "stage2_helps_blackbox")
def test_mutation_stage2_switched_off_fails_stage2_helps(tiny_data):
    """Stage 2's alignment term dropped (weight 0): stage 1+2 is stage 1, the gain is 0 (on the
    quick scale, seed 0: 0.0588 -> 0.0000)."""
    off = replace(TINY, router=replace(TINY.router, stage2_weight=0.0))
    cl = {c.name: c for c in D.claims_for(off, 0)}
    assert not cl["stage2_helps_blackbox"].holds, cl["stage2_helps_blackbox"]
    assert cl["stage2_helps_blackbox"].measured == 0.0


def test_bad_configs_raise():
    with pytest.raises(ValueError, match="criterion"):
        replace(TINY, criterion="rank").validate()
    with pytest.raises(ValueError, match="routing"):
        replace(TINY, routing="greedy").validate()
    with pytest.raises(ValueError, match="pool"):
        replace(TINY, zoo=replace(TINY.zoo, pool=TINY.zoo.pool[:1])).validate()
    with pytest.raises(ValueError, match="scale"):
        D.config_for("huge")


@pytest.mark.interpreter
def test_criteria_uses_the_triton_kernel_end_to_end():
    lm = D.NgramLM(2, TRAIN)
    x = TRAIN[:2, :24]
    np.testing.assert_allclose(D.criteria(lm, x, 8, impl="triton"), D.criteria(lm, x, 8),
                               rtol=1e-4, atol=1e-5)


# --------------------------------------------------------------------------- quick scale
# Seeds of the CI pair whose binding claims fail (the registry's "blocked"; evidence for seeds
# 0-6 in benchmarks/detectrouter/detectrouter_seeds.csv). Strict: a seed that starts to pass fails
# this test, so the status is revisited, never silently kept.
# First design: {1: router_near_oracle 0.881}; second design (issue 35): every expected claim
# holds on seeds 0 and 1 (router / oracle 0.957, 0.945).
BLOCKED_ON: dict[int, str] = {}



@pytest.mark.slow
@pytest.mark.parametrize("seed", [pytest.param(s, marks=pytest.mark.xfail(
    s in BLOCKED_ON, strict=True, reason=BLOCKED_ON.get(s, ""))) for s in (0, 1)])
def test_expected_claims_hold(seed):
    bad = [(c.name, c.measured) for c in D.claims(seed) if c.expected and not c.holds]
    assert not bad, bad


@pytest.mark.slow
@pytest.mark.mutation("detectrouter", "router_fpr_calibrated")
def test_mutation_skipping_znorm_fails_the_fpr_claim():
    cl = {c.name: c for c in D.claims_for(replace(D.config_for("quick"), znorm=False), 0)}
    assert not cl["router_fpr_calibrated"].holds


@pytest.mark.slow
@pytest.mark.mutation("detectrouter", "router_near_oracle", "router_beats_fixed",
                      "router_beats_combination", "text_router_beats_fixed")
def test_mutation_random_routing_fails_router_near_oracle():
    """Random routing (a router that ignores its input): the router's share of oracle routing,
    its margin over the best fixed surrogate and over the combination of the same z-scores
    chosen on validation (issue 46), and the text-only router's margin, fall below their
    targets (seed 0)."""
    cl = {c.name: c for c in D.claims_for(replace(D.config_for("quick"), routing="random"), 0)}
    for name in ("router_near_oracle", "router_beats_fixed", "router_beats_combination",
                 "text_router_beats_fixed"):
        assert not cl[name].holds, cl[name]
