"""The claims of ``ad_auctions``: the claim rows and how each is measured.

Every claim is measured on a market model derived from the abstract (no code or numbers are
public), which each note says.  Roles (``icml26.claims.ROLES``): the abstract's result is that
the framework "significantly outperforms heuristic baselines in revenue, social welfare, and
user engagement" and that TTSL-PPO "provably converges to a Stackelberg Stationary Point"
(headlines); PIM's interior optimum, ODDB-R's pacing (in the stationary market and through the
value shift) and the regulariser's stabilising of the duals are what that rests on
(mechanisms).

CLAIMS_VERSION 2 (issue 28): the pacing claims were redesigned because with pacing switched
off entirely (``eta = 0``) under the hard cap the old ``budget_pacing`` (|final spend / B - 1|)
measured 0.0000 and the old ``regularized_duals_stable`` 0/0 -> 0: both held while budgets ran
out at round 47-48 of 300.  Now pacing means what the word means (the budget lasts the
horizon AND is spent: ``experiments.pacing_stats``; target 0.95, i.e. the old 5% tolerance
applied to the exhaustion round as well as to the final spend, fixed before any seed was
re-measured) and is read for ODDB-R itself (``beta`` of the config), in the stationary market
where the revenue claims are measured (``budget_pacing``) and through the value shift that F3
shows (``pacing_through_shift``); the duals' variance ratio is NaN (so it fails) when the
duals do not move after the shift.  Welfare and engagement, which the abstract claims, are
measured against the same heuristics as revenue.

CLAIMS_VERSION 3 (issue 46, item 4; written before the new design was run on any seed): an
audit found the heuristics untuned (z = 0, z = z_max, a myopic rule with frozen duals) while a
grid-searched fixed z reaches the optimum TTSL-PPO only matches, and welfare counted without
the inference cost.  (a) Every heuristic is tuned on TTSL-PPO's training budget and draws
(40 batches of 32 episodes, batch k = the value draws of PPO's iteration k; a 40-point grid on
[0, z_max] fixed in advance): ``fixed z (tuned)`` and ``myopic (tuned)`` (the frozen duals
learned from the market; ``platform.tune_*``).  ``beats_tuned_heuristic`` (headline, mean)
compares TTSL-PPO's net revenue with the best tuned heuristic's; not expected (decided before
results: the tuned fixed z lands on the optimum TTSL-PPO converges to).  ``beats_heuristics``
keeps its measurement against the untuned rules and becomes a finding: its baselines do not
get the method's tuning budget (CONVENTIONS §2).  (b) Social welfare is the winner's value
minus the inference cost, ``v_w q_w - kappa z`` per round (payments are transfers; PIM makes
the cost the economy's); welfare and engagement compare TTSL-PPO with the best of all five
heuristics.  (c) ``pacing_through_training`` (mechanism): ODDB-R paces every bound bidder in
every TTSL-PPO iteration while the leader's z moves (the abstract's "non-stationary
environment"); ``pacing_through_shift`` (the spec's invented value shift) stays a finding.
"""

from __future__ import annotations

import dataclasses
import math

from icml26.ad_auctions.experiments import (
    BETAS,
    PAPER,
    AuctionConfig,
    config_for,
    figure_curve_data,
    figure_pacing_data,
    figure_ppo_data,
    figure_shift_data,
)
from icml26.claims import Claim, ClaimSpec, ClaimTable
from icml26.common import resolve_device

DERIVED = "model derived from the abstract (parametric creative lift, no auction logs)"
CLAIMS_VERSION = 3
PACED = 0.95  # budget lasts >= 95% of the horizon and >= 95% of it is spent

_PACING = ("worst budget-bound bidder's min(budget-exhaustion round / T, final spend / B) "
           f">= {PACED:g} (the budget lasts the horizon and is spent)")
_VS_HEUR = "the best fixed-rule heuristic's (z = 0, z = z_max, myopic), on the same draws"
_VS_ALL = ("the best of all five heuristics' (z = 0, z = z_max, myopic and the two tuned on "
           "TTSL-PPO's training budget: fixed z, myopic), on the same draws")
TUNED = ("fixed z on a 40-point grid and the myopic rule with learned duals, each tuned on "
         "TTSL-PPO's 40 x 32 training episodes and draws")

