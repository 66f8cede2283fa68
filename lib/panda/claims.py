"""PANDA's claims: the spec rows and their measurement from one seed's experiment.

On CUDA (``device="cuda"``) the game is drawn on the CPU from the seed's generator and moved;
everything stays float64 (the Triton soft Bellman kernel accumulates in the input dtype), so
the objective gaps should agree with the CPU's to ~1e-9 relative, while NI gaps and residuals
that sit at rounding level (1e-13 .. 1e-15) agree only in being below their thresholds; the
detector's verdicts (no event for PANDA, events for unrolling) do not depend on the device. Not
yet measured on a GPU.
"""

from __future__ import annotations

import math

from icml26.claims import Claim, ClaimSpec, ClaimTable
from icml26.common import resolve_device
from icml26.panda.experiments import (
    PAPER,
    RELATED,
    ExperimentConfig,
    config_for,
    experiment,
    run_experiment,
)

#: 2 (issue 48): the headline is measured in the paper's stochastic setting (sampled
#: gradients at an equal sample budget, compared on Phi; the NI gap reported beside it), and
#: renamed ``beats_related_baselines`` -> ``beats_related_baselines_sampled``.
CLAIMS_VERSION = 2

#: name: ClaimSpec. Roles (issue 28): the abstract's result is "Experiments demonstrate the
#: superior performance of PANDA over closely related baselines" -- the headline. Issue 48
#: (its diagnosis: ``benchmarks/panda/panda_ni_floor.py``): the old measurement took the worst
#: over the Phi gap and the NI gap with exact gradients, where PANDA's NI gap is O(1/rho_k)
#: by construction and exact Hessian-vector products make implicit differentiation strong;
#: the abstract's advantage is sample complexity without second-order information, so the
#: headline now compares the final Phi gap at an equal budget of sampled transitions
#: (:mod:`icml26.panda.sampled`; a Hessian-vector product costs two gradient evaluations,
#: step sizes tuned alike on seed 1000). It still fails (fresh seeds 100-104: 0 of 5, worst
#: ratio 2e-5 to 0.045): PANDA's 4-batch steps give noisy, biased plug-in Danskin gradients
#: and its x settles far from x*; seeds 0-15: 0 of 16, mean 0.043
#: (``benchmarks/panda/panda_sampled_bias.csv``: at the same 1500 iterations its gap falls
#: from 6.7 / 2.1 to 0.058 / 8e-4 on seeds 0 / 1 with 256 times the draws per step).
#: What holds is the method's own behaviour -- first-order convergence to a stationary
#: point that is a saddle point of the lower level (mechanism); the rest are harness checks.
CLAIM_SPECS = {
    "panda_optimal": ClaimSpec(
        statement="PANDA (first order, cold start) reaches the bilevel optimum: "
                  "|Phi(x_PANDA) - Phi*| / Phi* < 1%",
        op="<", threshold=0.01, expected=True, role="mechanism", unit="each",
        source="PANDA converges to stationary points without convexity assumptions on either "
               "the UL or LL objectives"),
    "panda_equilibrium": ClaimSpec(
        statement="PANDA's final lower-level iterate (first order, cold start) is a saddle "
                  "point: NI gap < 1e-4",
        op="<", threshold=1e-4, expected=True, role="mechanism", unit="each",
        source="the UL objective is optimized through the saddle-point equilibrium induced by "
               "the LL game"),
    "beats_related_baselines_sampled": ClaimSpec(
        statement="\"Experiments demonstrate the superior performance of PANDA over closely "
                  "related baselines\": with sampled gradients (a generative model) at an equal "
                  "budget of sampled transitions, from the same start, step sizes tuned alike, "
                  "PANDA ends with a smaller upper-level gap |Phi(x) - Phi*| / Phi* than "
                  "unrolled descent-ascent and implicit differentiation (a Hessian-vector "
                  "product costs two gradient evaluations): worst ratio baseline gap / PANDA "
                  "gap over both baselines > 1 (NI gaps reported beside it)",
        op=">", threshold=1.0, expected=False, role="headline", unit="mean",
        source="Experiments demonstrate the superior performance of PANDA over closely related "
               "baselines"),
    "first_order_only": ClaimSpec(
        statement="PANDA \"does not require second-order information\": it builds no "
                  "second-order autograd graph and never calls the exact lower-level solver "
                  "(Newton with analytic Jacobians); the same detector fires on unrolled "
                  "differentiation",
        op="<=", threshold=0.0, expected=True, role="mechanism", unit="each",
        source="PANDA avoids computing UL hypergradients and does not require second-order "
               "information"),
    "detector_fires_on_unrolled": ClaimSpec(
        statement="The second-order detector fires on the unrolled descent-ascent baseline",
        op=">=", threshold=1.0, expected=True, role="check", unit="each", source=""),
    "implicit_matches_oracle": ClaimSpec(
        statement="Implicit differentiation at the exact equilibrium reaches the brute-force "
                  "Phi* within 1%",
        op="<", threshold=0.01, expected=True, role="check", unit="each", source=""),
    "landscape_exact": ClaimSpec(
        statement="The lower-level solver behind Phi and Phi* is exact: max NI gap over the "
                  "oracle grid < 1e-9",
        op="<", threshold=1e-9, expected=True, role="check", unit="each", source=""),
}
#: the name the package exported before issue 28 (kept for old imports)
SPECS = CLAIM_SPECS

