"""Synthetic "manipulation" scenes: clutter plus one tool whose contact point sets the action.

A 64x64 RGB image holds ``clutter`` random soft blobs (random colours, the tool's red included)
and one tool: a red bar of length ``bar_len`` at a random position and angle ``theta`` with a
green disc of radius ``contact_radius`` at one end, the contact point ``(cx, cy)``.  The
action is ``(cx, cy, theta)``: where to touch and how to orient -- a stand-in for the VLA's
action (the paper's LIBERO success rate becomes a regression error here, spec "Scale gap").
Edges are soft (a sigmoid of the signed distance), so sub-pixel positions show in the pixels.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from icml26.common import check_int


@dataclass(frozen=True)
class SceneConfig:
    """Scene parameters; defaults from the spec's toy design (64x64, one small contact point)."""

    size: int = 64  # image side in pixels (spec)
    clutter: int = 6  # distractor blobs per image
    contact_radius: float = 1.5  # contact disc radius in px: the precision demand
    bar_len: float = 14.0  # tool length in px
    bar_width: float = 3.0
    margin: float = 6.0  # the contact point stays this far (px) from the border

    def validate(self) -> None:
        check_int("size", self.size, 16, 256)
        check_int("clutter", self.clutter, 0, 64)
        if not 0.5 <= self.contact_radius <= 8:
            raise ValueError(f"contact_radius must be in [0.5, 8] px, got {self.contact_radius}")
        if not 0 <= self.margin < self.size / 2:
            raise ValueError(f"margin must be in [0, size/2), got {self.margin}")


def _soft(dist: torch.Tensor, sharp: float = 2.0) -> torch.Tensor:
    """Soft inside-mask from a signed distance (negative inside), ~1 px transition."""
    return torch.sigmoid(-sharp * dist)


def make_scenes(cfg: SceneConfig, n: int, gen: torch.Generator
                ) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` scenes -> ``(images [n, 3, S, S] in [0, 1], actions [n, 3] = (cx, cy, theta))``
    with ``cx, cy`` in pixels and ``theta`` in ``[-pi, pi)``."""
    cfg.validate()
    s = cfg.size
    ys, xs = torch.meshgrid(torch.arange(s, dtype=torch.float32),
                            torch.arange(s, dtype=torch.float32), indexing="ij")
    xs, ys = xs[None], ys[None]  # [1, S, S]
    img = 0.15 + 0.1 * torch.rand(n, 3, 1, 1, generator=gen)  # background tint
    img = img.expand(n, 3, s, s).clone()
    for _ in range(cfg.clutter):  # separable Gaussian blobs, flattened at the top
        centre = torch.rand(n, 2, 1, generator=gen) * s
        radius = 2.0 + 4.0 * torch.rand(n, 1, generator=gen)
        colour = torch.rand(n, 3, 1, 1, generator=gen)
        gx = torch.exp(-(((xs[0, :1] - centre[:, 0]) / radius) ** 2))  # [n, S]
        gy = torch.exp(-(((xs[0, :1] - centre[:, 1]) / radius) ** 2))
        m = (2.0 * gy[:, :, None] * gx[:, None, :]).clamp(max=1.0)[:, None]  # [n, 1, S, S]
        img = img + m * (colour - img)
    lo, hi = cfg.margin, s - 1 - cfg.margin
    contact = lo + (hi - lo) * torch.rand(n, 2, generator=gen)
    theta = (torch.rand(n, generator=gen) * 2 - 1) * math.pi
    direction = torch.stack([theta.cos(), theta.sin()], 1)  # from the contact into the bar
    # the bar runs from the contact point along -direction (it may leave the image)
    px = xs - contact[:, 0, None, None]
    py = ys - contact[:, 1, None, None]
    along = -(px * direction[:, 0, None, None] + py * direction[:, 1, None, None])
    across = (px * direction[:, 1, None, None] - py * direction[:, 0, None, None]).abs()
    d_bar = torch.maximum(torch.maximum(-along, along - cfg.bar_len), across - cfg.bar_width / 2)
    m_bar = _soft(d_bar)[:, None]
    red = torch.tensor([0.9, 0.15, 0.1])[None, :, None, None]
    img = img * (1 - m_bar) + red * m_bar
    d_tip = (px ** 2 + py ** 2).sqrt() - cfg.contact_radius
    m_tip = _soft(d_tip)[:, None]
    green = torch.tensor([0.1, 0.95, 0.2])[None, :, None, None]
    img = img * (1 - m_tip) + green * m_tip
    actions = torch.cat([contact, theta[:, None]], 1)
    return img.clamp(0, 1), actions


def action_targets(actions: torch.Tensor, size: int) -> torch.Tensor:
    """Regression targets ``[n, 4]``: contact point in ``[0, 1]`` and ``(cos, sin) theta``."""
    xy = actions[:, :2] / (size - 1)
    return torch.cat([xy, actions[:, 2:].cos(), actions[:, 2:].sin()], 1)


def action_errors(pred: torch.Tensor, actions: torch.Tensor, size: int
                  ) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-scene contact-point error in pixels and angle error in degrees, from the
    ``[n, 4]`` predictions of :func:`action_targets`'s form."""
    pos = (pred[:, :2] * (size - 1) - actions[:, :2]).norm(dim=1)
    ang = torch.atan2(pred[:, 3], pred[:, 2]) - actions[:, 2]
    ang = torch.remainder(ang + math.pi, 2 * math.pi) - math.pi
    return pos, ang.abs() * 180 / math.pi
