"""Adaptive multi-round allocation: greedy, the truncated-PGF DP, simulator, claims."""

from __future__ import annotations

import dataclasses
import importlib

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26 import recruitment as rec

PMF = rec.validate_pmf(rec.SPEC_PMF)


def pmfs(max_k: int = 6):
    """Hypothesis strategy: a capacity pmf over 0..K with K in [1, max_k]."""
    return st.lists(st.floats(0.01, 1.0), min_size=2, max_size=max_k + 1).map(
        lambda w: torch.tensor(w, dtype=torch.float64) / sum(w))


# ------------------------------------------------------------------ one round
def test_marginals_are_survival_probabilities():
    s = rec.marginals(PMF, 8)
    torch.testing.assert_close(s[:3], torch.tensor([0.75, 0.5, 0.3], dtype=torch.float64))
    assert (s[6:] == 0).all() and (s[:-1] >= s[1:]).all()


def test_greedy_equals_brute_force_on_random_instances():
    data = rec.figure_greedy_data(seed=3, instances=40)
    assert data["max_gap"] <= 1e-12


def test_greedy_gives_the_coupon_to_the_highest_marginal():
    marg = torch.tensor([[0.9, 0.1, 0.0], [0.5, 0.4, 0.3]], dtype=torch.float64)
    assert rec.greedy_allocation(marg, 1).tolist() == [1, 0]
    assert rec.greedy_allocation(marg, 3).tolist() == [1, 2]
    assert rec.greedy_allocation(marg, 10).tolist() == [2, 3]  # zero marginals not bought


@settings(max_examples=50, deadline=None)
@given(st.lists(pmfs(), min_size=1, max_size=4), st.integers(0, 12))
def test_greedy_spends_exactly_the_budget_when_marginals_are_positive(ps, budget):
    k = max(p.numel() for p in ps) - 1
    marg = torch.stack([rec.marginals(p, k) for p in ps])
    positive = int((marg > 0).sum())
    assert int(rec.greedy_allocation(marg, budget).sum()) == min(budget, positive)


# ------------------------------------------------------------------ truncated PGFs and the DP
@settings(max_examples=50, deadline=None)
@given(pmfs(), st.integers(1, 12), st.integers(0, 12))
def test_every_truncated_pgf_sums_to_one(pmf, budget, level):
    _, dist = rec.recruit_tables(pmf, budget)
    torch.testing.assert_close(dist.sum(-1), torch.ones(budget + 1, budget + 1,
                                                        dtype=torch.float64))
    trunc = rec.truncate_pgf(dist, min(level, budget))
    torch.testing.assert_close(trunc.sum(-1), torch.ones_like(trunc.sum(-1)))


def test_dp_matches_the_plain_python_dp():
    for pmf, budget, rounds, disc in [(rec.SPEC_PMF, 8, 3, 1.0), ((0.5, 0.3, 0.2), 6, 4, 0.9)]:
        ref = rec.surrogate_dp_reference(pmf, budget, rounds, disc)
        dp = rec.surrogate_dp(pmf, budget, rounds, disc)
        for t in range(rounds):
            for b in range(budget + 1):
                for m in range(1, budget + 1):
                    assert abs(float(dp.value[t, b, m]) - ref[t][b][m]) <= 1e-12


def test_dp_reproduces_the_spec_prototype():
    dp = rec.surrogate_dp(rec.SPEC_PMF, 20, 4)
    assert abs(dp.v(20, 3) - 12.87) < 0.005  # spec: DP value 12.87 at B=20, T=4, m0=3
    assert int(dp.spend[0, 20, 3]) == 6  # spec: optimal first-round spend 6 of 20


def test_continuation_lumps_the_tail_into_the_truncation_level():
    v = torch.arange(16, dtype=torch.float64).reshape(4, 4)
    w = rec.continuation_values(v, "lump")
    assert w[1].tolist() == [4.0, 5.0, 5.0, 5.0]  # b' = 1: r >= 1 is worth V(1, 1)
    assert rec.continuation_values(v, "drop")[1].tolist() == [4.0, 5.0, 0.0, 0.0]


