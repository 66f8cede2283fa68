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
whose contact point and angle are the action; a CoordConv encoder gives the tokens, pretrained
once per seed with all tokens (per-token contact logit and angle; an attention-pooled readout
of the whole action on its features), then frozen; a 2-layer transformer head over K tokens
regresses the action.  Compared at K below all tokens: all tokens, GridS, learned top-K
(straight-through), average pooling, random.  Figures: F1 error vs K, F2 analytic head FLOPs vs
K, F3 GridS's points over test images.

Second design (CLAIMS_VERSION 2, issue 35; ``claims`` says what changed and why): 16-px tokens
(a 4x4 map, 16 tokens, as coarse as SigLIP's 14-px patches against a contact point of a few
px, which falls anywhere inside its patch), the scout reading position-aware tokens
(``PolicyConfig.scout_input = "tokens"``).  First design (``FIRST_DESIGN``, record
``benchmarks/grids/grids_seeds_first_design.csv``): 4-px tokens (256), where a token centre is
within ~2 px of any contact point, so pruning lost little (``benchmarks/grids/grids_diagnosis.py``);
the scout read the encoder's attention-pooled feature, because with the code's LayerNorm +
mean-pool of the bare map its points stall at their initial grid (``"mean"``: the mean of
local features carries no position).

Issue 46 (CLAIMS_VERSION 3, an audit; ``claims`` says what changed and why): ``flops_cut`` at the
configuration run (1 of 16 tokens, 0.109; it was 16 vs 256); the headline at the abstract's
share (``grids1_matches_full``: 1 of 16 tokens, 6.25% < 10%); success scored at a radius fixed
by rule per run (the all-tokens model's median validation error, 3.2-8.3 px; it was 2 px, where
every method's success sat at 0.03-0.08); learned top-K's scorer with the scout's capacity
(``Saliency``: position-aware tokens, MLP ``C -> 256 -> 1``, same budget).

What holds at quick scale (issue 46, seeds 0-15 and fresh 100-104 from an empty cache,
``benchmarks/grids/grids_seeds.csv``): the sampler's forward and both gradients match
``F.grid_sample`` (21/21); the analytic FLOPs cut.  NOT: ``pruning_loses_geometry`` (mean
1.43, 95% CI 1.32-1.63 against 1.5; 4 of 16 seeds, 2 of 5 fresh): the stronger top-K closes
part of the gap (second design: 1.50, 6 of 16), the paper stays blocked; its saliency still
does not find the contact token.  ``grids1_matches_full`` (reported): mean -0.24 (CI
-0.30..-0.18), 1 of 16 seeds: with one point GridS's success falls from ~0.5 (all tokens,
by construction of the radius) to 0.13-0.48.

Every random draw comes from a ``torch.Generator`` seeded from ``seed``.  Sampling goes
through ``icml26.kernels.grid_sample`` (``impl="auto"``: Triton on CUDA tensors, its torch
twin with the same hand-written backward on CPU).

Modules: ``scenes`` (the synthetic scenes), ``models`` (encoder, head, selectors),
``experiments`` (scales, cached training, scoring), ``figures`` (the figures' data) and
``claims``.
"""

from icml26.grids.claims import (
    CLAIM_SPECS,
    CLAIMS_VERSION,
    claims,
    claims_for,
    diagnosis_record,
    sampler_gradient_error,
    seed_record,
)
from icml26.grids.experiments import (
    CACHE_VERSION,
    FIRST_DESIGN,
    PAPER,
    SCALES,
    SCOUT_INPUTS,
    GridsConfig,
    PolicyConfig,
    claim_rows,
    config_for,
    features,
    readout_row,
    run_policy,
    scenes,
    success_radius,
    to_px,
    train_policy,
    with_policy,
    with_success,
)
from icml26.grids.figures import figure_coords_data, figure_error_data, figure_flops_data
from icml26.grids.models import (
    METHODS,
    Encoder,
    Saliency,
    Scout,
    TokenHead,
    TokenPolicy,
    fourier_coords,
    head_flops,
)
from icml26.grids.scenes import SceneConfig, action_errors, action_targets, make_scenes

__all__ = [
    "CACHE_VERSION", "CLAIMS_VERSION", "CLAIM_SPECS", "FIRST_DESIGN", "METHODS", "PAPER",
    "SCALES", "SCOUT_INPUTS", "Encoder", "GridsConfig", "PolicyConfig", "Saliency",
    "SceneConfig", "Scout",
    "TokenHead", "TokenPolicy", "action_errors", "action_targets", "claim_rows", "claims",
    "claims_for", "config_for", "diagnosis_record", "features", "figure_coords_data",
    "figure_error_data", "figure_flops_data", "fourier_coords", "head_flops", "make_scenes",
    "readout_row", "run_policy", "sampler_gradient_error", "scenes", "seed_record",
    "success_radius", "to_px", "train_policy", "with_policy", "with_success",
]
