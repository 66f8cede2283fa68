"""RED: activation-aware initialisation of width-reducing projections in efficient distillation.

Junlin He, Yihong Tang, Tong Nie, Guilong Li, Binyu Yang, Jinxiao Du, Lijun Sun, Wei Ma.
"Reasoning-preserved Efficient Distillation of LLMs via Activation-aware Initialization",
ICML 2026, https://arxiv.org/abs/2605.29327. No code was released; everything below the
abstract level is reconstructed (spec ``shared/specs/red.md``, issue #16).

The paper's (abstract): efficient distillation (EDistill) shrinks the width with projection
matrices and tunes light modules; randomly initialised projections have unevenly spread
singular values, which collapses the effective rank ``eRank(H) = exp(-sum p_i log p_i)``,
``p_i = sigma_i / sum_j sigma_j``, of the hidden states and with it multi-hop reasoning; RED
initialises each projection as a channel-selection matrix chosen by activations.

Reconstructed here (a scale gap: a 4-layer, width-128 character transformer, not Llama/Qwen):
* teacher: ``icml26.tinylm.TinyLM`` trained on CPython's pydoc text plus the shared 1-3 hop
  permutation task (``icml26.tinylm.hop_batch``), Adam without weight decay;
* student (``student.ProjectedStudent``): the teacher's frozen weights read and written
  through trainable projections ``P in R^{128 x 64}`` (the LRC style of EDistill), distilled by
  KL to the teacher on generic text only; inits Gaussian (base), RED (top-``d'`` channels by
  ``E[h^2]``), random channel selection (the mutation) and orthogonal;
* figures: singular values of P, per-layer eRank before/after distillation, 1/2/3-hop accuracy
  and perplexity per init, eRank against 3-hop accuracy across checkpoints.

Modules, one idea each: ``corpus`` (text and hop sequences in one vocabulary), ``student``
(projections, the projected student, eRank), ``experiments`` (scales, the cached teacher and
students, figure data) and ``claims``.
"""

from icml26.red.claims import (
    BLOCKING,
    CLAIM_SPECS,
    claims,
    claims_for,
    outlier_record,
    seed_record,
)
from icml26.red.corpus import MAX_HOPS, VOCAB, decode, encode, hop_sequences, text_split
from icml26.red.experiments import (
    CACHE_VERSION,
    PAPER,
    SCALES,
    RedConfig,
    config_for,
    distill,
    distilled,
    evaluate,
    figure_data,
    hop_accuracy,
    lm_forward,
    outlier_layers,
    projection,
    teacher_energy,
    teacher_stats,
    train_teacher,
    trained_teacher,
)
from icml26.red.student import (
    INITS,
    ProjectedStudent,
    channel_energy,
    condition_number,
    erank,
    init_projection,
    selection,
)

__all__ = [
    "BLOCKING", "CACHE_VERSION", "CLAIM_SPECS", "INITS", "MAX_HOPS", "PAPER", "SCALES", "VOCAB",
    "ProjectedStudent", "RedConfig", "channel_energy", "claims", "claims_for",
    "condition_number", "config_for", "decode", "distill", "distilled", "encode", "erank",
    "evaluate", "figure_data", "hop_accuracy", "hop_sequences", "init_projection",
    "lm_forward", "outlier_layers", "outlier_record", "projection", "seed_record", "selection",
    "teacher_energy", "teacher_stats", "text_split", "train_teacher", "trained_teacher",
]
