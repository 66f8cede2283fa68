"""Heima: efficient reasoning with hidden thinking, on a tiny transformer and a hop task.

"Efficient Reasoning with Hidden Thinking", ICML 2026, https://arxiv.org/abs/2501.19201
(code: github.com/shawnricecake/Heima, read for the spec; the full author list was not
retrieved). Spec: ``shared/specs/heima.md``.

The paper's (abstract and code): each chain-of-thought stage is replaced by ONE thinking token
whose last hidden state an interpreter LLM (fed that state through an ``abstract_projection``)
decodes back into the stage's text; joint loss ``CE(answer) + sum_stage CE(stage text |
projected state)``; stages are compressed progressively (CoT first, then one stage at a
time); 100-200 CoT tokens become 13-16 with stable zero-shot accuracy, and the interpreter's
reconstructions show that the thinking states carry the reasoning.

Ours (a symbolic scale gap, reconstructed for this suite): the multimodal LLMs become a tiny
causal transformer (``icml26.tinylm``, d=32, 4 layers) and the task is ``h``-hop pointer
chasing through a permutation of 8 symbols listed in the prompt (``icml26.tinylm.hop_batch``).
A CoT stage is a verbose 10-token sentence per hop, so CoT emits ``10 h + 2`` tokens and Heima
``h + 2``. The interpreter reads the state through a linear ``abstract_projection`` and emits
the stage's 10 tokens (a 2-layer MLP by default; a small autoregressive LM fed the state as its
first input embedding is the other choice, ``model``). Compared (F1-F4): no-CoT, full CoT,
Heima, pause tokens (Heima's sequence without the decoder loss) and the progressive schedule;
binding claims at 2 hops, 3 hops is the limit.

First design (every model from scratch, 600 steps; ``FIRST_DESIGN``): only the information-gap
control and the token reduction held; no thinking token learnt the lookups. The diagnosis
(``diagnosis``, issue 34) found hop 1 learnable within the depth (CoT's writing position holds
``x1`` from layer 2) yet never learnt at ``T_1``, even at 1 hop. Second design (the quick
scale): Heima and pause tokens start from the trained CoT model (1200 steps) and Heima's
thinking states get a dense target, the CoT model's state where it writes the stage's result.
Seeds 0-6: the states now hold each stage's result ``x_k`` (seed 0: 1.00 / 0.96) but not its
input, so the interpreter claim still fails (about 0.56 < 0.75, 0 of 7 seeds;
``NOT_REPRODUCED``; Heima - pause 3 of 7 seeds, Heima vs CoT and vs no-CoT 5 of 7, CoT itself
failing to learn on seeds 1 and 6). The paper's status is computed from its claims' roles, units
and committed per-seed values, never written here: ``icml26 list`` / :mod:`icml26.status`.

Modules, one idea each: ``task`` (the sequences), ``model`` (encoder + interpreter, joint loss),
``train`` (training, the progressive schedule, evaluation), ``experiments`` (scales, cached
models, figure data), ``diagnosis`` (linear probes over training) and ``claims``.
"""

from icml26.heima.claims import BINDING, CLAIM_SPECS, NOT_REPRODUCED, claims, claims_for
from icml26.heima.diagnosis import DIAG_KINDS, diagnosis_record, probe_curves
from icml26.heima.experiments import (
    CACHE_VERSION,
    FIRST_DESIGN,
    LABELS,
    PAPER,
    SCALES,
    HeimaConfig,
    config_for,
    figure_curves_data,
    figure_hop_limit_data,
    figure_information_gap_data,
    figure_pareto_data,
    in_cache,
    seed_record,
    trained,
    with_mutation,
)
from icml26.heima.model import (
    INTERPRETERS,
    KINDS,
    Heima,
    TrainConfig,
    content_accuracy,
    read_answer,
)
from icml26.heima.task import (
    CONTENT,
    FORMATS,
    MAX_HOPS,
    STAGE_LEN,
    Sequences,
    Vocab,
    build,
    context_len,
    generated_len,
    stage_texts,
)
from icml26.heima.train import (
    answer_accuracy,
    evaluate,
    load,
    phases,
    tokens_to_answer,
    train,
)

__all__ = [
    "BINDING", "CACHE_VERSION", "CLAIM_SPECS", "CONTENT", "DIAG_KINDS", "FIRST_DESIGN", "FORMATS",
    "INTERPRETERS", "KINDS", "LABELS", "NOT_REPRODUCED",
    "MAX_HOPS", "PAPER", "SCALES", "STAGE_LEN", "Heima", "HeimaConfig", "Sequences",
    "TrainConfig", "Vocab", "answer_accuracy", "build", "claims", "claims_for",
    "config_for", "content_accuracy", "context_len", "diagnosis_record", "evaluate",
    "figure_curves_data",
    "figure_hop_limit_data", "figure_information_gap_data", "figure_pareto_data",
    "generated_len", "in_cache", "load", "phases", "probe_curves", "read_answer", "seed_record",
    "stage_texts",
    "tokens_to_answer",
    "train", "trained", "with_mutation",
]
