"""The claims of ``selfflow``.

Roles (issue 28).  The abstract's result is that Self-Flow "integrates representation learning
within the generative framework" and that Dual-Timestep Scheduling's information asymmetry
"drives learning strong representations alongside generative capabilities": three headlines.

* ``probe_gain`` (headline, reported failing): best-layer linear-probe accuracy, Self-Flow -
  vanilla FM, worst of the three probe settings; holds on 6 of 32 swept seeds.
* ``asymmetry_matters`` (mechanism, reported failing): the same against same-timestep
  self-distillation (the asymmetry switched off); holds on 9 of 32 swept seeds.
* ``generation_not_sacrificed`` (headline, expected): non-inferiority of the held-out
  flow-matching loss, Self-Flow / vanilla <= 1 + the margin below.  (The abstract says
  "superior ... generation"; at this scale only non-inferiority is tested.)

The non-inferiority margin (``CLAIMS_VERSION`` 2).  Version 1 used 1.05 (a 5% margin), which a
real regression passes: with the per-token timesteps dropped (``timesteps="per_image"``) the
ratio is about 1.04 on seed 0.  The margin is now fixed from vanilla FM alone, before any
seed >= 5 was run: the relative seed-to-seed standard deviation of vanilla's held-out FM loss
over seeds 0-4 at quick scale (0.6151, 0.6150, 0.6165, 0.6074, 0.6144: mean 0.61368, SD
0.00358, sigma = 0.584%), times 3: ``threshold = 1 + 3 sigma = 1.0175``.  Why 3: the ratio of
two runs that each carry a relative noise sigma has a noise of about sqrt(2) sigma when they
are independent (the paired design -- same split, batches and evaluation noise -- only
lowers it), so 3 sigma is about 2.1 standard deviations of the ratio: a one-sided false alarm
of about 2% for a method exactly as good as vanilla, while anything worse than 1.75% of
vanilla's loss is called a regression.  It is a quick-scale number; at the paper preset the
same threshold is applied (not re-derived).

On CUDA (``device="cuda"``): the random numbers are the CPU's (same batches, noise, initial
weights), but float32 matmuls, attention and reductions on the GPU are not bit-identical to
the CPU's and 600 AdamW steps amplify the difference, so CUDA models are different models.
Expected agreement with the CPU values: the FM-loss ratio within about vanilla's seed spread
(0.6%), the probe gaps within a few held-out digits (~0.01); not yet measured (no GPU in the
session that wrote this), to be recorded by ``benchmarks/gpu_check.sh``.
"""

from __future__ import annotations

from icml26.claims import Claim, ClaimSpec, ClaimTable
from icml26.common import resolve_device
from icml26.selfflow.experiments import (
    PAPER,
    PROBES,
    SelfFlowConfig,
    best_layer,
    config_for,
    probe_gaps,
    run_all,
)

#: 2: the non-inferiority margin of ``generation_not_sacrificed`` from vanilla's seed spread
#: (1.05 -> 1.0175); roles.
CLAIMS_VERSION = 2

#: vanilla FM's held-out loss on seeds 0-4 at quick scale (the margin's only input)
VANILLA_FM_SEEDS_0_4 = (0.61505, 0.61502, 0.61648, 0.60742, 0.61444)
VANILLA_REL_SD = 0.005836  # sample SD / mean of the five values above
MARGIN_MULTIPLE = 3
GENERATION_THRESHOLD = 1.0175  # 1 + MARGIN_MULTIPLE * VANILLA_REL_SD, rounded

#: name: ClaimSpec (statement, op, threshold, expected, role, unit, source)
CLAIM_SPECS = {
    "generation_not_sacrificed": ClaimSpec(
        statement="Self-Flow learns representations \"alongside generative capabilities\": its "
                  "held-out flow-matching loss (uniform tau) is not worse than vanilla flow "
                  "matching's at equal compute, within a non-inferiority margin of 3x vanilla's "
                  "relative seed-to-seed SD (ratio <= 1.0175)",
        op="<=", threshold=GENERATION_THRESHOLD, expected=True, role="headline", unit="mean",
        source="This drives learning strong representations alongside generative capabilities "
               "without external supervision"),
    "probe_gain": ClaimSpec(
        statement="Self-Flow \"integrates representation learning within the generative "
                  "framework\" and learns better representations than vanilla flow matching: "
                  "best-layer linear-probe accuracy of the digit class, Self-Flow - vanilla, "
                  "worst probe setting (tau 0.3 / 0.6 / 0.6 with half the tokens at full "
                  "noise)",
        op=">", threshold=0.0, expected=False, role="headline", unit="mean",
        source="a self-supervised flow matching paradigm that integrates representation "
               "learning within the generative framework"),
    "asymmetry_matters": ClaimSpec(  # the abstract's account of WHY its representations are
        # strong
        statement="Dual-Timestep Scheduling's \"information asymmetry\" \"drives learning "
                  "strong representations\": best-layer probe accuracy, Self-Flow - "
                  "same-timestep self-distillation (no asymmetry), worst probe setting",
        op=">", threshold=0.0, expected=False, role="mechanism", unit="mean",
        source="creating an information asymmetry that forces the model to infer missing "
               "information from corrupted inputs"),
}