#: What PANDA's own claims rest on besides the method: named in their notes.
SHORTCUTS = ("best responses by soft policy iteration with exact policy evaluation (a linear "
             "solve on the known model, standing in for the paper's sampled policy gradients; "
             "no gradient flows through them); Phi(x) and NI evaluated by exact lower-level "
             "solves (measurement only)")


def gaps(exp: dict, method: str) -> dict:
    """A method's final gaps: ``objective`` = |Phi(x) - Phi*| / Phi*, ``ni`` = exact NI gap
    of its own (pi, nu), >= 0 (a converged one can come out as -1e-13: rounding)."""
    fin = exp["final"][method]
    return {"objective": abs(fin["phi"] - exp["phi_star"]) / exp["phi_star"],
            "ni": max(fin["ni"], 0.0)}


def gap_ratios(exp: dict) -> dict[tuple[str, str], float]:
    """``gap_baseline / gap_PANDA`` for each related baseline and gap (> 1: PANDA better)."""
    ours = gaps(exp, "panda")
    return {(b, k): v / max(ours[k], 1e-300) for b in RELATED for k, v in gaps(exp, b).items()}


def baseline_comparison(exp: dict) -> tuple[float, str]:
    """``min`` over the related baselines and the two gaps of ``gap_baseline / gap_PANDA``
    (> 1: PANDA is better on every count), and the worst case's name."""
    ratios = gap_ratios(exp)
    worst = min(ratios, key=ratios.get)
    return ratios[worst], f"{worst[0]} on the {worst[1]} gap"


def sampled_gaps(exp: dict, method: str) -> dict:
    """The sampled comparison's final gaps of a method (as :func:`gaps`)."""
    fin = exp["sampled_final"][method]
    return {"objective": abs(fin["phi"] - exp["phi_star"]) / exp["phi_star"],
            "ni": max(fin["ni"], 0.0)}


def sampled_comparison(exp: dict) -> tuple[float, str]:
    """The headline: ``min`` over the related baselines of ``Phi gap_baseline / Phi gap_PANDA``
    in the sampled comparison (> 1: PANDA better than each), and the worst baseline."""
    ours = sampled_gaps(exp, "panda")["objective"]
    ratios = {b: sampled_gaps(exp, b)["objective"] / max(ours, 1e-300) for b in RELATED}
    worst = min(ratios, key=ratios.get)
    return ratios[worst], worst


def claims(seed: int = 0, scale: str = "quick", device: str = "cpu") -> list[Claim]:
    """Every claim at ``scale`` (``"quick"``: the Markov game S = 3), recomputed for ``seed``
    on ``device`` (the game's float64 tensors live there, so the soft Bellman backups of the
    best responses and of Shapley's iteration run in the Triton kernel on CUDA)."""
    resolve_device(device)  # a bad device fails here, before any work
    return claims_for(config_for(scale), seed, device=device)


