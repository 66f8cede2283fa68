"""UniLID: language identification with a tokenizer's unigram model, one per language.

Clara Meister, Ahmetcan Yavuz, Pietro Lesci, Tiago Pimentel.  "What Language is This? Ask Your
Tokenizer.", ICML 2026, https://arxiv.org/abs/2602.17655.  Reconstructed from the abstract
and public summaries (spec ``shared/specs/unilid.md``); no code was used.

The paper's (abstract): a shared tokenizer vocabulary ``V``; per language ``L`` a unigram
distribution ``p_L`` over ``V`` and a language-specific segmentation,
``p_L(x) = sum_{seg in S(x)} prod_{t in seg} p_L(t)``; ``p_L`` estimated by EM
(forward-backward expected counts, as in sentencepiece's UnigramLM); prediction by Bayes' rule
``argmax_L log p_L(x) + log pi_L``; languages are added without retraining the others; about
70% accuracy from 5 labelled samples per language; competitive with fastText; large gains on
dialects.

Reconstructed here (tier B, a scale gap): the data are Django's ``.po`` UI strings (22
labels: ten distinct languages and the close pairs pt/pt_BR, nb/nn, hsb/dsb, es/es_AR, cs/sk,
hr/bs) joined into >= 100-character pseudo-sentences, not FLORES; the vocabulary is a 2000
piece sentencepiece unigram model trained on the pooled unlabelled train pools (not an LLM
tokenizer); the MAP prior is ``c_L + alpha p_0`` with ``alpha = 20`` pseudo-tokens in total
centred on sentencepiece's pooled distribution ``p_0``; three EM iterations.

Figures reproduced (``notebooks/unilid.ipynb``): F1 accuracy vs k samples per language for
UniLID, a character unigram ablation, character n-gram naive Bayes and logistic regression,
and fastText (every baseline tuned on a validation split); F2 the close pairs' confusion
matrix; F3 adding a language (the others' parameters bit-identical).

What holds at quick scale: the 5-shot accuracy, the gain over fastText (overall and on the
close pairs), exact incremental addition, subword pieces over characters; NOT a win over
character n-gram naive Bayes (``vs_char_nb_5shot``, reported).

The lattice forward pass (logsumexp over the <= L edges ending at each position, every
language at once) is ``icml26.kernels.lattice_forward`` (Triton on CUDA tensors, the torch
reference on CPU); the backward pass is the forward pass of the reversed lattice.

Modules, one idea each: ``data`` (the Django corpus, pools, pseudo-sentences), ``model``
(vocabulary, lattices, EM, prediction), ``baselines`` (fastText, NB, LR), ``experiments``
(scales, cached fits, the data of F1-F3) and ``claims``.
"""

from icml26.unilid.baselines import (
    BASELINES,
    FASTTEXT_GRID,
    METHODS,
    char_lr,
    char_nb,
    fasttext_clf,
)
from icml26.unilid.claims import CLAIM_SPECS, claims, claims_for
from icml26.unilid.data import (
    ALL22,
    CLOSE12,
    CLOSE_PAIRS,
    DISTINCT10,
    LANGUAGE_SETS,
    Samples,
    corpus,
    make_samples,
    parse_po,
    po_files,
    pseudo_sentences,
    split_pools,
)
from icml26.unilid.experiments import (
    CACHE_VERSION,
    PAPER,
    SCALES,
    UniLIDConfig,
    accuracy,
    changed_parameters,
    config_for,
    figure_accuracy_data,
    figure_confusion_data,
    figure_incremental_data,
    predictions,
    samples,
    vocabulary,
)
from icml26.unilid.model import (
    NORMALIZERS,
    PRIORS,
    SCORES,
    Lattice,
    ModelConfig,
    UniLID,
    Vocabulary,
    build_lattice,
    expected_counts,
    fit,
    log_likelihood,
    m_step,
    train_vocabulary,
)

__all__ = [
    "ALL22", "BASELINES", "CACHE_VERSION", "CLAIM_SPECS", "CLOSE12", "CLOSE_PAIRS",
    "DISTINCT10", "FASTTEXT_GRID", "LANGUAGE_SETS", "METHODS", "NORMALIZERS", "PAPER",
    "PRIORS", "SCALES", "SCORES", "Lattice", "ModelConfig", "Samples", "UniLID",
    "UniLIDConfig", "Vocabulary", "accuracy", "build_lattice", "changed_parameters",
    "char_lr", "char_nb", "claims", "claims_for", "config_for", "corpus", "expected_counts",
    "fasttext_clf", "figure_accuracy_data", "figure_confusion_data",
    "figure_incremental_data", "fit", "log_likelihood", "m_step", "make_samples", "parse_po",
    "po_files", "predictions", "pseudo_sentences", "samples", "split_pools",
    "train_vocabulary", "vocabulary",
]
