"""The hippocampal place-field gradient, and HIPE positional embeddings.

"The Hippocampal Place Field Gradient: A Bio-inspired Framework Building Multiscale
Representation for Better Sample Efficiency" (ICML 2026); earlier version: Shujun Zhou and
Guozhang Chen, "The Hippocampal Place Field Gradient: An Eigenmode Theory Linking Grid Cell
Projections to Multiscale Learning", https://arxiv.org/abs/2506.04943.  Code of the HIPE part:
github.com/AIogry/relative_PE (an OLMo fork; class ``ScaledRotaryEmbedding``), read, not copied.

Figures reproduced (``notebooks/place_fields.ipynb``):

* F1 a continuous place-field width gradient from a few discrete grid modules;
* F2 the precision / sample-efficiency trade-off: U-shaped test error in the field width
  ``sigma`` with an optimum ``sigma*`` that grows with the target's length-scale ``ell``;
* F3 HIPE positional kernels: RoPE's oscillating kernel becomes a monotone "place field"
  over relative position whose width is ``sigma``;
* F4 (derived, exploratory) data efficiency of RoPE vs single- and multi-sigma HIPE in a toy
  Transformer (``icml26.place_fields.lm``): pretrained on one source, adapted on k samples of
  a shifted one (the second design, issue 47, :mod:`icml26.place_fields.adapt`).

Modules, one idea each: ``decay`` (the decay families ``D`` and their Fourier transforms),
``grid`` (F1: grid -> place, FWHM), ``regression`` (F2), ``hipe`` (F3), ``task``,
``transformer``, ``adapt`` and ``lm`` (F4: the toy language, the Transformer ensemble, the
pretrain-then-adapt protocol and the figure's data), ``claims`` (scales, claim rows, claims).
The equations of F1 and F2 are our reconstruction from the abstract [derived]; HIPE (F3) is
what the authors' code does [known].  Each module's docstring gives its equations.
"""

from icml26.place_fields import adapt, lm
from icml26.place_fields.claims import (
    CLAIM_SPECS,
    EXPECT_EFFICIENCY,
    PARTS,
    SCALES,
    PlaceFieldsConfig,
    claims,
    claims_for,
    config_for,
    efficiency_claim,
    lm_claim,
)
from icml26.place_fields.decay import (
    DECAYS,
    DTYPE,
    HALF_WIDTH_GAUSSIAN,
    PAPER,
    closed_form_kernel,
    decay_weight,
)
from icml26.place_fields.grid import (
    GridConfig,
    field_data,
    figure_field_gradient_data,
    fwhm,
    grid_frequencies,
    grid_rates,
    module_fields,
    place_field,
    place_field_2d,
    place_weights,
    track,
)
from icml26.place_fields.hipe import (
    FIT_WINDOWS,
    HipeConfig,
    figure_fit_windows_data,
    figure_hipe_kernels_data,
    half_width,
    head_kernels,
    hipe_gain,
    hipe_kernel_stats,
    hipe_scale,
    max_upward_step,
    normalised_kernels,
    parse_sigmas,
    positional_kernel,
    r_squared,
    rope_frequencies,
    window_r2,
)
from icml26.place_fields.lm import (
    HipeTransformer,
    cached_or_shipped_frame,
    figure_data_efficiency_data,
    frame_from_losses,
    seed_results,
    train_seed,
)
from icml26.place_fields.regression import (
    RegressionConfig,
    figure_tradeoff_data,
    gp_sample_fn,
    place_features,
    ridge_predict,
)
from icml26.place_fields.task import (
    VARIANT_LABELS,
    VARIANTS,
    LMConfig,
    bayes_loss,
    first_design_config,
    lag_prior,
    make_task,
    paper_config,
    task_data,
)

__all__ = [
    "CLAIM_SPECS", "DECAYS", "DTYPE", "EXPECT_EFFICIENCY", "FIT_WINDOWS",
    "HALF_WIDTH_GAUSSIAN", "PAPER", "PARTS", "SCALES", "VARIANTS", "VARIANT_LABELS",
    "GridConfig", "HipeConfig", "HipeTransformer", "LMConfig", "PlaceFieldsConfig",
    "RegressionConfig", "adapt", "bayes_loss", "cached_or_shipped_frame", "claims",
    "claims_for", "closed_form_kernel", "config_for", "decay_weight", "efficiency_claim",
    "field_data", "figure_data_efficiency_data", "figure_field_gradient_data",
    "figure_fit_windows_data", "figure_hipe_kernels_data", "figure_tradeoff_data",
    "first_design_config", "frame_from_losses", "fwhm", "gp_sample_fn", "grid_frequencies",
    "grid_rates", "half_width", "head_kernels", "hipe_gain", "hipe_kernel_stats", "hipe_scale",
    "lag_prior", "lm", "lm_claim", "make_task", "max_upward_step", "module_fields",
    "normalised_kernels", "paper_config", "parse_sigmas", "place_features", "place_field",
    "place_field_2d", "place_weights", "positional_kernel", "r_squared", "ridge_predict",
    "rope_frequencies", "seed_results", "task_data", "track", "train_seed", "window_r2",
]
