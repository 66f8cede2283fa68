"""The paper's claims, recomputed per seed (see the claims contract in the conventions)."""

from __future__ import annotations

import math

from icml26.claims import Claim, ClaimSpec, ClaimTable
from icml26.common import resolve_device

from .experiments import (
    RecruitmentConfig,
    config_for,
    figure_dp_vs_mc_data,
    figure_greedy_data,
    figure_heterogeneous_data,
    figure_value_vs_budget_data,
)
from .robustness import figure_misspec_data
from .simulator import POLICIES

PAPER = "recruitment"
LOSS_FLOOR = 1e-12  # a loss below this is float rounding: the policy did not change

#: name -> ClaimSpec; ``{b}`` / ``{t}`` are the budget and rounds the claim is measured at, a
#: ``None`` threshold is that budget. Roles (from the abstract, docs/claims.md): the exact
#: single-round greedy, the surrogate-DP planner evaluated against the baselines and the
#: multi-round misspecification bound (headlines); the exact DP and its saving of coupons are
#: what the planner rests on (mechanism); the surrogate's prediction of the heterogeneous
#: process and the whole bound's 2x tightness are our findings (the abstract's "tight"
#: qualifies the frontier term alone); the bound's monotonicity in eps is a check.
SPECS = {
    "greedy_exact": ClaimSpec(
        statement="\"The single-round allocation problem admits an exact greedy solution "
                  "based on marginal survival probabilities\": greedy equals brute force",
        op="<=", threshold=1e-9, expected=True, role="headline", unit="each",
        source="the single-round allocation problem admits an exact greedy solution based on "
               "marginal survival probabilities"),
    "dp_beats_fixed3": ClaimSpec(
        statement="Evaluated \"on real-world inspired recruitment scenarios\", the "
                  "surrogate-DP policy recruits >= 1.1x the fixed-3-coupon norm at B={b}, "
                  "T={t}",
        op=">=", threshold=1.1, expected=True, role="headline", unit="mean",
        source="we evaluate our method on real-world inspired recruitment scenarios"),
    "dp_beats_spend_all": ClaimSpec(
        statement="Evaluated \"on real-world inspired recruitment scenarios\", the "
                  "surrogate-DP policy recruits >= 1.5x spend-all-now at B={b}, T={t}",
        op=">=", threshold=1.5, expected=True, role="headline", unit="mean",
        source="we evaluate our method on real-world inspired recruitment scenarios"),
    "dp_vs_baselines": ClaimSpec(
        statement="The DP \"planning algorithm\" is >= every baseline - 2 SE at every budget",
        op=">=", threshold=0.0, expected=True, role="headline", unit="mean",
        source="we evaluate our method on real-world inspired recruitment scenarios"),
    "dp_saves_budget": ClaimSpec(
        statement="The DP saves coupons for fresh recruits (first-round spend < B at B={b})",
        op="<", threshold=None, expected=True, role="mechanism", unit="each",
        source="Successful referrals endogenously generate future decision opportunities"),
    "dp_matches_mc": ClaimSpec(
        statement="The DP value equals the Monte Carlo value of its own policy (homogeneous "
                  "model)",
        op="<=", threshold=3.0, expected=True, role="mechanism", unit="each",
        source="This surrogate enables an exact dynamic program via truncated probability "
               "generating functions"),
    "surrogate_heterogeneous": ClaimSpec(
        statement="The homogeneous surrogate predicts the value of its policy in the "
                  "heterogeneous process within 10%",
        op="<=", threshold=0.10, expected=False, role="finding", unit="each", source=""),
    "misspec_within_bound": ClaimSpec(
        statement="\"A multi-round error bound that decomposes into a ... single-round "
                  "frontier error and a population-level transition error\": the loss from "
                  "planning with a misspecified pmf stays below the frontier + transition "
                  "error bound (eps > 0, loss > 0 on most cases)",
        op="<=", threshold=0.0, expected=True, role="headline", unit="each",
        source="a multi-round error bound that decomposes into a tight single-round frontier "
               "error and a population-level transition error"),
    "misspec_frontier_tight": ClaimSpec(  # the abstract's "tight" is the frontier term's
        statement="The whole multi-round bound (single-round frontier term + transition term) "
                  "overstates the realised loss at most 2x (not the abstract's \"tight "
                  "single-round frontier error\": that term alone is not measured here)",
        op="<=", threshold=2.0, expected=False, role="finding", unit="each", source=""),
    "bound_monotone": ClaimSpec(
        statement="The robustness bound is non-decreasing in eps",
        op=">=", threshold=-1e-12, expected=True, role="check", unit="each", source=""),
}


