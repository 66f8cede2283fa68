"""Self-Flow: self-supervised flow matching, with an honest test of its representation claim.

Hila Chefer, Patrick Esser, Dominik Lorenz, Dustin Podell, Vikash Raja, Vinh Tong, Antonio
Torralba, Robin Rombach.  "Self-Supervised Flow Matching for Scalable Multi-Modal Synthesis",
https://arxiv.org/abs/2603.06507.  The released code (black-forest-labs/Self-Flow) is
inference only; the training objective below is reconstructed (spec ``shared/specs/selfflow.md``).

The paper's (known, abstract / README): Dual-Timestep Scheduling -- two noise levels per sample
and a random token mask (25%), so tokens of one image carry different noise (information
asymmetry) -- and self-distillation of a shallower student layer (through a projector) onto a
deeper layer of an EMA teacher that sees a cleaner view; per-token flow matching with
per-token timestep conditioning (adaLN ``modulate_per_token``).  Claimed: strong
representations without an external encoder, with generation quality kept.

Reconstructed (derived): linear path ``x_tau = (1 - tau) x + tau eps``, target ``v = eps - x``;
the student sees the tokens in the mask at ``s`` and the others at ``t``, the EMA teacher every
token at ``min(t, s)`` (``mask_noise="dual"``); the issue's first design (student at
``max(t, s)``, masked tokens at full noise, ``"full"``) cost generation on seed 0 (1.17x);
``L = FM + gamma (1 - cos(proj(h_S^{l_s}), sg(h_T^{l_t})))``.

Scale gap: sklearn digits (8x8) as 16 tokens of 2x2 patches and a 4-block DiT trained for
hundreds of steps on a CPU, instead of ImageNet / video / audio.  Only the mechanism is tested.

Figures (``notebooks/selfflow.ipynb``): F1 probe accuracy per block x probe noise for the four
models (vanilla, same-timestep self-distillation, Self-Flow, Self-Flow with attention
separation), mean +- SE over seeds; F2 loss curves; F3 generated samples; F4 the teacher /
student noise schedule.

Claims (their roles in :mod:`icml26.selfflow.claims`): ``generation_not_sacrificed`` (binding:
non-inferiority of the held-out FM loss within 3x vanilla's relative seed-to-seed SD, 1.0175);
``probe_gain`` and ``asymmetry_matters`` -- the abstract's point, representations learned inside
the generator -- are reported (``expected=False``; they held on 6 and 9 of 32 seeds in the
record before the numeric pins; see the notebook). The paper's status is computed from its
claims' roles, units and committed per-seed values, never written here: ``icml26 list`` /
:mod:`icml26.status`.

Device: ``claims(seed, scale, device)``; models, batches and probes live on ``device``, every
random number is drawn on the CPU from the seed's generators (CPU results unchanged); cache
entries are keyed by device type.

The fused per-token LayerNorm + modulate kernel (``icml26.kernels.ln_modulate``) runs in every
block: the torch reference in training and on CPU, Triton for no-grad passes on CUDA
(probing, sampling).

Modules: ``model`` (data, tiny DiT, sampler), ``training`` (the four objectives, held-out
loss), ``experiments`` (scales, cache, probes, figure data), ``claims``.
"""

from icml26.selfflow.claims import CLAIM_SPECS, CLAIMS_VERSION, claims, claims_for, generation_claim
from icml26.selfflow.experiments import (
    CACHE_VERSION,
    PAPER,
    PROBES,
    SCALES,
    SelfFlowConfig,
    best_layer,
    config_for,
    data,
    evaluate,
    figure_probe_data,
    figure_schedule_data,
    pixel_probes,
    probe_gaps,
    probe_summary,
    recorded,
    run_all,
    to_compute,
    trained,
    with_train,
)
from icml26.selfflow.model import DiTConfig, TinyDiT, load_digits, patchify, sample, unpatchify
from icml26.selfflow.training import (
    LABELS,
    MASK_NOISE,
    TEACHER_VIEWS,
    TIMESTEPS,
    VARIANTS,
    TrainConfig,
    heldout_fm_loss,
    load_model,
    train,
    views,
)

__all__ = [
    "CACHE_VERSION", "CLAIM_SPECS", "CLAIMS_VERSION", "LABELS", "MASK_NOISE", "PAPER", "PROBES",
    "SCALES", "TEACHER_VIEWS", "TIMESTEPS", "VARIANTS", "DiTConfig", "SelfFlowConfig",
    "TinyDiT", "TrainConfig", "best_layer", "claims", "claims_for", "config_for", "data",
    "evaluate", "figure_probe_data", "figure_schedule_data", "generation_claim",
    "heldout_fm_loss", "load_digits", "load_model", "patchify", "pixel_probes", "probe_gaps",
    "probe_summary", "recorded", "run_all", "sample", "to_compute", "train", "trained",
    "unpatchify", "views", "with_train",
]
