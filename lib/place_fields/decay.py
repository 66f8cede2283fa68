"""The decay ``D(sigma, k)`` shared by the grid->place weights (F1) and HIPE (F3).

Decay families, from the authors' code (``--decay_func``): ``gaussian exp(-sigma^2 k^2 / 2)``,
``exp 1 / (1 + sigma^2 k^2)``, ``power exp(-sigma k)``.  Their Fourier transforms (the kernels
HIPE turns RoPE into): ``exp(-Delta^2 / 2 sigma^2)``, ``exp(-|Delta| / sigma)``,
``sigma^2 / (sigma^2 + Delta^2)``.  Also the argument checks every figure of the paper uses.
"""

from __future__ import annotations

import math

import torch

from icml26.common import check_choice

PAPER = "place_fields"
DECAYS = ("gaussian", "exp", "power")
DTYPE = torch.float64
HALF_WIDTH_GAUSSIAN = math.sqrt(2 * math.log(2))  # 1.1774: half-width / sigma of exp(-x²/2σ²)


def check_decay(decay: str) -> None:
    check_choice("decay", decay, DECAYS)


def check_positive(name: str, value: float, allow_zero: bool = False) -> None:
    """Raise ``ValueError`` unless ``value`` is finite and > 0 (>= 0 with ``allow_zero``)."""
    ok = value >= 0 if allow_zero else value > 0
    if not (math.isfinite(value) and ok):
        raise ValueError(f"{name} must be {'>= 0' if allow_zero else '> 0'} and finite, "
                         f"got {value!r}")


def as_sigmas(sigmas, name: str = "sigma") -> torch.Tensor:
    """Widths as a flat float64 tensor ``[S]``; raises unless non-empty, finite and >= 0."""
    s = torch.as_tensor(sigmas, dtype=DTYPE).reshape(-1)
    if s.numel() == 0:
        raise ValueError(f"{name} must hold at least one value, got an empty list")
    if not torch.isfinite(s).all() or (s < 0).any():
        raise ValueError(f"{name} must be >= 0 and finite, got {s.tolist()}")
    return s


def decay_weight(sigma: torch.Tensor | float, k: torch.Tensor | float,
                 decay: str = "gaussian") -> torch.Tensor:
    """The decay ``D(sigma, k)`` of grid->place weights (or of RoPE frequencies) with ``k``.

    Broadcasts ``sigma`` against ``k``; ``D(0, k) = 1`` for every family.
    """
    check_decay(decay)
    sigma = torch.as_tensor(sigma, dtype=DTYPE)
    k = torch.as_tensor(k, dtype=DTYPE)
    if decay == "gaussian":
        return torch.exp(-0.5 * (sigma * k) ** 2)
    if decay == "exp":
        return 1.0 / (1.0 + (sigma * k) ** 2)
    return torch.exp(-sigma * k)


def closed_form_kernel(decay: str, sigma: float, delta: torch.Tensor) -> torch.Tensor:
    """The Fourier transform of ``D(sigma, .)``, normalised to 1 at ``Delta = 0``."""
    check_decay(decay)
    delta = torch.as_tensor(delta, dtype=DTYPE)
    if decay == "gaussian":
        return torch.exp(-(delta**2) / (2 * sigma**2))
    if decay == "exp":
        return torch.exp(-delta.abs() / sigma)
    return sigma**2 / (sigma**2 + delta**2)
