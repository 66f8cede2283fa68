"""Multi-level strategic classification (promotion): model, solver, pitfalls and claims."""

from __future__ import annotations

import importlib
import math
from dataclasses import replace

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from icml26 import promotion as P

SMALL = dict(nx=41, na=21)  # grids small enough for property tests


def by_name(claims):
    return {c.name: c for c in claims}


# --------------------------------------------------------------------------- thresholds
def test_steady_state_thresholds_and_levels_for_target():
    mu = P.steady_state_thresholds(8, 0.8, 0.1)
    torch.testing.assert_close(mu, 0.5 * torch.arange(1, 8, dtype=torch.float64))
    # L = ceil((1-gamma) M / delta) + 1 in our convention; 0.2 * 1 / 0.1 rounds above 2
    assert [P.levels_for_target(m, 0.8, 0.1) for m in (1, 2, 5, 10)] == [3, 5, 11, 21]
    for m in (1, 2, 5, 10):
        top = P.steady_state_thresholds(P.levels_for_target(m, 0.8, 0.1), 0.8, 0.1)[-1]
        assert float(top) >= m - 1e-12


def test_steady_state_is_a_fixed_point_of_the_dynamics():
    """After promotion into l+1 with no effort, x' = gamma x + delta l has fixed point mu_l."""
    gamma, delta = 0.8, 0.1
    mu = P.steady_state_thresholds(6, gamma, delta)
    level = torch.arange(1, 6, dtype=torch.float64)
    torch.testing.assert_close(gamma * mu + delta * level, mu, atol=1e-12, rtol=0)


@given(design=st.sampled_from(["steady", "linear"]), levels=st.integers(2, 20),
       gamma=st.floats(0.0, 0.99), delta=st.floats(0.01, 0.5), slope=st.floats(0.5, 3.0))
def test_thresholds_increasing(design, levels, gamma, delta, slope):
    mu = P.PromotionConfig(levels=levels, gamma=gamma, delta=delta, design=design,
                           slope=slope).thresholds()
    assert mu.numel() == levels - 1 and (mu.diff() > 0).all() and (mu >= 0).all()


def test_index_convention_shift_moves_the_ladder_down_one_level():
    ours = P.PromotionConfig().thresholds()
    other = P.PromotionConfig(index_shift=1).thresholds()
    torch.testing.assert_close(other, ours - ours[0])
    assert float(other[0]) == 0.0


def test_grid_holds_thresholds_and_reaches_past_the_top():
    cfg = P.PromotionConfig()
    lad = P.make_ladder([cfg])
    nodes = lad.nodes[0]
    for m in cfg.thresholds():
        assert bool((nodes == m).any()), f"threshold {float(m)} is not a grid node"
    assert float(nodes[-1]) >= float(cfg.thresholds()[-1]) + cfg.delta / (1 - cfg.gamma)
    assert lad.nx == cfg.nx + cfg.levels - 1 and bool((nodes.diff() >= 0).all())


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("kwargs, message", [
    ({"beta": 1.0}, "beta must be in"),
    ({"gamma": 1.0}, "gamma must be in"),
    ({"gamma": -0.1}, "gamma must be in"),
    ({"levels": 1}, "levels must be an integer >= 2"),
    ({"c_minus": -0.5}, "costs must be > 0"),
    ({"c_plus": 0.0}, "costs must be > 0"),
    ({"c_minus": 1.0}, "c_minus < c_plus"),
    ({"delta": 0.0}, "leg-up delta > 0"),
    ({"delta": -0.1}, "delta must be >= 0"),
    ({"design": "custom", "custom_thresholds": (1.0, 0.5)}, "L-1 = 7"),
    ({"levels": 3, "design": "custom", "custom_thresholds": (1.0, 0.5)}, "strictly increasing"),
    ({"design": "zigzag"}, "design must be one of"),
    ({"x0": -1.0}, "x0 must be >= 0"),
    ({"nx": 2}, "nx must be an integer >= 3"),
], ids=lambda v: v if isinstance(v, str) else None)
def test_bad_config_raises(kwargs, message):
    with pytest.raises(ValueError, match=message):
        P.PromotionConfig(**kwargs).validate()


