"""The claims of ``lpds`` and how each is measured from one seed's experiment.

Roles (``icml26.claims.ROLES``). Headline, from the abstract: LP-DS "improves a frozen
generative policy" (vs the frozen BC policy), "return improvements of up to 25% over prior
baselines" (vs DSRL and vs residual RL), "higher action-space entropy than unconstrained
noise-space steering" (vs the least-constrained DSRL) and "improves sample efficiency" (vs
DSRL). Mechanism: the trust region holds for the deployed policy ("constraining deviation from
the latent prior"). Check: its latents stay on the prior's support where DSRL's leave it (the
project page's contrast; a guard that the "unconstrained" baseline really leaves the prior,
which the abstract does not state).

Claims v3 (issue 46 item 5, fixed before any seed ran on it):
* symmetric tuning: every method gets 3 settings (LP-DS the spec's deltas {0.1, 0.5, 2}, DSRL
  W in {1, 2, 3}, residual RL c in {0.1, 0.3, 0.6}); each is read at the setting with the best
  return on ONE validation split shared by all (``val_return``, never the reported
  evaluation); the trust region and the support check stay worst over delta (constraints every
  delta must keep);
* ``entropy_vs_unconstrained`` (was ``entropy_vs_dsrl``, read against the tuned DSRL, W = 1,
  the most constrained box) compares with the grid's least-constrained DSRL (largest W);
* the trust region is read on the policy LP-DS deploys, its averaged iterate (the primal-dual
  guarantee's policy; v2 read the last iterate, kept in the note).
"""

from __future__ import annotations

import math

from icml26.claims import Claim, ClaimSpec, ClaimTable
from icml26.common import resolve_device
from icml26.lpds.experiments import (
    PAPER,
    LPDSConfig,
    config_for,
    episodes_to_fraction,
    experiment,
    final_trust,
    method_configs,
    method_groups,
    tuned,
)

CLAIMS_VERSION = 3  # 3: each method at its validation-best of 3 settings on one shared split,
#                     entropy vs the least-constrained DSRL, trust region of the averaged iterate

SUPPORT_LINE = 0.05  # the spec's line: LP-DS below 5% of latents off the 99% ball, DSRL above

RETURN_GAIN = "with return improvements of up to 25\\% over prior baselines"
CLAIM_SPECS = {
    "improves_over_bc": ClaimSpec(
        statement='LP-DS "improves a frozen generative policy": LP-DS return / the frozen BC '
                  "policy's return >= 1.10, LP-DS at its validation-best delta of 3",
        op=">=", threshold=1.10, expected=False, role="headline", unit="mean",
        source="improves a frozen generative policy by learning a compact noise-space "
               "perturbation before decoding"),
    "return_vs_dsrl": ClaimSpec(
        statement='LP-DS gives "return improvements of up to 25% over prior baselines" (here: '
                  "DSRL): relative return gain > 0, each method at its validation-best of 3 "
                  "settings (LP-DS delta, DSRL noise-space bound W) on one shared split",
        op=">", threshold=0.0, expected=False, role="headline", unit="mean",
        source=RETURN_GAIN),
    "return_vs_residual": ClaimSpec(
        statement='LP-DS gives "return improvements of up to 25% over prior baselines" (here: '
                  "residual RL): relative return gain > 0, each method at its validation-best "
                  "of 3 settings (LP-DS delta, residual action bound c) on one shared split",
        op=">", threshold=0.0, expected=False, role="headline", unit="mean",
        source=RETURN_GAIN),
    "trust_region_held": ClaimSpec(
        statement="The deployed LP-DS policy (the averaged primal-dual iterate) keeps "
                  "E||Delta||^2 / delta <= 1.10 (2048 fresh starts, worst delta)",
        op="<=", threshold=1.10, expected=True, role="mechanism", unit="each",
        source="LP-DS optimizes this perturbation with a Lagrangian trust-region objective, "
               "improving downstream value while constraining deviation from the latent "
               "prior"),
    "latents_in_support": ClaimSpec(
        statement="LP-DS keeps its latents on the prior's support where unconstrained DSRL "
                  "leaves it: share outside the prior's 99% chi^2 ball below 5% for LP-DS "
                  "(worst delta) and above 5% for the tuned DSRL; measured: the smaller of the "
                  "two margins",
        op=">", threshold=0.0, expected=False, role="check", unit="each", source=""),
    "entropy_vs_unconstrained": ClaimSpec(
        statement='LP-DS keeps "higher action-space entropy than unconstrained noise-space '
                  'steering": H(LP-DS) - H(DSRL at the grid\'s least-constrained bound, W = 3) '
                  ">= 0.3 nats (LP-DS at its validation-best delta, Kozachenko-Leonenko k-NN)",
        op=">=", threshold=0.3, expected=False, role="headline", unit="mean",
        source="maintaining higher action-space entropy than unconstrained noise-space "
               "steering"),
    "sample_efficiency": ClaimSpec(
        statement='LP-DS "improves sample efficiency": episodes to 90% of final return, LP-DS '
                  "/ DSRL <= 0.8, each at its validation-best setting",
        op="<=", threshold=0.8, expected=False, role="headline", unit="mean",
        source="LP-DS improves sample efficiency, success, and return"),
}