def claims(seed: int = 0, scale: str = "quick", device: str = "cpu") -> list[Claim]:
    """Every claim of the paper at ``scale``, recomputed for ``seed`` on ``device`` (models
    cached per device type; on CUDA the no-grad passes run the Triton ``ln_modulate``)."""
    resolve_device(device)  # a bad device fails here, before any training
    return claims_for(config_for(scale), seed, device)


def gap_note(results: dict, a: str, b: str) -> str:
    """Per probe setting: best layer and accuracy of both models and the gap."""
    rows = [r for v in (a, b) for r in results[v]["probes"]]
    parts = []
    for p, _, _ in PROBES:
        (acc_a, la), (acc_b, lb) = best_layer(rows, a, p), best_layer(rows, b, p)
        parts.append(f"{p}: {acc_a:.3f} (block {la}) vs {acc_b:.3f} (block {lb}), "
                     f"{acc_a - acc_b:+.3f}")
    return "; ".join(parts)


def scale_note(cfg: SelfFlowConfig) -> str:
    tc = cfg.train
    return (f"tiny DiT d={tc.model.dim}, {tc.model.depth} blocks, {tc.steps} steps of batch "
            f"{tc.batch} for every model (the distilled ones also run a no-grad EMA teacher "
            "forward per step); models cached per config and seed")


def add_generation(table: ClaimTable, res: dict, cfg: SelfFlowConfig) -> Claim:
    """``generation_not_sacrificed`` from the results of (at least) vanilla and Self-Flow."""
    fm = {v: r["fm_loss"] for v, r in res.items()}
    others = ", ".join(f"{name} {fm[v] / fm['vanilla']:.3f}x" for v, name in
                       (("selfflow_sep", "separated attention"), ("same_t", "same-t"))
                       if v in fm)
    mutated = "" if cfg.train.timesteps == "per_token" else \
        " MUTATED: per-token timesteps dropped (the DiT conditioned on each image's mean level)."
    return table.add(
        "generation_not_sacrificed", fm["selfflow"] / fm["vanilla"],
        f"held-out FM loss vanilla {fm['vanilla']:.4f}, Self-Flow {fm['selfflow']:.4f}"
        + (f" ({others})" if others else "") + f"; {cfg.n_test} held-out digits x "
        f"{cfg.fm_draws} stratified tau. Margin (fixed before seeds >= 5, from vanilla only): "
        f"{MARGIN_MULTIPLE} x vanilla's relative seed-to-seed SD over seeds 0-4 "
        f"({VANILLA_REL_SD:.2%}) = {GENERATION_THRESHOLD - 1:.2%}; version 1's 5% margin let a "
        f"real bug through (per-token timesteps dropped: 1.04x on seed 0). Only "
        f"non-inferiority is tested, not the abstract's \"superior\" generation; "
        f"{scale_note(cfg)}; the paper's scale (ImageNet, video, audio; FID) is out of reach."
        + mutated)


def generation_claim(cfg: SelfFlowConfig, seed: int = 0, device: str = "cpu") -> Claim:
    """``generation_not_sacrificed`` alone: trains (or loads) vanilla and Self-Flow only (the
    mutation test's cheap path)."""
    resolve_device(device)
    table = ClaimTable(PAPER, CLAIM_SPECS)
    with table.guard(["generation_not_sacrificed"]):
        add_generation(table, run_all(cfg, seed, ("vanilla", "selfflow"), device=device), cfg)
    return table.claims[0]


def claims_for(cfg: SelfFlowConfig, seed: int = 0, device: str = "cpu") -> list[Claim]:
    """The claims for an explicit config (the mutation tests change its training config)."""
    resolve_device(device)
    table = ClaimTable(PAPER, CLAIM_SPECS)
    scale = scale_note(cfg)
    names = list(CLAIM_SPECS)
    with table.guard(names):
        res = run_all(cfg, seed, device=device)
        add_generation(table, res, cfg)
        gain = probe_gaps(res, "selfflow", "vanilla")
        table.add("probe_gain", min(gain.values()),
                  f"{gap_note(res, 'selfflow', 'vanilla')}; headline, reported failing (not "
                  f"expected): of seeds 0-6 it holds on seed 2 only, of 32 swept seeds on 6 "
                  f"(the spec's prototype found no consistent sign either; "
                  f"benchmarks/selfflow/selfflow_seeds.csv): at this scale Self-Flow's "
                  f"representations are not better than vanilla FM's; {scale}")
        asym = probe_gaps(res, "selfflow", "same_t")
        table.add("asymmetry_matters", min(asym.values()),
                  f"{gap_note(res, 'selfflow', 'same_t')}; mechanism, reported failing (not "
                  f"expected): of seeds 0-6 it holds on seed 2 only, of 32 swept seeds on 9 "
                  f"(the follow-up paper arXiv 2607.02508 questions the mechanism); {scale}")
    return table.claims