def test_bad_arguments_raise():
    with pytest.raises(ValueError, match="scale must be one of"):
        P.claims(0, scale="huge")
    with pytest.raises(ValueError, match="parts must be among"):
        P.claims_for(P.StudyConfig(), 0, parts=("everything",))
    with pytest.raises(ValueError, match="a batch needs one"):
        P.make_ladder([P.PromotionConfig(levels=3), P.PromotionConfig(levels=4)])
    with pytest.raises(ValueError, match="target skill must be > 0"):
        P.levels_for_target(0.0, 0.8, 0.1)
    with pytest.raises(ValueError, match="need 0 < bg_max < beta < 1"):
        P.PhaseConfig(beta=0.9).validate()


# --------------------------------------------------------------------------- solver
configs = st.builds(
    P.PromotionConfig,
    levels=st.integers(2, 5),
    beta=st.floats(0.0, 0.95),
    gamma=st.floats(0.0, 0.95),
    delta=st.floats(0.02, 0.3),
    c_minus=st.floats(0.05, 0.95),
    reward_per_level=st.floats(0.05, 1.5),
    design=st.sampled_from(["steady", "linear"]),
    slope=st.floats(0.5, 3.0),
    **{k: st.just(v) for k, v in SMALL.items()},
)
PROPERTY = settings(max_examples=12, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(cfg=configs)
def test_value_iteration_converged_and_monotone_in_skill(cfg):
    sol = P.solve(P.make_ladder([cfg]))
    assert float(P.residual(sol).max()) <= 1e-8
    # V is non-decreasing in skill on every level (more skill can mimic less)
    assert float(sol.value.diff(dim=-1).min()) >= -1e-9


@PROPERTY
@given(cfg=configs)
def test_policy_never_relegates_an_agent_that_can_afford_to_stay(cfg):
    """With x >= mu_{l-1}, staying costs nothing; the optimum never falls a level."""
    lad = P.make_ladder([cfg])
    sol = P.solve(lad)
    level = torch.arange(lad.levels).reshape(1, -1, 1)
    act = P.decode(lad, sol.policy, lad.grid, level)
    stay_threshold = lad.mu[:, :-1].reshape(1, -1, 1)  # mu_{l-1}, -inf at level 1
    affords = lad.grid >= stay_threshold - cfg.tol
    assert bool((act.level_next[affords] >= level.expand_as(affords)[affords]).all())


def test_policy_iteration_matches_value_iteration():
    cfg = P.PromotionConfig(levels=3, beta=0.8, **SMALL)
    lad = P.make_ladder([cfg])
    pi, vi = P.solve(lad, method="pi"), P.solve(lad, method="vi", max_backups=500)
    assert pi.backups < 15 < vi.backups
    torch.testing.assert_close(pi.value, vi.value, atol=1e-7, rtol=0)


def test_solver_reports_non_convergence():
    lad = P.make_ladder([P.PromotionConfig(levels=3, beta=0.95, **SMALL)])
    with pytest.raises(RuntimeError, match="no convergence"):
        P.solve(lad, method="vi", max_backups=5)


def test_batched_solve_equals_one_at_a_time():
    cfgs = [P.PromotionConfig(levels=3, gamma=g, c_minus=c, **SMALL)
            for g, c in ((0.5, 0.2), (0.9, 0.7))]
    batched = P.solve(P.make_ladder(cfgs)).value
    alone = torch.cat([P.solve(P.make_ladder([c])).value for c in cfgs])
    torch.testing.assert_close(batched, alone, atol=1e-9, rtol=0)


def test_spec_prototype_climbs_honestly_without_maintenance():
    """The spec's L = 8 run: one level per period, ~3.5 units of improvement, no gaming."""
    tr = P.simulate(P.solve(P.make_ladder([P.PromotionConfig()])))
    assert tr["level"][0, :9].tolist() == [1, 2, 3, 4, 5, 6, 7, 8, 8]
    assert abs(float(tr["a_plus"].sum()) - 3.5) <= 1e-9
    assert float(tr["a_minus"].sum()) == 0.0


# --------------------------------------------------------------------------- pitfalls
SMALL_PHASE = P.PhaseConfig(n_ratio=10, n_discount=10, nx=61, na=21)


def phase_claims(phase: P.PhaseConfig, seed: int = 0):
    study = replace(P.StudyConfig(), phase=phase)
    return by_name(P.claims_for(study, seed, parts=("phase",)))


def trajectory_claims(base: P.PromotionConfig, seed: int = 0):
    study = replace(P.StudyConfig(), base=base)
    return by_name(P.claims_for(study, seed, parts=("trajectories",)))


@pytest.mark.mutation("promotion", "steady_state_honest", "phase_boundary")
def test_mutation_without_exact_gaps_fakes_gaming():
    """The spec's pitfall: grid-only honest actions miss thresholds by part of a step and
    patch the rest with gaming, so ``steady_state_honest`` fails (and F1 mislabels cells)."""
    base = P.StudyConfig().base
    assert trajectory_claims(base)["steady_state_honest"].holds
    bad = trajectory_claims(replace(base, exact_gaps=False))["steady_state_honest"]
    assert not bad.holds and bad.measured > 0.01 / 1e-6  # > 0.01 units of gaming
    assert phase_claims(SMALL_PHASE)["phase_boundary"].holds
    assert not phase_claims(replace(SMALL_PHASE, exact_gaps=False))["phase_boundary"].holds


@pytest.mark.mutation("promotion", "phase_boundary", "myopic_games")
def test_mutation_tiny_reward_turns_the_phase_diagram_into_no_action():
    """The spec's pitfall: a promotion reward too small to act on. Nearly every cell then
    does nothing: the phase line is gone and the myopic cells no longer game (0.05)."""
    good = phase_claims(SMALL_PHASE)
    assert good["phase_boundary"].holds and good["myopic_games"].holds
    bad = phase_claims(replace(SMALL_PHASE, reward=0.02))
    assert not bad["phase_boundary"].holds and bad["phase_boundary"].measured < 0.5
    assert not bad["myopic_games"].holds and bad["myopic_games"].measured < 0.5


@pytest.mark.mutation("promotion", "phase_boundary")
def test_mutation_unconverged_value_iteration_misplaces_the_boundary():
    """Stopping value iteration after one backup plans over two periods only."""
    bad = phase_claims(replace(SMALL_PHASE, backups=1))["phase_boundary"]
    assert not bad.holds


@pytest.mark.mutation("promotion", "steady_state_honest", "steady_state_no_maintenance")
def test_mutation_other_index_convention_breaks_the_steady_state():
    """Reading mu_l = delta (l-1)/(1-gamma) in our convention leaves slack below every
    stay threshold: the agent games and its skill sits below the top threshold."""
    c = trajectory_claims(replace(P.StudyConfig().base, index_shift=1))
    assert not c["steady_state_honest"].holds
    assert not c["steady_state_no_maintenance"].holds


@pytest.mark.mutation("promotion", "steady_state_honest")
def test_mutation_grid_short_of_the_top_threshold_clamps_v():
    """A uniform grid that stops below mu_{L-1} clamps V there (the grid-range pitfall); with
    the thresholds as grid nodes (the default) the same short range is harmless."""
    base = P.StudyConfig().base
    bad = trajectory_claims(replace(base, threshold_nodes=False, grid_margin=0.8))
    assert not bad["steady_state_honest"].holds
    assert trajectory_claims(replace(base, grid_margin=0.8))["steady_state_honest"].holds


def test_mutation_blurred_kink_without_threshold_nodes():
    """Our own finding: on the spec's 401-node uniform grid mu_7 = 3.5 falls between nodes;
    interpolation blurs V's kink there and the last step undershoots by a grid step."""
    cfg = P.PromotionConfig(nx=401 - 7, threshold_nodes=False)
    tr = P.simulate(P.solve(P.make_ladder([cfg])))
    assert float(tr["a_minus"].sum()) > 1e-3
    tr = P.simulate(P.solve(P.make_ladder([replace(cfg, threshold_nodes=True)])))
    assert float(tr["a_minus"].sum()) == 0.0


def test_mutation_zero_tolerance_relegates_an_agent_sitting_on_its_threshold():
    """Ties: with gamma = 0.9, delta = 0.1 the steady state gamma mu_3 + 3 delta rounds one
    ulp below mu_3 = 3. Without the 1e-9 tolerance, doing nothing relegates the agent.
    (The optimising agent then pays ~1e-16 to stay, so the claims do not move.)"""
    mu = P.steady_state_thresholds(5, 0.9, 0.1)
    x = 0.9 * mu[2] + 0.1 * 3
    assert float(x) < float(mu[2])
    nothing = torch.zeros(1, dtype=torch.long)
    level = torch.tensor([3])  # 0-based 3 = level 4, whose stay threshold is mu_3
    results = {}
    for tol in (0.0, 1e-9):
        lad = P.make_ladder([P.PromotionConfig(levels=5, gamma=0.9, tol=tol, **SMALL)])
        results[tol] = int(P.decode(lad, nothing, x.reshape(1), level).level_next)
    assert results == {0.0: 2, 1e-9: 3}


@pytest.mark.mutation("promotion", "retention_helps")
def test_mutation_gaming_during_the_climb_lowers_retention_helps():
    """Issue 22: the claim reads the paper's "highest level reached honestly" as the highest
    level before any gaming. Dropping the exact-gap actions makes the agent patch every
    near-miss with gaming during the climb: the measurement drops far below its threshold,
    while the final level held on true skill (the old reading) does not move at all."""
    study = P.StudyConfig()
    good = by_name(P.claims_for(study, 0, parts=("sensitivity",)))["retention_helps"]
    bad_study = replace(study, base=replace(study.base, exact_gaps=False))
    bad = by_name(P.claims_for(bad_study, 0, parts=("sensitivity",)))["retention_helps"]
    assert not bad.holds and bad.measured < good.measured - 0.3
    held = [P.spearman(f["gamma"]["gamma"], f["gamma"]["held_level"])
            for f in (P.cached_figure("sensitivity", s, 0) for s in (study, bad_study))]
    assert held[0] == held[1] >= 0.9  # blind: the old claim passed with or without gaming


@pytest.mark.mutation("promotion", "steady_state_climbs", "steady_state_no_maintenance",
                      "no_legup_maintenance")
def test_mutation_tiny_level_reward_never_climbs():
    """The same pitfall on F2: with R(l) = 0.01 (l - 1) the agent never tries, so it never
    reaches the top (arrival inf) and neither top-of-ladder claim can be measured: all three
    FAIL (inf). ~3 s."""
    base = P.StudyConfig().base
    bad = trajectory_claims(replace(base, reward_per_level=0.01))
    for name in ("steady_state_climbs", "steady_state_no_maintenance", "no_legup_maintenance"):
        assert not bad[name].holds and bad[name].measured == math.inf, name


@pytest.mark.mutation("promotion", "no_legup_maintenance")
def test_mutation_leg_up_left_on_in_the_no_legup_design(tmp_path, monkeypatch):
    """Mutation: design (c) keeps the leg-up (delta not set to 0), so holding the top costs
    nothing and the measured maintenance is far from (1-gamma) mu_{L-1}: the claim must
    FAIL. Own cache (the design function is patched, the key is not). ~3 s."""
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path))
    figures = importlib.import_module("icml26.promotion.figures")
    designs = figures.trajectory_designs

    def leg_up_kept(study, x0=None):
        out = designs(study, x0)
        return {**out, "no_legup": replace(out["no_legup"], delta=study.base.delta)}

    monkeypatch.setattr(figures, "trajectory_designs", leg_up_kept)
    bad = trajectory_claims(P.StudyConfig().base)["no_legup_maintenance"]
    assert not bad.holds and bad.measured > 0.5, bad.note


