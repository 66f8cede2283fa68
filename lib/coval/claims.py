"""The claims of ``coval``: the claim rows and how each is measured from the experiments.

Binding: ``counterfactual_exact`` and ``visibility_informative``.  Reported: ``coval_gain``
(the auxiliary losses on a tiny 1-D net).

CLAIMS_VERSION 2 (issue 35, the second design, fixed before any seed above 6 was run):

* What failed: ``visibility_informative`` held on 2 of 7 seeds (+0.012..+0.036 against 0.03,
  ``benchmarks/coval/coval_seeds_first_design.csv``).  Its channels (hit / free / unknown carving)
  were computed from the same single scan: a function of its ranges, so they presented the
  range differently but added no information (``benchmarks/coval/coval_diagnosis.csv``: a per-beam
  probe reads no more of the label from them than from the range alone).
* What changed: the sensor moves.  Each scene is seen in ``n_sweeps`` = 5 sweeps 1.5 m apart
  along a straight path through the origin (the path is kept clear); the labelled sweep is
  the middle one.  The visibility channels add, on each range bin this sweep's return
  occludes, the fraction of the other sweeps that saw that cell free (carved) or hit
  (``model.sweep_channels``): evidence about the occlusion void that a single range image
  does not carry.  The counterfactual is built as before, in every sweep (anomaly sides
  collapsed), and ``counterfactual_exact`` now takes the worst beam over all five sweeps,
  each outside its own shadow.  The range-only control, the thresholds and the losses are
  unchanged; the labels are the middle sweep's.
* How it was chosen (replicates 0-1 only, ``benchmarks/coval/coval_diagnosis.py``): a 2 m path
  with the other sweeps' channels on every cell, then a 6 m path, gained nothing over the
  single-scan carving in the conv net; a 6 m path with the channels on the occluded cells
  only did.  Seed 0 was then run once as a sanity check; seeds 7-11 were run only after this
  design was committed.
* Measured (``benchmarks/coval/coval_seeds.csv``, one empty cache per seed):
  ``counterfactual_exact`` 0 on seeds 0-11; ``visibility_informative`` +0.052..+0.072 on seeds 0-6
  and +0.071..+0.090 on fresh seeds 7-11 (12/12); ``coval_gain`` -0.069..-0.034 (fails 12/12, still
  not expected).

CLAIMS_VERSION 3 (issue 47, the headline's second design; written down before any run):

* What failed: ``coval_gain`` on 12/12 seeds (-0.069..-0.034).  The audit's cause: L_VVCR
  was taken on the labelled anomaly beams only, so the reconstruction head was never asked
  to say "no void here" on the other beams: it learned nothing that separates anomalies
  from the rest, and in a 16-channel trunk it competed with segmentation.  The abstract's
  VVCR "models occlusion-induced missing regions", which takes every beam.
* What changed: L_VVCR on every beam with a return, target log r_cf - log r_f (the void's
  depth in log range; 0 outside the anomaly's shadow, where the scans are identical;
  ``model.vvcr_loss``).  Each variant's loss weights are chosen on a validation split: 128
  more scenes per replicate with the training shapes (never the held-out ones), by the
  variant's own validation point AP, every weight it uses from the grid {0.3, 3.0} (a
  decade around the first design's 1.0; +VVCR and +VICC: 2 configs, full COVAL: the 2 x 2
  product; seg-only and the range-only control have no weight).  The grid was fixed in
  writing before any run; test AP never enters the choice.
* Unchanged: the threshold (0.03), the op, the role and unit, the net, the data, seg-only
  (bit for bit the same model as before), the binding claims.
* Diagnosis (replicates 0-1 only, ``benchmarks/coval/coval_vvcr_diagnosis.py``, w = 1): under
  the old placement the head predicted the anomaly's void well (0.76 against 0.77 in log
  range) and a void of 0.21-0.41 on every other beam; on every beam it predicts ~0.02 on the
  others but shrinks the anomaly's voids to 0.08-0.11.  Segmentation AP at w = 1: seg-only
  0.215 / 0.185, +VVCR before 0.125 / 0.146, after 0.149 / 0.167: the cost is reduced, not
  removed.
* Measured (``benchmarks/coval/coval_seeds.csv``; fresh seeds 100-104 swept first, then 0-15):
  ``coval_gain`` mean -0.007, BCa [-0.011, -0.002], -0.025..+0.012, 0/16 (was -0.049); fresh
  seeds -0.018..+0.001, 0/5.  Still fails; still not expected.  Validation chose the
  smallest weights (0.3, 0.3) for full COVAL on 19 of 25 replicates.  The binding claims are
  unchanged (the same models).
"""

from __future__ import annotations

from icml26.claims import Claim, ClaimSpec, ClaimTable
from icml26.common import resolve_device
from icml26.coval.experiments import PAPER, VARIANTS, COVALConfig, config_for, replicate

