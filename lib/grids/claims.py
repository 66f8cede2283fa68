"""The claims of ``grids``: the claim rows and how each is measured.

CLAIMS_VERSION 3 (issue 46, item 3: an independent audit; written here and in the notebook
before any seed was run with it; runs before the sweep only checked that the code runs, seed 0):

* ``flops_cut`` was FLOPs(K=16) / FLOPs(K=256), a configuration the second design never runs
  (its map has 16 tokens).  Now: FLOPs at the headline's K over FLOPs with all the run's
  tokens (``cfg.few_k`` of ``side^2``: 1 of 16 at quick scale).  For the record, K = 4 of 16
  (the ``pruning_loses_geometry`` budget) would be 0.277 and fail the 0.24.
* ``grids4_matches_full`` kept 4 of 16 tokens (25%), not the abstract's "fewer than 10%".  Now
  ``grids1_matches_full``: GridS at the largest K with K / tokens < 10% (``GridsConfig.
  token_share``; 1 of 16 = 6.25%), renamed in the log.
* success was a fixed 2-px radius, far below a 16-px token: every method's success 0.03-0.08,
  near the floor, so the old holds said nothing.  Now a rule fixed before any method is scored:
  success = contact error < r, r = the median (``success_quantile`` 0.5) of the all-tokens
  model's errors on 512 validation scenes (their own generator, never trained on, never the
  test scenes), computed per run; the all-tokens model then succeeds on ~half the test scenes,
  where a degradation shows either way.  Threshold (-0.03) unchanged.
* learned top-K scored tokens with a linear map while GridS's scout is an MLP (``C -> 256 ->
  2K``, position-aware tokens).  Now top-K's scorer (``models.Saliency``) has the scout's
  capacity: the same position-aware token layer and an MLP ``C -> 256 -> 1`` per token, the
  same 400 steps and learning rate.  ``pruning_loses_geometry``'s row is unchanged; its
  baseline is stronger.

Binding: ``pruning_loses_geometry`` (learned top-K@4 vs GridS@4) and ``sampler_gradients_exact``
(the sampler's hand-written backward vs ``F.grid_sample``'s autograd).  Reported:
``grids1_matches_full`` (the headline) and the analytic ``flops_cut``.  Issue 46 sweep (seeds
0-15 and fresh 100-104, empty cache, ``benchmarks/grids/grids_seeds.csv``):
``pruning_loses_geometry`` mean 1.43 (95% CI 1.32-1.63, needs lo >= 1.5), holds on 4 of 16 and 2 of
5 fresh seeds: does not hold, the paper stays blocked; ``grids1_matches_full`` mean -0.24 (CI
-0.30..-0.18), 1 of 16, fresh -0.29..-0.09: GridS with 1 of 16 tokens degrades success by a quarter
of the scenes; ``sampler_gradients_exact`` and ``flops_cut`` (0.109) hold on every seed.

CLAIMS_VERSION 2 (issue 35, the second design, fixed before any seed above 6 was run; first
design's record: ``benchmarks/grids/grids_seeds_first_design.csv``):

* why: the paper's premise is that pruning discards sub-token geometry (the contact point)
  that continuous resampling keeps.  In the first design (64x64 scenes, 4-px tokens, 256 of
  them) a token centre is within ~2 px of any contact point (diagnosis, seeds 0-1: 1.5-1.6 px
  mean, 2.8 px max, ``benchmarks/grids/grids_diagnosis.py``), so pruning loses little: top-K@4 won
  where its saliency found the contact token (seeds 3, 4), and GridS's 4 points never locked
  onto the contact point (4-29 px away);
* what changed: tokens as coarse as the paper's against the contact point -- 16-px patches,
  a 4x4 map of 16 tokens (``GridsConfig.patch = 16``; the contact point falls anywhere inside
  its patch, up to 11 px from the token centre); the encoder makes them with its 4-px stem
  and a 4x4 merge (a hybrid-ViT stem: a single linear 16-px patch embedding did not learn);
  the scout reads position-aware tokens (``scout_input = "tokens"``: the code's LayerNorm +
  mean-pool, each token first concatenated with a Fourier encoding of its centre and passed
  through a token-wise Linear + ReLU, as the authors' scout reads SigLIP tokens that carry
  position embeddings); the all-tokens readout trains on the encoder's detached features (at
  16 tokens its loss through the encoder swamped the contact cross-entropy: every readout at
  chance, seed 0 sanity run);
* two of these (the stem, the detached readout) were fixed after a seed-0 sanity run in which
  the encoder had not learned (every readout, all tokens included, at chance: 18 px), not for a
  claim's value; nothing was changed after the design seeds' claims were seen;
* unchanged: thresholds, the claims' measurements (error ratio top-K@4 / GridS@4, success
  difference GridS@4 - all tokens at 2 px), the sampler and its check, the head, the training
  budgets (400 steps), the scenes, the mutations; K = 4 (now 1/4 of the tokens, not < 10%).
"""

from __future__ import annotations

import torch