def test_lumped_continuation_equals_an_explicitly_truncated_pgf():
    dp = rec.surrogate_dp(rec.SPEC_PMF, 10, 2)
    dist = dp.recruit_pmf[3, 4]  # m = 3, s = 4
    level = 10 - 4
    trunc = rec.truncate_pgf(dist, level)
    v_next = dp.value[1]
    explicit = float((trunc * v_next[level, : level + 1]).sum())
    via_w = float(dist @ rec.continuation_values(v_next)[level])
    assert abs(explicit - via_w) <= 1e-12


@settings(max_examples=30, deadline=None)
@given(pmfs(), st.integers(1, 4), st.floats(0.5, 1.0))
def test_value_is_non_decreasing_in_budget(pmf, rounds, discount):
    dp = rec.surrogate_dp(pmf, 12, rounds, discount)
    for m in range(1, 4):
        v = torch.stack([dp.value[0, b, min(m, b)] for b in range(12 + 1)])
        assert (v[1:] - v[:-1] >= -1e-12).all()


def test_empty_frontier_is_absorbing_and_gets_no_coupons():
    dp = rec.surrogate_dp(rec.SPEC_PMF, 10, 3)
    assert (dp.value[:, :, 0] == 0).all() and (dp.spend[:, :, 0] == 0).all()


def test_no_saving_pitfall_spends_everything_now():
    dp = rec.surrogate_dp(rec.SPEC_PMF, 20, 4, allow_save=False)
    assert int(dp.spend[0, 20, 3]) == 20
    assert abs(dp.v(20, 3) - 5.61) < 1e-9  # = 3 * E[C]: the spec's spend-all 5.65 (MC)


def test_exact_policy_evaluation_of_the_optimal_policy_is_its_value():
    dp = rec.surrogate_dp(rec.SPEC_PMF, 15, 3)
    torch.testing.assert_close(rec.evaluate_policy(dp.spend, PMF), dp.value)


@pytest.mark.interpreter
def test_dp_end_to_end_through_the_triton_kernel():
    torch_dp = rec.surrogate_dp(rec.SPEC_PMF, 6, 2, impl="torch")
    triton_dp = rec.surrogate_dp(rec.SPEC_PMF, 6, 2, impl="triton")
    torch.testing.assert_close(triton_dp.value, torch_dp.value, rtol=0, atol=1e-12)
    assert torch.equal(triton_dp.spend, torch_dp.spend)


# ------------------------------------------------------------------ misspecification (F4)
SMALL_F4 = rec.RecruitmentConfig(budget=10, rounds=3, misspec_eps=(0.0, 0.2, 0.4),
                                 misspec_toward=(0, 2))


def test_no_misspecification_no_loss_and_no_bound():
    """eps = 0 plans with the true pmf: the same policy, so loss and both terms are 0."""
    rows = rec.figure_misspec_data(SMALL_F4)["rows"]
    for r in rows:
        if r["eps"] == 0:
            assert r["loss"] == 0 and r["frontier_term"] == 0 and r["transition_term"] == 0


def test_state_occupancy_is_a_distribution_on_reachable_states():
    dp = rec.surrogate_dp(rec.SPEC_PMF, 12, 4)
    occ = rec.state_occupancy(dp.spend, dp.recruit_pmf, 12, 3)
    torch.testing.assert_close(occ.sum((1, 2)), torch.ones(4, dtype=torch.float64))
    b, m = torch.meshgrid(torch.arange(13), torch.arange(13), indexing="ij")
    assert (occ[:, m > b] == 0).all()  # a frontier beyond the budget is capped


def test_path_errors_telescope_to_the_planners_value_gap():
    """Along the planner's own path the simulation lemma is an identity:
    Vhat - V_true(pi_hat) = -(frontier + transition) (errors are true minus model)."""
    true = PMF
    model = 0.7 * true + 0.3 * rec.misspec_alt(true, 0)
    best = rec.surrogate_dp(true, 12, 4)
    plan = rec.surrogate_dp(model, 12, 4)
    achieved = rec.evaluate_policy(plan.spend, true)
    occ = rec.state_occupancy(plan.spend, best.recruit_pmf, 12, 3)
    frontier, transition = rec.path_errors(plan.spend, occ, best, plan, 1.0)
    gap = float(plan.value[0, 12, 3] - achieved[0, 12, 3])
    assert abs(gap + frontier + transition) <= 1e-12