def _swapped_designs(monkeypatch, tmp_path, slot: str, slope: float):
    """F2 with the ladder in ``slot`` replaced by the equal-step ladder ``slope`` x the
    steady-state one (own cache: the design function is patched, the cache key is not)."""
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path))
    figures = importlib.import_module("icml26.promotion.figures")
    designs = figures.trajectory_designs

    def swapped(study, x0=None):
        out = designs(study, x0)
        return {**out, slot: replace(out["steady"], design="linear", slope=slope)}

    monkeypatch.setattr(figures, "trajectory_designs", swapped)
    return trajectory_claims(P.StudyConfig().base)


@pytest.mark.mutation("promotion", "steady_state_honest")
def test_mutation_naive_shallow_ladder_in_place_of_the_designed_one_games(tmp_path, monkeypatch):
    """Issue 46: the headline credits the design. With the naive ladder (equal steps half as
    steep) in place of the steady-state one, the leg-up carries skill past the thresholds and
    the agent games the one-shot gaps: the headline FAILS by gaming. ~3 s."""
    bad = _swapped_designs(monkeypatch, tmp_path, "steady", 0.5)["steady_state_honest"]
    assert not bad.holds and bad.measured >= 0.01 / 1e-6, bad.note


@pytest.mark.mutation("promotion", "steady_state_honest")
def test_mutation_steeper_ladder_in_place_of_the_designed_one_needs_maintenance(tmp_path,
                                                                                monkeypatch):
    """Issue 46: with the 2x steeper ladder in place of the steady-state one the climb stays
    honest in this regime (the audit's observation), but holding each level costs effort every
    period: the headline ("honest and maintenance-free") FAILS by maintenance. ~3 s."""
    bad = _swapped_designs(monkeypatch, tmp_path, "steady", 2.0)["steady_state_honest"]
    assert not bad.holds and math.isfinite(bad.measured), bad.note
    assert "gaming 0.00e+00" in bad.note  # honest: the failure is the maintenance term


