"""PANDA: the regularised Markov game, best responses, NI gap, exact saddle point, methods,
the second-order detector, mutation tests and the claims."""

from __future__ import annotations

import dataclasses
import functools
import importlib
import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26 import panda as pd

DT = torch.float64


@functools.cache
def game(seed: int = 0, **kw) -> pd.MarkovGame:
    return pd.make_game(pd.GameConfig(**kw), seed)


def random_policy(shape, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.softmax(2 * torch.randn(*shape, generator=g, dtype=DT), -1)


def xs(max_abs: float = 3.0):
    """Hypothesis strategy: an upper-level x in R^2."""
    return st.lists(st.floats(-max_abs, max_abs), min_size=2, max_size=2).map(
        lambda v: torch.tensor([v], dtype=DT))


# ------------------------------------------------------------------ the game
def test_instance_is_a_valid_markov_game():
    g = game(0)
    assert g.r0.shape == (3, 3, 3) and g.feats.shape == (2, 3, 3, 3) and g.P.shape == (3, 3, 3, 3)
    torch.testing.assert_close(g.P.sum(-1), torch.ones(3, 3, 3, dtype=DT))
    torch.testing.assert_close(g.init.sum(), torch.tensor(1.0, dtype=DT))
    assert abs(float(g.x_dag.norm()) - 2.5) < 1e-12


def test_reachable_targets_are_the_saddle_point_at_x_dag():
    g = game(1)
    eq = pd.solve_equilibrium(g, g.x_dag[None])
    torch.testing.assert_close(eq.pi[0], g.pi_tgt, rtol=0, atol=1e-10)
    torch.testing.assert_close(eq.nu[0], g.nu_tgt, rtol=0, atol=1e-10)
    val, _ = pd.phi(g, g.x_dag[None])
    assert abs(float(val[0]) - 0.01 * 2.5**2) < 1e-12  # only the incentive cost remains


def test_same_seed_same_game_different_seed_different_game():
    a, b = pd.make_game(pd.GameConfig(), 3), pd.make_game(pd.GameConfig(), 3)
    assert torch.equal(a.r0, b.r0) and torch.equal(a.pi_tgt, b.pi_tgt)
    assert not torch.equal(a.r0, pd.make_game(pd.GameConfig(), 4).r0)


def test_policy_value_is_the_discounted_sum():
    """The linear solve equals the truncated series sum_t gamma^t P^t r (independent route)."""
    g = game(0)
    x = torch.tensor([[0.3, -1.2]], dtype=DT)
    pi, nu = random_policy((1, 3, 3), 1), random_policy((1, 3, 3), 2)
    joint = pi[..., :, None] * nu[..., None, :]
    r = (joint * pd.reward(g, x)).sum((-1, -2)) - 0.3 * (pi * pi.log()).sum(-1) \
        + 0.3 * (nu * nu.log()).sum(-1)
    P = torch.einsum("bsac,sact->bst", joint, g.P)[0]
    total, term = torch.zeros(3, dtype=DT), r[0].clone()
    for _ in range(600):
        total += term
        term = 0.9 * P @ term
    torch.testing.assert_close(pd.policy_value(g, x, pi, nu)[0], total, rtol=0, atol=1e-10)


def test_swapped_game_has_the_negated_value():
    g = game(0)
    x = torch.tensor([[1.0, 0.5]], dtype=DT)
    pi, nu = random_policy((1, 3, 3), 3), random_policy((1, 3, 3), 4)
    torch.testing.assert_close(pd.policy_value(g.swapped(), x, nu, pi),
                               -pd.policy_value(g, x, pi, nu), rtol=0, atol=1e-12)


# ------------------------------------------------------------------ best responses and NI
@settings(max_examples=15, deadline=None)
@given(x=xs(), seed=st.integers(0, 10_000), player=st.sampled_from(["max", "min"]))
def test_soft_best_responses_are_distributions(x, seed, player):
    br = pd.best_response(game(0), x, random_policy((1, 3, 3), seed), player)
    assert torch.isfinite(br.policy).all() and (br.policy > 0).all()
    torch.testing.assert_close(br.policy.sum(-1), torch.ones(1, 3, dtype=DT))


@settings(max_examples=10, deadline=None)
@given(x=xs(), seed=st.integers(0, 10_000))
def test_best_response_beats_every_other_policy(x, seed):
    g = game(2)
    nu = random_policy((1, 3, 3), seed)
    br = pd.best_response(g, x, nu, "max")
    others = random_policy((8, 3, 3), seed + 1)
    v_other = pd.policy_value(g, x.expand(8, -1), others, nu.expand(8, -1, -1))
    assert (v_other <= br.value + 1e-10).all()  # every state, not just on average
    torch.testing.assert_close(pd.policy_value(g, x, br.policy, nu), br.value, rtol=0,
                               atol=1e-10)


def test_best_response_is_the_soft_value_iteration_fixed_point():
    """Soft policy iteration and plain soft value iteration (the kernel iterated) agree."""
    g = game(0)
    x = torch.tensor([[-0.7, 0.2]], dtype=DT)
    nu = random_policy((1, 3, 3), 5)
    v = torch.zeros(1, 3, dtype=DT)
    for _ in range(400):
        v, pol = pd.backup(g, x, v, nu)
    br = pd.best_response(g, x, nu, "max")
    # policy iteration stops once a step moves the policy < 1e-6, i.e. O(1e-12) error in the
    # policy and a few 1e-12 in values of size ~10
    torch.testing.assert_close(br.value, v, rtol=0, atol=1e-10)
    torch.testing.assert_close(br.policy, pol, rtol=0, atol=1e-10)


@settings(max_examples=15, deadline=None)
@given(x=xs(), seed=st.integers(0, 10_000))
def test_ni_gap_is_nonnegative(x, seed):
    g = game(0)
    gap = pd.ni_gap(g, x, random_policy((1, 3, 3), seed), random_policy((1, 3, 3), seed + 7))
    assert float(gap[0]) >= -1e-12


@settings(max_examples=10, deadline=None)
@given(x=xs(), seed=st.sampled_from([0, 1, 2]))
def test_ni_gap_vanishes_at_the_computed_equilibrium(x, seed):
    g = game(seed)
    eq = pd.solve_equilibrium(g, x)
    assert eq.residual.max() < 1e-10
    assert abs(float(pd.ni_gap(g, x, eq.pi, eq.nu)[0])) < 1e-10


def test_ni_gap_is_positive_off_equilibrium():
    g = game(0)
    x = torch.zeros(1, 2, dtype=DT)
    eq = pd.solve_equilibrium(g, x)
    moved = torch.softmax(eq.z[:, :9].reshape(1, 3, 3) + 0.3, -1)
    moved[0, 0] = torch.tensor([0.6, 0.3, 0.1], dtype=DT)
    assert float(pd.ni_gap(g, x, moved, eq.nu)[0]) > 1e-4


# ------------------------------------------------------------------ exact saddle point
def test_analytic_jacobians_match_autograd():
    g = game(1)
    z = torch.randn(3, 18, generator=torch.Generator().manual_seed(0), dtype=DT)
    x = torch.randn(3, 2, generator=torch.Generator().manual_seed(1), dtype=DT)
    jz, jx = pd.jacobians(g, z, x, wrt_x=True)
    az, ax = pd.jacobians_autograd(g, z, x)
    torch.testing.assert_close(jz, az, rtol=0, atol=1e-12)
    torch.testing.assert_close(jx, ax, rtol=0, atol=1e-12)


def test_warm_started_newton_matches_the_cold_solve():
    g = game(0)
    x = torch.tensor([[1.0, -2.0], [0.0, 0.5]], dtype=DT)
    cold = pd.solve_equilibrium(g, x)
    warm = pd.solve_equilibrium(g, x + 0.05, z0=cold.z)
    again = pd.solve_equilibrium(g, x + 0.05)
    torch.testing.assert_close(warm.pi, again.pi, rtol=0, atol=1e-10)
    assert warm.residual.max() < 1e-10


def test_hypergradient_matches_finite_differences():
    g = game(0)
    x = torch.tensor([[-1.0, -0.6]], dtype=DT)
    grad = pd.hypergradient(g, x, pd.solve_equilibrium(g, x))[0]
    h = 1e-5
    for d in range(2):
        e = torch.zeros(1, 2, dtype=DT)
        e[0, d] = h
        fd = (pd.phi(g, x + e)[0] - pd.phi(g, x - e)[0]) / (2 * h)
        assert abs(float(fd[0]) - float(grad[d])) < 1e-7


def test_matrix_game_is_the_one_state_special_case():
    g = pd.make_game(pd.MATRIX_GAME, 0)
    x = torch.tensor([[0.4, 0.1]], dtype=DT)
    eq = pd.solve_equilibrium(g, x)
    A = pd.reward(g, x)[0, 0]  # [4, 4]
    # closed-form soft best responses of the spec probe: softmax(A nu / tau), softmax(-A^T pi / tau)
    torch.testing.assert_close(eq.pi[0, 0], torch.softmax(A @ eq.nu[0, 0] / 0.3, 0), rtol=0,
                               atol=1e-10)
    torch.testing.assert_close(eq.nu[0, 0], torch.softmax(-A.T @ eq.pi[0, 0] / 0.3, 0), rtol=0,
                               atol=1e-10)


def test_brute_force_radius_contains_the_minimiser():
    g = game(4)
    out = pd.brute_force(g, pd.OracleConfig(grid=9, keep=2, rounds=6))
    assert out["radius"] <= 2.5 + 1e-12
    assert math.hypot(*out["x_star"]) <= out["radius"]
    # the zoom never returns something worse than its own best grid point
    assert out["phi_star"] <= float(out["landscape"]["phi"].min()) + 1e-15


# ------------------------------------------------------------------ detector
def test_detector_fires_on_create_graph_and_not_on_backward():
    x = torch.randn(4, dtype=DT, requires_grad=True)
    with pd.SecondOrderDetector() as first:
        (x.sin() * x).sum().backward()
    assert not first.fired
    with pd.SecondOrderDetector() as second:
        (g,) = torch.autograd.grad((x.sin() * x).sum(), x, create_graph=True)
        (g**2).sum().backward()
    assert second.ops > 0 and second.saved > 0 and second.create_graph_calls == 1


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
def test_detector_sees_create_graph_through_tensor_backward():
    """Tensor.backward(create_graph=True) passes create_graph positionally to
    torch.autograd.backward; the wrapper binds the signature, the engine signals agree."""
    x = torch.randn(3, dtype=DT, requires_grad=True)
    with pd.SecondOrderDetector() as det:
        (x.exp() * x).sum().backward(create_graph=True)
    assert det.ops > 0 and det.saved > 0 and det.create_graph_calls == 1
    with pd.SecondOrderDetector(dispatch=False) as cheap:
        (x.exp() * x).sum().backward(create_graph=True)
    assert cheap.saved > 0 and cheap.ops == 0


def test_panda_step_is_first_order_and_unrolled_is_not():
    g = game(0)
    with pd.SecondOrderDetector() as det:
        pd.panda(g, pd.PandaConfig(iterations=3))
    assert not det.fired, det.counts()
    with pd.SecondOrderDetector() as det:
        pd.unrolled_gda(g, pd.BaselineConfig(unrolled_steps=2), budget=4)
    assert det.fired and det.ops > 0


def test_detector_counts_exact_lower_level_solves():
    """Newton with analytic Jacobians runs under no_grad (autograd sees nothing): the
    detector counts the solver calls themselves, e.g. a hidden warm start."""
    g = game(0)
    with pd.SecondOrderDetector(dispatch=False) as det:
        pd.solve_equilibrium(g, torch.zeros(1, 2, dtype=DT))
    assert det.fired and det.exact_solves == 1 and det.analytic_jacobians >= 1
    assert det.ops == det.saved == det.create_graph_calls == 0
    with pd.SecondOrderDetector(dispatch=False) as warm:
        pd.panda(g, pd.PandaConfig(iterations=2, warm_start=True))
    assert warm.fired and warm.exact_solves == 1


# ------------------------------------------------------------------ methods (short runs)
def test_panda_decreases_the_penalised_gap_and_records():
    g = game(0)
    tr = pd.panda(g, pd.PandaConfig(iterations=60, record_every=20, warm_start=False))
    assert tr.iteration == [0, 20, 40, 60] and len(tr.x) == 4
    assert tr.ni[-1] < tr.ni[0]
    assert tr.rho == pytest.approx([1.0, 1.2, 1.4, 1.6])


def test_panda_starts_cold_by_default():
    """The paper's method: x0 = 0 and uniform policies, so the first recorded NI gap is the
    one of the uniform pair at x = 0 (a warm start would record ~0)."""
    g = game(0)
    tr = pd.panda(g, pd.PandaConfig(iterations=2))
    uniform = torch.full((1, 3, 3), 1 / 3, dtype=DT)
    cold = float(pd.ni_gap(g, torch.zeros(1, 2, dtype=DT), uniform, uniform)[0])
    assert tr.x[0] == [0.0, 0.0] and tr.ni[0] == pytest.approx(cold, rel=1e-9) and cold > 1
    warm = pd.panda(g, pd.PandaConfig(iterations=2, warm_start=True))
    assert warm.ni[0] < 1e-9


def test_panda_counts_its_oracle_calls():
    """Two Danskin evaluations per iteration plus one per policy-iteration step of each best
    response (>= 1 each): between 4 and 4 + 2 * max_iter calls per iteration."""
    tr = pd.panda(game(0), pd.PandaConfig(iterations=20, record_every=10))
    assert tr.calls[0] >= 4 and all(b > a for a, b in zip(tr.calls, tr.calls[1:]))
    assert 4 * 21 <= tr.calls[-1] <= 40 * 21


@pytest.mark.parametrize("method", ["unrolled", "implicit"])
def test_related_baselines_start_where_panda_starts_and_stop_at_the_budget(method):
    g = game(0)
    cfg = pd.BaselineConfig(unrolled_steps=2, implicit_inner_steps=2, implicit_solver_steps=3,
                            records=4)
    run = {"unrolled": pd.unrolled_gda, "implicit": pd.implicit_aid}[method]
    tr = run(g, cfg, budget=50)
    cost = cfg.step_cost(method)
    assert tr.calls[-1] <= 50 < tr.calls[-1] + cost and tr.calls[-1] % cost == 0
    ours = pd.panda(g, pd.PandaConfig(iterations=1))
    assert tr.x[0] == ours.x[0] == [0.0, 0.0] and tr.ni[0] == pytest.approx(ours.ni[0])
    assert tr.x[-1] != tr.x[0]  # x moves: the hypergradient is not 2 lam x = 0 at x0 = 0


def test_minres_solves_singular_indefinite_systems():
    """A symmetric indefinite matrix with a null space (like the logit Hessian at a saddle,
    singular along softmax shifts): MINRES from 0 gives the min-norm solution."""
    gen = torch.Generator().manual_seed(0)
    q, _ = torch.linalg.qr(torch.randn(8, 8, generator=gen, dtype=DT))
    A = q @ torch.diag(torch.tensor([3.0, -2.0, 1.5, -1.0, 0.7, -0.5, 0.0, 0.0], dtype=DT)) @ q.T
    b = A @ torch.randn(8, generator=gen, dtype=DT)
    w = pd.minres(lambda v: A @ v, b, 8)
    torch.testing.assert_close(w, torch.linalg.pinv(A) @ b, rtol=0, atol=1e-10)


def test_aid_hypergradient_is_exact_at_the_saddle_point():
    """At the exact saddle point and with enough MINRES steps the implicit baseline's
    hypergradient (autograd Hessian-vector products) equals the analytic IFT one."""
    g = game(0)
    x = torch.tensor([[-1.0, 0.6]], dtype=DT)
    eq = pd.solve_equilibrium(g, x)
    zp, zn = eq.z[:, :9].reshape(1, 3, 3), eq.z[:, 9:].reshape(1, 3, 3)
    got = pd.aid_hypergradient(g, x, zp, zn, solver_steps=30)
    torch.testing.assert_close(got, pd.hypergradient(g, x, eq), rtol=0, atol=1e-9)


def test_ignore_response_never_moves_from_zero():
    tr = pd.ignore_response(game(0), pd.BaselineConfig(ignore_iterations=5, record_every=1))
    assert all(v == [0.0, 0.0] for v in tr.x)


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize("bad", [
    lambda: pd.GameConfig(tau=0.0).validate(),
    lambda: pd.GameConfig(tau=-1.0).validate(),
    lambda: pd.GameConfig(gamma=1.0).validate(),
    lambda: pd.GameConfig(gamma=-0.1).validate(),
    lambda: pd.GameConfig(n_actions=(0, 3)).validate(),
    lambda: pd.GameConfig(n_actions=(3, 0)).validate(),
    lambda: pd.GameConfig(n_states=0).validate(),
    lambda: pd.GameConfig(target="nearest").validate(),
    lambda: pd.GameConfig(incentive_cost=-1.0).validate(),
    lambda: pd.make_game(pd.GameConfig(gamma=1.5)),
    lambda: pd.phi(game(0), torch.zeros(3)),
    lambda: pd.best_response(game(0), torch.zeros(1, 2), torch.ones(1, 3, 3) / 3, "both"),
    lambda: pd.PandaConfig(lr=0.0).validate(),
    lambda: pd.PandaConfig(rho_growth=-0.1).validate(),
    lambda: pd.PandaConfig(inner="exact").validate(),
    lambda: pd.BaselineConfig(inner_step_size=0.0).validate(),
    lambda: pd.BaselineConfig(implicit_solver_steps=0).validate(),
    lambda: pd.unrolled_gda(game(0), budget=0),
    lambda: pd.config_for("huge"),
    lambda: pd.landscape(pd.make_game(pd.GameConfig(n_features=3), 0), 1.0),
    lambda: pd.ExperimentConfig(game=pd.GameConfig(incentive_cost=0.0)).validate(),
], ids=["tau_zero", "tau_negative", "gamma_one", "gamma_negative", "no_max_actions",
        "no_min_actions", "no_states", "bad_target", "negative_cost", "make_game_checks",
        "x_shape", "bad_player", "lr_zero", "rho_shrinking", "bad_inner", "gda_step_zero",
        "no_solver_steps", "no_budget", "bad_scale",
        "landscape_needs_2d", "oracle_needs_cost"])
def test_bad_input_raises(bad):
    with pytest.raises(ValueError):
        bad()


# ------------------------------------------------------------------ mutation tests + claims
def _light(oracle: pd.OracleConfig | None = None, methods=("panda",),
           **panda_changes) -> pd.ExperimentConfig:
    """The quick config with PANDA mutated, the baselines that the mutated claim does not
    need skipped and the references (and by default the oracle) shrunk."""
    base = pd.config_for("quick")
    return dataclasses.replace(
        base, panda=dataclasses.replace(base.panda, **panda_changes),
        baselines=pd.BaselineConfig(ignore_iterations=1, exact_iterations=1),
        oracle=oracle or pd.OracleConfig(grid=5, keep=1, rounds=1), detector_window=2,
        methods=methods)


def _claim(claims, name):
    return next(c for c in claims if c.name == name)


@pytest.mark.slow
@pytest.mark.mutation("panda", "panda_equilibrium")
def test_mutation_frozen_penalty_leaves_a_visible_ni_gap():
    """Freezing rho_k at rho0 (no growth) stops NI from being driven to 0: the penalty
    balances f's pull, panda_equilibrium fails."""
    claim = _claim(pd.claims_for(_light(rho_growth=0.0), seed=0, cache=False),
                   "panda_equilibrium")
    assert not claim.holds and claim.measured > 1e-4, claim
    assert _claim(pd.claims(0), "panda_equilibrium").holds


@pytest.mark.slow
@pytest.mark.mutation("panda", "first_order_only")
def test_mutation_hidden_warm_start_is_detected():
    """Starting the lower level at the exact saddle point of x0 (one Shapley + Newton solve
    with analytic Jacobians, under no_grad) is not first order: first_order_only fails."""
    claims = pd.claims_for(_light(warm_start=True, iterations=5), seed=0, cache=False)
    claim = _claim(claims, "first_order_only")
    assert not claim.holds and claim.measured >= 1 and "exact lower-level solves: 1" in claim.note
    assert "NOT the paper's method" in _claim(claims, "panda_optimal").note


@pytest.mark.slow
@pytest.mark.mutation("panda", "panda_optimal", "panda_equilibrium")
def test_mutation_too_few_steps_from_a_cold_start_fail():
    """The quick-scale budget is what a cold start needs: with 1000 steps (the old warm-start
    budget) both binding claims fail against the exact oracle."""
    quick = pd.config_for("quick")
    claims = pd.claims_for(_light(oracle=quick.oracle, iterations=1000, record_every=100),
                           seed=0, cache=False)
    optimal, equilibrium = _claim(claims, "panda_optimal"), _claim(claims, "panda_equilibrium")
    assert not optimal.holds and optimal.measured > 0.1, optimal
    assert not equilibrium.holds and equilibrium.measured > 1e-3, equilibrium


@pytest.mark.slow
@pytest.mark.mutation("panda", "beats_related_baselines_sampled")
def test_mutation_panda_without_its_penalty_does_not_beat_the_baselines():
    """Switching off what the headline credits -- the NI penalty that couples PANDA's x to
    the lower level (rho_k = 1e-9, no growth) -- leaves PANDA at the incentive-free optimum
    of f: beats_related_baselines_sampled fails (the baselines are untouched)."""
    cfg = dataclasses.replace(_light(methods=pd.METHODS, iterations=30, rho0=1e-9,
                                     rho_growth=0.0),
                              sampled=pd.SampledConfig(budget=2000, records=4))
    claim = _claim(pd.claims_for(cfg, seed=0, cache=False), "beats_related_baselines_sampled")
    assert claim.measured < 1.0 and not claim.holds, claim


def test_sampled_model_is_an_empirical_transition_kernel():
    sampled = importlib.import_module("icml26.panda.sampled")
    g = game(0)
    gen = torch.Generator().manual_seed(0)
    hat = sampled.sampled_game(g, 3, 2, gen)
    assert torch.allclose(hat.P.sum(-1), torch.ones_like(hat.P.sum(-1)))
    assert torch.allclose(hat.P * 6, (hat.P * 6).round())  # 6 draws per (s, a, b)
    assert torch.equal(hat.r0, g.r0) and not torch.equal(hat.P, g.P)
    big = sampled.sampled_game(g, 4000, 1, gen)
    assert (big.P - g.P).abs().max() < 0.05


def test_sampled_costs_count_a_hessian_vector_product_as_two_gradients():
    sampled = importlib.import_module("icml26.panda.sampled")
    b = pd.BaselineConfig(unrolled_steps=5, implicit_inner_steps=10, implicit_solver_steps=10)
    assert sampled.step_cost("panda", b) == 4
    assert sampled.step_cost("unrolled", b) == 15
    assert sampled.step_cost("implicit", b) == 10 + 20 + 3
    assert pd.TUNING_SEED not in set(range(16)) | set(range(100, 105))


def test_sampled_methods_spend_the_same_budget():
    sampled = importlib.import_module("icml26.panda.sampled")
    scfg = pd.SampledConfig(budget=300, records=3)
    b = pd.BaselineConfig()
    traces = sampled.run_sampled(game(0), pd.PandaConfig(), b, scfg, seed=0)
    for m, tr in traces.items():
        assert scfg.budget - sampled.step_cost(m, b) < tr.calls[-1] <= scfg.budget, m
        assert tr.x[0] == [0.0, 0.0] and all(math.isfinite(v) for v in tr.ni)


@pytest.mark.slow
@pytest.mark.mutation("panda", "first_order_only")
def test_mutation_differentiating_through_the_inner_max_is_second_order():
    """Replacing Danskin by differentiating through unrolled inner ascent steps builds a
    second-order graph: first_order_only fails (and the detector still fires on the
    unrolled baseline, so the claim is not void)."""
    claims = pd.claims_for(_light(inner="unrolled", iterations=5), seed=0, cache=False)
    claim = _claim(claims, "first_order_only")
    assert not math.isnan(claim.measured) and claim.measured > 0 and not claim.holds
    assert _claim(claims, "detector_fires_on_unrolled").holds


@pytest.mark.mutation("panda", "detector_fires_on_unrolled")
def test_mutation_unrolling_without_create_graph_blinds_the_detector(monkeypatch):
    """The realistic bug the detector check exists for: the unrolled baseline's inner steps
    taken without ``create_graph`` (silently first-order "unrolling"). The detector then
    sees nothing on it: detector_fires_on_unrolled fails and first_order_only is void (NaN),
    so a blind detector can never certify PANDA."""
    baselines = importlib.import_module("icml26.panda.baselines")
    value_grad = baselines.value_grad
    monkeypatch.setattr(baselines, "value_grad", lambda game, x, zp, zn, create_graph=False:
                        value_grad(game, x, zp, zn, False))
    claims = pd.claims_for(_light(iterations=5), seed=0, cache=False)
    fires = _claim(claims, "detector_fires_on_unrolled")
    assert not fires.holds and fires.measured == 0, fires
    assert math.isnan(_claim(claims, "first_order_only").measured)


@pytest.mark.mutation("panda", "implicit_matches_oracle")
def test_mutation_ift_sign_error_breaks_the_oracle_cross_check(monkeypatch):
    """A sign error in the implicit function theorem (dz*/dx = +J^-1 dG/dx) sends the exact
    implicit reference uphill on the response term: it no longer meets the brute-force Phi*
    (seed 0: 17.6 relative gap), implicit_matches_oracle fails."""
    baselines = importlib.import_module("icml26.panda.baselines")
    exact = baselines.hypergradient
    # 2 lam x + R  ->  2 lam x - R
    monkeypatch.setattr(baselines, "hypergradient", lambda game, x, eq:
                        4 * game.incentive_cost * x - exact(game, x, eq))
    cfg = dataclasses.replace(_light(oracle=pd.OracleConfig(grid=9, keep=1, rounds=6),
                                     iterations=5),
                              baselines=pd.BaselineConfig(ignore_iterations=1))
    claim = _claim(pd.claims_for(cfg, seed=0, cache=False), "implicit_matches_oracle")
    assert not claim.holds and claim.measured > 0.1, claim


@pytest.mark.mutation("panda", "landscape_exact")
def test_mutation_myopic_lower_level_solver_fails_the_certificate(monkeypatch):
    """The lower-level solver behind Phi and Phi* with the continuation value dropped (each
    state's stage game solved with gamma = 0): its Newton residual is tiny (it solves the
    wrong equations exactly), but the NI certificate from best responses in the true game
    catches it (seed 0: max NI 1.2), landscape_exact fails."""
    equilibrium = importlib.import_module("icml26.panda.equilibrium")
    solve = equilibrium.solve_equilibrium
    monkeypatch.setattr(equilibrium, "solve_equilibrium", lambda game, x, z0=None, **kw:
                        solve(dataclasses.replace(game, gamma=0.0), x, z0, **kw))
    claim = _claim(pd.claims_for(_light(iterations=5), seed=0, cache=False), "landscape_exact")
    assert not claim.holds and claim.measured > 1e-3, claim


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without a CUDA GPU")
def test_cuda_without_a_gpu_fails_fast_naming_the_flag(monkeypatch):
    """``device="cuda"`` on a CPU-only machine: one clear ValueError naming --device, before
    any game is drawn or solved."""
    def never(*a, **k):
        raise AssertionError("work started before the device was checked")

    claims_mod = importlib.import_module("icml26.panda.claims")
    monkeypatch.setattr(claims_mod, "experiment", never)
    monkeypatch.setattr(claims_mod, "run_experiment", never)
    monkeypatch.setattr(importlib.import_module("icml26.panda.experiments"), "make_game", never)
    for call in (lambda: pd.claims(0, device="cuda"),
                 lambda: pd.claims_for(pd.config_for("quick"), 0, device="cuda"),
                 lambda: pd.run_experiment(pd.config_for("quick"), 0, device="cuda"),
                 lambda: pd.experiment(pd.config_for("quick"), 0, device="cuda")):
        with pytest.raises(ValueError, match="--device"):
            call()


def test_experiment_runs_on_the_device_it_is_given():
    """``device="cpu"`` passes through to the game (a tiny run; every method follows the
    game's tensors, so on CUDA the same code runs there)."""
    cfg = _light(iterations=3)
    claims = pd.claims_for(cfg, seed=0, cache=False, device="cpu")
    assert [c.name for c in claims] == list(pd.CLAIM_SPECS)
    assert pd.SPECS is pd.CLAIM_SPECS


def test_failed_computation_gives_nan_claims(monkeypatch):
    def boom(*a, **k):
        raise RuntimeError("solver diverged")

    monkeypatch.setattr(importlib.import_module("icml26.panda.claims"), "run_experiment", boom)
    claims = pd.claims_for(pd.config_for("quick"), seed=0, cache=False)
    assert claims and all(math.isnan(c.measured) and not c.holds for c in claims)
    assert all("solver diverged" in c.note for c in claims)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_expected_claims_hold(seed):
    claims = pd.claims(seed)
    names = {c.name for c in claims}
    binding = {"panda_optimal", "panda_equilibrium", "first_order_only"}
    assert binding | {"beats_related_baselines_sampled"} <= names
    binding = [c for c in claims if c.name in binding]
    assert all(c.expected for c in binding)
    broken = [c for c in claims if c.expected and not c.holds]
    assert not broken, broken


@pytest.mark.slow
def test_figure_data_from_the_cached_experiment():
    cfg = pd.config_for("quick")
    exp = pd.experiment(cfg, 0)
    conv = pd.figure_convergence_data(exp)
    assert {r["method"] for r in conv["rows"]} == set(pd.METHODS)
    assert all(math.isfinite(r["phi"]) and r["phi"] >= conv["phi_star"] - 1e-12
               for r in conv["rows"])
    ni = pd.figure_ni_data(exp)
    final_rho = cfg.panda.rho0 + cfg.panda.rho_growth * cfg.panda.iterations
    assert all(r["ni"] > 0 for r in ni["rows"])
    assert ni["rows"][-1]["rho"] == pytest.approx(final_rho)
    # equal budgets: every related baseline stops within one outer step of PANDA's calls
    for name in pd.RELATED:
        last = ni[name][-1]["calls"]
        assert exp["budget"] - cfg.baselines.step_cost(name) < last <= exp["budget"]
    land = pd.figure_landscape_data(exp)
    phi = torch.tensor(land["phi"])
    assert phi.shape == (cfg.oracle.grid,) * 2 and torch.isfinite(phi).all()
    assert float(phi.min()) >= exp["phi_star"] - 1e-12
    assert set(land["paths"]) == set(pd.METHODS)
    sampled = pd.figure_sampled_data([exp])
    assert {r["method"] for r in sampled["summary"]} == {"panda", *pd.RELATED}
    assert all(r["gap"] >= -1e-12 for r in sampled["rows"])