def test_misspecification_changes_decisions_and_stays_within_the_bound():
    rows = rec.figure_misspec_data(SMALL_F4)["rows"]
    hurt = [r for r in rows if r["eps"] > 0]
    assert all(r["loss"] > 0 for r in hurt)
    assert all(r["loss"] <= r["bound"] for r in hurt)
    assert all(r["bound"] <= r["worst_case_bound"] for r in hurt)


def test_a_sweep_that_changes_no_decision_fails_misspec_within_bound():
    """The old design's flaw: a misspecification too small to move the policy gives loss 0 =
    bound 0, which proves nothing; the claim must then fail, not hold."""
    from icml26.claims import ClaimTable

    cfg = dataclasses.replace(SMALL_F4, misspec_eps=(0.0, 1e-4, 2e-4))
    table = ClaimTable(rec.PAPER, rec.CLAIM_SPECS)
    rec.misspec_claims(table, cfg)
    got = by_name(table.claims)
    assert got["misspec_within_bound"].holds is False
    assert "degenerate" in got["misspec_within_bound"].note


# ------------------------------------------------------------------ simulator
def test_common_random_numbers_make_the_simulator_deterministic():
    cfg = rec.RecruitmentConfig(mc_reps=200, budgets=(10,))
    a = rec.figure_value_vs_budget_data(cfg, seed=4)
    b = rec.figure_value_vs_budget_data(cfg, seed=4)
    assert a == b


def test_simulated_spend_all_matches_its_exact_value():
    g = torch.Generator().manual_seed(0)
    pop = rec.draw_population(PMF, 0.0, 20000, 4, 20, g)
    mean, se = rec.mean_se(rec.simulate("spend_all", pop, 20, 3, 4))
    assert abs(mean - 5.61) <= 4 * se  # 3 * E[C]


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize("call, match", [
    (lambda: rec.validate_pmf([0.5, -0.1, 0.6]), "non-negative"),
    (lambda: rec.validate_pmf([0.5, 0.4]), "sum to 1"),
    (lambda: rec.surrogate_dp(rec.SPEC_PMF, -1, 2), "budget must be an integer >= 0"),
    (lambda: rec.surrogate_dp(rec.SPEC_PMF, 5, 0), "rounds must be an integer >= 1"),
    (lambda: rec.RecruitmentConfig(m0=-1).validate(), "m0 must be an integer >= 0"),
    (lambda: rec.capacity_pmf("poisson", 7.0, 6), "mean capacity"),
    (lambda: rec.capacity_pmf("zipf"), "family must be one of"),
    (lambda: rec.claims(scale="huge"), "scale must be one of"),
    (lambda: rec.RecruitmentConfig(misspec_toward=(7,)).validate(), "misspec_toward"),
    (lambda: rec.RecruitmentConfig(misspec_terms=("both",)).validate(), "misspec_terms"),
], ids=["negative_pmf", "pmf_sum", "budget", "rounds", "frontier", "mean", "family", "scale",
        "misspec_toward", "misspec_terms"])
