"""DetectRouter: prototype-based routing of zero-shot machine-text detection to surrogates.

Ke Sun, Guangsheng Bao, Han Cui, Yue Zhang.  "Minimizing Mismatch Risk: A Prototype-Based
Routing Framework for Zero-shot LLM-generated Text Detection", https://arxiv.org/abs/2602.01240.
No code was released; everything below the abstract level is reconstructed (spec
``shared/specs/detectrouter.md``).

The paper's (abstract): a zero-shot detector's accuracy depends on how well its surrogate LM
matches the unknown source (AUROC > 0.9 matched, down to ~0.2 mismatched); no surrogate is best
everywhere but a well-matched one usually sits in a pool; DetectRouter routes each text to a
surrogate through prototypes learned in two stages (stage 1 on white-box sources, stage 2
aligning prototype distances with observed detection scores for black-box sources).

Reconstructed here, at toy scale (figures in ``notebooks/detectrouter.ipynb``):
* human text shipped with installed packages (``corpus``): pydoc topics, scikit-learn dataset
  descriptions, standard-library docstrings; no download;
* the zoo (``lms``): character n-gram LMs and tiny GRU LMs trained here in seconds, all on the
  same pooled training split (second design, issue 35: human and machine text share the
  domain); white-box sources are pool members sampling at T = 0.8, black-box sources held-out
  (order, temperature) configurations; machine texts continue human prefixes;
* the criterion (``detect``): Fast-DetectGPT's analytic curvature
  ``(sum_t log q(x_t) - sum_t mu_t) / sqrt(sum_t sigma_t^2)`` from the fused kernel
  ``icml26.kernels.token_stats``, z-normalised per surrogate on human reference text;
* the router (``router``): tf-idf + the text's z-scored statistics under the pool -> linear
  embedding, one prototype per surrogate,
  stage 1 ``CE(softmax(-d / T), k)``, stage 2 ``KL(softmax(s / T_s) || softmax(-d / T))``;
* F1 the source x surrogate AUROC matrix, F2 mixed-set AUROC of each fixed surrogate, the score
  ensemble, the router and oracle routing, F3 the routing confusion (``experiments``);
  ``claims`` measures them; ``diagnose`` holds the first design's diagnosis;
* the baseline at the router's cost (``combine``, issue 46): mean-z, max-z and a logistic
  regression on the same z-scores, one chosen on validation, against the router.

Every random draw comes from a ``torch.Generator`` seeded from ``seed``.
"""

from icml26.detectrouter.claims import (
    CLAIM_SPECS,
    Z_5PCT,
    claims,
    claims_for,
    combination_record,
    flagged_human,
    seed_record,
)
from icml26.detectrouter.combine import COMBINATIONS, combinations
from icml26.detectrouter.corpus import CORPORA, VOCAB, decode, encode, passages, raw_corpus
from icml26.detectrouter.detect import CRITERIA, auroc, criteria, criterion, znorm_params
from icml26.detectrouter.experiments import (
    BLACK_BOX,
    CACHE_VERSION,
    PAPER,
    POOL,
    ROUTINGS,
    SCALES,
    DetectRouterConfig,
    ModelSpec,
    SourceSpec,
    ZooConfig,
    config_for,
    evaluate,
    evaluation,
    figure_auroc_matrix_data,
    train_model,
    znormed,
    zoo_data,
)
from icml26.detectrouter.lms import GRULM, GRUTrain, NgramLM, train_gru
from icml26.detectrouter.router import Featurizer, FittedRouter, RouterConfig, fit_router

__all__ = [
    "BLACK_BOX", "CACHE_VERSION", "CLAIM_SPECS", "COMBINATIONS", "CORPORA", "CRITERIA",
    "DetectRouterConfig", "Featurizer", "FittedRouter", "GRULM", "GRUTrain", "ModelSpec",
    "NgramLM", "PAPER", "POOL", "ROUTINGS", "RouterConfig", "SCALES", "SourceSpec", "VOCAB",
    "Z_5PCT", "ZooConfig", "auroc", "claims", "claims_for", "combination_record",
    "combinations", "config_for", "criteria", "criterion", "decode", "encode", "evaluate",
    "evaluation", "figure_auroc_matrix_data", "fit_router", "flagged_human", "passages",
    "raw_corpus", "seed_record", "train_gru", "train_model", "znorm_params", "znormed",
    "zoo_data",
]
