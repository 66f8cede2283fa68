"""The claims of ``selfflow``.

Binding: ``generation_not_sacrificed`` (held-out flow-matching loss of Self-Flow over
vanilla flow matching <= 1.05).  Reported (``expected=False``: they do not hold on every seed
0-4 at this scale): ``probe_gain`` and ``asymmetry_matters``, each the worst case over the
three probe settings of the best-layer accuracy difference.
"""

from __future__ import annotations

from icml26.claims import Claim, ClaimTable
from icml26.selfflow.experiments import (
    PAPER,
    PROBES,
    SelfFlowConfig,
    best_layer,
    config_for,
    probe_gaps,
    run_all,
)

#: name: (statement, op, threshold, expected)
CLAIM_SPECS = {
    "generation_not_sacrificed": (
        "Self-Flow keeps generation: its held-out flow-matching loss (uniform tau) is <= "
        "1.05x vanilla flow matching's at equal compute", "<=", 1.05, True),
    "probe_gain": (
        "Self-Flow learns better representations than vanilla flow matching: best-layer "
        "linear-probe accuracy of the digit class, Self-Flow - vanilla, worst probe setting "
        "(tau 0.3 / 0.6 / 0.6 with half the tokens at full noise)", ">", 0.0, False),
    "asymmetry_matters": (
        "The noise asymmetry matters: best-layer probe accuracy, Self-Flow - same-timestep "
        "self-distillation, worst probe setting", ">", 0.0, False),
}


def claims(seed: int = 0, scale: str = "quick") -> list[Claim]:
    """Every claim of the paper at ``scale``, recomputed for ``seed`` (models cached)."""
    return claims_for(config_for(scale), seed)


def gap_note(results: dict, a: str, b: str) -> str:
    """Per probe setting: best layer and accuracy of both models and the gap."""
    rows = [r for v in (a, b) for r in results[v]["probes"]]
    parts = []
    for p, _, _ in PROBES:
        (acc_a, la), (acc_b, lb) = best_layer(rows, a, p), best_layer(rows, b, p)
        parts.append(f"{p}: {acc_a:.3f} (block {la}) vs {acc_b:.3f} (block {lb}), "
                     f"{acc_a - acc_b:+.3f}")
    return "; ".join(parts)


def claims_for(cfg: SelfFlowConfig, seed: int = 0) -> list[Claim]:
    """The claims for an explicit config (the mutation tests change its training config)."""
    table = ClaimTable(PAPER, CLAIM_SPECS)
    tc = cfg.train
    scale = (f"tiny DiT d={tc.model.dim}, {tc.model.depth} blocks, {tc.steps} steps of batch "
             f"{tc.batch} for every model (the distilled ones also run a no-grad EMA teacher "
             "forward per step); models cached per config and seed")
    names = list(CLAIM_SPECS)
    with table.guard(names):
        res = run_all(cfg, seed)
        fm = {v: r["fm_loss"] for v, r in res.items()}
        ratio = fm["selfflow"] / fm["vanilla"]
        table.add("generation_not_sacrificed", ratio,
                  f"held-out FM loss vanilla {fm['vanilla']:.4f}, Self-Flow {fm['selfflow']:.4f}"
                  f" (separated attention {fm['selfflow_sep'] / fm['vanilla']:.3f}x, same-t "
                  f"{fm['same_t'] / fm['vanilla']:.3f}x); {cfg.n_test} held-out digits x "
                  f"{cfg.fm_draws} stratified tau; {scale}; the paper's scale (ImageNet, "
                  "video, audio; FID) is out of reach")
        gain = probe_gaps(res, "selfflow", "vanilla")
        table.add("probe_gain", min(gain.values()),
                  f"{gap_note(res, 'selfflow', 'vanilla')}; not expected: of seeds 0-6 it "
                  f"holds on seed 2 only (the spec's prototype found no consistent sign "
                  f"either; benchmarks/selfflow_seeds.csv); {scale}")
        asym = probe_gaps(res, "selfflow", "same_t")
        table.add("asymmetry_matters", min(asym.values()),
                  f"{gap_note(res, 'selfflow', 'same_t')}; not expected: of seeds 0-6 it holds "
                  f"on seed 2 only (the follow-up paper arXiv 2607.02508 questions the "
                  f"mechanism); {scale}")
    return table.claims