def claims_for(cfg: ExperimentConfig, seed: int = 0, cache: bool = True,
               device: str = "cpu") -> list[Claim]:
    """The claims for an explicit config (the mutation tests freeze rho, warm-start, shorten
    or unroll PANDA). A failed computation gives NaN claims with the reason, not an exception;
    so does a claim whose methods the config did not run."""
    resolve_device(device)
    table = ClaimTable(PAPER, CLAIM_SPECS)
    with table.guard(CLAIM_SPECS):
        exp = (experiment(cfg, seed, device=device) if cache
               else run_experiment(cfg, seed, device=device))
    if table.claims:
        return table.claims
    add = table.add
    star = exp["phi_star"]
    fin = exp["final"]
    pc = cfg.panda
    start = "warm start at the exact saddle point of x0 (NOT the paper's method)" \
        if pc.warm_start else "cold start: x0 = 0, uniform policies"
    sched = (f"{start}; rho_k = {pc.rho0:g} + {pc.rho_growth:g} k, {pc.iterations} "
             f"Adam({pc.lr:g}) steps, {exp['budget']} oracle calls; {SHORTCUTS}")
    add("panda_optimal", abs(fin["panda"]["phi"] - star) / star,
        f"Phi(x_PANDA) = {fin['panda']['phi']:.6g} (exact lower-level solve at PANDA's x) vs "
        f"brute-force Phi* = {star:.6g}; {sched}")
    add("panda_equilibrium", fin["panda"]["ni"],
        f"exact NI of PANDA's final (x, pi, nu); final rho = "
        f"{exp['traces']['panda']['rho'][-1]:.3g}; {sched}")
    with table.guard(["beats_related_baselines_sampled"]):
        ratio, worst = sampled_comparison(exp)
        sf, sc = exp["sampled_final"], cfg.sampled
        per = "; ".join(
            f"{m}: Phi gap {g['objective']:.2e}, NI {g['ni']:.2e}, Adam step {sf[m]['lr']:g}, "
            f"{sf[m]['calls']} batches" for m, g in
            ((m, sampled_gaps(exp, m)) for m in ("panda",) + RELATED))
        old, old_worst = baseline_comparison(exp)
        b = cfg.baselines
        add("beats_related_baselines_sampled", ratio,
            f"worst: {worst}. {per}. Equal budget {sc.budget} gradient evaluations = "
            f"{sc.budget * exp['transitions_per_batch']} sampled transitions ({sc.samples} "
            f"next-state draw(s) per (s, a, b) per evaluation); one empirical model per outer "
            f"step from the batches it is charged for: PANDA 4 (one soft-policy-iteration "
            f"step per best response + 2 Danskin gradients), unrolled 3K = "
            f"{3 * b.unrolled_steps}, implicit T + 2L + 3 = "
            f"{b.implicit_inner_steps + 2 * b.implicit_solver_steps + 3} (a Hessian-vector "
            f"product = 2). Phi and NI by exact solves on the true game (measurement only). "
            f"Reported failing, not expected (0 of 5 fresh seeds): PANDA's cheap steps (4 "
            f"batches) give noisy, biased plug-in Danskin gradients (panda_sampled_bias.csv). "
            f"Exact-gradient comparison (the old measurement, worst over Phi and NI gaps): "
            f"{old:.3g} ({old_worst})")
    det = exp["detector"]
    unrolled_events = det["unrolled_window"]["events"]
    pr, pw = det["panda_run"], det["panda_window"]
    panda_events = pr["events"] + pw["events"]
    add("first_order_only", panda_events if unrolled_events > 0 else math.nan,
        f"events over the whole PANDA run (tensors saved during backward, create_graph calls, "
        f"exact lower-level solves: {pr['exact_solves']}, analytic Jacobians: "
        f"{pr['analytic_jacobians']}) + {cfg.detector_window} iterations under the full "
        f"detector (+ dispatch of every ATen op); the unrolled baseline gives "
        f"{unrolled_events} events in {cfg.unrolled_window} outer steps"
        + ("" if unrolled_events else " -- detector blind, claim void"))
    u = det["unrolled_window"]
    add("detector_fires_on_unrolled", unrolled_events,
        f"{u['ops']} backward ops with grad on, {u['saved']} tensors saved during backward, "
        f"{u['create_graph_calls']} create_graph calls in {cfg.unrolled_window} outer steps "
        f"(K = {cfg.baselines.unrolled_steps} descent-ascent steps each)")
    exact = exp["reference"]["implicit_exact"]
    add("implicit_matches_oracle", abs(exact["phi"] - star) / star,
        f"Phi(x_exact) = {exact['phi']:.6g}: two independent routes to Phi* (Adam with the "
        f"exact IFT hypergradient at Newton-solved equilibria -- a reference that uses exact "
        f"second-order solves, not a competitor -- vs derivative-free grid + zoom)")
    add("landscape_exact", exp["landscape"]["max_ni"],
        f"{cfg.oracle.grid}^2 grid on [-R, R]^2, R = {exp['radius']:.3g} (|x*| <= R is "
        f"proved by Phi >= lam |x|^2); max residual of the equilibrium equations "
        f"{exp['landscape']['max_residual']:.1e}")
    return table.claims
