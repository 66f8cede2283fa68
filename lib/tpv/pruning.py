"""JBR structured pruning on sklearn's digits (F3 of the TPV paper, :mod:`icml26.tpv`).

Arpit, "Parameter Perturbations Through the Lens of Test Prediction Variance", ICML 2026,
https://arxiv.org/abs/2512.11089.

Removing a group ``g`` of weights is the perturbation ``du = -w_g``; its TPV is the JBR
importance ``w_g^T H_eff w_g``, computed on training inputs without labels. Groups are hidden
neurons (their incoming weights and bias; see :mod:`icml26.tpv`). For one neuron ``j`` of
hidden layer ``l`` with pre-activation ``a_j(x)`` and output sensitivity
``delta_j(x) = df/da_j``, the first-order output change is ``dz(x) = -delta_j(x) a_j(x)``,
so every neuron's importance comes from one set of per-sample layer factors.

The output metric. The abstract defines TPV on the model's outputs, the logits here, so JBR
is ``JBR_g = E_x ||dz||^2`` (``metric="logits"``, the default since issue 46). The paper's
pruning code accumulates ``sum_b (J_b w_g)^2`` with ``J_b`` the gradient of the cross-entropy
at the model's own pseudo-labels; its label-free expectation is the softmax Fisher metric
``diag(p) - p p^T`` (``metric="fisher"``, the notebook's ablation). On a classifier trained
to train CE ~0.02, ``p`` is nearly one-hot on the training inputs and that metric nearly 0
(the issue-46 audit), which is why it is no longer the default.

Protocol (ours; the paper prunes CIFAR/ImageNet CNNs with torch-pruning): a 64-128-128-10
ReLU MLP trained with AdamW; local pruning (the same fraction of every hidden layer),
iterative in 5% steps with importances recomputed after each step (the paper: 18 steps to
90%); then every criterion alike gets one short fine-tune (``DigitsConfig.finetune_steps``
full-batch AdamW steps at ``finetune_lr``, cosine, removed neurons stay zero; fixed before
any result, issue 46); test cross-entropy and accuracy on a held-out 30%, before and after
the fine-tune.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from icml26.common import check_int, device_key, generator
from icml26.tpv.estimators import MLP, check_pos, check_sparsity, layer_factors
from icml26.tpv.estimators import neuron_output_change as _factor_change
from icml26.tpv.students import cached, fit_full_batch

CRITERIA = ("jbr", "magnitude", "random")
METRICS = ("fisher", "logits")
#: where JBR's scores come from: its TPV ("tpv"), or the mutation tests' switched-off
#: geometry, random scores ("random") or the TPV ranking reversed ("reversed")
JBR_SCORES = ("tpv", "random", "reversed")


def digits_data(seed: int, test_fraction: float = 0.3) -> dict[str, torch.Tensor]:
    """sklearn's bundled 8x8 digits (1797 images, no download), pixels scaled to [0, 1],
    split by a seeded permutation. ``X [n, 64]`` float32, ``y [n]`` int64."""
    from sklearn.datasets import load_digits

    if not 0 < test_fraction < 1:
        raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction}")
    ds = load_digits()
    x = torch.as_tensor(ds.data, dtype=torch.float32) / 16.0
    y = torch.as_tensor(ds.target, dtype=torch.int64)
    perm = torch.randperm(len(y), generator=generator(seed))
    n_test = int(round(test_fraction * len(y)))
    te, tr = perm[:n_test], perm[n_test:]
    return {"X_train": x[tr], "y_train": y[tr], "X_test": x[te], "y_test": y[te]}


def train_classifier(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor, steps: int,
                     lr: float, weight_decay: float = 0.0) -> list[float]:
    """Full-batch AdamW with cosine decay on the cross-entropy; returns the loss curve."""
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
    return fit_full_batch(model, F.cross_entropy, x, y, opt, steps)


@dataclass(frozen=True)
class DigitsConfig:
    """Pruning on digits (spec F3). Sizes are ours: the paper prunes CNNs."""

    hidden: tuple[int, ...] = (128, 128)  # two hidden layers
    steps: int = 300  # full-batch AdamW steps (train CE ~0.02, test accuracy ~97%)
    lr: float = 3e-3
    weight_decay: float = 1e-4
    test_fraction: float = 0.3
    sparsities: tuple[float, ...] = tuple(round(0.05 * i, 2) for i in range(19))  # 0..90%
    claim_sparsity: float = 0.5  # issue: 50% neuron sparsity
    metric: str = "logits"  # JBR output metric: TPV on the logits (module docstring)
    jbr_inputs: int = 0  # training inputs used by JBR (0 = all; label-free either way)
    finetune_steps: int = 50  # one short fine-tune after pruning, every criterion (issue 46)
    finetune_lr: float = 1e-3  # a third of training's lr, fixed before any result
    jbr_scores: str = "tpv"  # "random" / "reversed": the mutation tests (JBR_SCORES)

    def validate(self) -> None:
        if len(self.hidden) < 1:
            raise ValueError("hidden must list at least one hidden width")
        for h in self.hidden:
            check_int("width", h, 1)
        check_int("steps", self.steps, 1)
        check_pos("lr", self.lr)
        if not 0 < self.test_fraction < 1:
            raise ValueError(f"test_fraction must be in (0, 1), got {self.test_fraction}")
        for s in self.sparsities:
            check_sparsity(s)
        check_sparsity(self.claim_sparsity)
        if self.metric not in METRICS:
            raise ValueError(f"metric must be one of {METRICS}, got {self.metric!r}")
        check_int("jbr_inputs", self.jbr_inputs, 0)
        check_int("finetune_steps", self.finetune_steps, 0)
        check_pos("finetune_lr", self.finetune_lr)
        if self.jbr_scores not in JBR_SCORES:
            raise ValueError(f"jbr_scores must be one of {JBR_SCORES}, got {self.jbr_scores!r}")


def train_digits(cfg: DigitsConfig, seed: int, use_cache: bool = True,
                 device: str | torch.device = "cpu"):
    """A ReLU MLP classifier on digits (cached by its settings). Returns ``(model, data)``
    on ``device``."""
    cfg.validate()
    data = {k: v.to(device) for k, v in digits_data(seed, cfg.test_fraction).items()}
    sizes = [64, *cfg.hidden, 10]

    def compute():
        m = MLP(sizes, generator(104729 + seed)).to(device)
        train_classifier(m, data["X_train"], data["y_train"], cfg.steps, cfg.lr,
                         cfg.weight_decay)
        return {k: v.detach().cpu().clone() for k, v in m.state_dict().items()}

    key = {k: getattr(cfg, k) for k in ("hidden", "steps", "lr", "weight_decay",
                                         "test_fraction")}
    # trained on the device, so cached per device type (CPU keys unchanged)
    state = cached(device_key("digits", device), key, seed, compute) if use_cache \
        else compute()
    m = MLP(sizes)
    m.load_state_dict(state)
    return m.to(device), data


def neuron_directions(model: MLP, layer: int) -> torch.Tensor:
    """``du = -w_g`` for every neuron ``g`` of hidden layer ``layer`` (its incoming weights and
    bias) as flat parameter vectors ``[width, p]`` (the jvp oracle for the tests)."""
    _check_layer(model, layer)
    width = model.layers[layer].out_features
    target = {f"layers.{layer}.weight", f"layers.{layer}.bias"}
    flat = []
    for k, v in model.named_parameters():
        v = v.detach()
        if k not in target:
            flat.append(torch.zeros(width, v.numel(), dtype=v.dtype, device=v.device))
        elif v.ndim == 2:  # weight [out, in]: row g only
            eye = torch.eye(width, dtype=v.dtype, device=v.device)
            flat.append((-eye[:, :, None] * v[None]).flatten(1))
        else:
            flat.append(-torch.diag(v))
    return torch.cat(flat, 1)


def _check_layer(model: MLP, layer: int) -> None:
    hidden = len(model.layers) - 1
    if isinstance(layer, bool) or int(layer) != layer or not 0 <= layer < hidden:
        raise ValueError(f"layer must be a hidden layer index in [0, {hidden}), got {layer!r}")


def neuron_output_change(model: MLP, x: torch.Tensor, layer: int) -> torch.Tensor:
    """First-order change of the outputs when each neuron of hidden layer ``layer`` is
    removed: ``dz[n, k, j] = -delta_j(x_n)[k] a_j(x_n)``. ``[N, d] -> [N, K, width]``."""
    _check_layer(model, layer)
    return _factor_change(layer_factors(model, x), layer)


def metric_tpv(dz: torch.Tensor, logits: torch.Tensor, metric: str = "fisher") -> torch.Tensor:
    """``E_x dz^T M(x) dz`` per group for ``dz [N, K, G]``: ``M = I`` (``logits``) or the
    softmax Fisher ``diag(p) - p p^T`` (``fisher``). ``-> [G]``."""
    if metric == "logits":
        return dz.pow(2).sum(1).mean(0)
    if metric == "fisher":
        p = torch.softmax(logits, -1)[:, :, None]  # [N, K, 1]
        return ((dz.pow(2) * p).sum(1) - (dz * p).sum(1).pow(2)).mean(0)
    raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")


def neuron_importance(model: MLP, layer: int, criterion: str, x: torch.Tensor | None = None,
                      generator: torch.Generator | None = None,
                      metric: str = "fisher") -> torch.Tensor:
    """Importance of each neuron of hidden layer ``layer``: ``[width]``.

    ``jbr``: ``w_g^T H_eff w_g`` on inputs ``x`` (the TPV of removing it, label-free);
    ``magnitude``: the L2 norm of the neuron's incoming weights, bias and outgoing weights;
    ``random``: uniform scores from ``generator``.
    """
    _check_layer(model, layer)
    if criterion == "jbr":
        if x is None:
            raise ValueError("jbr importance needs the inputs x")
        with torch.no_grad():
            logits = model(x)
        return metric_tpv(neuron_output_change(model, x, layer), logits, metric)
    if criterion == "magnitude":
        lin, nxt = model.layers[layer], model.layers[layer + 1]
        return (lin.weight.detach().pow(2).sum(1) + lin.bias.detach().pow(2)
                + nxt.weight.detach().pow(2).sum(0)).sqrt()
    if criterion == "random":
        if generator is None:
            raise ValueError("random importance needs a generator")
        lin = model.layers[layer]
        return torch.rand(lin.out_features, generator=generator).to(lin.weight.device)
    raise ValueError(f"criterion must be one of {CRITERIA}, got {criterion!r}")


def prune_neurons(model: MLP, layer: int, idx: torch.Tensor) -> None:
    """Remove neurons ``idx`` of hidden layer ``layer`` in place (zero in, bias and out)."""
    _check_layer(model, layer)
    with torch.no_grad():
        model.layers[layer].weight[idx] = 0.0
        model.layers[layer].bias[idx] = 0.0
        model.layers[layer + 1].weight[:, idx] = 0.0


def _copy(model: MLP) -> MLP:
    m = MLP(model.sizes).to(model.layers[0].weight.device)
    m.load_state_dict(model.state_dict())
    return m


def _evaluate(m: MLP, data: dict[str, torch.Tensor]) -> tuple[float, float]:
    with torch.no_grad():
        logits = m(data["X_test"])
        loss = float(F.cross_entropy(logits, data["y_test"]))
        acc = float((logits.argmax(1) == data["y_test"]).float().mean())
    return loss, acc


def fine_tune(model: MLP, data: dict[str, torch.Tensor], alive: Sequence[torch.Tensor],
              steps: int, lr: float, weight_decay: float = 0.0) -> MLP:
    """A fine-tuned copy of the pruned ``model``: ``steps`` full-batch AdamW steps with cosine
    decay on the training cross-entropy; the removed neurons (``~alive[l]``) stay zero (their
    gradients are exactly zero; re-zeroed at the end all the same)."""
    m = _copy(model)
    if steps > 0:
        train_classifier(m, data["X_train"], data["y_train"], steps, lr, weight_decay)
        for h, a in enumerate(alive):
            prune_neurons(m, h, torch.nonzero(~a).flatten())
    return m


def _scores(m: MLP, h: int, criterion: str, x, g, metric: str, jbr_scores: str,
            g_mut: torch.Generator) -> torch.Tensor:
    if criterion != "jbr" or jbr_scores == "tpv":
        return neuron_importance(m, h, criterion, x, g, metric)
    if jbr_scores == "random":  # the mutation: JBR's geometry switched off
        return neuron_importance(m, h, "random", x, g_mut, metric)
    if jbr_scores == "reversed":  # the mutation: the TPV ranking turned upside down
        return -neuron_importance(m, h, "jbr", x, g, metric)
    raise ValueError(f"jbr_scores must be one of {JBR_SCORES}, got {jbr_scores!r}")


def pruning_curve(model: MLP, data: dict[str, torch.Tensor], criterion: str,
                  sparsities: Sequence[float], seed: int = 0, metric: str = "logits",
                  jbr_inputs: int = 0, finetune_steps: int = 0, finetune_lr: float = 1e-3,
                  weight_decay: float = 0.0, jbr_scores: str = "tpv",
                  finetune_at: float | None = None) -> list[dict]:
    """Iterative local structured pruning of a copy of ``model``: for each target sparsity
    (ascending), recompute the importances of the surviving neurons and remove the least
    important until every hidden layer has lost that fraction. One row per sparsity with the
    test cross-entropy and accuracy of the pruned network (``test_loss``, ``test_acc``) and,
    with ``finetune_steps > 0``, of a copy fine-tuned from it (``test_loss_ft``,
    ``test_acc_ft``; pruning goes on from the pruned, not the fine-tuned, network), at every
    sparsity or only at ``finetune_at``."""
    if criterion not in CRITERIA:
        raise ValueError(f"criterion must be one of {CRITERIA}, got {criterion!r}")
    for s in sparsities:
        check_sparsity(s)
    if list(sparsities) != sorted(sparsities):
        raise ValueError(f"sparsities must be ascending, got {list(sparsities)}")
    check_int("finetune_steps", finetune_steps, 0)
    m = _copy(model)
    g = generator(seed + 12345)
    g_mut = generator(seed + 54321)  # the mutation's random scores: not the random criterion's
    x = data["X_train"] if jbr_inputs <= 0 else data["X_train"][:jbr_inputs]
    hidden = range(len(m.layers) - 1)
    alive = [torch.ones(m.layers[h].out_features, dtype=torch.bool,
                        device=m.layers[h].weight.device) for h in hidden]
    rows = []
    for s in sparsities:
        for h in hidden:
            extra = int(round(s * alive[h].numel())) - int((~alive[h]).sum())
            if extra > 0:
                score = _scores(m, h, criterion, x, g, metric, jbr_scores, g_mut)
                score = torch.where(alive[h], score, torch.full_like(score, math.inf))
                idx = torch.argsort(score, stable=True)[:extra]
                prune_neurons(m, h, idx)
                alive[h][idx] = False
        loss, acc = _evaluate(m, data)
        row = {"criterion": criterion, "sparsity": float(s), "test_loss": loss,
               "test_acc": acc}
        if finetune_steps > 0 and finetune_at in (None, s):
            ft = fine_tune(m, data, alive, finetune_steps, finetune_lr, weight_decay)
            row["test_loss_ft"], row["test_acc_ft"] = _evaluate(ft, data)
        rows.append(row)
    return rows


def figure_pruning_data(cfg: DigitsConfig, seed: int = 0, criteria: Sequence[str] = CRITERIA,
                        metric: str | None = None, device: str | torch.device = "cpu",
                        with_fine_tune: bool = True):
    """F3: test loss and accuracy against neuron sparsity, one row per (criterion, sparsity),
    before (``test_loss``) and, with ``with_fine_tune``, after the fine-tune every criterion gets
    (``test_loss_ft``). ``metric`` overrides ``cfg.metric`` for JBR (the notebook's
    logits-vs-Fisher ablation)."""
    import pandas as pd

    cfg.validate()
    model, data = train_digits(cfg, seed, device=device)
    rows = []
    for c in criteria:
        rows += pruning_curve(model, data, c, cfg.sparsities, seed, metric or cfg.metric,
                              cfg.jbr_inputs, cfg.finetune_steps if with_fine_tune else 0,
                              cfg.finetune_lr, cfg.weight_decay, cfg.jbr_scores)
    return pd.DataFrame(rows)


def pruning_claim_data(cfg: DigitsConfig, seed: int = 0,
                       device: str | torch.device = "cpu") -> dict[str, dict]:
    """Each criterion's row at ``cfg.claim_sparsity`` (the figure's schedule up to it, then
    the fine-tune), plus the unpruned network under key ``"none"`` (cached per device
    type)."""
    cfg.validate()

    def compute():
        model, data = train_digits(cfg, seed, device=device)
        steps = sorted({0.0, cfg.claim_sparsity,
                        *[s for s in cfg.sparsities if s < cfg.claim_sparsity]})
        out = {}
        for c in CRITERIA:
            rows = pruning_curve(model, data, c, steps, seed, cfg.metric, cfg.jbr_inputs,
                                 cfg.finetune_steps, cfg.finetune_lr, cfg.weight_decay,
                                 cfg.jbr_scores, finetune_at=cfg.claim_sparsity)
            out[c] = rows[-1]
            out["none"] = rows[0]
        return out

    return cached(device_key("pruning_claim", device), cfg, seed, compute)