def claims(seed: int = 0, scale: str = "quick", device: str = "cpu") -> list[Claim]:
    """Every claim of the paper at ``scale``, recomputed for ``seed`` on ``device`` (the
    prior, the steering networks and the rollouts run there; "cuda" without a GPU raises a
    ValueError naming --device before any work)."""
    dev = resolve_device(device)
    return claims_for(config_for(scale), seed, dev)


def claims_for(cfg: LPDSConfig, seed: int = 0, device: str = "cpu") -> list[Claim]:
    """The claims for an explicit config (the mutation test sets ``freeze_lambda``)."""
    dev = resolve_device(device)
    table = ClaimTable(PAPER, CLAIM_SPECS)
    with table.guard(list(CLAIM_SPECS)):
        _add(table, measure(cfg, experiment(cfg, seed, device=dev)))
    return table.claims


def claims_from(cfg: LPDSConfig, res: dict) -> list[Claim]:
    """The claims from given results ``{label: result}`` (a mutation test swaps in LP-DS runs
    trained with an injected bug, next to the cached unmutated baselines)."""
    table = ClaimTable(PAPER, CLAIM_SPECS)
    with table.guard(list(CLAIM_SPECS)):
        _add(table, measure(cfg, res))
    return table.claims


def _add(table: ClaimTable, rows: dict[str, tuple[float, str]]) -> None:
    # every value is measured before the first row is added, so a failed measurement leaves
    # the guard's NaN rows only
    for name, (value, note) in rows.items():
        table.add(name, value, note)


def _gain(x: float, base: float) -> float:
    """Relative gain ``(x - base) / |base|`` (nan for a zero baseline)."""
    return (x - base) / abs(base) if base != 0 else math.nan


