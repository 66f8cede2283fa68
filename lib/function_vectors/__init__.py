"""How few-shot examples add up: a causal decomposition of function vectors in ICL.

Entang Wang, Yiwei Wang, Aleksandra Bakalova, Michael Hahn. ICML 2026,
https://arxiv.org/abs/2605.16591 ; built on Todd et al., "Function Vectors in Large Language
Models", ICLR 2024, https://arxiv.org/abs/2310.15213 . No code of the paper was found.

What is reproduced, on a Transformer trained in place (toy "D",
no LLM weights can be loaded here), see
``notebooks/function_vectors.ipynb``:

* F1 (Todd et al.'s pipeline) - mean head outputs ``z_h`` (before ``W_O``) at the final token
  over clean 6-shot prompts, per task; the signed average indirect effect
  ``AIE(l, h) = E_P [ p(y_q | P, z_{l,h} := mean_task) - p(y_q | P) ]`` over shuffled-label
  prompts P (all heads patched in ONE batched forward); the FV heads are the top-3 by signed
  AIE. Interventions at the final token: replace the FV heads' outputs with the task mean
  (top-1/2/3), with another task's mean (control), with a random vector of the same norm
  (control), and Todd's additive FV ``sum_h W_O^h mean_h`` added to the residual after a layer
  (reported; in the toy it does not transfer, so replacement is the toy's FV operation).
* F2 (additivity) - ``FV(P) = sum_{h in FV heads} W_O^h z_h(P)`` at the query; the sub-FV of
  demonstration ``e_i`` is the same quantity on the 1-shot prompt ``[e_i; x_q]`` (the other
  slots masked, positions unchanged). Fit ``FV(P) ~ sum_i alpha_i subFV(e_i) + c`` with
  ``alpha`` SHARED across prompts (one per position) and an intercept vector ``c`` on half the
  prompts, R^2 on the other half; controls: sub-FVs of the same inputs with another task's
  outputs, and uniform ``alpha = 1/n``. Per-prompt ``alpha`` is shown as the
  non-discriminative fit it is.
* The exact attention-block identity (a unit test of the hooks):
  ``W_O z_h = sum_blocks sum_{t in B_i} a_t W_O v_t + (query terms)``.
* F3 (reweighting) - attention mass ``A_i = sum_{t in B_i} a_t`` of the FV heads at the query,
  informative vs uninformative (``Z -> Z``) demonstrations, in context vs isolated (1-shot,
  same slot), ratios at matched slots, and a paired permutation test.
* F4 (QK vs V) - hybrids of the contextualised run and a run where each demonstration block is
  processed alone (block-diagonal mask, positions unchanged): QK-only = contextual attention
  on isolated values, V-only = isolated attention on contextual values, both, neither; each
  replaces the FV heads' outputs in zero-shot prompts ("FV quality").

Paper vs reconstruction: the sub-FV / additivity / reweighting / QK-vs-V definitions are
reconstructed from the abstract (spec ``function_vectors.md``); Todd et al.'s pipeline follows
their public code, at toy scale (6 shots instead of 10, 12 heads, 8 shift tasks). The TVP
auxiliary training loss is a toy-only device (Yang et al. 2025): tiny models trained from
scratch without it do not form Todd-style function vectors (the mutation test shows it).

Package layout (one idea per module): ``prompts`` (tasks, prompts, masks), ``model`` (the
decoder with head hooks), ``training`` (TVP training), ``interventions`` (forward passes, CIE,
interventions), ``decomposition`` (sub-FVs, additive fits, attention masses, QK/V hybrids),
``experiments`` (configs, cached models and analyses, shipped weights), ``figures`` (figure
data), ``live`` (the dashboard's data), ``claims`` (the claims).
"""

from __future__ import annotations

from dataclasses import replace

