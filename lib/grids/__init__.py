"""GridS: differentiable grid-sample token pruning, on a synthetic manipulation toy.

Yixu Feng, Zinan Zhao, Yanxiang Ma, Chenghao Xia, Chengbin Du, Yunke Wang, Chang Xu.  "See
What Matters: Differentiable Grid Sample Pruning for Generalizable VLA", ICML 2026,
https://arxiv.org/abs/2605.11817; code github.com/Fediory/Grid-Sampler (read for the spec).

The paper's (code): a scout MLP ``C -> 256 -> 2K -> sigmoid`` on a pooled feature of the
visual map predicts K points ``p_k in [0, 1]^2``; features are read there by bilinear sampling
(``x (W - 1), y (H - 1)``, 4 neighbours, clamped), plus a coordinate embedding
``2 -> 256 -> C``; exploration noise 0.1 on the pooled feature; the K tokens replace the 256
SigLIP tokens of pi0.  Reported: < 10% of the tokens (down to 4 on LIBERO), 76% fewer FLOPs,
no drop in success rate.

Reconstructed (the toy, spec ``shared/specs/grids.md``): 64x64 scenes with clutter and a tool
whose contact point and angle are the action; a CoordConv patch encoder gives 16x16x32 (256)
tokens, pretrained once per seed with all tokens (per-token contact logit and angle, and a
global readout of an attention-pooled feature), then frozen; a 2-layer transformer head over
K tokens regresses the action.  Compared at K in {256, 64, 16, 4}: all tokens, GridS, learned
top-K (straight-through), average pooling, random.  Figures: F1 error vs K, F2 analytic head
FLOPs vs K, F3 GridS's points over test images.

Deviation, measured while prototyping: with the code's LayerNorm + mean-pool the scout's
points stall at their initial grid (the pooled mean of local CNN features carries no position:
a readout of it stays at chance, ~20 px); initial grid and coordinate temperature (0.3-3) did
not help.  The scout therefore reads the encoder's attention-pooled feature (SigLIP's MAP head,
one query) -- ``PolicyConfig.scout_input = "map"``; ``"mean"`` keeps the code's pooling.  Even
then the points do not lock onto the contact point: GridS's position comes through the
continuous coordinates (and their embedding), and its angle is not learned (F3, claims notes).

What holds at quick scale (seeds 0-6, ``benchmarks/grids_seeds.csv``): the sampler's forward
and both gradients match ``F.grid_sample``; the analytic FLOPs cut.  NOT robustly: GridS@4
beats learned top-K@4 by >= 1.5x on seeds 0, 1, 2, 5, 6 but not on 3 and 4, where top-K's
saliency finds the contact token and wins (the binding ``pruning_loses_geometry`` fails: the
paper is blocked); GridS@4's success rate stays 0.13-0.21 below the all-tokens reference on every
seed (``grids4_matches_full``, reported).

Every random draw comes from a ``torch.Generator`` seeded from ``seed``.  Sampling goes
through ``icml26.kernels.grid_sample`` (``impl="auto"``: Triton on CUDA tensors, its torch
twin with the same hand-written backward on CPU).

Modules: ``scenes`` (the synthetic scenes), ``models`` (encoder, head, selectors),
``experiments`` (scales, cached training, figure data) and ``claims``.
"""

from icml26.grids.claims import CLAIM_SPECS, claims, claims_for, sampler_gradient_error
from icml26.grids.experiments import (
    CACHE_VERSION,
    PAPER,
    SCALES,
    SCOUT_INPUTS,
    GridsConfig,
    PolicyConfig,
    claim_rows,
    config_for,
    features,
    figure_coords_data,
    figure_error_data,
    figure_flops_data,
    readout_row,
    run_policy,
    scenes,
    train_policy,
    with_policy,
)
from icml26.grids.models import METHODS, Encoder, Scout, TokenHead, TokenPolicy, head_flops
from icml26.grids.scenes import SceneConfig, action_errors, action_targets, make_scenes

__all__ = [
    "CACHE_VERSION", "CLAIM_SPECS", "METHODS", "PAPER", "SCALES", "SCOUT_INPUTS", "Encoder",
    "GridsConfig", "PolicyConfig", "SceneConfig", "Scout", "TokenHead", "TokenPolicy",
    "action_errors", "action_targets", "claim_rows", "claims", "claims_for", "config_for",
    "features", "figure_coords_data", "figure_error_data", "figure_flops_data", "head_flops",
    "make_scenes", "readout_row", "run_policy", "sampler_gradient_error", "scenes", "train_policy",
    "with_policy",
]
