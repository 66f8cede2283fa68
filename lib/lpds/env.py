"""The toy task: a 2-D point mass goes from a start to a goal around an obstacle.

The obstacle is two disks stacked vertically with a narrow gap between them, so a path has
two homotopy classes around the pair (above, below) plus a narrow shortcut through the gap.
The pair sits slightly above the start-goal line, so passing below is shorter: the demos are
50/50 bimodal, and steering has a better mode to find.
The action is a chunk of ``H`` waypoints ``[B, H, 2]`` (flattened to ``[B, 2H]``), as a
robomimic diffusion policy emits a chunk; one chunk is one episode, so the critic is a reward
model ``Q(s, w)`` with no bootstrapping.  The state ``s`` is the start position ``[B, 2]``.

Return of a path ``p_0 = s, p_1..p_H`` (waypoints), with ``L0 = ||goal - s||``:
``r = 2 - L / L0 - c_coll * (share of densely interpolated path points inside a disk)
- c_miss * ||p_H - goal||`` -- 1 for the straight line, about 0.55 around the disks.

Demonstrations [derived from the issue]: scripted bimodal paths (a sine bump above or below
the pair); a share of them (30%) are noisy and suboptimal (a wider bump plus waypoint jitter).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from icml26.common import check_int


@dataclass(frozen=True)
class MapConfig:
    """The obstacle map and the demonstrations (defaults: the issue's toy, sized by hand)."""

    horizon: int = 8            # waypoints per action chunk (the spec's 8)
    radius: float = 0.35        # each disk's radius
    gap: float = 0.1            # the narrow shortcut between the disks
    obstacle_x: float = 0.0     # the pair's horizontal position
    obstacle_y: float = 0.2     # the pair's vertical offset: passing below is shorter
    start_x: float = -1.0       # start (goal mirrored at +1, y = 0)
    start_jitter: float = 0.25  # start y ~ U(-j, j)
    clean_height: tuple[float, float] = (0.95, 1.15)  # bump height of clean demos
    noisy_height: tuple[float, float] = (1.35, 1.7)   # bump height of noisy demos
    noisy_share: float = 0.3    # the 30% noisy, suboptimal demos
    noisy_jitter: float = 0.08  # waypoint noise of noisy demos
    c_coll: float = 3.0         # return penalty per unit share of points in collision
    c_miss: float = 2.0         # return penalty per unit distance of the last waypoint
    dense: int = 6              # interpolation points per segment for the collision check

    def validate(self) -> None:
        check_int("horizon", self.horizon, 2, 32)
        check_int("dense", self.dense, 1, 64)
        if not 0 < self.radius < 1:
            raise ValueError(f"radius must be in (0, 1), got {self.radius}")
        if not 0 <= self.gap < 1:
            raise ValueError(f"gap must be in [0, 1), got {self.gap}")
        if not 0 <= self.noisy_share <= 1:
            raise ValueError(f"noisy_share must be in [0, 1], got {self.noisy_share}")
        if not -0.6 <= self.obstacle_x <= 0.6:
            raise ValueError(f"obstacle_x must be in [-0.6, 0.6], got {self.obstacle_x}")
        if not -0.4 <= self.obstacle_y <= 0.4:
            raise ValueError(f"obstacle_y must be in [-0.4, 0.4], got {self.obstacle_y}")

    @property
    def action_dim(self) -> int:
        return 2 * self.horizon

    @property
    def goal(self) -> torch.Tensor:
        return torch.tensor([-self.start_x, 0.0])

    def centers(self) -> torch.Tensor:
        """The two disks' centres ``[2, 2]``."""
        off = self.radius + self.gap / 2
        x, y = self.obstacle_x, self.obstacle_y
        return torch.tensor([[x, y + off], [x, y - off]])


def sample_states(cfg: MapConfig, n: int, gen: torch.Generator,
                  device: torch.device | str = "cpu") -> torch.Tensor:
    """Start positions ``[n, 2]`` on ``device``: x fixed, y uniform in the jitter band (drawn
    from the CPU generator ``gen``, so every device sees the same starts)."""
    y = (2 * torch.rand(n, generator=gen) - 1) * cfg.start_jitter
    return torch.stack([torch.full_like(y, cfg.start_x), y], dim=1).to(device)


def bump_paths(cfg: MapConfig, states: torch.Tensor, height: torch.Tensor) -> torch.Tensor:
    """Waypoints ``[B, H, 2]`` of a sine bump of signed ``height`` [B] from each start to
    the goal: ``y(t) = (1 - t) y0 + height sin(pi t)``, x linear in ``t = i / H``."""
    t = torch.arange(1, cfg.horizon + 1, dtype=torch.float32, device=states.device) / cfg.horizon
    x0, y0 = states[:, :1], states[:, 1:]
    gx = float(cfg.goal[0])
    x = x0 + (gx - x0) * t
    y = (1 - t) * y0 + height[:, None] * torch.sin(math.pi * t)
    return torch.stack([x, y], dim=-1)


def demonstrations(cfg: MapConfig, n: int, gen: torch.Generator) -> dict:
    """``n`` scripted demos: states ``[n, 2]``, actions ``[n, 2H]`` and a ``noisy`` mask."""
    cfg.validate()
    states = sample_states(cfg, n, gen)
    side = torch.where(torch.rand(n, generator=gen) < 0.5, 1.0, -1.0)
    noisy = torch.rand(n, generator=gen) < cfg.noisy_share
    u = torch.rand(n, generator=gen)
    lo = torch.where(noisy, cfg.noisy_height[0], cfg.clean_height[0])
    hi = torch.where(noisy, cfg.noisy_height[1], cfg.clean_height[1])
    # the bump clears the offset pair: higher above it, lower below it
    paths = bump_paths(cfg, states, side * (lo + (hi - lo) * u) + cfg.obstacle_y)
    jitter = torch.randn(paths.shape, generator=gen) * cfg.noisy_jitter
    paths = paths + jitter * noisy[:, None, None]
    return {"states": states, "actions": paths.reshape(n, -1), "noisy": noisy}


def dense_path(cfg: MapConfig, states: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
    """The start then the waypoints, linearly interpolated: ``[B, H * dense + 1, 2]``."""
    pts = torch.cat([states[:, None], actions.reshape(len(actions), cfg.horizon, 2)], dim=1)
    a, b = pts[:, :-1], pts[:, 1:]
    f = torch.arange(cfg.dense, dtype=pts.dtype, device=pts.device) / cfg.dense
    seg = a[:, :, None] + (b - a)[:, :, None] * f[None, None, :, None]
    return torch.cat([seg.reshape(len(pts), -1, 2), pts[:, -1:]], dim=1)


def rollout(cfg: MapConfig, states: torch.Tensor, actions: torch.Tensor) -> dict:
    """Return ``[B]`` of each waypoint chunk and its parts (length ratio, collision share,
    miss distance, whether the path went through the gap)."""
    if actions.shape != (len(states), cfg.action_dim):
        raise ValueError(f"actions must be [{len(states)}, {cfg.action_dim}], "
                         f"got {tuple(actions.shape)}")
    pts = actions.reshape(len(actions), cfg.horizon, 2)
    full = torch.cat([states[:, None], pts], dim=1)
    length = (full[:, 1:] - full[:, :-1]).norm(dim=-1).sum(dim=1)
    goal = cfg.goal.to(actions)
    l0 = (goal - states).norm(dim=1)
    dense = dense_path(cfg, states, actions)
    d = (dense[:, :, None] - cfg.centers().to(actions)).norm(dim=-1)
    coll = (d < cfg.radius).any(dim=-1).float().mean(dim=1)
    miss = (pts[:, -1] - goal).norm(dim=1)
    ret = 2 - length / l0 - cfg.c_coll * coll - cfg.c_miss * miss
    # through the gap: crosses the obstacle's x between the disks
    near = (dense[..., 0] - cfg.obstacle_x).abs() < 0.05
    inside = (dense[..., 1] - cfg.obstacle_y).abs() < cfg.radius + cfg.gap / 2
    gap = (near & inside).any(dim=1)
    return {"return": ret, "length_ratio": length / l0, "collision": coll, "miss": miss,
            "gap": gap}