@pytest.mark.mutation("promotion", "naive_ladder_games")
def test_mutation_steeper_naive_ladder_does_not_game(tmp_path, monkeypatch):
    """Issue 46: the check that the regime is one where the design matters fails when the
    naive ladder is the 2x steeper one, which (as the theory says: every shortfall recurs
    under it) does not game where the designed ladder is honest. ~3 s."""
    bad = _swapped_designs(monkeypatch, tmp_path, "shallow", 2.0)["naive_ladder_games"]
    assert not bad.holds and bad.measured <= 1e-6, bad.note


def test_headline_measure_needs_the_top_reached_and_kept():
    """A ladder nobody climbs is trivially honest: the headline's number is inf then."""
    climbed = {"stays_top": True, "mean_a_plus_after": 2e-4, "total_a_minus": 5e-7}
    assert P.honest_maintenance_free(climbed) == pytest.approx(0.5)
    assert P.honest_maintenance_free({**climbed, "stays_top": False}) == math.inf
    assert P.honest_maintenance_free({**climbed, "mean_a_plus_after": math.nan}) == math.inf
    assert P.honest_maintenance_free({**climbed, "mean_a_plus_after": 0.7}) == pytest.approx(700)


def test_the_naive_ladder_leaves_the_other_designs_bit_identical():
    """F2's ladder (d) is solved on its own, so (a)-(c) are the batch they always were."""
    study = replace(P.StudyConfig(), base=replace(P.StudyConfig().base, nx=101, na=41))
    f2 = P.figure_trajectories_data(study, 0)
    designs = P.trajectory_designs(study, f2["x0"])
    three = [designs[k] for k in ("steady", "steep", "no_legup")]
    tr = P.simulate(P.solve(P.make_ladder(three)))
    for b, k in enumerate(("steady", "steep", "no_legup")):
        pd_frame = P.trajectory_frame(tr, b)
        assert f2["frames"][k].equals(pd_frame), k
    assert list(f2["frames"]) == ["steady", "steep", "no_legup", "shallow"]


