"""The four training objectives, at equal compute, and the held-out flow-matching loss.

Every model takes the same number of optimizer steps on the same batches (same seed, same
images, same student noise where the views coincide); the self-distillation models also run
one no-grad forward of an EMA teacher per step (extra compute that can only favour them).

* ``vanilla``: per-token flow matching with one ``t`` per image (all tokens at ``t``).
* ``same_t`` (SRA-like self-distillation): student and EMA teacher see the same ``x_t``;
  the student's block ``l_s`` features, through a projector, align to the teacher's deeper
  block ``l_t``.
* ``selfflow``: Dual-Timestep Scheduling.  Draw ``t, s`` per image (both from the same
  distribution) and a random token mask ``M`` (``mask_ratio`` of the tokens).  The student
  sees the tokens in M at level ``s`` and the others at ``t`` (``mask_noise="dual"``, the
  paper's description; each token's level is then distributed as vanilla's), the EMA teacher
  sees every token at the cleaner ``min(t, s)``.  ``mask_noise="full"`` is the issue's first
  design: the student's tokens at the noisier ``max(t, s)`` and the masked ones at full noise
  (on seed 0 it cost generation: held-out FM loss 1.17x vanilla's, so it is not the default).
* ``selfflow_sep``: ``selfflow`` with attention separation (masked and unmasked tokens do
  not attend to each other in the student), the follow-up paper's control.

Loss: ``L = mean_i ||v_theta(x_tau, tau)_i - (eps_i - x_i)||^2 + gamma * mean_i (1 -
cos(proj(h_S^{l_s})_i, sg(h_T^{l_t})_i))``.  Mutations: ``teacher_view="student"`` (the
teacher sees the student's noisier view); ``timesteps="per_image"`` (the per-token timesteps
dropped: the tokens are noised at their own levels but the student DiT is conditioned on each
image's primary level ``t`` -- the level of the unmasked tokens -- so it cannot tell the
masked tokens, at ``s``, from the others: the porting bug of a DiT whose adaLN takes one
``t`` per image).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import torch
from torch import nn

from icml26.common import check_choice, check_int, resolve_device
from icml26.selfflow.model import N_TOKENS, DiTConfig, TinyDiT, noised

VARIANTS = ("vanilla", "same_t", "selfflow", "selfflow_sep")
LABELS = {"vanilla": "vanilla FM", "same_t": "same-t self-distillation",
          "selfflow": "Self-Flow", "selfflow_sep": "Self-Flow, attention separated"}
MASK_NOISE = ("dual", "full")
TEACHER_VIEWS = ("clean", "student")
#: timestep conditioning: every token its own level (the paper), or the mutation "per_image"
#: (the per-token levels dropped: the DiT conditioned on each image's primary level ``t``)
TIMESTEPS = ("per_token", "per_image")


@dataclass(frozen=True)
class TrainConfig:
    """One training run.  Defaults: the spec (mask ratio 0.25 [known], logit-normal t as in
    SiT/SD3 [known], gamma = 1, student block 1 -> teacher block 3 of 4 [calibrated design],
    EMA 0.99 for a run of a thousand steps [calibrated design])."""

    model: DiTConfig = DiTConfig()
    steps: int = 1200
    batch: int = 128
    lr: float = 2e-3
    mask_ratio: float = 0.25
    mask_noise: str = "dual"
    t_mean: float = 0.0  # logit-normal: t = sigmoid(N(t_mean, t_std^2))
    t_std: float = 1.0
    gamma: float = 1.0
    student_layer: int = 1
    teacher_layer: int = 3
    ema: float = 0.99
    teacher_view: str = "clean"
    timesteps: str = "per_token"
    log_every: int = 50

    def validate(self) -> None:
        self.model.validate()
        check_int("steps", self.steps, 1, 100_000)
        check_int("batch", self.batch, 2, 4096)
        check_choice("mask_noise", self.mask_noise, MASK_NOISE)
        check_choice("teacher_view", self.teacher_view, TEACHER_VIEWS)
        check_choice("timesteps", self.timesteps, TIMESTEPS)
        check_int("student_layer", self.student_layer, 0, self.model.depth - 1)
        check_int("teacher_layer", self.teacher_layer, 0, self.model.depth - 1)
        if not 0.0 < self.mask_ratio < 1.0:
            raise ValueError(f"mask_ratio must be in (0, 1), got {self.mask_ratio}")
        if not 0.0 <= self.ema < 1.0:
            raise ValueError(f"ema must be in [0, 1), got {self.ema}")
        if not self.gamma >= 0 or not self.lr > 0 or not self.t_std > 0:
            raise ValueError("gamma must be >= 0, lr > 0 and t_std > 0")


def sample_t(n: int, cfg: TrainConfig, gen: torch.Generator) -> torch.Tensor:
    """Logit-normal times ``[n]`` in (0, 1)."""
    return torch.sigmoid(cfg.t_mean + cfg.t_std * torch.randn(n, generator=gen))


def token_mask(b: int, ratio: float, gen: torch.Generator) -> torch.Tensor:
    """Exactly ``round(ratio * T)`` (at least one) random tokens per image: bool ``[b, T]``."""
    k = max(1, round(ratio * N_TOKENS))
    order = torch.rand(b, N_TOKENS, generator=gen).argsort(dim=1)
    return order < k


def views(variant: str, b: int, cfg: TrainConfig, gen: torch.Generator) -> dict:
    """Per-token noise levels of the student (``tau_s``) and teacher (``tau_t``), the mask
    and each image's primary level ``t``.

    Every variant draws the same random numbers in the same order, so equal seeds give the
    same images, noise and first time ``t`` to all four models.
    """
    t = sample_t(b, cfg, gen)
    s = sample_t(b, cfg, gen)
    mask = token_mask(b, cfg.mask_ratio, gen)
    full = t[:, None].expand(b, N_TOKENS)
    if variant in ("vanilla", "same_t"):
        return {"tau_s": full, "tau_t": full, "mask": torch.zeros_like(mask), "t": t}
    lo, hi = torch.minimum(t, s)[:, None], torch.maximum(t, s)[:, None]
    if cfg.mask_noise == "full":
        tau_s = torch.where(mask, torch.ones_like(full), hi.expand(b, N_TOKENS))
    else:  # the paper: tokens in M at s, the others at t (per-token marginal = vanilla's)
        tau_s = torch.where(mask, s[:, None].expand(b, N_TOKENS), full)
    tau_t = tau_s if cfg.teacher_view == "student" else lo.expand(b, N_TOKENS)
    return {"tau_s": tau_s, "tau_t": tau_t, "mask": mask, "t": t}


def conditioning(tau: torch.Tensor, t: torch.Tensor, cfg: TrainConfig) -> torch.Tensor:
    """The levels the DiT is conditioned on: ``tau [B, T]`` itself, or under the mutation
    ``timesteps="per_image"`` each image's primary level ``t [B]`` on every token."""
    if cfg.timesteps == "per_token":
        return tau
    return t[:, None].expand_as(tau)


