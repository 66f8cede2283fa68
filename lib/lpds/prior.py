"""The frozen prior: a flow-matching behaviour-cloning policy ``a = Phi(s, w)``.

Flow matching (rectified-flow form): with noise ``w ~ N(0, I)`` and a demo action ``a``,
``x_t = (1 - t) w + t a`` and the MLP ``v(x_t, t, s)`` regresses ``a - w``.  The policy
decodes by a few explicit Euler steps ``x <- x + v(x, t, s) / K`` from ``x_0 = w``, so it is a
deterministic map of its input noise -- the decoder that LP-DS and DSRL steer through ``w``.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from icml26.common import check_int


@dataclass(frozen=True)
class PriorConfig:
    """Flow-matching BC (the spec: a small MLP, 4 Euler steps, ~20 s on CPU)."""

    hidden: int = 128
    steps: int = 1500       # training steps
    batch: int = 256
    lr: float = 2e-3
    euler_steps: int = 4    # the spec's 4 Euler steps
    n_demos: int = 2048

    def validate(self) -> None:
        check_int("hidden", self.hidden, 8, 1024)
        check_int("steps", self.steps, 1, 100_000)
        check_int("batch", self.batch, 8, 8192)
        check_int("euler_steps", self.euler_steps, 1, 64)
        check_int("n_demos", self.n_demos, 16, 1_000_000)


class FlowPolicy(nn.Module):
    """Velocity field ``v(x [B, A], t [B], s [B, S]) -> [B, A]`` and its Euler decoder."""

    def __init__(self, action_dim: int, state_dim: int = 2, hidden: int = 128,
                 euler_steps: int = 4):
        super().__init__()
        self.action_dim, self.euler_steps = action_dim, euler_steps
        self.net = nn.Sequential(nn.Linear(action_dim + 1 + state_dim, hidden), nn.SiLU(),
                                 nn.Linear(hidden, hidden), nn.SiLU(),
                                 nn.Linear(hidden, action_dim))

    def velocity(self, x, t, s):
        return self.net(torch.cat([x, t[:, None], s], dim=1))

    def decode(self, states: torch.Tensor, noise: torch.Tensor,
               euler_steps: int | None = None) -> torch.Tensor:
        """``Phi(s, w)``: actions ``[B, A]`` from the noise ``w`` ``[B, A]``."""
        if noise.shape != (len(states), self.action_dim):
            raise ValueError(f"noise must be [{len(states)}, {self.action_dim}], "
                             f"got {tuple(noise.shape)}")
        k = self.euler_steps if euler_steps is None else euler_steps
        x = noise
        for i in range(k):
            t = torch.full((len(x),), i / k, dtype=x.dtype, device=x.device)
            x = x + self.velocity(x, t, states) / k
        return x


def train_prior(states: torch.Tensor, actions: torch.Tensor, cfg: PriorConfig,
                gen: torch.Generator) -> tuple[FlowPolicy, list[float]]:
    """Fit the flow-matching BC policy on demos (``states [N, 2]``, ``actions [N, 2H]``) on
    their device; random draws come from the CPU generator ``gen`` (then moved), so the CPU
    result does not depend on where it runs. Returns the frozen model and its losses."""
    cfg.validate()
    dev = states.device
    torch.manual_seed(int(torch.randint(0, 2**31 - 1, (1,), generator=gen)))
    model = FlowPolicy(actions.shape[1], states.shape[1], cfg.hidden, cfg.euler_steps).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, cfg.steps)
    losses = []
    for _ in range(cfg.steps):
        idx = torch.randint(0, len(actions), (cfg.batch,), generator=gen)
        a, s = actions[idx], states[idx]
        w = torch.randn(a.shape, generator=gen).to(dev)
        t = torch.rand(len(a), generator=gen).to(dev)
        x = (1 - t[:, None]) * w + t[:, None] * a
        loss = ((model.velocity(x, t, s) - (a - w)) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        losses.append(float(loss.detach()))
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return model, losses