from icml26.claims import Claim, ClaimSpec, ClaimTable
from icml26.common import generator, resolve_device
from icml26.grids.experiments import PAPER, GridsConfig, claim_rows, config_for
from icml26.grids.figures import figure_flops_data
from icml26.kernels.grid_sample import grid_sample, grid_sample_ref

CLAIMS_VERSION = 3  # 2: the second design (issue 35); 3: issue 46 (see the module docstring)

#: name: ClaimSpec (statement, op, threshold, expected, role, unit, source)
CLAIM_SPECS = {
    "pruning_loses_geometry": ClaimSpec(
        statement="Discrete learned top-K pruning to 4 tokens loses the geometry GridS keeps "
                  "(\"aggressive compression using pruning inevitably discards critical "
                  "geometric details like contact points\"; \"GridS preserves essential "
                  "spatial information\"): error(top-K@4) / error(GridS@4) >= 1.5 (contact "
                  "point, px; top-K's scorer has the scout's capacity, issue 46)",
        op=">=", threshold=1.5, expected=True, role="headline", unit="mean",
        source="GridS preserves essential spatial information while achieving drastic "
               "compression"),
    "sampler_gradients_exact": ClaimSpec(
        statement="The bilinear sampler's forward, feature gradient and coordinate gradient "
                  "match F.grid_sample within the kernel tests' rule (measured: max err / (2 "
                  "torch err + floor), vs float64)",
        op="<=", threshold=1.0, expected=True, role="check", unit="each", source=""),
    "grids1_matches_full": ClaimSpec(
        statement="GridS with 1 of the 16 tokens (6.25%: \"with fewer than 10% original "
                  "visual tokens\") matches all tokens (\"no degradation in the success "
                  "rate\"): success(GridS@1) - success(all) >= -0.03 (success: contact error "
                  "< r, r = the all-tokens model's median error on validation scenes, per run)",
        op=">=", threshold=-0.03, expected=False, role="headline", unit="mean",
        source="GridS achieves a 76\\% reduction in FLOPs with no degradation in the success "
               "rate"),
    "flops_cut": ClaimSpec(
        statement="Head FLOPs with the headline's 1 of the run's 16 tokens are <= 24% of those "
                  "with all 16 (the paper's 76% fewer FLOPs; analytic L(24Nd^2 + 4N^2 d))",
        op="<=", threshold=0.24, expected=True, role="check", unit="each", source=""),
}
#: the per-seed record the notes quote (filled from the issue-46 sweep, seeds 0-15, 100-104)
PRUNING_RECORD = ("BLOCKS the paper: issue 46 (CLAIMS_VERSION 3), seeds 0-15: 1.07-2.35, mean "
                  "1.43 (95% CI 1.32-1.63), holds on 0, 4, 7, 13 only; fresh 100-104: 1.22-1.71 "
                  "(holds on 103, 104); second design (linear top-K scorer): mean 1.50, 6/16")
MATCH_RECORD = ("issue 46 (CLAIMS_VERSION 3), seeds 0-15: -0.41..-0.02, mean -0.24 (95% CI "
                "-0.30..-0.18), holds on seed 12 only; fresh 100-104: -0.29..-0.09; the old "
                "grids4_matches_full (4 of 16 tokens, 2 px): mean -0.06, its holds at the floor")
#: float32 rounding floor for values of O(10) summed over <= 64 channels
GRAD_FLOOR = 1e-5


def sampler_gradient_error(seed: int, impl: str = "auto", shape=(3, 16, 16, 32, 9),
                           device: str = "cpu") -> dict:
    """Max over (output, d feat, d coords) of ``|impl - fp64| / (2 |F.grid_sample fp32 -
    fp64| + floor)``: <= 1 passes flash-attention's rule.  Points include out-of-range ones
    (clamped); exact grid nodes are left to the kernel tests (there the fp32 and fp64 floors
    can differ, a jump that would inflate the tolerance)."""
    b, h, w, c, k = shape
    g = generator(seed + 555)
    feat = torch.randn(b, h, w, c, generator=g)
    coords = torch.rand(b, k, 2, generator=g) * 1.2 - 0.1
    grad = torch.randn(b, k, c, generator=g)

    def run(fn, f, p):
        f = f.to(device).requires_grad_()
        p = p.to(device).requires_grad_()
        out = fn(f, p)
        gf, gp = torch.autograd.grad(out, (f, p), grad.to(device).to(out.dtype))
        return [t.detach().cpu().double() for t in (out, gf, gp)]

    oracle = run(grid_sample_ref, feat.double(), coords.double())
    ref = run(grid_sample_ref, feat, coords)
    got = run(lambda f, p: grid_sample(f, p, impl=impl), feat, coords)
    ratios = {}
    for name, o, r, t in zip(("out", "d_feat", "d_coords"), oracle, ref, got):
        ref_err = (r - o).abs().max().item()
        ratios[name] = (t - o).abs().max().item() / (2 * ref_err + GRAD_FLOOR)
    return ratios


