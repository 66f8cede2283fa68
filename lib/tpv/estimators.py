"""Per-sample Jacobians, H_eff estimators and TPV forms for :mod:`icml26.tpv`.

Arpit, "Parameter Perturbations Through the Lens of Test Prediction Variance", ICML 2026,
https://arxiv.org/abs/2512.11089. Everything here is re-exported by :mod:`icml26.tpv`; the
equations are in that module's docstring.

* :func:`per_sample_jacobians`: exact ``J(x) = df(x)/dw`` for every input, batched with
  ``torch.func.vmap(jacrev)`` (``[N, K, p]``; :func:`per_sample_jacobians_loop` is the
  per-sample autograd loop it is benchmarked against);
* :func:`layer_factors`: the same per-sample Jacobians of an :class:`MLP`, factored by layer
  (sensitivity to the pre-activations times the layer input), which gives ``||J(x)||_F^2``,
  the NTK Gram and the effect of removing a neuron without materialising ``[N, p]``;
* :func:`heff_trace_hutchinson`: Hutchinson estimates of ``Tr H_eff`` for any model;
* TPV forms: deterministic directions (``dw^T H_eff dw``), Monte Carlo over perturbed weight
  vectors, quantization (trace and Monte Carlo through the fused ``quant_noise`` kernel),
  SGD noise and label noise.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import nn
from torch.func import functional_call, grad, jacrev, jvp, vmap

from icml26.common import check_int
from icml26.kernels.quant_noise import quant_noise


# --------------------------------------------------------------------------- checks
def check_pos(name: str, value) -> None:
    """Raise ``ValueError`` unless ``value`` is finite and > 0."""
    if not (float(value) > 0 and math.isfinite(float(value))):
        raise ValueError(f"{name} must be finite and > 0, got {value!r}")


def check_bits(bits) -> None:
    check_int("bits", bits, 1)
    if bits > 24:
        raise ValueError(f"bits must be <= 24 (finer steps drown in float32 rounding), got {bits}")


def check_sparsity(sparsity) -> None:
    if not 0.0 <= float(sparsity) < 1.0:
        raise ValueError(f"sparsity must be in [0, 1), got {sparsity!r}")


# --------------------------------------------------------------------------- model
class MLP(nn.Module):
    """ReLU MLP through the layer sizes ``sizes = [d_in, h_1, ..., h_{L-1}, d_out]``:
    ``[N, d_in] -> [N, d_out]``. :meth:`build` gives the paper's ``depth`` convention
    (``depth`` linear layers, ``depth - 1`` hidden layers of one ``width``). With a
    ``generator``, weights and biases follow PyTorch's default ``U(-1/sqrt(fan_in), ..)`` law
    drawn from it (so a seed fixes the network)."""

    def __init__(self, sizes: Sequence[int], generator: torch.Generator | None = None):
        super().__init__()
        if len(sizes) < 3:
            raise ValueError(f"sizes must be [d_in, hidden..., d_out] with at least one hidden "
                             f"layer, got {list(sizes)}")
        for name, s in zip(["d_in"] + ["width"] * (len(sizes) - 2) + ["d_out"], sizes):
            check_int(name, s, 1)
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes, sizes[1:]))
        if generator is not None:
            with torch.no_grad():
                for lin in self.layers:
                    bound = 1.0 / math.sqrt(lin.in_features)
                    for t in (lin.weight, lin.bias):
                        t.copy_((2 * torch.rand(t.shape, generator=generator) - 1) * bound)

    @classmethod
    def build(cls, d_in: int, width: int, depth: int, d_out: int = 1,
              generator: torch.Generator | None = None) -> MLP:
        check_int("width", width, 1)
        check_int("depth", depth, 2)
        return cls([d_in] + [width] * (depth - 1) + [d_out], generator)

    @property
    def sizes(self) -> list[int]:
        return [self.layers[0].in_features] + [lin.out_features for lin in self.layers]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for lin in self.layers[:-1]:
            x = torch.relu(lin(x))
        return self.layers[-1](x)


def param_dict(model: nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.detach() for k, v in model.named_parameters()}


def flat_params(model: nn.Module) -> torch.Tensor:
    """All parameters as one vector ``[p]`` in ``named_parameters`` order."""
    return torch.cat([v.detach().reshape(-1) for v in model.parameters()])


def unflatten(model: nn.Module, flat: torch.Tensor) -> dict[str, torch.Tensor]:
    """``[..., p] -> {name: [..., *shape]}`` in ``named_parameters`` order."""
    out, i = {}, 0
    for k, v in model.named_parameters():
        out[k] = flat[..., i:i + v.numel()].reshape(*flat.shape[:-1], *v.shape)
        i += v.numel()
    return out


# --------------------------------------------------------------------------- Jacobians
def per_sample_jacobians(model: nn.Module, x: torch.Tensor, chunk: int = 256) -> torch.Tensor:
    """Exact per-sample Jacobians ``J(x) = df(x)/dw`` batched with ``vmap(jacrev)``.

    ``[N, d] -> [N, K, p]`` with parameters flattened in ``named_parameters`` order.
    Memory is ``N K p`` floats: meant for small nets (tests, benchmarks, digits).
    """
    params = param_dict(model)

    def f(p, xi):
        return functional_call(model, p, (xi[None],))[0]

    blocks = []
    for i in range(0, x.shape[0], chunk):
        jac = vmap(jacrev(f), in_dims=(None, 0))(params, x[i:i + chunk])
        blocks.append(torch.cat([v.reshape(v.shape[0], v.shape[1], -1)
                                 for v in jac.values()], -1))
    return torch.cat(blocks)


def per_sample_jacobians_loop(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """The same Jacobians with one autograd call per sample and output (the slow oracle the
    ``vmap`` version is benchmarked against). ``[N, d] -> [N, K, p]``."""
    params = list(model.parameters())
    rows = []
    for xi in x:
        out = model(xi[None])[0]
        per_k = []
        for k in range(out.shape[0]):
            g = torch.autograd.grad(out[k], params, retain_graph=k + 1 < out.shape[0])
            per_k.append(torch.cat([t.reshape(-1) for t in g]))
        rows.append(torch.stack(per_k))
    return torch.stack(rows)


def heff_matrix(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """``H_eff = E_x[J(x)^T J(x)]``: ``[p, p]`` (small nets only)."""
    jac = per_sample_jacobians(model, x)
    flat = jac.reshape(-1, jac.shape[-1])
    return flat.T @ flat / x.shape[0]


@dataclass(frozen=True)
class LayerFactors:
    """Per-sample factors of an :class:`MLP`'s Jacobian.

    For linear layer ``l`` with input ``h_l(x)`` and pre-activation ``a_l = W_l h_l + b_l``,
    ``df_k/dW_l = delta_l[k] h_l^T`` and ``df_k/db_l = delta_l[k]`` with
    ``delta_l = df/da_l``. ``inputs[l]`` is ``[N, in_l]``, ``deltas[l]`` is ``[N, K, out_l]``,
    ``preacts[l]`` (``a_l``) is ``[N, out_l]``.
    """

    inputs: tuple[torch.Tensor, ...]
    deltas: tuple[torch.Tensor, ...]
    preacts: tuple[torch.Tensor, ...]

    def sq_norms(self) -> torch.Tensor:
        """``||J(x)||_F^2`` per sample: ``[N]``."""
        total = 0.0
        for h, dl in zip(self.inputs, self.deltas):
            total = total + dl.pow(2).sum((1, 2)) * (h.pow(2).sum(1) + 1.0)
        return total


def layer_factors(model: MLP, x: torch.Tensor, chunk: int = 1024) -> LayerFactors:
    """The exact per-sample Jacobian factors of ``model`` on ``x`` (``vmap(jacrev)`` with
    respect to zero probes added to every pre-activation). ``[N, d] -> LayerFactors``."""
    if not isinstance(model, MLP):
        raise ValueError(f"layer_factors needs an icml26.tpv.MLP, got {type(model).__name__}")
    lins = list(model.layers)
    weights = [(lin.weight.detach(), lin.bias.detach()) for lin in lins]

    def forward(probes, xi):
        h = xi
        for i, (w, b) in enumerate(weights):
            a = w @ h + b + probes[i]
            h = torch.relu(a) if i + 1 < len(weights) else a
        return h

    zeros = [torch.zeros(w.shape[0], dtype=x.dtype, device=x.device) for w, _ in weights]
    deltas = [[] for _ in weights]
    for i in range(0, x.shape[0], chunk):
        jac = vmap(jacrev(forward), in_dims=(None, 0))(zeros, x[i:i + chunk])
        for l, j in enumerate(jac):
            deltas[l].append(j)
    inputs, preacts, h = [], [], x
    with torch.no_grad():
        for i, lin in enumerate(lins):
            inputs.append(h)
            preacts.append(lin(h))
            h = torch.relu(preacts[-1]) if i + 1 < len(lins) else preacts[-1]
    return LayerFactors(tuple(inputs), tuple(torch.cat(d) for d in deltas), tuple(preacts))


def factors_to_jacobians(fac: LayerFactors) -> torch.Tensor:
    """Materialise ``[N, K, p]`` from the factors (tests check it against ``vmap(jacrev)``)."""
    parts = []
    for h, dl in zip(fac.inputs, fac.deltas):
        parts.append((dl[..., :, None] * h[:, None, None, :]).flatten(2))
        parts.append(dl)
    return torch.cat(parts, -1)


def ntk_gram(fa: LayerFactors, fb: LayerFactors, dtype=torch.float32) -> torch.Tensor:
    """NTK Gram ``K[a, b] = J(x_a) . J(x_b)`` for scalar-output nets: ``[Na, Nb]``.

    Computed layer by layer as ``(delta_a . delta_b)(h_a . h_b + 1)``; float32 by default
    (relative error ~1e-6, far below anything the ratios resolve), float64 on request."""
    if fa.deltas[0].shape[1] != 1:
        raise ValueError(f"ntk_gram needs a scalar-output net (K = 1), got K = "
                         f"{fa.deltas[0].shape[1]}")
    out = 0.0
    for ha, da, hb, db in zip(fa.inputs, fa.deltas, fb.inputs, fb.deltas):
        dd = da[:, 0].to(dtype) @ db[:, 0].to(dtype).T
        hh = ha.to(dtype) @ hb.to(dtype).T + 1.0
        out = out + dd * hh
    return out


def jacobian_transpose(fac: LayerFactors, z: torch.Tensor) -> torch.Tensor:
    """``J^T z`` for a batch of output-space vectors of a scalar-output net, from its layer
    factors (``sum_n z_n delta_l(x_n) h_l(x_n)^T`` per weight, ``sum_n z_n delta_l(x_n)`` per
    bias; parameters in ``named_parameters`` order): ``z [R, N] -> [R, p]``."""
    if fac.deltas[0].shape[1] != 1:
        raise ValueError(f"jacobian_transpose needs a scalar-output net (K = 1), got K = "
                         f"{fac.deltas[0].shape[1]}")
    if z.ndim != 2 or z.shape[1] != fac.inputs[0].shape[0]:
        raise ValueError(f"z must be [R, {fac.inputs[0].shape[0]}], got {list(z.shape)}")
    parts = []
    for h, dl in zip(fac.inputs, fac.deltas):
        d = dl[:, 0].to(z.dtype)  # [N, out]
        parts.append(((z[:, :, None] * d[None]).transpose(1, 2) @ h.to(z.dtype)).flatten(1))
        parts.append(z @ d)
    return torch.cat(parts, -1)


def heff_trace(model: nn.Module, x: torch.Tensor, chunk: int = 256) -> float:
    """Exact ``Tr H_eff = E_x ||J(x)||_F^2``: layer factors for an :class:`MLP`, chunked
    ``vmap(jacrev)`` otherwise."""
    if isinstance(model, MLP):
        return float(layer_factors(model, x).sq_norms().double().mean())
    total = 0.0
    for i in range(0, x.shape[0], chunk):
        total += float(per_sample_jacobians(model, x[i:i + chunk]).double().pow(2).sum())
    return total / x.shape[0]


def heff_trace_hutchinson(model: nn.Module, x: torch.Tensor, probes: int,
                          generator: torch.Generator, space: str = "param",
                          chunk: int = 32) -> tuple[float, float]:
    """Hutchinson estimate of ``Tr H_eff`` and its standard error.

    ``space="param"``: Rademacher ``z`` in parameter space, ``E_z E_x ||J(x) z||^2`` with one
    batched forward-mode ``jvp`` over all of ``x`` per probe (``vmap`` over probes).
    ``space="output"``: the paper's doubly-stochastic estimator, one input ``x`` (drawn
    uniformly) and one Rademacher ``v`` over the ``K`` outputs per probe,
    ``||grad_w <v, f(x)>||^2`` (``vmap(grad)`` over probes).
    """
    check_int("probes", probes, 1)
    params = param_dict(model)
    if space == "param":
        flat = flat_params(model)

        def one(z):
            return jvp(lambda p: functional_call(model, p, (x,)), (params,),
                       (unflatten(model, z),))[1]

        vals = []
        for i in range(0, probes, chunk):
            r = min(chunk, probes - i)
            z = (2.0 * torch.randint(0, 2, (r, flat.numel()), generator=generator,
                                     dtype=flat.dtype) - 1.0).to(flat.device)
            vals.append(vmap(one)(z).pow(2).sum(-1).mean(-1))
        est = torch.cat(vals).double()
    elif space == "output":
        k = model(x[:1]).shape[-1]
        idx = torch.randint(0, x.shape[0], (probes,), generator=generator).to(x.device)
        v = (2.0 * torch.randint(0, 2, (probes, k), generator=generator, dtype=x.dtype)
             - 1.0).to(x.device)

        def g(p, xi, vi):
            return (functional_call(model, p, (xi[None],))[0] * vi).sum()

        vals = []
        for i in range(0, probes, 256):
            gr = vmap(grad(g), in_dims=(None, 0, 0))(params, x[idx[i:i + 256]],
                                                     v[i:i + 256])
            vals.append(sum(t.reshape(t.shape[0], -1).pow(2).sum(1) for t in gr.values()))
        est = torch.cat(vals).double()
    else:
        raise ValueError(f"space must be 'param' or 'output', got {space!r}")
    se = float(est.std() / math.sqrt(probes)) if probes > 1 else math.nan
    return float(est.mean()), se


# --------------------------------------------------------------------------- TPV
def tpv_direction(model: nn.Module, x: torch.Tensor, directions: torch.Tensor) -> torch.Tensor:
    """Trace-form TPV of deterministic perturbations, ``E_x ||J(x) dw||^2 = dw^T H_eff dw``,
    for each row of ``directions [G, p]`` (one batched ``jvp`` per row): ``-> [G]``."""
    params = param_dict(model)

    def one(dw):
        return jvp(lambda p: functional_call(model, p, (x,)), (params,),
                   (unflatten(model, dw),))[1]

    return vmap(one)(directions).pow(2).sum(-1).mean(-1)


def tpv_empirical(model: nn.Module, x: torch.Tensor, weights: torch.Tensor,
                  chunk: int = 32) -> torch.Tensor:
    """Monte Carlo TPV: ``E_x ||f_{w_r}(x) - f_{w*}(x)||^2`` for each perturbed weight
    vector ``weights [R, p]`` (``vmap(functional_call)`` over draws): ``-> [R]``."""
    with torch.no_grad():
        ref = model(x)
        out = []
        for i in range(0, weights.shape[0], chunk):
            pred = vmap(lambda w: functional_call(model, unflatten(model, w), (x,)))(
                weights[i:i + chunk])
            out.append((pred - ref).pow(2).sum(-1).mean(-1))
    return torch.cat(out)


def quant_step(weights: torch.Tensor, bits: int) -> float:
    """``delta = (max w - min w) / (2^b - 1)`` over all weights (the paper's global range)."""
    check_bits(bits)
    return float((weights.max() - weights.min()) / (2**bits - 1))


def tpv_quant_trace(trace_heff: float, delta: float) -> float:
    """``sigma_q^2 Tr H_eff`` with ``sigma_q^2 = delta^2 / 12``."""
    return delta**2 / 12.0 * trace_heff


def tpv_quant_mc(model: nn.Module, x: torch.Tensor, bits: int, draws: int, seed: int,
                 impl: str = "auto", chunk: int = 32) -> tuple[float, float]:
    """Monte Carlo quantization TPV (mean and standard error over ``draws``): additive uniform
    noise of width ``delta`` on every weight, drawn by the fused ``quant_noise`` kernel."""
    check_int("draws", draws, 1)
    w = flat_params(model)
    noisy = quant_noise(w, quant_step(w, bits), draws=draws, seed=seed, impl=impl)
    per = tpv_empirical(model, x, noisy, chunk=chunk).double()
    se = float(per.std() / math.sqrt(draws)) if draws > 1 else math.nan
    return float(per.mean()), se


def tpv_sgd_trace(gram_x_train: torch.Tensor, lr: float, batch: int) -> float:
    """``Tr(H_eff(X) C)`` for SGD noise ``C = (lr / 2B) Hess L`` with the Gauss-Newton Hessian
    ``Hess L = 2 H_eff(train)`` of the mean squared error:
    ``(lr / B) ||K_{X,train}||_F^2 / (|X| n)``. ``gram_x_train`` is ``[|X|, n]``."""
    check_pos("lr", lr)
    check_int("batch", batch, 1)
    m, n = gram_x_train.shape
    return float(lr / batch * gram_x_train.double().pow(2).sum() / (m * n))


@dataclass(frozen=True)
class LabelNoiseBasis:
    """Eigendecomposition of the training Gram, so label-noise TPV is cheap for any ``lam``."""

    evals: torch.Tensor  # [n]
    proj: dict[str, torch.Tensor]  # split -> K_{X,train} U  [|X|, n]


def label_basis(gram_train: torch.Tensor, grams: dict[str, torch.Tensor]) -> LabelNoiseBasis:
    """Eigendecompose ``K = U diag(e) U^T`` (float64) and project every Gram on ``U``
    (float32: the projections only enter sums of squares)."""
    evals, evecs = torch.linalg.eigh(gram_train.double())
    u = evecs.float()
    return LabelNoiseBasis(evals.clamp_min(0.0), {k: g.float() @ u for k, g in grams.items()})


def tpv_label_trace(basis: LabelNoiseBasis, split: str, sigma: float, lam: float) -> float:
    """``s^2 / |X| ||K_{X,train} (K + n lam)^{-1}||_F^2`` (linearised refit, see module doc)."""
    if not float(sigma) >= 0:
        raise ValueError(f"label noise sd must be >= 0, got {sigma!r}")
    check_pos("lam", lam)
    n = basis.evals.numel()
    proj = basis.proj[split]
    return float(sigma**2 * (proj / (basis.evals + n * lam)).pow(2).sum() / proj.shape[0])


def neuron_output_change(fac: LayerFactors, layer: int) -> torch.Tensor:
    """First-order change of the outputs when each neuron of hidden layer ``layer`` is removed
    (``du = -w_g``, its incoming weights and bias): ``-delta_j(x) a_j(x)``, ``[N, K, width]``."""
    if not 0 <= layer < len(fac.deltas) - 1:
        raise ValueError(f"layer must be a hidden layer index in [0, {len(fac.deltas) - 1}), "
                         f"got {layer!r}")
    return -fac.deltas[layer] * fac.preacts[layer][:, None, :]