from icml26.function_vectors.claims import (
    CLAIM_SPECS,
    EXPECTED,
    GATED,
    SPECS,
    claims,
    claims_for,
    measure,
    shortcuts,
)
from icml26.function_vectors.decomposition import (
    block_decomposition,
    by_slot,
    fit_additive,
    fv_head_masses,
    fv_of,
    hybrid_head_outputs,
    hybrid_quality,
    isolated_masses,
    matched_ratio,
    paired_permutation_test,
    qkv_panel_prompts,
    r_squared,
    sub_fvs,
)
from icml26.function_vectors.diagnosis import diagnose, read_designs, read_diagnosis
from icml26.function_vectors.experiments import (
    CACHE_VERSION,
    PAPER,
    SCALES,
    SHIPPED,
    SHIPPED_SEEDS,
    FVConfig,
    NoICLError,
    checked_model,
    clean_accuracy,
    config_for,
    evaluation_items,
    fv_analysis,
    head_means,
    load_model,
    model_analysis,
    shipped_blob,
    shipped_path,
    trained,
    weights_source,
)
from icml26.function_vectors.figures import (
    figure_additivity_data,
    figure_cie_data,
    figure_interventions_data,
    figure_qkv_data,
    figure_reweighting_data,
)
from icml26.function_vectors.interventions import (
    CORRUPTIONS,
    DECOMPOSITIONS,
    FIELDS,
    INTERVENTIONS,
    Prefix,
    accuracy_of,
    causal_indirect_effect,
    context_heads,
    context_values,
    final_state,
    fv_vector,
    intervene,
    joint_indirect_effect,
    p_correct,
    rank_heads,
    run,
    shift_distribution,
    subset,
)
from icml26.function_vectors.live import live_data, live_intervention_data, live_prompt_data
from icml26.function_vectors.model import FVTransformer, HeadPatch, ModelConfig, model_from_state
from icml26.function_vectors.prompts import (
    KIND_INFORMATIVE,
    KIND_UNINFORMATIVE,
    MAX_SHOTS,
    N_TASKS,
    Prompts,
    apply_task,
    make_prompts,
    other_tasks,
    shuffle_labels,
    tasks_for,
)
from icml26.function_vectors.training import TrainConfig, train_model

__all__ = [
    "diagnose", "read_designs", "read_diagnosis",
    "CACHE_VERSION", "CLAIM_SPECS", "CORRUPTIONS", "DECOMPOSITIONS", "EXPECTED", "FIELDS",
    "FVConfig", "FVTransformer", "GATED", "HeadPatch", "INTERVENTIONS", "KIND_INFORMATIVE",
    "KIND_UNINFORMATIVE", "MAX_SHOTS", "ModelConfig", "N_TASKS", "NoICLError", "PAPER", "Prefix",
    "Prompts", "SCALES", "SHIPPED", "SHIPPED_SEEDS", "SPECS", "TrainConfig", "accuracy_of",
    "apply_task", "block_decomposition", "by_slot", "causal_indirect_effect", "checked_model",
    "claims", "claims_for", "clean_accuracy", "config_for", "context_heads", "context_values",
    "evaluation_items", "figure_additivity_data", "figure_cie_data", "figure_interventions_data",
    "figure_qkv_data", "figure_reweighting_data", "final_state", "fit_additive", "fv_analysis",
    "fv_head_masses", "fv_of", "fv_vector", "head_means", "hybrid_head_outputs", "hybrid_quality",
    "intervene", "isolated_masses", "joint_indirect_effect", "live_data",
    "live_intervention_data", "live_prompt_data", "load_model", "make_prompts", "matched_ratio",
    "measure", "model_analysis", "model_from_state", "other_tasks", "p_correct",
    "paired_permutation_test", "qkv_panel_prompts", "r_squared", "rank_heads", "replace", "run",
    "shift_distribution", "shipped_blob", "shipped_path", "shortcuts", "shuffle_labels",
    "sub_fvs", "subset", "tasks_for", "train_model", "trained", "weights_source",
]
