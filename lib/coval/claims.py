"""The claims of ``coval``: the claim rows and how each is measured from the experiments.

Binding (expected on seeds 0-4 at quick scale): ``counterfactual_exact`` and
``visibility_informative``.  Reported: ``coval_gain`` (the auxiliary losses on a tiny 1-D net).
"""

from __future__ import annotations

from icml26.claims import Claim, ClaimTable
from icml26.common import resolve_device
from icml26.coval.experiments import PAPER, VARIANTS, COVALConfig, config_for, replicate

#: name: (statement, op, threshold, expected, role)
CLAIM_SPECS = {
    "counterfactual_exact": ("Factual and counterfactual scans differ only inside the "
                             "anomaly's angular shadow: max |factual - counterfactual| outside "
                             "it is 0", "<=", 0.0, True, "check"),
    "visibility_informative": ("Free-space carving (hit/free/unknown) channels help: point AP "
                               "of the segmentation-only model with them minus range only, "
                               "held-out anomalies, mean of {n} seeds", ">=", 0.03, True,
                               "mechanism"),
    "coval_gain": ("Full COVAL (L_seg + L_VVCR + L_VICC) beats segmentation only (\"COVAL "
                   "achieves state-of-the-art performance\"; \"improving anomaly sensitivity "
                   "at test time\"): AP(full) - AP(seg-only), held-out anomalies, mean of {n} "
                   "seeds", ">=", 0.03, False, "headline"),
}
DERIVED = ("method derived from the abstract (no paper text or code found); 2-D toy, not "
           "STU / SemanticKITTI")


def claims(seed: int = 0, scale: str = "quick", device: str = "cpu") -> list[Claim]:
    """Every claim of the paper at ``scale``, recomputed for ``seed`` on ``device`` (rays cast
    and nets trained there; scenes are drawn with numpy, noise and batches on the CPU
    generator)."""
    dev = resolve_device(device)
    return claims_for(config_for(scale), seed, dev)


def claims_for(cfg: COVALConfig, seed: int = 0, device: str = "cpu",
               progress=None) -> list[Claim]:
    """The claims for an explicit config (the mutation tests set ``jitter`` /
    ``vvcr_target``)."""
    dev = resolve_device(device)
    table = ClaimTable(PAPER, CLAIM_SPECS)
    names = ("counterfactual_exact", "visibility_informative", "coval_gain")
    with table.guard(names):
        reps = [replicate(cfg, seed + k, (VARIANTS[0], "seg-only", "full COVAL"), progress,
                          dev)
                for k in range(cfg.n_seeds)]
        gap = max(r["exact_gap"] for r in reps)
        table.add("counterfactual_exact", gap,
                  f"worst beam over {cfg.n_seeds} x ({cfg.n_train} train + {cfg.n_test} test) "
                  f"scenes, {cfg.n_beams} beams, clean ranges; counterfactual = anomaly sides "
                  f"collapsed to zero length (non-occluding), sensor jitter {cfg.jitter} m")

        def mean_gap(a, b):
            diffs = [r[a]["ap"] - r[b]["ap"] for r in reps]
            return sum(diffs) / len(diffs), diffs

        def aps(v):
            return ", ".join(f"{r[v]['ap']:.3f}" for r in reps)

        n = cfg.n_seeds
        vis, d_vis = mean_gap("seg-only", VARIANTS[0])
        table.add("visibility_informative", vis,
                  f"AP range only [{aps(VARIANTS[0])}] -> with carving [{aps('seg-only')}] "
                  f"(per-seed gaps {', '.join(f'{d:+.3f}' for d in d_vis)}); the carving "
                  f"channels are a function of the same noisy scan ({cfg.n_bins} log bins), "
                  f"so the gain is representational; {DERIVED}",
                  statement=CLAIM_SPECS["visibility_informative"][0].format(n=n))
        gain, d_gain = mean_gap("full COVAL", "seg-only")
        table.add("coval_gain", gain,
                  f"AP seg-only [{aps('seg-only')}] -> full [{aps('full COVAL')}] (per-seed "
                  f"{', '.join(f'{d:+.3f}' for d in d_gain)}); weights w_vvcr={cfg.w_vvcr}, "
                  f"w_vicc={cfg.w_vicc}, VVCR target {cfg.vvcr_target}; a {cfg.hidden}-channel "
                  f"circular conv net, {cfg.steps} steps; reported (not binding); {DERIVED}",
                  statement=CLAIM_SPECS["coval_gain"][0].format(n=n))
    return table.claims
