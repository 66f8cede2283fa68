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

#: No ``CLAIMS_VERSION`` bump (it stays 1): issue 28 gave the rows roles and quoted the
#: abstract, but no measurement, op, threshold or expectation changed.
#: name: ClaimSpec. Roles (issue 28): the abstract's result
#: is "Experiments demonstrate the superior performance of PANDA over closely related
#: baselines" -- the headline, measured by ``beats_related_baselines``; it holds on 3 of 32
#: seeds (before the numeric pins) and stays reported failing. What holds is the method's
#: own behaviour -- first-order convergence to a stationary point that is a saddle point of
#: the lower level (mechanism); the rest are harness checks.
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
    "beats_related_baselines": ClaimSpec(
        statement="\"Experiments demonstrate the superior performance of PANDA over closely "
                  "related baselines\": PANDA beats unrolled descent-ascent and implicit "
                  "differentiation at equal first-order oracle calls from the same start: worst "
                  "ratio baseline gap / PANDA gap over both baselines and both gaps (objective, "
                  "NI) > 1",
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
    with table.guard(["beats_related_baselines"]):
        ratio, worst = baseline_comparison(exp)
        ratios = gap_ratios(exp)
        ahead = ", ".join(f"{b} {k} x{r:.2g}" for (b, k), r in ratios.items() if r > 1)
        behind = ", ".join(f"{b} {k} x{r:.2g}" for (b, k), r in ratios.items() if r <= 1)
        ours = gaps(exp, "panda")
        per = "; ".join(f"{b}: objective {g['objective']:.2e}, NI {g['ni']:.2e} in "
                        f"{fin[b]['calls']} calls" for b, g in
                        ((b, gaps(exp, b)) for b in RELATED))
        b = cfg.baselines
        add("beats_related_baselines", ratio,
            f"worst: {worst}. Gap ratios baseline / PANDA: PANDA ahead on "
            f"[{ahead or 'none'}], not ahead on [{behind or 'none'}]. The abstract's headline, "
            f"reported failing, not expected (fails on seeds 0-6; holds on 3 of 32 swept "
            f"seeds): PANDA's NI stays O(1/rho_k) under its penalty while the "
            f"baselines' GDA lower level converges to rounding once x settles, and the implicit "
            f"method's objective gap is on some seeds below PANDA's. PANDA: objective "
            f"{ours['objective']:.2e}, NI {ours['ni']:.2e} in "
            f"{fin['panda']['calls']} calls; {per}. Same start (x0 = 0, uniform policies), same "
            f"Adam({b.lr:g}) step on x with the same anneal; GDA step {b.inner_step_size:g} on "
            f"logits, K = {b.unrolled_steps} unrolled steps, T = {b.implicit_inner_steps} GDA "
            f"steps + L = {b.implicit_solver_steps} MINRES Hessian-vector products per implicit "
            f"step (a call = one value with its gradient, one Hessian-vector product, or one "
            f"unrolled step differentiated back through); PANDA's {SHORTCUTS}")
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