CLAIMS_VERSION = 3
#: name: ClaimSpec (statement, op, threshold, expected, role, unit, source)
CLAIM_SPECS = {
    "counterfactual_exact": ClaimSpec(
        statement="Factual and counterfactual scans differ only inside the anomaly's angular "
                  "shadow: max |factual - counterfactual| outside it is 0",
        op="<=", threshold=0.0, expected=True, role="check", unit="each", source=""),
    "visibility_informative": ClaimSpec(  # 0.052-0.090, seeds 0-11
        statement="Visibility channels help: the carving (hit/free/unknown) of this sweep plus "
                  "what the other sweeps of the moving sensor saw of its occluded cells; point "
                  "AP of the segmentation-only model with them minus range only, held-out "
                  "anomalies, mean of {n} seeds",
        op=">=", threshold=0.03, expected=True, role="mechanism", unit="mean",
        source="anomalies are characterized not only by what is observed, but also by the "
               "spatial voids they create, which alter occlusion patterns and volumetric "
               "visibility"),
    "coval_gain": ClaimSpec(  # v3: -0.025..+0.012, seeds 0-15 (v2: -0.069..-0.034)
        statement="Full COVAL (L_seg + L_VVCR on every beam + L_VICC, weights chosen on a "
                  "validation split) beats segmentation only (\"COVAL achieves "
                  "state-of-the-art performance\"; \"improving anomaly sensitivity at test "
                  "time\"): AP(full) - AP(seg-only), held-out anomalies, mean of {n} seeds",
        op=">=", threshold=0.03, expected=False, role="headline", unit="mean",
        source="these objectives isolate anomaly-induced structural missingness and in turn "
               "refine representation of normal scenes, thus improving anomaly sensitivity at "
               "test time"),
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
                  f"scenes x {cfg.n_sweeps} sweeps (each outside its own shadow), "
                  f"{cfg.n_beams} beams, clean ranges; counterfactual = anomaly sides "
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
                  f"(per-seed gaps {', '.join(f'{d:+.3f}' for d in d_vis)}); second design "
                  f"(issue 35): {cfg.n_sweeps} sweeps {cfg.sweep_step} m apart, the other "
                  f"sweeps' free/hit fractions on the {cfg.sweep_cells} cells of this sweep's "
                  f"{cfg.n_bins} log bins; known poses, noise-free odometry, a static scene, "
                  f"beams at fixed world bearings (first design, single-scan carving: "
                  f"+0.012..+0.036 on seeds 0-6, benchmarks/coval/coval_seeds_first_design.csv); "
                  f"{DERIVED}",
                  statement=CLAIM_SPECS["visibility_informative"].statement.format(n=n))
        gain, d_gain = mean_gap("full COVAL", "seg-only")
        chosen = ", ".join(f"({r['full COVAL']['w_vvcr']:g}, {r['full COVAL']['w_vicc']:g})"
                           for r in reps)
        where = ("every beam with a return" if cfg.vvcr_beams == "valid"
                 else "the anomaly beams only")
        how = (f"chosen per replicate by validation AP ({cfg.n_val} training-shape scenes) "
               f"from {{{', '.join(f'{w:g}' for w in cfg.weight_grid)}}}^2"
               if cfg.weight_grid else "fixed")
        table.add("coval_gain", gain,
                  f"AP seg-only [{aps('seg-only')}] -> full [{aps('full COVAL')}] (per-seed "
                  f"{', '.join(f'{d:+.3f}' for d in d_gain)}); second design (issue 47): "
                  f"L_VVCR on {where}, (w_vvcr, w_vicc) {how}: [{chosen}]; VVCR target "
                  f"{cfg.vvcr_target}; a {cfg.hidden}-channel circular conv net, "
                  f"{cfg.steps} steps; reported (not binding); {DERIVED}",
                  statement=CLAIM_SPECS["coval_gain"].statement.format(n=n))
    return table.claims


def _record(name: str):
    from pathlib import Path

    import pandas as pd

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "coval" / name
    return pd.read_csv(path) if path.exists() else pd.DataFrame()


def seed_record(first_design: bool = False, design: str = "current"):
    """A per-seed record of every claim as a DataFrame (empty when absent: an install without
    the repository's benchmarks folder): ``benchmarks/coval/coval_seeds.csv`` (the current
    design, ``CLAIMS_VERSION`` 3: seeds 0-15 and fresh seeds 100-104, from the sweeps),
    ``design="issue35"`` its predecessor (``..._seeds_issue35.csv``, seeds 0-11) and
    ``first_design`` / ``design="first"`` the first design's (``..._seeds_first_design.csv``)."""
    design = "first" if first_design else design
    suffix = {"current": "", "issue35": "_issue35", "first": "_first_design"}[design]
    return _record(f"coval_seeds{suffix}.csv")


def diagnosis_record(vvcr: bool = False):
    """``benchmarks/coval/coval_diagnosis.csv`` (``benchmarks/coval/coval_diagnosis.py``, issue
    35) or, with ``vvcr``, ``coval_vvcr_diagnosis.csv`` (``coval_vvcr_diagnosis.py``, issue
    47) as a DataFrame; empty when absent."""
    return _record("coval_vvcr_diagnosis.csv" if vvcr else "coval_diagnosis.csv")
