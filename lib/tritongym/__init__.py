"""mini-TritonGym: a verification harness for Triton kernels and agent workflows around it.

Yue Guan, Yichen Lin, Xu Zhao, Jianzhu Yao, Xinwei Qiang, Zhongkai Yu, Pramod Viswanath,
Yufei Ding, Adnan Aziz.  "TritonGym: A Benchmark for Agentic LLM Workflows in Triton GPU Code
Generation", ICML 2026 (poster 65003; project site tritongym.picasso-lab.com; no arXiv id or
code was found).  Spec: ``shared/specs/tritongym.md``.

TIER C.  The paper measures LLM agents on 164 operators (Pass@1: Qwen-3 40.1%, Claude-4.5
36.7%, GPT-5 25.4%).  No LLM runs here, so the leaderboard is NOT reproduced.  What is
reproduced is the machinery and the mechanism: the paper's tools (``compile``, ``verify``,
``profile``) and Pass@1 metric (correct on every test shape with max |err| <= 0.01) on a mini
benchmark of 8 operators (``icml26.kernels.tritongym_ops``: torch reference + oracle Triton
kernel each, 3 test shapes with one odd tail); a verify that really compiles and runs every
candidate (Triton interpreter on CPU) and catches every generated bug; and why verify
feedback raises Pass@1 for a fixed "model".  The status is computed and, tier C, labelled
``harness`` (``icml26 list`` / :mod:`icml26.status`).

Reconstructed (ours): the "model" is a seeded generator of real bugs applied to the oracle
SOURCE TEXT (``bugs``: dropped mask, off-by-one bound, softmax without max subtraction, wrong
eps, wrong stride, fp16 accumulation), with a bug rate ``p_bug``, a repair skill ``p_fix``
that uses verify's feedback and a chance ``p_break`` that a repair introduces a bug
(``agents``); the workflows one-shot, iterative refinement (T
turns), best-of-N and a small evolutionary loop.  ``profile`` on CPU is an explicit cost model
(bytes moved, launches, loop trips), labelled so; real latency only on CUDA.

Figures (``notebooks/tritongym.ipynb``): F1 Pass@1 heatmap workflow x p_bug; F2 Pass@1 vs the
verify-call budget; F3 the per-operator pass matrix (max error of every mutant); F4 the
wrong-eps family at tolerances 1e-2 and 1e-5.

Modules, one idea each: ``harness`` (test shapes, compile / verify / profile), ``bugs`` (bug
classes as source edits), ``agents`` (model and workflows), ``experiments`` (scales, the cached
verify table, figure data) and ``claims``.
"""

from icml26.tritongym.agents import (
    FEEDBACK,
    WORKFLOWS,
    Model,
    closed_form_pass,
    episode,
    pass_at_1,
)
from icml26.tritongym.bugs import (
    BUG_EDITS,
    BUG_LABELS,
    BUGS,
    WRONG_EPS_VARIANTS,
    applicable,
    apply_edits,
    eps_ops,
    eps_variant_source,
    mutant_pairs,
    mutate,
    source_for,
)
from icml26.tritongym.claims import CLAIM_SPECS, claims, claims_for
from icml26.tritongym.experiments import (
    CACHE_VERSION,
    PAPER,
    SCALES,
    TritonGymConfig,
    candidates,
    config_for,
    feedback_gap,
    figure_budget_data,
    figure_heatmap_data,
    figure_pass_matrix_data,
    figure_tolerance_data,
    model_for,
    resampling_gap,
    verify_table,
    with_shapes,
    workflow_budget,
)
from icml26.tritongym.harness import (
    KINDS,
    SHAPES,
    TOL,
    Compiled,
    Shape,
    ShapeResult,
    VerifyResult,
    compile_source,
    make_inputs,
    profile,
    shapes_for,
    verify,
    verify_device,
    verify_many,
)

__all__ = [
    "BUGS", "BUG_EDITS", "BUG_LABELS", "CACHE_VERSION", "CLAIM_SPECS", "FEEDBACK", "KINDS",
    "PAPER", "SCALES", "SHAPES", "TOL", "WORKFLOWS", "WRONG_EPS_VARIANTS", "Compiled", "Model",
    "Shape", "ShapeResult", "TritonGymConfig", "VerifyResult", "applicable", "apply_edits",
    "candidates", "claims", "claims_for", "closed_form_pass", "compile_source", "config_for",
    "episode",
    "eps_ops", "eps_variant_source", "feedback_gap", "figure_budget_data",
    "figure_heatmap_data", "figure_pass_matrix_data", "figure_tolerance_data", "make_inputs",
    "model_for", "mutant_pairs", "mutate", "pass_at_1", "profile", "resampling_gap",
    "shapes_for", "source_for",
    "verify", "verify_device", "verify_many", "verify_table", "with_shapes", "workflow_budget",
]