def headline_budget(cfg: RecruitmentConfig) -> int:
    """The headline budget: the configured one when F2 sweeps it, else F2's middle budget."""
    return cfg.budget if cfg.budget in cfg.budgets else cfg.budgets[len(cfg.budgets) // 2]


def specs_for(cfg: RecruitmentConfig) -> dict[str, ClaimSpec]:
    """The spec rows with the statements and the ``None`` threshold filled in for ``cfg``."""
    b_head = headline_budget(cfg)
    return {name: row._replace(statement=row.statement.format(b=b_head, t=cfg.rounds),
                               threshold=b_head if row.threshold is None else row.threshold)
            for name, row in SPECS.items()}


#: The rows at quick scale (static: the same names, expected flags and roles at every scale).
CLAIM_SPECS = specs_for(config_for("quick"))


def claims(seed: int = 0, scale: str = "quick", device: str = "cpu") -> list[Claim]:
    """Every claim of the paper at ``scale``, recomputed for ``seed`` on ``device``: the DP
    tables (through the PGF kernel, ``impl="auto"``) and the Monte Carlo simulations live
    there; random draws come from CPU generators and are moved to it. F1 (greedy against
    brute-force enumeration on small random instances) always runs on the CPU."""
    dev = resolve_device(device)
    return claims_for(config_for(scale), seed, device=dev)


def claims_for(cfg: RecruitmentConfig, seed: int = 0, device: str = "cpu") -> list[Claim]:
    """The claims for an explicit config (the mutation tests flip ``tail``, ``allow_save``,
    ``misspec_terms``)."""
    dev = resolve_device(device)
    f2 = figure_value_vs_budget_data(cfg, seed, device=dev)
    b_head = headline_budget(cfg)
    table = ClaimTable(PAPER, specs_for(cfg))

    f1 = figure_greedy_data(seed)
    table.add("greedy_exact", f1["max_gap"], note=(
        f"max |greedy - brute force| over {f1['instances']} random instances "
        f"({f1['people']} people, budget <= {f1['max_budget']}, K = {f1['k_max']})"))

    at = {(r["budget"], r["policy"]): r for r in f2["rows"]}
    dp_head = at[(b_head, "dp")]["mean"]
    table.add("dp_beats_fixed3", dp_head / at[(b_head, "fixed3")]["mean"],
              note="heterogeneous simulator, common random numbers; spec prototype 1.17x")
    table.add("dp_beats_spend_all", dp_head / at[(b_head, "spend_all")]["mean"],
              note="spec prototype 2.3x")
    margins = [r["diff_vs_dp"] + 2 * r["se_diff"] for r in f2["rows"] if r["policy"] != "dp"]
    baselines = sorted({r["policy"] for r in f2["rows"]} - {"dp"}, key=POLICIES.index)
    table.add("dp_vs_baselines", min(margins), note=(
        "worst of (DP - baseline + 2 SE of the paired difference) over B in "
        f"{list(cfg.budgets)} and {len(baselines)} baselines"))
    first = f2["first_spend"][b_head]
    table.add("dp_saves_budget", first, note=(
        f"optimal first spend {first} of {b_head}; spec prototype 6 of 20"))

    f3 = figure_dp_vs_mc_data(cfg, seed, device=dev)
    stress = f3["rows"][-1]
    table.add("dp_matches_mc", max(abs(r["z"]) for r in f3["rows"]), note=(
        f"max |DP - MC| / SE over B in {list(cfg.budgets)} from (B, m0={cfg.m0}) and the "
        f"stress state (round {stress['round'] + 1}, b={stress['budget']}, "
        f"m={stress['m0']}); {cfg.mc_reps} runs each"))

    het = figure_heterogeneous_data(cfg, seed, device=dev)
    rel = abs(het["surrogate"] - het["mc"]) / het["mc"]
    table.add("surrogate_heterogeneous", rel, note=(
        f"surrogate {het['surrogate']:.3f} vs MC {het['mc']:.3f} ± {het['se']:.3f} "
        f"(heterogeneity {cfg.heterogeneity}): the real policy does better than the surrogate "
        "predicts, because greedy targets the high-capacity people of a heterogeneous "
        "frontier, which the i.i.d. surrogate cannot see; derived, soft target"))

    misspec_claims(table, cfg, dev)
    return table.claims


def misspec_claims(table: ClaimTable, cfg: RecruitmentConfig, device="cpu") -> None:
    """F4's claims: the bound holds (on a sweep where misspecification changes decisions),
    how tight it is, and that it grows with eps. Exact and seed-independent."""
    f4 = figure_misspec_data(cfg, device)
    cases = [r for r in f4["rows"] if r["eps"] > 0]
    lossy = [r for r in cases if r["loss"] > LOSS_FLOOR]
    shortcut = "exact policy evaluation by the DP in the homogeneous model (no Monte Carlo)"
    grid = sorted({r["eps"] for r in cases})
    where = (f"{len(grid)} eps in [{grid[0]:g}, {grid[-1]:g}] x p_alt = all mass on capacity "
             f"{' or '.join(map(str, f4['toward']))}")
    over = max(cases, key=lambda r: r["loss"] - r["bound"])
    degenerate = 2 * len(lossy) < len(cases)  # misspecification must change decisions
    table.add("misspec_within_bound", math.inf if degenerate else over["loss"] - over["bound"],
              note=(f"worst loss - bound over {len(cases)} cases ({where}); loss > 0 on "
                    f"{len(lossy)} of them{' (too few: degenerate)' if degenerate else ''}; "
                    f"worst at capacity {over['toward']}, eps {over['eps']:g}: loss "
                    f"{over['loss']:.4g} vs frontier {over['frontier_term']:.4g} + transition "
                    f"{over['transition_term']:.4g}; {shortcut}"))
    loosest = max(lossy, key=lambda r: r["bound"] / r["loss"], default=None)
    if loosest is None:
        ratio, note = math.inf, f"no case with loss > 0 ({where})"
    else:
        worst_case = [r["worst_case_bound"] for r in lossy]
        ratio = loosest["bound"] / loosest["loss"]
        note = (f"worst bound / loss over the {len(lossy)} cases with loss > 0, at capacity "
                f"{loosest['toward']}, eps {loosest['eps']:g}: {loosest['bound']:.4g} / "
                f"{loosest['loss']:.4g}; 'tight' read as within the factor 2 that the "
                "two-path argument costs (each policy's path counted once). The sup-norm form "
                f"2 sum_t (eps_F + Vmax eps_P) is {min(worst_case):.3g}-{max(worst_case):.3g} "
                f"here (V* = {f4['v_true']:.3g}): vacuous; {shortcut}")
    table.add("misspec_frontier_tight", ratio, note=note)
    rows = f4["rows"]
    steps = [b["bound"] - a["bound"] for a, b in zip(rows, rows[1:]) if a["toward"] == b["toward"]]
    table.add("bound_monotone", min(steps), note=(
        f"smallest step of the bound between consecutive eps ({where}; float rounding floor "
        f"1e-12); {shortcut}"))
