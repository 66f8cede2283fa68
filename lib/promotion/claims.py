"""The paper's claims: one spec row per claim, measured from the cached figure data.

CLAIMS_VERSION 2 (issue 46, the second measurement of the headline, fixed in writing before
any seed was run; the notebook's section "Second measurement of the headline" says the same).
The audit found ``steady_state_honest`` vacuous: in the spec's regime (c-/c+ = 0.5 > 1 -
beta*gamma = 0.28) total gaming was 0 under the designed ladder, the 2x steeper one and the
one without leg-up alike, so the honesty came from the costs, not from the design. From the
model's theory: (i) under the steady-state ladder an honest step lands skill exactly on the
stay threshold, so every shortfall recurs each period (decaying at gamma) and honesty pays iff
c-/c+ > 1 - beta*gamma, the F1 line; (ii) under a steeper ladder no-effort skill settles BELOW
the stay threshold, every shortfall recurs as well, and the same line decides: no cost regime
makes it game where the designed ladder does not; it pays maintenance instead; (iii) under a
shallower equal-step ladder (slope k < 1) the leg-up lifts skill ABOVE the stay threshold and,
for k <= l/(l+1), to the next threshold: part of every step is a one-shot gap that growing
skill would close anyway, and a one-shot gap is cheaper gamed (c- < c+) in every regime. So the
design matters everywhere above the line; we keep the spec's regime (c-/c+ = 0.5, beta*gamma =
0.72: margin 0.22 from the line and 0.5 from c- = c+; a level's reward value beta r/(1-beta) =
2.7 well above its cost c+ delta/(1-gamma) = 0.5) and name as the naive ladder the equal-step
ladder half as steep (slope 0.5, mu_l = 0.25 l, the mirror of F2's 2x steeper one). The
headline now says "honest and maintenance-free" under the designed ladder (it fails with the
2x shallower ladder in its place, by gaming, and with the 2x steeper one, by maintenance), and
the check ``naive_ladder_games`` shows the naive ladder making gaming pay in that regime (it
fails if the naive ladder is the 2x steeper one). The old measurement, total gaming under the
designed ladder alone, is the first term of the new headline and is not kept on its own (alone
it measures the cost regime).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from icml26.claims import Claim, ClaimSpec, ClaimTable
from icml26.common import cached, device_key, resolve_device
from icml26.promotion.figures import (
    figure_greedy_data,
    figure_height_data,
    figure_phase_data,
    figure_sensitivity_data,
    figure_trajectories_data,
    spearman,
)
from icml26.promotion.model import PAPER
from icml26.promotion.studies import StudyConfig, config_for

#: name -> ClaimSpec; ``steady_state_climbs``' threshold 2(L-1) follows the study's ladder
#: (14 at quick scale). Roles: the abstract's results are the characterisation of the optimal
#: strategy (the phase line), a threshold sequence that "effectively incentivize[s] honest
#: effort" and reaching "arbitrarily high levels solely through genuine improvement efforts"
#: (headlines); farsightedness and the leg-up effect, which the abstract names, are what they
#: rest on (mechanism); retention's monotone effect under a fixed ladder, the leg-up's
#: sensitivity and the greedy principal (the spec's optional F5) are findings.
CLAIM_SPECS = {
    "phase_boundary": ClaimSpec(
        statement="\"We characterize the agent's optimal long-term strategy\": the optimal "
                  "first action is honest iff c-/c+ > 1 - beta*gamma (>= 95% of cells more "
                  "than one grid step from the line)",
        op=">=", threshold=0.95, expected=True, role="headline", unit="each",
        source="We characterize the agent’s optimal long-term strategy"),
    "myopic_games": ClaimSpec(
        statement="Without farsightedness or retention (beta*gamma = 0) every cell games",
        op=">=", threshold=1.0, expected=True, role="mechanism", unit="each",
        source="Our model captures the critical inter-temporal incentives driven by an "
               "agent's farsightedness, skill retention"),
    "steady_state_climbs": ClaimSpec(
        statement="Under mu_l = delta l/(1-gamma) the agent reaches the top level within "
                  "2(L-1) periods",
        op="<=", threshold=14.0, expected=True, role="mechanism", unit="each",
        source="this mechanism enables agents to reach arbitrarily high levels solely through "
               "genuine improvement efforts"),
    "steady_state_honest": ClaimSpec(
        statement="\"A principal can design a sequence of thresholds to effectively "
                  "incentivize honest effort\": in a regime where a 2x shallower equal-step "
                  "ladder makes gaming pay (c-/c+ = 0.5 > 1 - beta*gamma), the steady-state "
                  "ladder's climb is honest and maintenance-free (max(total gaming / 1e-6, "
                  "mean effort after arrival / 1e-3); inf if the top is not reached and kept)",
        op="<=", threshold=1.0, expected=True, role="headline", unit="each",
        source="a principal can design a sequence of thresholds to effectively incentivize "
               "honest effort"),
    "naive_ladder_games": ClaimSpec(
        statement="The regime is one where the design matters: there the 2x shallower "
                  "equal-step ladder mu_l = 0.5 delta l/(1-gamma) makes gaming pay (total "
                  "gaming over the horizon >= 0.01)",
        op=">=", threshold=0.01, expected=True, role="check", unit="each", source=""),
    "steady_state_no_maintenance": ClaimSpec(
        statement="At the top of the steady-state ladder no maintenance is needed (mean effort "
                  "<= 1e-3, skill >= mu_{L-1} - 1e-6)",
        op="<=", threshold=1.0, expected=True, role="mechanism", unit="each",
        source="a \"leg-up\" effect where qualification and attainment can be "
               "self-reinforcing"),
    "no_legup_maintenance": ClaimSpec(
        statement="Without leg-up (delta = 0) holding the top costs (1-gamma) mu_{L-1} per "
                  "period (within 10%)",
        op="<=", threshold=0.10, expected=True, role="mechanism", unit="each",
        source="a \"leg-up\" effect where qualification and attainment can be "
               "self-reinforcing"),
    "arbitrary_height": ClaimSpec(
        statement="\"This mechanism enables agents to reach arbitrarily high levels solely "
                  "through genuine improvement efforts\": any target skill M is reached "
                  "honestly with L = ceil((1-gamma)M/delta) + 1 levels (M in targets; failing "
                  "targets)",
        op="<=", threshold=0.0, expected=True, role="headline", unit="each",
        source="this mechanism enables agents to reach arbitrarily high levels solely through "
               "genuine improvement efforts"),
    "retention_helps": ClaimSpec(
        statement="Retention expands what can be incentivised: under a fixed ladder the "
                  "highest level reached honestly (before any gaming) is non-decreasing in "
                  "gamma (Spearman >= 0.9)",
        op=">=", threshold=0.9, expected=False, role="finding", unit="each", source=""),
    "legup_sensitivity": ClaimSpec(  # the paper claims no monotone trend in delta
        statement="The highest level reached before any gaming vs delta (reported: the paper "
                  "calls the leg-up's role nuanced)",
        op=">=", threshold=0.9, expected=False, role="finding", unit="each", source=""),
    "greedy_above_steady": ClaimSpec(
        statement="A greedy principal's thresholds are >= the steady-state ones (optional F5; "
                  "min difference)",
        op=">=", threshold=0.0, expected=True, role="finding", unit="each", source=""),
}

PARTS = ("phase", "trajectories", "height", "sensitivity", "greedy")
CACHE_VERSION = 3  # 2: F4 reports the level before any gaming; 3: F2's naive ladder (d)
CLAIMS_VERSION = 2  # 2: the headline's second measurement (issue 46, module docstring)
SOLVER_NOTE = ("solver: policy iteration with exact sparse policy evaluation to a Bellman "
               "residual <= 1e-8 on a skill grid with the thresholds as nodes and the exact "
               "gaps mu_j - x among the honest actions; figure data cached per config and seed")


def claims(seed: int = 0, scale: str = "quick", device: str = "cpu") -> list[Claim]:
    """Every claim of the paper at ``scale``, recomputed for ``seed`` on ``device``: the
    ladders live there, so ``impl="auto"`` runs the Bellman backups through the Triton kernel
    on CUDA (the exact policy evaluation is a scipy sparse solve on the CPU either way; the
    seeded jitter is drawn on the CPU)."""
    dev = resolve_device(device)
    return claims_for(config_for(scale), seed, device=dev)


def cached_figure(name: str, study: StudyConfig, seed: int | None, impl: str = "auto",
                  device: str = "cpu"):
    """A figure's data through the on-disk cache (keyed by the study, seed, version and
    device type)."""
    dev = resolve_device(device)
    compute = {"phase": lambda: figure_phase_data(study.phase, seed, impl, dev),
               "trajectories": lambda: figure_trajectories_data(study, seed, impl, dev),
               "height": lambda: figure_height_data(study, seed, impl, device=dev),
               "sensitivity": lambda: figure_sensitivity_data(study, seed, impl, dev),
               "greedy": lambda: figure_greedy_data(study.base, study.greedy, impl,
                                                    device=dev)}[name]
    key_config = {"phase": study.phase, "greedy": (study.base, study.greedy)}.get(name, study)
    seed = None if name == "greedy" else seed  # the greedy design draws nothing
    return cached(PAPER, device_key(name, dev), key_config, -1 if seed is None else seed,
                  CACHE_VERSION, compute)


def _phase(table: ClaimTable, study: StudyConfig, seed: int, impl: str,
           device="cpu") -> None:
    f1 = cached_figure("phase", study, seed, impl, device)
    ph = study.phase
    table.add("phase_boundary", f1["agreement"],
              f"{f1['n_far']} cells farther than one grid step from the line, L = 2, R = (0, "
              f"{ph.reward:g}), mu_1 = {ph.threshold:g}, beta = {ph.beta:g}, "
              f"{ph.n_ratio}x{ph.n_discount} grid with seeded jitter; spec prototype 20/20")
    table.add("myopic_games", f1["myopic_gaming"],
              f"share gaming among the {f1['n_myopic']} cells with beta*gamma = 0 (gamma = 0, "
              f"and beta = 0 with gamma = {ph.myopic_gamma:g})")


def _trajectories(table: ClaimTable, study: StudyConfig, seed: int, impl: str,
                  device="cpu") -> None:
    f2 = cached_figure("trajectories", study, seed, impl, device)
    s, c = f2["summary"]["steady"], f2["summary"]["no_legup"]
    c_steep = f2["summary"]["steep"]
    base = study.base
    table.add("steady_state_climbs", s["arrival"],
              f"arrival period at level L = {base.levels} (x0 = {f2['x0']:.3f}); spec "
              "prototype one level per period")
    n = f2["summary"]["shallow"]
    table.add("steady_state_honest", honest_maintenance_free(s),
              f"max(total gaming / 1e-6, mean effort after arrival / 1e-3) under the "
              f"steady-state ladder: gaming {s['total_a_minus']:.2e} over {base.horizon} "
              f"periods (exact-gap actions), mean effort after arrival "
              f"{s['mean_a_plus_after']:.2e}, arrival {s['arrival']}, stays at the top: "
              f"{s['stays_top']}; total honest effort {s['total_a_plus']:.4f} (spec ~3.5). In "
              f"the same regime (c-/c+ = {base.ratio:g}, 1 - beta*gamma = "
              f"{1 - base.beta * base.gamma:.2f}) the ladder {study.shallow:g}x as steep "
              f"games {n['total_a_minus']:.3f}, the {study.steep:g}x steeper one "
              f"{c_steep['total_a_minus']:.2e} with mean effort {c_steep['mean_a_plus_after']:.3f} "
              f"after arrival (arrival {c_steep['arrival']}), the one without leg-up "
              f"{c['total_a_minus']:.2e} with {c['mean_a_plus_after']:.3f}")
    table.add("naive_ladder_games", n["total_a_minus"],
              f"total gaming over {base.horizon} periods under mu_l = {study.shallow:g} "
              f"delta l/(1-gamma) (equal steps of {f2['thresholds']['shallow'][0]:g}), the same "
              f"x0 and costs as the headline; total honest effort {n['total_a_plus']:.3f}, "
              f"gaming in {int((f2['frames']['shallow']['a_minus'] > 1e-6).sum())} periods, "
              f"final level {n['final_level']}")
    shortfall = max(0.0, s["mu_top"] - s["min_skill_after"])
    worst = max(s["mean_a_plus_after"] / 1e-3, shortfall / 1e-6)
    table.add("steady_state_no_maintenance", worst if s["stays_top"] else math.inf,
              f"max(mean effort after arrival / 1e-3, skill shortfall below mu_{{L-1}} / 1e-6): "
              f"mean effort {s['mean_a_plus_after']:.2e}, min skill - mu_{{L-1}} = "
              f"{s['min_skill_after'] - s['mu_top']:.2e}; stays at the top: {s['stays_top']}")
    target = c["maintenance_no_legup"]
    rel = abs(c["mean_a_plus_after"] - target) / target if c["stays_top"] else math.inf
    table.add("no_legup_maintenance", rel,
              f"mean effort at the top {c['mean_a_plus_after']:.4f} vs (1-gamma) mu_{{L-1}} = "
              f"{target:.4f}; total effort {c['total_a_plus']:.2f} over {base.horizon} periods "
              f"(steady state: {s['total_a_plus']:.2f})")


def honest_maintenance_free(summary: dict) -> float:
    """The headline's number for one ladder's :func:`trajectory_summary`: ``max(total gaming
    / 1e-6, mean effort after arrival / 1e-3)``, <= 1 when the climb is honest and free of
    maintenance; ``inf`` when the agent does not reach the top and stay there (a ladder that
    nobody climbs is trivially honest) or no period after arrival is simulated."""
    effort = summary["mean_a_plus_after"]
    if not summary["stays_top"] or math.isnan(effort):
        return math.inf
    return max(summary["total_a_minus"] / 1e-6, effort / 1e-3)


def _height(table: ClaimTable, study: StudyConfig, seed: int, impl: str,
            device="cpu") -> None:
    f3 = cached_figure("height", study, seed, impl, device)
    ok = ((f3["final_level"] == f3["levels"]) & (f3["final_skill"] >= f3["target"] - 1e-6)
          & (f3["total_a_minus"] <= 1e-6))
    detail = "; ".join(f"M={r.target:g}: L={r.levels}, level {r.final_level}, skill "
                       f"{r.final_skill:.4f}, gaming {r.total_a_minus:.1e}"
                       for r in f3.itertuples())
    table.add("arbitrary_height", float((~ok).sum()), f"targets failing any of final level = L, "
              f"final skill >= M - 1e-6, gaming <= 1e-6: {detail}")


def _sensitivity(table: ClaimTable, study: StudyConfig, seed: int, impl: str,
                 device="cpu") -> None:
    f4 = cached_figure("sensitivity", study, seed, impl, device)
    gam, dlt = f4["gamma"], f4["delta"]
    base = study.base
    levels = gam["level_before_gaming"]
    drops = int((np.diff(levels) < 0).sum())
    line = (1 - base.ratio) / base.beta  # gamma where beta*gamma = 1 - c-/c+
    rho = spearman(gam["gamma"], levels)
    verdict = ("Fails on this seed" if not rho >= CLAIM_SPECS["retention_helps"].threshold
               else "Holds on this seed, not on every seed 0-4")
    table.add("retention_helps", rho,
              f"highest level reached before any gaming (a level entered by gaming, or any "
              f"level after it, does not count): {levels.tolist()} for {len(gam)} gammas in "
              f"[{gam['gamma'].min():g}, {gam['gamma'].max():g}], first gaming at period "
              f"{gam['first_gaming'].tolist()} (-1: never); fixed ladder mu_l = "
              f"{f4['thresholds'][0]:g} l, {study.sens_levels} levels, delta = "
              f"{f4['fixed_delta']:g}. {verdict}: below gamma = {line:.3f} "
              f"(beta*gamma = 1 - c-/c+) the agent games from the start, as the phase line "
              f"predicts, but at high gamma the fixed ladder is shallow for that gamma: skill "
              f"outgrows the thresholds and the agent games small gaps that its growing skill "
              f"would close anyway ({drops} decreases). The final level held on true skill "
              f"({gam['held_level'].tolist()}, Spearman "
              f"{spearman(gam['gamma'], gam['held_level']):.3f}) looks only at the end, so it "
              f"cannot see gaming during the climb; it is not the claim")
    table.add("legup_sensitivity", spearman(dlt["delta"], dlt["level_before_gaming"]),
              f"levels before any gaming {dlt['level_before_gaming'].tolist()}, total gaming "
              f"{np.round(dlt['total_gaming'].to_numpy(), 2).tolist()} for delta in "
              f"[{dlt['delta'].min():g}, {dlt['delta'].max():g}] at gamma = "
              f"{f4['fixed_gamma']:g}: leg-up raises the final held level "
              f"({dlt['held_level'].tolist()}) but invites transient gaming earlier in the "
              "climb; reported only")


def _greedy(table: ClaimTable, study: StudyConfig, seed: int, impl: str,
            device="cpu") -> None:
    f5 = cached_figure("greedy", study, None, impl, device)
    n_want = study.greedy.levels - 1
    diff = (f5["greedy"] - f5["steady_state"]).min() if len(f5) == n_want else -math.inf
    table.add("greedy_above_steady", float(diff),
              f"{len(f5)}/{n_want} thresholds found; greedy "
              f"{np.round(f5['greedy'].to_numpy(), 3).tolist()} vs steady state "
              f"{np.round(f5['steady_state'].to_numpy(), 3).tolist()} ({study.greedy.levels} "
              "levels, truncated-ladder search, base agent)")


PART_CLAIMS = {  # part -> (the claims it measures, the function that adds them)
    "phase": (("phase_boundary", "myopic_games"), _phase),
    "trajectories": (("steady_state_climbs", "steady_state_honest", "naive_ladder_games",
                      "steady_state_no_maintenance", "no_legup_maintenance"), _trajectories),
    "height": (("arbitrary_height",), _height),
    "sensitivity": (("retention_helps", "legup_sensitivity"), _sensitivity),
    "greedy": (("greedy_above_steady",), _greedy),
}


def claims_for(study: StudyConfig, seed: int = 0, impl: str = "auto",
               parts: Sequence[str] = PARTS, device: str = "cpu") -> list[Claim]:
    """The claims for an explicit study (the mutation tests switch the pitfalls on).

    ``parts`` picks which figures to compute (all by default); each figure's data is cached.
    A part whose computation raises (a solver that did not converge, a bad input) yields its
    claims as failed (NaN) with the error in the note.
    """
    dev = resolve_device(device)
    bad = set(parts) - set(PARTS)
    if bad:
        raise ValueError(f"parts must be among {PARTS}, got {sorted(bad)}")
    specs = {**CLAIM_SPECS,  # the arrival budget 2(L-1) follows the study's ladder
             "steady_state_climbs": CLAIM_SPECS["steady_state_climbs"]._replace(
                 threshold=2.0 * (study.base.levels - 1))}
    table = ClaimTable(PAPER, specs)
    for part in PARTS:
        if part in parts:
            names, measure = PART_CLAIMS[part]
            with table.guard(names):
                measure(table, study, seed, impl, dev)
    return [c if math.isnan(c.measured) else replace(c, note=f"{c.note}; {SOLVER_NOTE}")
            for c in table.claims]
