"""Synthetic teachers, student MLPs and their curvature: the data behind F1 and F2 of
:mod:`icml26.tpv` (the equations are in the package docstring).

* teachers ``multi_relu`` / ``linear`` / ``relu`` on ``x ~ N(0, I_d)`` (the paper's
  ``investigation/tpv_trace_synth_universal_scatter.py``), targets scaled to unit sd;
* students trained full batch with Adam + cosine decay (ours; the paper: SGD + momentum),
  cached by their settings;
* :func:`curvature`: every per-sample quantity the trace forms need, from one pass of exact
  layer-factored Jacobians; :func:`trace_forms` turns it into quantization, SGD-noise and
  label-noise TPV on train and test inputs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from icml26 import common
from icml26.common import check_int, device_key, generator
from icml26.tpv.estimators import (
    MLP,
    LabelNoiseBasis,
    check_bits,
    check_pos,
    flat_params,
    label_basis,
    layer_factors,
    neuron_output_change,
    ntk_gram,
    tpv_label_trace,
    tpv_quant_trace,
)
from icml26.tpv.refits import REFITS, refit_filter, tpv_label_refit

PAPER = "tpv"
CACHE_VERSION = 4  # 4: label-noise TPV by the early-stopped refits (issue 46)
TEACHERS = ("multi_relu", "linear", "relu")
PERTURBATIONS = ("sgd", "quant", "label", "prune")
HEFF_SOURCES = ("same", "reinit")
LABEL_LAMBDAS = (1e-3, 1e-2, 1e-1, 1.0)  # ridge values of the label-noise sweep (notebook)


# --------------------------------------------------------------------------- data
def teacher_fn(teacher: str, d: int, generator: torch.Generator) -> Callable:
    """The paper's synthetic teachers on ``x ~ N(0, I_d)``: ``[N, d] -> [N, 1]``.

    ``multi_relu``: ``sum_k relu(a_k^T x + b_k)`` with 10 units; ``linear``: ``x^T w``;
    ``relu``: ``relu(a^T x)`` (``investigation/tpv_trace_synth_universal_scatter.py``).
    """
    if teacher not in TEACHERS:
        raise ValueError(f"teacher must be one of {TEACHERS}, got {teacher!r}")
    check_int("d", d, 1)
    if teacher == "multi_relu":
        a = torch.randn(d, 10, generator=generator)
        b = 0.5 * torch.randn(10, generator=generator)
        return lambda x: torch.relu(x @ a + b).sum(1, keepdim=True)
    w = torch.randn(d, 1, generator=generator)
    if teacher == "linear":
        return lambda x: x @ w
    return lambda x: torch.relu(x @ w)


def teacher_data(teacher: str, d: int, n_train: int, n_test: int, seed: int,
                 n_pool: int = 1000) -> dict[str, torch.Tensor]:
    """Train/test split of one teacher. The teacher and a pool of ``max(n_pool, n_train)``
    training inputs depend on ``(teacher, seed)`` only, and ``n_train`` takes the first rows,
    so students with different ``n_train`` see nested training sets and one test set
    (as in the paper's script). Targets are scaled to unit sd over the pool + test inputs.
    Returns ``X_train [n, d], y_train [n, 1], X_test [m, d], y_test [m, 1]``."""
    check_int("n_train", n_train, 1)
    check_int("n_test", n_test, 1)
    g = generator(1_000_003 * seed + TEACHERS.index(teacher) + 17 * d)
    f = teacher_fn(teacher, d, g)
    pool = torch.randn(max(n_pool, n_train), d, generator=g)
    x_test = torch.randn(n_test, d, generator=g)
    y_pool, y_test = f(pool), f(x_test)
    scale = torch.cat([y_pool, y_test]).std().clamp_min(1e-8)
    return {"X_train": pool[:n_train], "y_train": y_pool[:n_train] / scale,
            "X_test": x_test, "y_test": y_test / scale}


def fit_full_batch(model: nn.Module, loss_fn, x: torch.Tensor, y: torch.Tensor,
                   opt: torch.optim.Optimizer, steps: int) -> list[float]:
    """``steps`` full-batch steps of ``opt`` with cosine decay on ``loss_fn(model(x), y)``;
    returns the loss curve (shared by the regression students and the digits classifier)."""
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        sched.step()
        losses.append(float(loss.detach()))
    return losses


def train_regression(model: nn.Module, x: torch.Tensor, y: torch.Tensor, steps: int,
                     lr: float) -> list[float]:
    """Full-batch Adam with cosine decay on the mean squared error; returns the loss curve."""
    return fit_full_batch(model, F.mse_loss, x, y, torch.optim.Adam(model.parameters(), lr=lr),
                          steps)


# --------------------------------------------------------------------------- students
@dataclass(frozen=True)
class TPVConfig:
    """Synthetic-teacher experiments. Defaults: the spec's probe and the paper's scripts."""

    d: int = 20  # input dim (spec probe; the paper sweeps {10, 20, 50})
    widths: tuple[int, ...] = (4, 32, 256)  # issue / spec
    depths: tuple[int, ...] = (2, 3)  # spec F1 (linear layers; 3 = two hidden layers)
    teachers: tuple[str, ...] = TEACHERS  # paper's DATASET_TYPES
    n_trains: tuple[int, ...] = (10, 1000)  # paper's N_TRAIN_LIST
    n_test: int = 5000  # paper's N_TEST
    claim_teacher: str = "multi_relu"  # spec probe
    claim_depth: int = 3  # spec probe: two hidden layers
    steps: int = 400  # full-batch Adam steps (ours; the paper: 800 epochs SGD+momentum)
    lr: float = 3e-3  # Adam learning rate (ours; paper CLEAN_LR = 2e-3 with SGD)
    bits: int = 8  # issue: quant claim at 8 bits
    bits_sweep: tuple[int, ...] = (4, 5, 6, 7, 8, 9, 10)  # spec F2
    mc_draws: int = 512  # Monte Carlo draws for the 8-bit claim (rel. SE ~ 1/sqrt(draws))
    mc_inputs: int = 256  # training inputs for trace vs MC (the noise is in the draws)
    sweep_draws: int = 64  # draws per bit width in F2
    sgd_lr: float = 1e-3  # paper SGD_LR_LIST[0]
    sgd_batch: int = 32  # paper SGD_BATCH_SIZE_LIST[0]
    label_sigma: float = 0.01  # paper LABEL_SIGMA_LIST[1]
    label_lambda: float = 1e-3  # paper CENTER_PENALTY_LAMBDA (proximity penalty of the refits)
    label_refit: str = "gd"  # the paper's early-stopped refits; "ridge" = their fixed point
    label_epochs: int = 200  # paper LABEL_NOISE_EPOCHS (full batch)
    label_lr: float = 2e-3  # paper LABEL_NOISE_LR (SGD, momentum 0.9, cosine)
    label_momentum: float = 0.9  # paper's optimizer
    heff_source: str = "same"  # "reinit" = the pitfall: H_eff of a re-initialised network
    loss_pairs: int = 64  # antithetic pairs of draws per student and perturbation for the
    #                       measured test-loss increase (tpv_tracks_test_loss; ours)
    loss_inputs: int = 1000  # test inputs (the first ones) the loss increase is measured on

    def validate(self) -> None:
        check_int("d", self.d, 1)
        for w in self.widths:
            check_int("width", w, 1)
        for dp in self.depths:
            check_int("depth", dp, 2)
        for t in self.teachers:
            if t not in TEACHERS:
                raise ValueError(f"teacher must be one of {TEACHERS}, got {t!r}")
        for n in self.n_trains:
            check_int("n_train", n, 1)
        check_int("n_test", self.n_test, 1)
        check_int("steps", self.steps, 1)
        check_pos("lr", self.lr)
        check_bits(self.bits)
        for b in self.bits_sweep:
            check_bits(b)
        check_int("mc_draws", self.mc_draws, 2)
        check_int("mc_inputs", self.mc_inputs, 1)
        check_int("sweep_draws", self.sweep_draws, 2)
        check_pos("sgd_lr", self.sgd_lr)
        check_int("sgd_batch", self.sgd_batch, 1)
        check_int("loss_pairs", self.loss_pairs, 2)
        check_int("loss_inputs", self.loss_inputs, 1)
        if not self.label_sigma >= 0:
            raise ValueError(f"label_sigma must be >= 0, got {self.label_sigma}")
        check_pos("label_lambda", self.label_lambda)
        if self.label_refit not in REFITS:
            raise ValueError(f"label_refit must be one of {REFITS}, got {self.label_refit!r}")
        check_int("label_epochs", self.label_epochs, 1)
        check_pos("label_lr", self.label_lr)
        if not 0 <= self.label_momentum < 1:
            raise ValueError(f"label_momentum must be in [0, 1), got {self.label_momentum}")
        if self.heff_source not in HEFF_SOURCES:
            raise ValueError(f"heff_source must be one of {HEFF_SOURCES}, "
                             f"got {self.heff_source!r}")


SCALES = {
    "quick": TPVConfig(),
    # closer to the paper's sweep: more input dims would be a loop over d; longer training
    "paper": TPVConfig(steps=2000, mc_draws=2048, sweep_draws=256, depths=(2, 3, 4)),
}


def config_for(scale: str) -> TPVConfig:
    """The preset ``scale`` ("quick" | "paper") of :data:`SCALES`."""
    return common.config_for(SCALES, scale)


def cached(key: str, config, seed: int, compute):
    """This paper's entry of the shared cache (keyed by ``CACHE_VERSION``)."""
    return common.cached(PAPER, key, config, seed, CACHE_VERSION, compute)


def train_student(teacher: str, width: int, depth: int, n_train: int, seed: int,
                  d: int = SCALES["quick"].d, n_test: int = SCALES["quick"].n_test,
                  steps: int = SCALES["quick"].steps, lr: float = SCALES["quick"].lr,
                  use_cache: bool = True, device: str | torch.device = "cpu",
                  ) -> tuple[MLP, dict[str, torch.Tensor], dict]:
    """A student MLP trained on ``n_train`` points of ``teacher`` (cached by its settings;
    ``n_test`` is part of the key because the targets are scaled over train + test inputs).

    Returns ``(model, data, info)`` on ``device`` with ``info = {loss_train, loss_test, gap}``.
    """
    check_int("width", width, 1)
    check_int("depth", depth, 2)
    data = {k: v.to(device) for k, v in teacher_data(teacher, d, n_train, n_test, seed).items()}
    key = {"teacher": teacher, "width": width, "depth": depth, "n_train": n_train, "d": d,
           "n_test": n_test, "steps": steps, "lr": lr}

    def compute():
        g = generator(7919 * seed + 31 * width + depth)
        model = MLP.build(d, width, depth, generator=g).to(device)
        train_regression(model, data["X_train"], data["y_train"], steps, lr)
        return {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}

    # trained on the device, so cached per device type (CPU keys unchanged)
    state = cached(device_key("student", device), key, seed, compute) if use_cache \
        else compute()
    model = MLP.build(d, width, depth)
    model.load_state_dict(state)
    model.to(device)
    with torch.no_grad():
        lt = float(F.mse_loss(model(data["X_train"]), data["y_train"]))
        le = float(F.mse_loss(model(data["X_test"]), data["y_test"]))
    return model, data, {"loss_train": lt, "loss_test": le, "gap": le - lt}


@dataclass(frozen=True)
class Curvature:
    """What every trace form needs from one network on one train/test split.

    ``trace_heff[split] = Tr H_eff(X)``; ``cross[split] = Tr(H_eff(X) H_eff(train))
    = ||K_{X,train}||_F^2 / (|X| n)``; ``label`` the eigenbasis of the training Gram;
    ``w_min, w_max`` the range of the PERTURBED network's weights (it sets ``delta``);
    ``neuron[split][l]`` the TPV of removing each neuron of hidden layer ``l``, ``[width_l]``.
    """

    trace_heff: dict[str, float]
    cross: dict[str, float]
    label: LabelNoiseBasis
    w_min: float
    w_max: float
    neuron: dict[str, tuple[torch.Tensor, ...]]


def curvature(model: MLP, data: dict[str, torch.Tensor],
              source: MLP | None = None) -> Curvature:
    """Per-sample Jacobian statistics of ``source`` (default: ``model`` itself) on the train
    and test inputs of ``data``; the weight range always comes from ``model``. Passing a
    different ``source`` is the pitfall of the mutation test."""
    source = model if source is None else source
    fac = {"train": layer_factors(source, data["X_train"]),
           "test": layer_factors(source, data["X_test"])}
    grams = {s: ntk_gram(f, fac["train"]) for s, f in fac.items()}
    n = data["X_train"].shape[0]
    w = flat_params(model)
    hidden = range(len(source.layers) - 1)
    return Curvature(
        trace_heff={s: float(f.sq_norms().double().mean()) for s, f in fac.items()},
        cross={s: float(g.double().pow(2).sum() / (g.shape[0] * n)) for s, g in grams.items()},
        label=label_basis(grams["train"], grams),
        w_min=float(w.min()), w_max=float(w.max()),
        neuron={s: tuple(neuron_output_change(f, l).pow(2).sum(1).mean(0) for l in hidden)
                for s, f in fac.items()})


def trace_forms(curv: Curvature, bits: int, sgd_lr: float, sgd_batch: int,
                label_sigma: float, label_lambda: float, label_refit: str = "gd",
                label_epochs: int = 200, label_lr: float = 2e-3,
                label_momentum: float = 0.9) -> dict[str, float]:
    """Trace-form TPV on train and test inputs: ``{quant,sgd,label}_{train,test}`` and
    ``delta``. Label noise by the refit ``label_refit`` (:mod:`icml26.tpv.refits`; default the
    paper's early-stopped momentum GD). Cheap: every per-sample quantity is already in
    ``curv``."""
    check_bits(bits)
    check_pos("sgd_lr", sgd_lr)
    check_int("sgd_batch", sgd_batch, 1)
    delta = (curv.w_max - curv.w_min) / (2**bits - 1)
    filt = refit_filter(curv.label.evals, label_lambda, label_refit, label_lr, label_momentum,
                        label_epochs)
    out = {"delta": delta}
    for split in ("train", "test"):
        out[f"quant_{split}"] = tpv_quant_trace(curv.trace_heff[split], delta)
        out[f"sgd_{split}"] = sgd_lr / sgd_batch * curv.cross[split]
        out[f"label_{split}"] = tpv_label_refit(curv.label, split, label_sigma, filt)
    return out


def label_refit_args(cfg: TPVConfig) -> dict:
    """The label-noise refit settings of ``cfg`` as :func:`trace_forms` keywords."""
    return {"label_refit": cfg.label_refit, "label_epochs": cfg.label_epochs,
            "label_lr": cfg.label_lr, "label_momentum": cfg.label_momentum}


def heff_network(model: MLP, heff_source: str, seed: int) -> MLP:
    """The network whose Jacobians give ``H_eff``: ``model`` itself (``"same"``), or the
    pitfall of the mutation tests, a re-initialised network of the same sizes (``"reinit"``)."""
    if heff_source not in HEFF_SOURCES:
        raise ValueError(f"heff_source must be one of {HEFF_SOURCES}, got {heff_source!r}")
    if heff_source == "same":
        return model
    return MLP(model.sizes, generator=generator(seed + 99991)).to(flat_params(model).device)


def student_tpv(model: MLP, data: dict[str, torch.Tensor], cfg: TPVConfig,
                seed: int = 0) -> dict:
    """Trace-form TPV on the training and test inputs for quantization (``cfg.bits``),
    SGD noise and label noise, plus ``Tr H_eff`` of both splits. With
    ``cfg.heff_source="reinit"`` the curvature comes from a re-initialised network."""
    curv = curvature(model, data, heff_network(model, cfg.heff_source, seed))
    out = trace_forms(curv, cfg.bits, cfg.sgd_lr, cfg.sgd_batch, cfg.label_sigma,
                      cfg.label_lambda, **label_refit_args(cfg))
    sweep = [{"lambda": lam, **{s: tpv_label_trace(curv.label, s, cfg.label_sigma, lam)
                                for s in ("train", "test")}} for lam in LABEL_LAMBDAS]
    return {"trace_heff_train": curv.trace_heff["train"],
            "trace_heff_test": curv.trace_heff["test"], **out, "label_sweep": sweep}


def record_key(cfg: TPVConfig, teacher: str, width: int, depth: int, n_train: int) -> dict:
    """The cache key of one student's records: what its training and its TPVs depend on."""
    return {"cfg": {k: v for k, v in cfg.__dict__.items()
                    if k in ("d", "n_test", "steps", "lr", "bits", "sgd_lr", "sgd_batch",
                             "label_sigma", "label_lambda", "heff_source", "label_refit",
                             "label_epochs", "label_lr", "label_momentum")},
            "teacher": teacher, "width": width, "depth": depth, "n_train": n_train}


def student_record(cfg: TPVConfig, teacher: str, width: int, depth: int, n_train: int,
                   seed: int, device: str | torch.device = "cpu") -> dict:
    """One point of F1 (cached per device type): losses, generalization gap and train/test
    trace-form TPVs."""
    key = record_key(cfg, teacher, width, depth, n_train)

    def compute():
        model, data, info = train_student(teacher, width, depth, n_train, seed, cfg.d,
                                          cfg.n_test, cfg.steps, cfg.lr, device=device)
        res = student_tpv(model, data, cfg, seed)
        return {**info, **res, "teacher": teacher, "width": width, "depth": depth,
                "n_train": n_train}

    return cached(device_key("record", device), key, seed, compute)