@pytest.mark.mutation("promotion", "arbitrary_height")
def test_mutation_levels_for_target_off_by_one(tmp_path, monkeypatch):
    """Mutation: L = ceil((1-gamma) M / delta) without the + 1 (the paper's ceil counts
    thresholds, not levels): the top threshold sits one step below M and every target is
    missed, so arbitrary_height must FAIL (4 of 4 targets). Own cache. ~5 s."""
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path))
    figures = importlib.import_module("icml26.promotion.figures")
    monkeypatch.setattr(figures, "levels_for_target",
                        lambda m, gamma, delta: max(2, math.ceil((1 - gamma) * m / delta - 1e-9)))
    bad = by_name(P.claims_for(P.StudyConfig(), 0, parts=("height",)))["arbitrary_height"]
    assert not bad.holds and bad.measured == len(P.StudyConfig().targets)


@pytest.mark.mutation("promotion", "greedy_above_steady")
def test_mutation_greedy_design_without_exact_gaps_finds_no_ladder():
    """The discretisation pitfall in F5: with grid-only honest actions the agent patches
    near-misses with gaming, no candidate threshold passes the no-gaming test and the greedy
    ladder is never completed: greedy_above_steady must FAIL (-inf). <1 s."""
    study = P.StudyConfig()
    bad_study = replace(study, base=replace(study.base, exact_gaps=False))
    bad = by_name(P.claims_for(bad_study, 0, parts=("greedy",)))["greedy_above_steady"]
    assert not bad.holds


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU error")
def test_cuda_without_a_gpu_fails_fast_naming_the_flag(monkeypatch):
    def no_work(*args, **kwargs):
        raise AssertionError("work started before the device was checked")

    claims_module = importlib.import_module("icml26.promotion.claims")
    monkeypatch.setattr(claims_module, "claims_for", no_work)
    with pytest.raises(ValueError, match="--device"):
        P.claims(0, device="cuda")
    monkeypatch.undo()
    monkeypatch.setattr(claims_module, "cached", no_work)
    with pytest.raises(ValueError, match="--device"):
        P.claims_for(P.StudyConfig(), 0, device="cuda")