def measure(cfg: LPDSConfig, res: dict) -> dict[str, tuple[float, str]]:
    """``{claim: (measured, note)}`` from one seed's results ``{label: result}`` (what
    :func:`experiments.experiment` returns; a test may swap in mutated LP-DS runs)."""
    groups = method_groups(cfg)
    lp = {d: res[k] for d, k in zip(cfg.deltas, groups["LP-DS"])}
    bc = res["BC"]
    lp_label = tuned(res, groups["LP-DS"])
    dsrl_label, resid_label = tuned(res, groups["DSRL"]), tuned(res, groups["residual RL"])
    best, dsrl, resid = res[lp_label], res[dsrl_label], res[resid_label]
    mut = " MUTATION: lambda frozen at 0." if cfg.freeze_lambda else ""
    common = (f"toy 2-D point mass, 8-waypoint chunks, {cfg.steer.iterations} x "
              f"{cfg.steer.n_envs} episodes per run; LP-DS deploys its averaged iterate; every "
              f"method at its validation-best of {len(cfg.deltas)} settings on one shared "
              f"split; prior and runs cached per seed.{mut}")

    def grid(labels):
        return ", ".join(f"{k} {res[k]['final_return']:.3f} (val {res[k]['val_return']:.3f})"
                         for k in labels)

    lp_grid = grid(groups["LP-DS"])
    out = {}
    # the spec's ratio LP-DS / BC, written 1 + relative gain so it stays meaningful for a
    # negative BC return (a tiny test config; quick-scale BC returns are positive)
    ratios = {d: 1 + _gain(r["final_return"], bc["final_return"]) for d, r in lp.items()}
    out["improves_over_bc"] = (
        1 + _gain(best["final_return"], bc["final_return"]),
        f"BC return {bc['final_return']:.3f}; LP-DS (final return, validation return): "
        f"{lp_grid}; chosen: {lp_label}; ratio per delta "
        + ", ".join(f"d={d:g}: {x:.2f}x" for d, x in ratios.items())
        + f" (v2 read the worst delta of 2); {common}")
    for name, label, base, labels, what in (
            ("return_vs_dsrl", dsrl_label, dsrl, groups["DSRL"], "DSRL"),
            ("return_vs_residual", resid_label, resid, groups["residual RL"], "residual RL")):
        gains = {d: _gain(r["final_return"], base["final_return"]) for d, r in lp.items()}
        out[name] = (
            _gain(best["final_return"], base["final_return"]),
            f"{what} grid (final return, validation return): {grid(labels)}; chosen: {label}; "
            f"LP-DS grid: {lp_grid}; chosen: {lp_label}; gain per delta "
            + ", ".join(f"d={d:g}: {x:+.1%}" for d, x in gains.items())
            + " (v2 read the worst delta against the baseline's best; the abstract's 'up to "
            "25%' is its best benchmark)")
    trust = {d: final_trust(r, d) for d, r in lp.items()}
    last = {d: r["last"]["final_delta_sq"] / d for d, r in lp.items() if "last" in r}
    out["trust_region_held"] = (
        max(trust.values()),
        "deployed averaged iterate (mean Delta over the last half of actor iterates): "
        + ", ".join(f"d={d:g}: {x:.2f}" for d, x in trust.items())
        + "; for reference, v2's reading (the last primal-dual iterate, same starts): "
        + ", ".join(f"d={d:g}: {x:.2f}" for d, x in last.items()))
    off = {d: r["off_support"] for d, r in lp.items()}
    margin = min(dsrl["off_support"] - SUPPORT_LINE, SUPPORT_LINE - max(off.values()))
    out["latents_in_support"] = (
        margin,
        "share off the 99% ball: LP-DS " + ", ".join(f"d={d:g}: {x:.3f}" for d, x in off.items())
        + f"; tuned DSRL ({dsrl_label}) {dsrl['off_support']:.3f}; all DSRL: "
        + ", ".join(f"{k} {res[k]['off_support']:.3f}" for k in groups["DSRL"])
        + f"; BC (N(0, I)) {bc['off_support']:.3f}; 2048 evaluation latents, ball "
        "||w||^2 <= chi^2_{16, 0.99}; the claim needs LP-DS (every delta) below 5% AND DSRL "
        "above it (v1 asked only the first, which DSRL passes as well)")
    free = max(groups["DSRL"], key=lambda k: method_configs(cfg)[k].dsrl_bound)
    gaps = {k: best["final_entropy"] - res[k]["final_entropy"] for k in groups["DSRL"]}
    out["entropy_vs_unconstrained"] = (
        gaps[free],
        f"H(LP-DS, {lp_label}) {best['final_entropy']:.2f} nats against the least-constrained "
        f"DSRL ({free}) {res[free]['final_entropy']:.2f}; gap against every DSRL bound: "
        + ", ".join(f"{k} {x:+.2f}" for k, x in gaps.items())
        + f"; H(BC) {bc['final_entropy']:.2f}, H(LP-DS) per delta "
        + ", ".join(f"d={d:g} {r['final_entropy']:.2f}" for d, r in lp.items())
        + " (16-D chunks, 512 samples at 3 starts). v2 (entropy_vs_dsrl) compared with the "
        "tuned DSRL, W = 1 on every seed, the most constrained box [-1, 1]^16 (a bound added "
        "after seeds 0-1); the abstract contrasts with UNCONSTRAINED steering")
    base_eps = episodes_to_fraction(dsrl)
    eff = {d: episodes_to_fraction(r) / base_eps for d, r in lp.items()}
    out["sample_efficiency"] = (
        episodes_to_fraction(best) / base_eps,
        f"chosen {lp_label}; per delta "
        + ", ".join(f"d={d:g}: {x:.2f}" for d, x in eff.items())
        + f"; DSRL ({dsrl_label}) reaches 90% of its final return at {base_eps:.0f} "
        "episodes (5-iteration moving average of the training iterates' returns)")
    return out