def projector(dim: int) -> nn.Module:
    return nn.Sequential(nn.Linear(dim, dim), nn.SiLU(), nn.Linear(dim, dim))


def train(variant: str, x_train: torch.Tensor, cfg: TrainConfig, seed: int,
          progress=None, device: str = "cpu") -> dict:
    """Train one model; ``{"state": state_dict (on the CPU), "curve": [(step, fm, align)],
    ...}``.

    ``progress(i, n)`` is called every ``log_every`` steps (the dashboard's bar).  ``device``:
    where the model and batches live; parameters are initialised and every random number is
    drawn on the CPU (the seed's generators) and then moved, so a CUDA run sees the same
    batches, noise and initial weights.
    """
    dev = resolve_device(device)
    check_choice("variant", variant, VARIANTS)
    cfg.validate()
    torch.manual_seed(seed)  # parameter init
    model = TinyDiT(cfg.model)
    distil = variant != "vanilla"
    proj = projector(cfg.model.dim)
    model.to(dev)
    proj.to(dev)
    x_train = x_train.to(dev)
    params = list(model.parameters()) + (list(proj.parameters()) if distil else [])
    opt = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=0.0)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda i: min(1.0, (i + 1) / 100) * (0.1 + 0.9 * (1 - i / cfg.steps)))
    teacher = copy.deepcopy(model).requires_grad_(False) if distil else None
    gen = torch.Generator().manual_seed(seed)
    curve, run_fm, run_al = [], 0.0, 0.0
    for step in range(cfg.steps):
        idx = torch.randint(0, x_train.shape[0], (cfg.batch,), generator=gen)
        x = x_train[idx.to(dev)]
        eps = torch.randn(x.shape, generator=gen).to(dev)
        v = {k: t.to(dev) for k, t in views(variant, cfg.batch, cfg, gen).items()}
        group = v["mask"].long() if variant == "selfflow_sep" else None
        cond = conditioning(v["tau_s"], v["t"], cfg)
        pred, feats = model.run(noised(x, eps, v["tau_s"]), cond, group)
        fm = ((pred - (eps - x)) ** 2).mean()
        loss, al = fm, torch.zeros(())
        if distil:
            with torch.no_grad():
                _, tf = teacher.run(noised(x, eps, v["tau_t"]), v["tau_t"],
                                    upto=cfg.teacher_layer)
            target = tf[cfg.teacher_layer]
            al = (1 - nn.functional.cosine_similarity(proj(feats[cfg.student_layer]),
                                                      target, dim=-1)).mean()
            loss = fm + cfg.gamma * al
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        sched.step()
        if distil:
            with torch.no_grad():
                for pt, ps in zip(teacher.parameters(), model.parameters()):
                    pt.lerp_(ps, 1 - cfg.ema)
        run_fm += fm.item()
        run_al += al.item()
        if (step + 1) % cfg.log_every == 0 or step + 1 == cfg.steps:
            n = (step % cfg.log_every) + 1
            curve.append((step + 1, run_fm / n, run_al / n))
            run_fm, run_al = 0.0, 0.0
            if progress is not None:
                progress(step + 1, cfg.steps)
    if not torch.isfinite(torch.tensor([c[1] for c in curve])).all():
        raise FloatingPointError(f"{variant}: training diverged (non-finite FM loss)")
    state = {k: t.cpu() for k, t in model.state_dict().items()}  # CPU: a no-op
    return {"state": state, "curve": curve, "variant": variant}


def load_model(result: dict, cfg: TrainConfig, device: str = "cpu") -> TinyDiT:
    model = TinyDiT(cfg.model)
    model.load_state_dict(result["state"])
    return model.to(resolve_device(device)).eval()


@torch.no_grad()
def heldout_fm_loss(model: TinyDiT, x: torch.Tensor, draws: int = 8, seed: int = 123) -> float:
    """Flow-matching loss on held-out images at uniform per-image ``tau`` (a stratified grid
    of ``draws`` levels per image, fixed noise: the same for every model, a paired test).
    Runs where ``model``'s parameters are (noise drawn on the CPU, then moved)."""
    gen = torch.Generator().manual_seed(seed)
    dev = next(model.parameters(), torch.zeros(())).device
    x = x.to(dev)
    total = 0.0
    for j in range(draws):
        u = ((j + torch.rand(x.shape[0], generator=gen)) / draws).to(dev)
        eps = torch.randn(x.shape, generator=gen).to(dev)
        tau = u[:, None].expand(-1, N_TOKENS)
        total += float(((model(noised(x, eps, tau), tau) - (eps - x)) ** 2).mean())
    return total / draws
