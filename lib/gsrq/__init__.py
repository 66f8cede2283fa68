"""GSRQ: gain-shape residual quantization of KV caches (k-means shrinkage, GSKM, GSRQ).

Soosung Kim, Minjae Park, Eui-Young Chung, Jaeyong Chung.  "GSRQ: Gain-Shape Residual
Quantization for Sub-1-bit KV Cache", ICML 2026, https://arxiv.org/abs/2607.01065.
No code was released; everything below the abstract level is reconstructed (spec
``shared/specs/gsrq.md``).

Figures reproduced (``notebooks/gsrq.ipynb``):
F1 shrinkage of l2 k-means reconstructions (mean ``||x_hat|| / ||x||``) vs dimension ``d`` and
codebook size ``K``; F2 mean cosine and relative l2 vs bits per element for RQ-kmeans, GSRQ
with a cluster gain and GSRQ with a per-token gain code, on equal-norm and heavy-tailed
synthetic KV-like data; F3 a tiny character LM (trained in place on CPython's
``pydoc_data.topics``; head dim 128, issue 47's second design) decoding with a quantized K/V
cache: perplexity and multi-key recall accuracy vs bits, GSRQ with a per-token gain against
RQ-kmeans at an equal rate -- a scale gap stand-in for the paper's LLaMA-3-8B / LongBench
result (the first design and its diagnosis: ``benchmarks/gsrq/gsrq_lm_diagnosis.py``); F4 the fused
assignment kernel's benchmark, from ``benchmarks/gain_shape_assign.csv`` when present.

The paper's (abstract):
* residual quantization (RQ): ``r_0 = x, c_m = Q_m(r_{m-1}), r_m = r_{m-1} - c_m,
  x_hat = sum_m c_m``, rate ``M log2(K) / d`` bits per element;
* l2 k-means centroids shrink (Jensen: ``||mean x|| <= mean ||x||``), which weakens the angular
  term of ``||x - c||^2 = ||x||^2 + ||c||^2 - 2 ||x|| ||c|| cos(theta)``;
* GSKM: a codeword is a gain times a unit shape, ``c_k = g_k s_k``; GSRQ is a weighted GSKM
  inside RQ; at 1 bit on LLaMA-3-8B LongBench rises from 11.34 (VQLLM) to 33.54.

Reconstructed (ours, verified by the spec's probe and by the claims below):
* assignment ``k(i) = argmax_k cos(x_i, s_k)`` (rule ``"cos"``) or the l2 rule
  ``argmax_k 2 g_k <x_i, s_k> - g_k^2`` (rule ``"l2"``);
* shape update ``s_k = normalize(sum_{i in k} a_i ||x_i||^p x_i / ||x_i||)`` with importance
  weights ``a_i`` (attention mass in the LM) and a weight exponent ``p`` (``p = 0``: the spec's
  directional mean; ``p = 1`` with the l2 rule is exactly weighted k-means);
* gain update ``g_k = sum a_i <x_i, s_k> / sum a_i``, the l2-optimal gain given the shape (the
  naive norm-preserving gain ``g_k = mean ||x_i||`` breaks the residual stages: a pitfall);
* per-token gain variant: the first stage assigns by cosine and stores, per vector, a
  ``gain_bits``-bit code of ``log <x_i, s_k(i)>`` (a uniform grid in log space between that
  stage's smallest and largest gains), costing ``gain_bits / d`` extra bits per element; later
  stages use cluster gains with the l2 rule (with the cosine rule there, the heavy-tailed
  residual norms are ignored: relative l2 was 1.7x k-means' at K=256, 4 stages in our probe);
* synthetic KV-like data: anisotropic channels (std ``j^-decay``) with a few outlier channels,
  directions then rescaled to equal norms, optionally times a lognormal per-token norm factor.

A KV codebook is calibrated once and applied to new tokens, so every quantizer is scored on
rows its codebooks never saw: ``N`` rows fit the codebooks and ``N`` more are scored
(``experiments.rq_curve``); the tiny LM's codebooks are calibrated on training windows and
scored on validation windows.

What held at quick scale on seeds 0-6: shrinkage, GSKM's better direction at matched (in fact
lower) l2 on equal-norm data, the per-token gain on heavy-tailed data; NOT the tiny-LM win, in
either design (``tiny_lm_one_bit``'s note; the claims module names the diagnosis). The
paper's status is computed from its claims' roles, units and committed per-seed values, never
written here: ``icml26 list`` / :mod:`icml26.status`.

Every random draw comes from a ``torch.Generator`` seeded from ``seed``.  The assignment and
the centroid update go through ``icml26.kernels.gain_shape_assign`` (``impl="auto"``: Triton on
CUDA tensors, the torch reference on CPU).

Modules, one idea each: ``data`` (synthetic KV-like vectors), ``quantizer`` (RQ with k-means or
GSKM codebooks), ``tiny_lm`` (the character LM with a quantized K/V cache), ``experiments``
(scales, cached fits, the data of F1-F4) and ``claims``.
"""

from icml26.gsrq import tiny_lm
from icml26.gsrq.claims import CLAIM_SPECS, claims, claims_for
from icml26.gsrq.data import EQUAL_NORM, HEAVY_TAIL, TINY, KVDataConfig, make_kv_data
from icml26.gsrq.experiments import (
    CACHE_VERSION,
    EQUAL_RATE,
    FIRST_DESIGN,
    PAPER,
    SCALES,
    GSRQConfig,
    benchmark_data,
    config_for,
    data_generator,
    figure_rate_distortion_data,
    figure_shrinkage_data,
    figure_tiny_lm_data,
    fit_generator,
    lm_config,
    norm_tails,
    rq_curve,
    shared_rows,
    split_rows,
    trained_tiny_lm,
)
from icml26.gsrq.quantizer import (
    GAIN_MODES,
    GAIN_UPDATES,
    METHODS,
    RULES,
    VARIANTS,
    QuantConfig,
    RQResult,
    Stage,
    assign,
    bits_per_element,
    fit_rq,
    fit_stage,
    kmeans_pp_init,
    metrics,
    rq_metrics,
    rq_reconstruct,
)

__all__ = [
    "CACHE_VERSION", "CLAIM_SPECS", "EQUAL_NORM", "EQUAL_RATE", "FIRST_DESIGN", "GAIN_MODES",
    "GAIN_UPDATES", "HEAVY_TAIL", "METHODS", "PAPER", "RULES", "SCALES", "TINY", "VARIANTS",
    "GSRQConfig", "KVDataConfig", "QuantConfig", "RQResult", "Stage", "assign", "benchmark_data",
    "bits_per_element", "claims", "claims_for", "config_for", "data_generator",
    "figure_rate_distortion_data", "figure_shrinkage_data", "figure_tiny_lm_data", "fit_generator",
    "fit_rq", "fit_stage", "kmeans_pp_init", "lm_config", "make_kv_data", "metrics", "norm_tails",
    "rq_curve", "rq_metrics", "rq_reconstruct", "shared_rows", "split_rows", "tiny_lm",
    "trained_tiny_lm",
]