#: the abstract's sentences the rows quote (``source``)
OUTPERFORMS = ("our framework significantly outperforms heuristic baselines in revenue, social "
               "welfare, and user engagement")
ODDB_R = ("the Online Dual-Descent Bidding with Regularization (ODDB-R) algorithm for agents to "
          "learn optimal bidding strategies")
NON_STATIONARY = ODDB_R + " in this non-stationary environment"

#: name: ClaimSpec (statement, op, threshold, expected, role, unit, source)
CLAIM_SPECS = {
    "interior_optimum": ClaimSpec(
        statement="PIM endogenises the inference cost, so the net-revenue-optimal creative "
                  "investment is interior: min(z* - 0, z_max - z*) on the grid > 0",
        op=">", threshold=0.0, expected=True, role="mechanism", unit="each",
        source="To endogenize inference costs, we propose the Platform-Investment Mechanism "
               "(PIM)"),
    "ttsl_near_optimum": ClaimSpec(
        statement="TTSL-PPO \"provably converges to a Stackelberg Stationary Point\": its net "
                  "revenue reaches >= 0.95 of the grid optimum's",
        op=">=", threshold=0.95, expected=True, role="headline", unit="each",
        source="Two-Timescale Stackelberg Learning with Proximal Policy Optimization (TTSL-PPO) "
               "algorithm, which provably converges to a Stackelberg Stationary Point"),
    "beats_tuned_heuristic": ClaimSpec(
        statement="The framework \"significantly outperforms heuristic baselines in revenue\": "
                  "TTSL-PPO's net revenue per round minus the best tuned heuristic's (" + TUNED
                  + "), on the evaluation draws, > 0",
        op=">", threshold=0.0, expected=False, role="headline", unit="mean", source=OUTPERFORMS),
    "beats_heuristics": ClaimSpec(
        statement="TTSL-PPO's net revenue per round minus " + _VS_HEUR + " > 0 (untuned "
                  "baselines: a finding; the headline is beats_tuned_heuristic)",
        op=">", threshold=0.0, expected=True, role="finding", unit="mean", source=""),
    "beats_heuristics_welfare": ClaimSpec(
        statement="The framework \"significantly outperforms heuristic baselines in ... social "
                  "welfare\": TTSL-PPO's social welfare per round net of the inference cost "
                  "(winner's value v q minus kappa z) relative to " + _VS_ALL + ", minus 1, > 0",
        op=">", threshold=0.0, expected=False, role="headline", unit="mean",
        source=OUTPERFORMS),
    "beats_heuristics_engagement": ClaimSpec(
        statement="The framework \"significantly outperforms heuristic baselines in ... user "
                  "engagement\": TTSL-PPO's clicks per round relative to " + _VS_ALL
                  + ", minus 1, > 0",
        op=">", threshold=0.0, expected=False, role="headline", unit="mean",
        source=OUTPERFORMS),
    "budget_pacing": ClaimSpec(
        statement="ODDB-R paces every budget-bound advertiser in the stationary market at z* "
                  "(where the revenue claims are measured): " + _PACING,
        op=">=", threshold=PACED, expected=True, role="mechanism", unit="each", source=ODDB_R),
    "pacing_through_training": ClaimSpec(
        statement="ODDB-R learns to bid \"in this non-stationary environment\": while the "
                  "leader's z moves during TTSL-PPO's training (duals carried across episodes), "
                  "in every iteration, " + _PACING,
        op=">=", threshold=PACED, expected=True, role="mechanism", unit="each",
        source=NON_STATIONARY),
    "pacing_through_shift": ClaimSpec(
        statement="ODDB-R learns to bid \"in this non-stationary environment\": through the "
                  "mid-episode value shift (F3), " + _PACING,
        op=">=", threshold=PACED, expected=False, role="finding", unit="each", source=""),
    "regularized_duals_stable": ClaimSpec(
        statement="The ODDB-R regulariser lowers the post-shift variance of the duals: worst "
                  "bound bidder's variance ratio beta > 0 / beta = 0 < 1 (NaN, so failing, when "
                  "the duals do not move after the shift: pacing off)",
        op="<", threshold=1.0, expected=True, role="finding", unit="mean", source=""),
}


def claims(seed: int = 0, scale: str = "quick", device: str = "cpu") -> list[Claim]:
    """Every claim of the paper at ``scale``, recomputed for ``seed`` with the markets on
    ``device`` (the auctions go through the ``auction_topk`` Triton kernel on CUDA)."""
    dev = resolve_device(device)
    return claims_for(config_for(scale), seed, dev)


