"""The claims of ``lpds`` and how each is measured from one seed's experiment.

Roles (``icml26.claims.ROLES``). Headline, from the abstract: LP-DS "improves a frozen
generative policy" (vs the frozen BC policy), "return improvements of up to 25% over prior
baselines" (vs DSRL and vs residual RL, each tuned with LP-DS's budget), "higher action-space
entropy than unconstrained noise-space steering" and "improves sample efficiency" (both vs
DSRL). Mechanism: the trust region holds for the final policy ("constraining deviation from
the latent prior"). Check: its latents stay on the prior's support where DSRL's leave it (the
project page's contrast; a guard that the "unconstrained" baseline really leaves the prior,
which the abstract does not state).

Operating point (fixed before any result of this version): LP-DS has no single delta in the
abstract or the spec, so every LP-DS claim takes the WORST value over the figure's grid of
trust regions (``cfg.deltas``). Each baseline is tuned over a grid at least as large on its
own bound (``dsrl_bounds``, ``residual_scales``: 3 values against LP-DS's 2 deltas), its value
chosen on a validation split of its own (``val_return``, never the reported evaluation); the
tuned baseline is what every LP-DS claim compares with.
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
    method_groups,
    tuned,
)

CLAIMS_VERSION = 2  # 2: worst delta, final-policy trust region, DSRL contrast, tuned baselines

SUPPORT_LINE = 0.05  # the spec's line: LP-DS below 5% of latents off the 99% ball, DSRL above

RETURN_GAIN = "with return improvements of up to 25\\% over prior baselines"
CLAIM_SPECS = {
    "improves_over_bc": ClaimSpec(
        statement='LP-DS "improves a frozen generative policy": LP-DS return / the frozen BC '
                  "policy's return >= 1.10, worst over the trust-region grid",
        op=">=", threshold=1.10, expected=False, role="headline", unit="mean",
        source="improves a frozen generative policy by learning a compact noise-space "
               "perturbation before decoding"),
    "return_vs_dsrl": ClaimSpec(
        statement='LP-DS gives "return improvements of up to 25% over prior baselines" (here: '
                  "DSRL, tuned over 3 values of its noise-space bound, LP-DS over 2 deltas, "
                  "chosen on a validation split): relative return gain > 0, worst delta",
        op=">", threshold=0.0, expected=False, role="headline", unit="mean",
        source=RETURN_GAIN),
    "return_vs_residual": ClaimSpec(
        statement='LP-DS gives "return improvements of up to 25% over prior baselines" (here: '
                  "residual RL, tuned over 3 values of its action bound, LP-DS over 2 deltas, "
                  "chosen on a validation split): relative return gain > 0, worst delta",
        op=">", threshold=0.0, expected=False, role="headline", unit="mean",
        source=RETURN_GAIN),
    "trust_region_held": ClaimSpec(
        statement="The final LP-DS policy keeps E||Delta||^2 / delta <= 1.10 (2048 fresh "
                  "starts, worst delta)",
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
    "entropy_vs_dsrl": ClaimSpec(
        statement='LP-DS keeps "higher action-space entropy than unconstrained noise-space '
                  'steering": H(LP-DS) - H(tuned DSRL) >= 0.3 nats (worst delta, '
                  "Kozachenko-Leonenko k-NN)",
        op=">=", threshold=0.3, expected=True, role="headline", unit="mean",
        source="maintaining higher action-space entropy than unconstrained noise-space "
               "steering"),
    "sample_efficiency": ClaimSpec(
        statement='LP-DS "improves sample efficiency": episodes to 90% of final return, LP-DS '
                  "/ tuned DSRL <= 0.8 (worst delta)",
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
    dsrl_label, resid_label = tuned(res, groups["DSRL"]), tuned(res, groups["residual RL"])
    dsrl, resid = res[dsrl_label], res[resid_label]
    mut = " MUTATION: lambda frozen at 0." if cfg.freeze_lambda else ""
    common = (f"toy 2-D point mass, 8-waypoint chunks, {cfg.steer.iterations} x "
              f"{cfg.steer.n_envs} episodes per run, LP-DS worst over deltas "
              f"{list(cfg.deltas)} (the spec's 0.1 runs at paper scale only); prior and runs "
              f"cached per seed.{mut}")

    def grid(labels):
        return ", ".join(f"{k} {res[k]['final_return']:.3f} (val {res[k]['val_return']:.3f})"
                         for k in labels)

    lp_ret = ", ".join(f"d={d:g}: {r['final_return']:.3f}" for d, r in lp.items())
    out = {}
    # the spec's ratio LP-DS / BC, written 1 + relative gain so it stays meaningful for a
    # negative BC return (a tiny test config; quick-scale BC returns are positive)
    ratios = {d: 1 + _gain(r["final_return"], bc["final_return"]) for d, r in lp.items()}
    out["improves_over_bc"] = (
        min(ratios.values()),
        f"BC return {bc['final_return']:.3f}; LP-DS "
        + ", ".join(f"d={d:g}: {lp[d]['final_return']:.3f} ({x:.2f}x)" for d, x in ratios.items())
        + "; worst delta (v1 read the largest delta, chosen after d=0.5 failed a seed); "
        + common)
    for name, label, base, labels, what in (
            ("return_vs_dsrl", dsrl_label, dsrl, groups["DSRL"], "DSRL"),
            ("return_vs_residual", resid_label, resid, groups["residual RL"], "residual RL")):
        gains = {d: _gain(r["final_return"], base["final_return"]) for d, r in lp.items()}
        out[name] = (
            min(gains.values()),
            f"{what} grid (final return, validation return): {grid(labels)}; tuned: {label}; "
            f"LP-DS {lp_ret}; gain per delta "
            + ", ".join(f"d={d:g}: {x:+.1%}" for d, x in gains.items())
            + " (the abstract's 'up to 25%' is its best benchmark; the claim asks for a "
            "gain at every delta)")
    trust = {d: final_trust(r, d) for d, r in lp.items()}
    tail = {d: sum(r["history"]["delta_sq"][-10:]) / 10 / d for d, r in lp.items()}
    out["trust_region_held"] = (
        max(trust.values()),
        "final policy: " + ", ".join(f"d={d:g}: {x:.2f}" for d, x in trust.items())
        + "; for reference, v1's reading (mean of the last 10 training batches, the iterates "
        "rather than the deployed policy): "
        + ", ".join(f"d={d:g}: {x:.2f}" for d, x in tail.items()))
    off = {d: r["off_support"] for d, r in lp.items()}
    margin = min(dsrl["off_support"] - SUPPORT_LINE, SUPPORT_LINE - max(off.values()))
    out["latents_in_support"] = (
        margin,
        "share off the 99% ball: LP-DS " + ", ".join(f"d={d:g}: {x:.3f}" for d, x in off.items())
        + f"; tuned DSRL ({dsrl_label}) {dsrl['off_support']:.3f}; all DSRL: "
        + ", ".join(f"{k} {res[k]['off_support']:.3f}" for k in groups["DSRL"])
        + f"; BC (N(0, I)) {bc['off_support']:.3f}; 2048 evaluation latents, ball "
        "||w||^2 <= chi^2_{16, 0.99}; the claim needs LP-DS below 5% AND DSRL above it (v1 "
        "asked only the first, which DSRL passes as well)")
    gap = {d: r["final_entropy"] - dsrl["final_entropy"] for d, r in lp.items()}
    out["entropy_vs_dsrl"] = (
        min(gap.values()),
        f"H(tuned DSRL, {dsrl_label}) {dsrl['final_entropy']:.2f}, H(BC) "
        f"{bc['final_entropy']:.2f}, "
        + ", ".join(f"H(LP-DS d={d:g}) {lp[d]['final_entropy']:.2f}" for d in lp)
        + " nats (16-D chunks, 512 samples at 3 starts); every DSRL grid value: "
        + ", ".join(f"{k} {res[k]['final_entropy']:.2f}" for k in groups["DSRL"])
        + ". v1 compared with W=2 only, where DSRL's tanh-squashed latent with its SAC bonus "
        "spreads its actions wider than the N(0, I) prior LP-DS stays near (LP-DS 3.5-5.6 "
        "nats LOWER on seeds 0-4: fails); the tuned DSRL is W=1 on seeds 0-4 (the bound "
        "added after seeds 0-1, for return), whose latents fill only [-1, 1]^16 (LP-DS 9-10 "
        "nats higher: holds). The verdict rests on which bound DSRL's return favours")
    base_eps = episodes_to_fraction(dsrl)
    eff = {d: episodes_to_fraction(r) / base_eps for d, r in lp.items()}
    out["sample_efficiency"] = (
        max(eff.values()),
        ", ".join(f"d={d:g}: {x:.2f}" for d, x in eff.items())
        + f"; tuned DSRL ({dsrl_label}) reaches 90% of its final return at {base_eps:.0f} "
        "episodes (5-iteration moving average)")
    return out