def test_bad_input_raises_value_error(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize("family", ["poisson", "binomial", "geometric"])
def test_capacity_families_hit_the_requested_mean(family):
    p = rec.capacity_pmf(family, 2.2, 8)
    assert abs(float((p * torch.arange(9)).sum()) - 2.2) < 1e-9


# ------------------------------------------------------------------ claims and mutations
def by_name(claims):
    return {c.name: c for c in claims}


@pytest.mark.slow
def test_claims_are_deterministic_per_seed():
    assert rec.claims(seed=2) == rec.claims(seed=2)


@pytest.mark.slow
@pytest.mark.mutation("recruitment", "dp_matches_mc")
def test_mutation_dropping_truncated_mass_breaks_dp_matches_mc():
    """The spec's pitfall: discard the PGF mass beyond b - s instead of lumping it."""
    cfg = dataclasses.replace(rec.config_for("quick"), tail="drop")
    assert by_name(rec.claims_for(cfg, seed=0))["dp_matches_mc"].holds is False


@pytest.mark.slow
@pytest.mark.mutation("recruitment", "dp_vs_baselines", "dp_beats_fixed3", "dp_beats_spend_all",
                      "dp_saves_budget")
def test_mutation_removing_the_save_option_breaks_dp_vs_baselines():
    """The spec's pitfall: the DP may not save coupons (every coupon left goes out now). It
    then IS spend-all-now (ratio 1.0, first spend B) and loses to the other baselines: every
    claim of the planner's comparison fails (one claims_for run, ~8 s)."""
    cfg = dataclasses.replace(rec.config_for("quick"), allow_save=False)
    got = by_name(rec.claims_for(cfg, seed=0))
    for name in ("dp_vs_baselines", "dp_beats_fixed3", "dp_beats_spend_all", "dp_saves_budget"):
        assert got[name].holds is False, (name, got[name].measured)
    assert got["dp_beats_spend_all"].measured == pytest.approx(1.0)
    assert got["dp_saves_budget"].measured == got["dp_saves_budget"].threshold


def quick_misspec_claims(**changes):
    """F4's claims alone (exact, seed-independent, ~0.4 s) for the quick config + changes."""
    from icml26.claims import ClaimTable

    table = ClaimTable(rec.PAPER, rec.CLAIM_SPECS)
    rec.misspec_claims(table, dataclasses.replace(rec.config_for("quick"), **changes))
    return by_name(table.claims)


@pytest.mark.mutation("recruitment", "misspec_within_bound")
@pytest.mark.parametrize("kept", ["frontier", "transition"])
def test_mutation_dropping_a_bound_term_breaks_misspec_within_bound(kept):
    """Each term of the bound is needed: without either, some loss exceeds what is left."""
    assert quick_misspec_claims()["misspec_within_bound"].holds
    assert quick_misspec_claims(misspec_terms=(kept,))["misspec_within_bound"].holds is False


@pytest.mark.mutation("recruitment", "bound_monotone")
def test_mutation_bound_without_its_transition_term_is_not_monotone():
    """A bound missing its population-level transition term (frontier term only) is no
    longer non-decreasing in eps (smallest step -0.0065 at quick scale): bound_monotone
    must FAIL. ~1 s."""
    assert quick_misspec_claims()["bound_monotone"].holds
    got = quick_misspec_claims(misspec_terms=("frontier",))["bound_monotone"]
    assert got.holds is False and got.measured < 0


@pytest.mark.mutation("recruitment", "greedy_exact")
def test_mutation_greedy_on_the_first_marginal_only_is_not_exact(monkeypatch):
    """Mutation: greedy ranks every coupon of a person by that person's FIRST marginal
    survival probability S_i(1) (not by the marginal of that coupon), so it fills one person
    before the next. F1's brute force then beats it: greedy_exact must FAIL. ~1 s."""
    from icml26.claims import ClaimTable

    experiments = importlib.import_module("icml26.recruitment.experiments")
    greedy = experiments.greedy_allocation

    def first_marginal_greedy(marg, budget):
        return greedy(marg[..., :1].expand_as(marg) * (marg > 0), budget)

    def greedy_claim():
        table = ClaimTable(rec.PAPER, rec.CLAIM_SPECS)
        return table.add("greedy_exact", rec.figure_greedy_data(0)["max_gap"])

    assert greedy_claim().holds
    monkeypatch.setattr(experiments, "greedy_allocation", first_marginal_greedy)
    got = greedy_claim()
    assert got.holds is False and got.measured > 1e-3


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU error")
def test_cuda_without_a_gpu_fails_fast_naming_the_flag(monkeypatch):
    def no_work(*args, **kwargs):
        raise AssertionError("work started before the device was checked")

    claims_module = importlib.import_module("icml26.recruitment.claims")
    monkeypatch.setattr(claims_module, "claims_for", no_work)
    with pytest.raises(ValueError, match="--device"):
        rec.claims(0, device="cuda")
    monkeypatch.undo()
    monkeypatch.setattr(claims_module, "figure_value_vs_budget_data", no_work)
    with pytest.raises(ValueError, match="--device"):
        rec.claims_for(rec.config_for("quick"), 0, device="cuda")