def _when(r: int, T: int) -> str:
    return "never exhausted" if r >= T else f"exhausted in round {r + 1} of {T}"


def _pacing_note(p: dict, bound: list[int], T: int) -> str:
    return ", ".join(f"bidder {i}: lasts {p['lasts'][i]:.3f} ({_when(p['exhaust_round'][i], T)}), "
                     f"spent {p['spent'][i]:.3f}" for i in bound)


def claims_for(cfg: AuctionConfig, seed: int = 0, device: str = "cpu") -> list[Claim]:
    """The claims for an explicit config (the mutation tests set ``objective="gross"`` or
    switch pacing off)."""
    dev = resolve_device(device)
    table = ClaimTable(PAPER, CLAIM_SPECS)
    z_star = None
    T = cfg.market.horizon
    with table.guard(["interior_optimum"]):
        curve = figure_curve_data(cfg, seed, dev)
        z_star = curve["z_star"]
        zmax = cfg.market.z_max
        what = "net revenue" if cfg.objective == "net" else "GROSS payments (mutation)"
        table.add("interior_optimum", min(z_star, zmax - z_star),
                  f"argmax of {what} at z* = {z_star:.2f} on {cfg.grid_points} points of "
                  f"[0, {zmax:g}] (net {curve['net_star']:.4f}/round, {cfg.eval_markets} "
                  f"episodes per point, common draws); {DERIVED}")
    ppo_names = ["ttsl_near_optimum", "beats_tuned_heuristic", "beats_heuristics",
                 "beats_heuristics_welfare", "beats_heuristics_engagement",
                 "pacing_through_training"]
    with table.guard(ppo_names):
        d = figure_ppo_data(cfg, seed, device=dev)
        h, tu = d["heuristics"], d["tuned"]
        allh = {**h, **tu}
        trained = (f"TTSL-PPO z = {d['z_ppo']:.2f} after {cfg.ppo.iterations} iterations x "
                   f"{cfg.ppo.markets} episodes (objective {cfg.objective}), evaluated on the "
                   f"grid's draws; trained once per config and seed and cached; {DERIVED}")
        table.add("ttsl_near_optimum", d["net_ppo"] / d["net_star"],
                  f"net {d['net_ppo']:.4f} vs grid optimum {d['net_star']:.4f} at z* "
                  f"{d['z_star']:.2f}; {trained}")
        tbest = max(tu, key=lambda k: tu[k]["net"])
        margin = d["net_ppo"] - tu[tbest]["net"]
        table.add("beats_tuned_heuristic", margin,
                  f"PPO {d['net_ppo']:.4f} vs best tuned heuristic {tbest} {tu[tbest]['net']:.4f}"
                  f": margin {margin:+.4f} ({100 * margin / abs(tu[tbest]['net']):+.2f}%); "
                  + ", ".join(f"{k}: z {v['z']:.2f}, net {v['net']:.4f}" for k, v in tu.items())
                  + f" (tuned on the training draws, {len(tu[tbest]['grid'])}-point grid on "
                  f"[0, {cfg.market.z_max:g}], one batch of {cfg.ppo.markets} episodes per "
                  f"point); grid optimum {d['net_star']:.4f} at z* {d['z_star']:.2f}; {trained}")
        best = max(h, key=lambda k: h[k]["net"])
        margin = d["net_ppo"] - h[best]["net"]
        table.add("beats_heuristics", margin,
                  f"PPO {d['net_ppo']:.4f} vs best untuned heuristic {best}: margin "
                  f"{margin:+.4f} ({100 * margin / abs(h[best]['net']):+.2f}%; the myopic "
                  "rule's z sits near z*); heuristics: "
                  + ", ".join(f"{k} {v['net']:.4f} (z {v['z']:.2f})" for k, v in h.items())
                  + f"; untuned, so a finding (beats_tuned_heuristic is the headline); {trained}")
        for name, key, word in (("beats_heuristics_welfare", "net_welfare",
                                 "welfare net of the inference cost (v q - kappa z)"),
                                ("beats_heuristics_engagement", "clicks", "clicks")):
            top = max(allh, key=lambda k: allh[k][key])
            rel = d[f"{key}_ppo"] / allh[top][key] - 1
            table.add(name, rel,
                      f"PPO {word} {d[f'{key}_ppo']:.4f}/round vs best heuristic {top} "
                      f"{allh[top][key]:.4f}; all: "
                      + ", ".join(f"{k} {v[key]:.4f}" for k, v in allh.items())
                      + "; quality q_i(z) rises with z, so the value delivered and clicks rise "
                      "with z; the net-revenue optimum z* trades them for the platform's "
                      f"revenue; {trained}")
        lo_hi = d["train_z_range"]
        bound = [i for i, b in enumerate(d["train_bound"]) if b]
        worst = [min((it[i] for i in bound), default=math.nan) for it in d["paced_path"]]
        k = min(range(len(worst)), key=worst.__getitem__)
        ex = d["exhaust_path"][k]
        table.add("pacing_through_training", min(worst),
                  f"ODDB-R (beta = {cfg.market.beta:g}) in each of TTSL-PPO's "
                  f"{len(worst)} iterations ({cfg.ppo.markets} markets, duals carried over, z "
                  f"drawn from the policy whose mean moves {cfg.ppo.z_init:.2f} -> "
                  f"{d['z_path'][-1]:.2f}, range [{lo_hi[0]:.2f}, {lo_hi[1]:.2f}]); bound "
                  f"bidders {bound} (overspend "
                  f"unpaced at both ends of that range); worst iteration {k + 1}: "
                  + ", ".join(f"bidder {i} {d['paced_path'][k][i]:.3f} "
                              f"({_when(ex[i], T)})" for i in bound)
                  + f"; mean over iterations of the worst bidder {sum(worst) / len(worst):.3f}; "
                  f"{DERIVED}")
    with table.guard(["budget_pacing"]):
        z = z_star if z_star is not None else 0.5 * cfg.market.z_max
        p = figure_pacing_data(dataclasses.replace(cfg, objective="net"), seed, z, dev)
        bound = [i for i, b in enumerate(p["bound"]) if b]
        table.add("budget_pacing", min((p["paced"][i] for i in bound), default=math.nan),
                  f"ODDB-R (beta = {cfg.market.beta:g}, eta = {cfg.market.eta:g}), no value "
                  f"shift, z = {z:.2f}, {cfg.shift_markets} episodes; bound bidders {bound} "
                  f"(would overspend without pacing); {_pacing_note(p, bound, T)}; hard_cap="
                  f"{cfg.market.hard_cap}; without pacing (eta = 0) budgets run out near "
                  f"round 50 of {T}; {DERIVED}")
    with table.guard(["pacing_through_shift", "regularized_duals_stable"]):
        s = figure_shift_data(dataclasses.replace(cfg, objective="net"), seed, z, dev)
        reg, plain = (s["runs"][b] for b in BETAS)
        bound = [i for i, b in enumerate(s["bound"]) if b]
        table.add("pacing_through_shift", min((reg["paced"][i] for i in bound),
                                              default=math.nan),
                  f"ODDB-R (beta = {BETAS[0]:g}); values shift at round {s['shift_round']}, "
                  f"z = {z:.2f}, {cfg.shift_markets} episodes; bound bidders {bound}; "
                  f"{_pacing_note(reg, bound, T)}; plain dual descent (beta = 0) on the same "
                  f"draws: worst {min(plain['paced'][i] for i in bound):.3f} (the "
                  "regulariser's anchor slows the dual's reaction to the shift); not expected: "
                  f"fails on seeds 0-4 at quick scale; {DERIVED}")
        moves = reg["post_moves"] and plain["post_moves"]
        ratios = [reg["post_var"][i] / plain["post_var"][i]
                  if moves and plain["post_var"][i] > 0 else math.nan for i in bound]
        table.add("regularized_duals_stable", max(ratios, default=math.nan),
                  f"variance of each bound bidder's dual over rounds {s['window'][0]}-"
                  f"{s['window'][1]} (after the shift), mean over episodes; ratios "
                  + ", ".join(f"{r:.3f}" for r in ratios)
                  + ("" if moves else " (the duals do not move after the shift: pacing is "
                     "off, the ratio 0/0 is undefined)")
                  + f"; the regulariser slows adaptation: budgets run out at round "
                  f"{min(reg['exhaust_round'][i] for i in bound)} vs "
                  f"{min(plain['exhaust_round'][i] for i in bound)} of {T}; {DERIVED}")
    return table.claims