# --------------------------------------------------------------------------- figures
def test_phase_cells_and_determinism():
    cells = P.phase_configs(P.PhaseConfig(), seed=3)
    assert len(cells) == 20 * 21
    assert (cells[cells["kind"] == "myopic"]["beta"] == 0).all()
    assert (cells["ratio"] > 0).all() and (cells["ratio"] < 1).all()
    assert cells.equals(P.phase_configs(P.PhaseConfig(), seed=3))
    assert not cells.equals(P.phase_configs(P.PhaseConfig(), seed=4))
    centres = P.phase_configs(P.PhaseConfig(), seed=None)
    assert centres["ratio"].iloc[0] == pytest.approx(0.025)


def test_held_level_counts_only_skill_supported_levels():
    mu = torch.tensor([[0.5, 1.0, 1.5]], dtype=torch.float64).expand(3, -1)
    level = torch.tensor([4, 4, 2])
    skill = torch.tensor([1.6, 0.7, 3.0], dtype=torch.float64)
    assert P.held_level(level, skill, mu).tolist() == [4, 2, 2]


def test_level_before_gaming_stops_at_the_first_gaming_action():
    level = torch.tensor([[1, 2, 3, 4, 4],    # honest throughout: 4
                          [1, 2, 3, 4, 5],    # the third action games: it entered 4 by gaming
                          [1, 2, 1, 2, 2],    # games first: only the start counts
                          [1, 2, 3, 2, 2]])   # relegated honestly: the highest level counts
    a_minus = torch.tensor([[0, 0, 0, 0], [0, 0, 0.3, 0], [0.1, 0, 0, 0], [0, 0, 0, 1e-7]],
                           dtype=torch.float64)
    assert P.level_before_gaming(level, a_minus).tolist() == [4, 3, 1, 3]


def test_spearman_with_ties():
    assert P.spearman([1, 2, 3, 4], [1, 1, 2, 2]) == pytest.approx(0.894427, abs=1e-6)
    assert math.isnan(P.spearman([1, 2, 3], [5, 5, 5]))


# --------------------------------------------------------------------------- claims
@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_expected_claims_hold(seed):
    claims = P.claims(seed)
    names = [c.name for c in claims]
    binding = {"phase_boundary", "myopic_games", "steady_state_climbs", "steady_state_honest",
               "naive_ladder_games", "steady_state_no_maintenance", "no_legup_maintenance",
               "arbitrary_height"}
    assert binding <= set(names) and len(names) == len(set(names))
    # issue 22: measured as the paper reads it, it fails at quick scale, visibly, with why
    retention = by_name(claims)["retention_helps"]
    assert not retention.expected and not retention.holds
    assert "before any gaming" in retention.note and "Fails on this seed" in retention.note
    for c in claims:
        if c.name in binding:
            assert c.expected, c.name
        if c.expected:
            assert c.holds, f"{c.name}: {c.measured} {c.op} {c.threshold} ({c.note})"
    assert [c.measured for c in claims] == [c.measured for c in P.claims(seed)]