def claims(seed: int = 0, scale: str = "quick", device: str = "cpu") -> list[Claim]:
    """Every claim of the paper at ``scale``, recomputed for ``seed`` on ``device`` (the
    encoder, the policies and the sampler check run there: Triton on CUDA; scenes are drawn
    on the CPU generator)."""
    dev = resolve_device(device)
    return claims_for(config_for(scale), seed, dev)


def claims_for(cfg: GridsConfig, seed: int = 0, device: str = "cpu") -> list[Claim]:
    """The claims for an explicit config (the mutation test sets ``round_coords``)."""
    dev = resolve_device(device)
    table = ClaimTable(PAPER, CLAIM_SPECS)
    with table.guard(["pruning_loses_geometry", "grids1_matches_full"]):
        rows = claim_rows(cfg, seed, dev)
        full, gs, tk, few = rows["full"], rows["grids"], rows["topk"], rows["few"]
        reference = (f"the pretraining readout over all {full['k']} tokens"
                     if cfg.all_tokens == "readout" else f"a head trained {cfg.full_steps} steps")
        shortcut = (f"encoder pretrained once per seed ({cfg.pretrain_steps} steps) and frozen; "
                    f"heads trained {cfg.head_steps} steps; all tokens = {reference}; "
                    f"{gs['n_test']} test scenes; {full['k']} tokens of {cfg.patch} px; scout "
                    f"input {cfg.policy.scout_input!r}")
        table.add("pruning_loses_geometry", tk["error_px"] / gs["error_px"],
                  f"error top-K@4 {tk['error_px']:.2f} px vs GridS@4 {gs['error_px']:.2f} px "
                  f"(all tokens {full['error_px']:.2f} px); nearest reading point to the "
                  f"contact: top-K {tk['nearest_px']:.1f} px, GridS {gs['nearest_px']:.1f} px "
                  f"(mean); top-K's scorer: position-aware MLP C -> 256 -> 1 (the scout's "
                  f"capacity, issue 46); {shortcut}; round_coords={cfg.policy.round_coords}; "
                  f"{PRUNING_RECORD}")
        share = few["k"] / full["k"]
        table.add("grids1_matches_full", few["success"] - full["success"],
                  f"success GridS@{few['k']} ({100 * share:.2f}% of the tokens) "
                  f"{few['success']:.3f} vs all tokens {full['success']:.3f} at r = "
                  f"{full['radius_px']:.2f} px (the all-tokens model's median validation error, "
                  f"fixed by rule before the methods are scored); error GridS@{few['k']} "
                  f"{few['error_px']:.2f} px vs all {full['error_px']:.2f} px, GridS@4 "
                  f"{gs['error_px']:.2f} px (success {gs['success']:.3f}); angle error "
                  f"GridS@{few['k']} {few['angle_deg']:.0f} deg vs all {full['angle_deg']:.0f} "
                  f"deg; regression error stands in for LIBERO success (scale gap); "
                  f"{MATCH_RECORD}")
    with table.guard(["sampler_gradients_exact"]):
        ratios = sampler_gradient_error(seed, device=dev)
        worst = max(ratios, key=ratios.get)
        table.add("sampler_gradients_exact", ratios[worst],
                  f"impl='auto' on {dev.type} (torch twin of the Triton kernel on CPU, Triton "
                  "on CUDA) vs "
                  "F.grid_sample, both against float64; " + ", ".join(
                      f"{k} {v:.3f}" for k, v in ratios.items()) + f"; worst {worst}")
    with table.guard(["flops_cut"]):
        n = cfg.side ** 2
        ratio = {r["k"]: r["ratio"] for r in figure_flops_data(cfg, (cfg.few_k, 4, n))}
        table.add("flops_cut", ratio[cfg.few_k],
                  f"analytic, d={cfg.d_model}, 2 layers, head only (the paper's 76% counts the "
                  f"whole VLA); K = {cfg.few_k} of the run's {n} tokens (the headline's K; "
                  f"K = 4, the pruning claim's budget, would be {ratio[4]:.3f}); does not "
                  "depend on the seed")
    return table.claims


def _record(name: str):
    from pathlib import Path

    import pandas as pd

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "grids" / name
    return pd.read_csv(path) if path.exists() else pd.DataFrame()


def seed_record(first_design: bool = False, second_design: bool = False):
    """``benchmarks/grids/grids_seeds.csv`` (every claim per seed of the current design, issue 46)
    as a DataFrame; with ``second_design`` / ``first_design`` the earlier designs' records
    (``grids_seeds_second_design.csv``, ``grids_seeds_first_design.csv``); empty when absent
    (an install without the repository's benchmarks folder)."""
    suffix = "_first_design" if first_design else "_second_design" if second_design else ""
    return _record(f"grids_seeds{suffix}.csv")


def diagnosis_record():
    """``benchmarks/grids/grids_diagnosis.csv`` (both designs, seeds 0-1) as a DataFrame; empty when
    absent."""
    return _record("grids_diagnosis.csv")
