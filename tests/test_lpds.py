"""Tests for icml26.lpds: the toy map, the flow prior, KL entropy, steering, claims."""

from __future__ import annotations

import importlib
import math
from dataclasses import replace

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26 import lpds
from icml26.lpds import (
    LPDSConfig,
    MapConfig,
    PriorConfig,
    SteerConfig,
    demonstrations,
    kl_entropy,
    rollout,
    sample_states,
    train_prior,
    train_steering,
)


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


TINY_PRIOR = PriorConfig(hidden=32, steps=60, batch=64, n_demos=256)
TINY_STEER = SteerConfig(iterations=4, n_envs=32, warmup=1, critic_steps=2, actor_steps=2,
                         batch=64, hidden=16, actor_hidden=8, entropy_every=2,
                         entropy_samples=32)


@pytest.fixture(scope="module")
def tiny_prior():
    m = MapConfig()
    d = demonstrations(m, TINY_PRIOR.n_demos, gen())
    model, losses = train_prior(d["states"], d["actions"], TINY_PRIOR, gen(1))
    return m, model, losses


# --------------------------------------------------------------------------- the map
def test_clean_demos_are_collision_free_and_beat_noisy_ones():
    m = MapConfig()
    d = demonstrations(m, 1024, gen())
    r = rollout(m, d["states"], d["actions"])
    clean, noisy = ~d["noisy"], d["noisy"]
    assert float((r["collision"][clean] > 0).float().mean()) == 0.0
    assert float(r["return"][clean].mean()) > float(r["return"][noisy].mean()) + 0.2
    assert 0.2 < float(noisy.float().mean()) < 0.4  # the 30%
    above = d["actions"].reshape(1024, m.horizon, 2)[:, m.horizon // 2, 1] > m.obstacle_y
    assert 0.4 < float(above.float().mean()) < 0.6  # bimodal: above and below the pair


def test_straight_line_through_the_gap_is_the_best_path():
    m = MapConfig(obstacle_y=0.0)
    s = torch.tensor([[m.start_x, 0.0]])
    t = torch.arange(1, m.horizon + 1) / m.horizon
    line = torch.stack([m.start_x + (m.goal[0] - m.start_x) * t, 0 * t], 1).reshape(1, -1)
    r = rollout(m, s, line)
    assert bool(r["gap"][0]) and float(r["collision"][0]) == 0
    torch.testing.assert_close(r["return"], torch.tensor([1.0]))


def test_a_path_through_a_disk_is_penalised():
    m = MapConfig()
    s = torch.tensor([[m.start_x, 0.0]])
    # straight line at the height of the upper disk's centre
    y = float(m.centers()[0, 1])
    t = torch.arange(1, m.horizon + 1) / m.horizon
    pts = torch.stack([m.start_x + (m.goal[0] - m.start_x) * t, y * torch.sin(math.pi * t)], 1)
    r = rollout(m, s, pts.reshape(1, -1))
    assert float(r["collision"][0]) > 0 and float(r["return"][0]) < 0.8


def test_states_lie_in_the_start_band():
    m = MapConfig()
    s = sample_states(m, 500, gen())
    assert torch.all(s[:, 0] == m.start_x) and float(s[:, 1].abs().max()) <= m.start_jitter


# --------------------------------------------------------------------------- entropy
@settings(max_examples=5, deadline=None)
@given(sigma=st.floats(0.3, 3.0), d=st.integers(1, 4))
def test_kl_entropy_matches_a_gaussian(sigma, d):
    x = torch.randn(2000, d, generator=gen(d)) * sigma
    exact = d / 2 * math.log(2 * math.pi * math.e * sigma ** 2)
    assert abs(kl_entropy(x, 3) - exact) < 0.1 * d + 0.05


def test_kl_entropy_grows_by_log_scale():
    x = torch.randn(500, 3, generator=gen())
    assert kl_entropy(2 * x) - kl_entropy(x) == pytest.approx(3 * math.log(2), abs=1e-6)


# --------------------------------------------------------------------------- prior
def test_prior_loss_falls_and_decode_is_deterministic(tiny_prior):
    m, model, losses = tiny_prior
    assert sum(losses[-10:]) < sum(losses[:10])
    s = sample_states(m, 8, gen())
    w = torch.randn(8, m.action_dim, generator=gen())
    torch.testing.assert_close(model.decode(s, w), model.decode(s, w))
    assert not any(p.requires_grad for p in model.parameters())  # frozen


def test_decode_rejects_a_wrong_noise_shape(tiny_prior):
    m, model, _ = tiny_prior
    with pytest.raises(ValueError, match="noise must be"):
        model.decode(sample_states(m, 4, gen()), torch.zeros(4, 3))


# --------------------------------------------------------------------------- steering
@pytest.mark.parametrize("method", lpds.METHODS)
def test_each_method_runs_and_reports(tiny_prior, method):
    m, model, _ = tiny_prior
    res = train_steering(model, m, replace(TINY_STEER, method=method), gen())
    h = res["history"]
    assert len(h["return"]) == TINY_STEER.iterations and len(h["entropy"]) >= 2
    assert math.isfinite(res["final_return"]) and 0 <= res["off_support"] <= 1
    assert (method == "lpds") == math.isfinite(res["final_delta_sq"])


def test_lpds_deploys_its_averaged_iterate(tiny_prior):
    """v3: the deployed LP-DS actor is the mean of the suffix iterates' Delta (Jensen: its
    E||Delta||^2 is at most theirs); the last iterate's evaluation is kept beside it."""
    m, model, _ = tiny_prior
    cfg = replace(TINY_STEER, iterations=9, warmup=1)
    res = train_steering(model, m, cfg, gen())
    actor = res["steerer"].actor
    assert isinstance(actor, lpds.AveragedActor)
    assert res["averaged_iterates"] == len(actor.actors) == 4  # the last half of 8 actor phases
    assert set(res["last"]) >= {"final_return", "final_delta_sq", "final_entropy"}
    s = sample_states(m, 64, gen(5))
    with torch.no_grad():
        each = torch.stack([a(s) for a in actor.actors])
        torch.testing.assert_close(actor(s), each.mean(0))
        avg_sq = float((actor(s) ** 2).sum(1).mean())
        assert avg_sq <= float((each ** 2).sum(2).mean()) + 1e-9
    with pytest.raises(ValueError, match="at least one"):
        lpds.AveragedActor([])
    base = train_steering(model, m, replace(cfg, method="dsrl"), gen())
    assert "last" not in base  # the baselines deploy their final policy


def test_lpds_starts_exactly_at_the_prior(tiny_prior):
    m, model, _ = tiny_prior
    st_ = lpds.Steerer(model, TINY_STEER, m.action_dim)
    s = sample_states(m, 16, gen())
    out = st_.act(s, gen(3))
    w = torch.randn(16, m.action_dim, generator=gen(3))
    torch.testing.assert_close(out["a"], model.decode(s, w))


def test_dual_ascent_raises_lambda_on_violation_and_clips_at_zero(tiny_prior):
    m, model, _ = tiny_prior
    st_ = lpds.Steerer(model, replace(TINY_STEER, delta=0.5, eta_lambda=1.0), m.action_dim)
    st_.dual_step(1.5)
    assert st_.lam == pytest.approx(2.0)
    st_.dual_step(0.0)
    st_.dual_step(0.0)
    assert st_.lam == 0.0
    frozen = lpds.Steerer(model, replace(TINY_STEER, freeze_lambda=True), m.action_dim)
    frozen.dual_step(10.0)
    assert frozen.lam == 0.0


def test_chi2_ball_holds_99_percent_of_the_prior():
    w = torch.randn(20000, 16, generator=gen())
    share = float(((w ** 2).sum(1) > lpds.chi2_quantile(16)).float().mean())
    assert share == pytest.approx(0.01, abs=0.003)


@pytest.mark.parametrize("bad, match", [
    (dict(method="sac"), "method"), (dict(delta=0.0), "delta"),
    (dict(eta_lambda=-1.0), "eta_lambda"), (dict(iterations=0), "iterations")])
def test_bad_steer_configs(bad, match):
    with pytest.raises(ValueError, match=match):
        replace(SteerConfig(), **bad).validate()


def test_bad_map_and_scale():
    with pytest.raises(ValueError, match="noisy_share"):
        MapConfig(noisy_share=1.5).validate()
    with pytest.raises(ValueError, match="scale"):
        lpds.config_for("huge")


def test_a_failed_computation_gives_nan_claims(monkeypatch):
    def boom(*a, **k):
        raise RuntimeError("diverged")

    monkeypatch.setattr(importlib.import_module("icml26.lpds.claims"), "experiment", boom)
    out = lpds.claims_for(LPDSConfig(), 0)
    assert {c.name for c in out} == set(lpds.CLAIM_SPECS)
    assert all(not c.holds and "diverged" in c.note for c in out)


# --------------------------------------------------------------------------- grids, device
def test_baselines_get_at_least_lpds_grid_size_and_keep_their_generator_index():
    cfg = LPDSConfig()
    labels = list(lpds.method_configs(cfg))
    # the pre-grid runs keep their place (their generator index): LP-DS..., DSRL, residual
    assert labels[:4] == ["LP-DS d=0.5", "LP-DS d=2", "DSRL W=2", "residual RL c=0.3"]
    groups = lpds.method_groups(cfg)
    assert {k: len(v) for k, v in groups.items()} == {"LP-DS": 3, "DSRL": 3, "residual RL": 3}
    assert labels[-1] == "LP-DS d=0.1"  # v3's added delta runs last (v2's indices kept)
    assert [mc_.delta for mc_ in (lpds.method_configs(cfg)[k] for k in groups["LP-DS"])] == \
        list(cfg.deltas)
    mc = lpds.method_configs(cfg)
    assert [mc[k].dsrl_bound for k in groups["DSRL"]] == list(cfg.dsrl_bounds)
    assert [mc[k].residual_scale for k in groups["residual RL"]] == list(cfg.residual_scales)
    one = replace(cfg, deltas=(1.0,), dsrl_bounds=(2.0,), residual_scales=(0.3,))
    assert list(lpds.method_configs(one)) == ["LP-DS d=1", "DSRL", "residual RL"]
    with pytest.raises(ValueError, match="at least len"):
        lpds.method_configs(replace(cfg, dsrl_bounds=(2.0,), residual_scales=(0.3,)))
    with pytest.raises(ValueError, match="same length"):
        lpds.method_configs(replace(cfg, dsrl_bounds=(2.0, 3.0)))


def test_a_baseline_is_tuned_on_its_validation_split_not_the_reported_one():
    res = {"DSRL W=2": {"val_return": 0.5, "final_return": 0.1},
           "DSRL W=3": {"val_return": 0.4, "final_return": 0.9}}
    assert lpds.tuned(res, ["DSRL W=2", "DSRL W=3"]) == "DSRL W=2"


def _fake_results(cfg, val, final, entropy):
    """Plain-number results for every label of ``cfg`` (``val``/``final``/``entropy``: label
    -> value, 0 / 1 / 1 where not given)."""
    hist = {"episodes": [256, 512, 768], "return": [0.5, 0.9, 1.0]}
    res = {"BC": {"final_return": 0.5, "final_entropy": 1.0, "off_support": 0.01}}
    for k, c in lpds.method_configs(cfg).items():
        res[k] = {"val_return": val.get(k, 0.0), "final_return": final.get(k, 1.0),
                  "final_entropy": entropy.get(k, 1.0), "off_support": 0.01,
                  "final_delta_sq": 0.5 * c.delta, "history": hist,
                  "last": {"final_delta_sq": 0.9 * c.delta}}
    return res


def test_every_method_is_read_at_its_validation_best_setting():
    """v3's symmetric tuning: LP-DS's delta is chosen on the shared validation split like each
    baseline's bound (v2 took LP-DS's worst delta), and the entropy headline compares with the
    least-constrained DSRL (largest W), whatever DSRL's validation prefers."""
    cfg = LPDSConfig()
    res = _fake_results(
        cfg, val={"LP-DS d=2": 1.0, "DSRL W=1": 1.0, "residual RL c=0.1": 1.0},
        final={"LP-DS d=0.5": 0.2, "LP-DS d=2": 1.5, "LP-DS d=0.1": 0.3, "DSRL W=1": 1.0,
               "DSRL W=3": 3.0, "residual RL c=0.1": 1.2, "residual RL c=0.6": 9.0},
        entropy={"LP-DS d=2": 4.0, "DSRL W=1": -5.0, "DSRL W=3": 6.0})
    out = {c.name: c for c in lpds.claims_from(cfg, res)}
    assert out["improves_over_bc"].measured == pytest.approx(3.0)  # 1.5 / 0.5, not 0.2 / 0.5
    assert out["return_vs_dsrl"].measured == pytest.approx(0.5)  # vs W=1 (val-best)
    assert out["return_vs_residual"].measured == pytest.approx(0.25)  # vs c=0.1 (val-best)
    assert out["entropy_vs_unconstrained"].measured == pytest.approx(-2.0)  # vs W=3, not W=1
    assert not out["entropy_vs_unconstrained"].holds
    assert out["trust_region_held"].measured == pytest.approx(0.5)  # averaged, not last (0.9)


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU error")
def test_cuda_without_a_gpu_fails_fast_naming_the_flag(monkeypatch):
    def no_work(*a, **k):
        raise AssertionError("work started before the device was checked")

    monkeypatch.setattr(importlib.import_module("icml26.lpds.claims"), "experiment", no_work)
    monkeypatch.setattr(importlib.import_module("icml26.lpds.claims"), "config_for", no_work)
    for call in (lambda: lpds.claims(0, device="cuda"),
                 lambda: lpds.claims_for(LPDSConfig(), 0, device="cuda"),
                 lambda: lpds.experiment(LPDSConfig(), 0, device="cuda")):
        with pytest.raises(ValueError, match="--device"):
            call()


# --------------------------------------------------------------------------- claims
def test_every_claim_has_a_role_and_headlines_quote_the_abstract():
    for name, row in lpds.CLAIM_SPECS.items():
        assert row.role in ("headline", "mechanism", "check"), name
        if row.role == "headline":
            assert row.statement.count('"') >= 2, name
    assert lpds.CLAIMS_VERSION >= 3


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_expected_claims_hold(seed):
    out = lpds.claims(seed)
    bad = [(c.name, c.measured, c.note) for c in out if c.expected and not c.holds]
    assert not bad


def _with_mutated_lpds_run(seed, patch, monkeypatch, every_delta=False):
    """Seed ``seed``'s cached results, with the largest delta's LP-DS run (or, with
    ``every_delta``, every LP-DS run, so the validation choice cannot dodge the bug) retrained
    (uncached) under ``patch`` (a bug injected into the steering code); the baselines are
    unmutated. Everything cached is read BEFORE the patch, so no mutated value reaches the
    cache."""
    cfg = LPDSConfig()
    res = lpds.experiment(cfg, seed)
    prior = lpds.trained_prior(cfg, seed)
    clean = {c.name: c for c in lpds.claims_from(cfg, res)}
    configs = lpds.method_configs(cfg)
    labels = [k for k in lpds.method_groups(cfg)["LP-DS"]
              if every_delta or configs[k].delta == max(cfg.deltas)]
    patch(monkeypatch)
    res = dict(res)
    for label in labels:
        res[label] = lpds.online_run(cfg, label, seed, prior)
    return clean, {c.name: c for c in lpds.claims_from(cfg, res)}, res[labels[-1]]


@pytest.mark.slow
@pytest.mark.mutation("lpds", "trust_region_held", "latents_in_support")
def test_mutation_frozen_lambda_breaks_the_trust_region():
    out = {c.name: c for c in lpds.claims_for(replace(LPDSConfig(), freeze_lambda=True), 0)}
    assert not out["trust_region_held"].holds
    assert not out["latents_in_support"].holds


@pytest.mark.slow
def test_critic_fed_the_unsteered_noise_leaves_the_trust_region_only_at_the_last_iterate(
        monkeypatch):
    """The replay buffer stores the critic's input as eps instead of w = eps + Delta: the
    critic credits each return to the wrong latent and the actor chases it. v2 caught this
    with the last iterate (about 2x delta); v3 reads the deployed averaged iterate, which the
    dual ascent keeps inside the trust region even under this bug (the constraint is met; the
    bug shows in the return, not in the trust region). The claim's mutation is now the frozen
    lambda alone (test_mutation_frozen_lambda_breaks_the_trust_region)."""
    act = lpds.Steerer.act

    def buggy_act(self, s, gen, explore=True):
        out = act(self, s, gen, explore)
        if self.cfg.method == "lpds":
            with torch.no_grad():
                out["x"] = out["w"] - self.actor(s)
        return out

    clean, out, run = _with_mutated_lpds_run(
        0, lambda mp: mp.setattr(lpds.Steerer, "act", buggy_act), monkeypatch)
    delta = max(LPDSConfig().deltas)
    assert clean["trust_region_held"].holds
    assert run["last"]["final_delta_sq"] / delta > 1.10  # v2's reading fails
    assert out["trust_region_held"].holds  # the deployed average keeps the constraint
    assert sum(run["history"]["delta_sq"][-10:]) / 10 / delta <= 1.10  # v1 saw nothing


@pytest.mark.slow
@pytest.mark.mutation("lpds", "entropy_vs_unconstrained")
def test_mutation_steering_that_replaces_the_noise_collapses_the_entropy(monkeypatch):
    """The deployed LP-DS latent drops the prior's noise, ``w = Delta(s)`` instead of
    ``eps + Delta(s)`` (the DSRL-style latent policy mistaken for a perturbation), at every
    delta: each start decodes to one chunk, the prior's spread is gone, and the entropy gap to
    the unconstrained DSRL falls by more than 5 nats (the claim fails either way: v3 expects
    it to fail against W = 3; the mutation shows what the claim credits, the kept noise)."""
    act = lpds.Steerer.act

    def collapsed_act(self, s, gen, explore=True):
        out = act(self, s, gen, explore)  # draws the same random numbers as before
        if self.cfg.method == "lpds":
            with torch.no_grad():
                delta = self.actor(s)
                out.update(w=delta, x=delta, a=self.prior.decode(s, delta))
        return out

    clean, out, _ = _with_mutated_lpds_run(
        0, lambda mp: mp.setattr(lpds.Steerer, "act", collapsed_act), monkeypatch,
        every_delta=True)
    assert not out["entropy_vs_unconstrained"].holds
    assert out["entropy_vs_unconstrained"].measured < clean["entropy_vs_unconstrained"].measured - 5
