"""2-D LiDAR scenes: walls, boxes and poles (normal), one irregular polygon (the anomaly).

A scene is a padded set of primitives so that many scenes ray-cast in one batch
(``icml26.kernels.ray_cast``): ``segments [B, S, 4]`` (room walls, box sides, anomaly sides;
degenerate zero-length segments pad) and ``circles [B, C, 3]`` (poles; radius 0 pads).  The
anomaly's sides occupy the segment slots ``[anomaly_lo, anomaly_lo + MAX_VERTS)``.

Factual scan: ray-cast everything, so the anomaly returns points *and* casts a shadow (the
background behind it disappears).  Counterfactual scan [derived from the abstract]: the same
geometry with the anomaly made non-occluding (its sides collapsed to zero length, which the
kernel never hits), so the background reappears inside the anomaly's angular shadow and every
other beam is bit-identical.  ``jitter`` moves the counterfactual's sensor (the mutation that
breaks "identical geometry").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from icml26.kernels.ray_cast import ray_cast

MAX_BOXES = 6
MAX_POLES = 8
MAX_VERTS = 14
N_WALLS = 5  # four walls, one split by a doorway
ANOMALY_LO = N_WALLS + 4 * MAX_BOXES


@dataclass(frozen=True)
class ShapeRange:
    """How anomalies are drawn: vertex count, radius (m), radial jaggedness, distance (m)."""

    verts: tuple[int, int] = (6, 9)
    radius: tuple[float, float] = (0.4, 0.8)
    jag: tuple[float, float] = (0.5, 0.8)
    distance: tuple[float, float] = (2.0, 9.0)


#: training anomalies, and held-out ones (more vertices, smaller and larger, farther)
TRAIN_SHAPES = ShapeRange()
TEST_SHAPES = ShapeRange(verts=(9, 12), radius=(0.3, 1.0), jag=(0.4, 0.8), distance=(1.5, 11.0))


@dataclass(frozen=True)
class Scenes:
    """A batch of scenes. Shapes: ``segments [B, S, 4]``, ``circles [B, C, 3]``,
    ``anomaly [B, MAX_VERTS, 2]`` (vertices, repeated last vertex pads), ``n_verts [B]``,
    ``radius [B]``, ``distance [B]`` (anomaly centre to sensor)."""

    segments: torch.Tensor
    circles: torch.Tensor
    anomaly: torch.Tensor
    n_verts: torch.Tensor
    radius: torch.Tensor
    distance: torch.Tensor

    def __len__(self) -> int:
        return self.segments.shape[0]

    def non_occluding(self) -> torch.Tensor:
        """Segments with the anomaly's sides collapsed to zero length (never hit)."""
        seg = self.segments.clone()
        seg[:, ANOMALY_LO:ANOMALY_LO + MAX_VERTS] = 0.0
        return seg


def _polygon(rng, center, radius, n, jag) -> np.ndarray:
    """An irregular star-shaped polygon: sorted random angles, jagged radii. ``[n, 2]``."""
    ang = np.sort(rng.uniform(0, 2 * math.pi, n))
    ang += rng.uniform(0, 2 * math.pi)
    rad = radius * (1 - jag * rng.uniform(0, 1, n))
    return center + np.stack([rad * np.cos(ang), rad * np.sin(ang)], 1)


def _across(poses: torch.Tensor) -> tuple[float, float]:
    """A unit vector across the sensor's straight path (x axis when it does not move)."""
    far = poses[poses.norm(dim=1).argmax()].double()
    n = float(far.norm())
    return (1.0, 0.0) if n == 0 else (float(-far[1]) / n, float(far[0]) / n)


def _sides(verts: np.ndarray) -> np.ndarray:
    """Closed polygon ``[n, 2]`` -> its sides ``[n, 4]``."""
    return np.concatenate([verts, np.roll(verts, -1, axis=0)], 1)


def _room(rng) -> tuple[np.ndarray, tuple[float, float, float, float]]:
    """Four walls around the sensor, one with a doorway (beams through it return nothing)."""
    x0, x1 = -rng.uniform(5, 11), rng.uniform(5, 11)
    y0, y1 = -rng.uniform(5, 11), rng.uniform(5, 11)
    corners = np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]])
    walls = _sides(corners)
    k = rng.integers(4)
    a, b = walls[k, :2], walls[k, 2:]
    u0 = rng.uniform(0.2, 0.6)
    u1 = u0 + rng.uniform(0.08, 0.2)
    door = np.stack([np.r_[a, a + u0 * (b - a)], np.r_[a + u1 * (b - a), b]])
    return np.concatenate([np.delete(walls, k, 0), door]), (x0, x1, y0, y1)


def _place(rng, placed: list, room, radius: float, dist_range) -> np.ndarray | None:
    """A centre at a random distance in ``dist_range`` inside ``room`` clear of ``placed``
    discs (appended to on success); None after 200 tries."""
    x0, x1, y0, y1 = room
    for _ in range(200):
        dist = rng.uniform(*dist_range)
        phi = rng.uniform(0, 2 * math.pi)
        c = np.array([dist * math.cos(phi), dist * math.sin(phi)])
        inside = (x0 + radius + 0.3 < c[0] < x1 - radius - 0.3 and
                  y0 + radius + 0.3 < c[1] < y1 - radius - 0.3)
        if inside and all(math.hypot(c[0] - px, c[1] - py) > radius + pr + 0.3
                          for px, py, pr in placed):
            placed.append((c[0], c[1], radius))
            return c
    return None


def make_scenes(n: int, seed: int, shapes: ShapeRange = TRAIN_SHAPES,
                poses: torch.Tensor | None = None) -> Scenes:
    """``n`` random scenes (numpy generator seeded from ``seed``).  ``poses [n, K, 2]``: the
    sensor's sweep positions (``sweep_poses``), kept clear like the origin (1.2 m around each)
    so that the sensor drives through free space; None: the origin only."""
    rng = np.random.default_rng(seed)
    segs = np.zeros((n, ANOMALY_LO + MAX_VERTS, 4), np.float32)
    circ = np.zeros((n, MAX_POLES, 3), np.float32)
    anom = np.zeros((n, MAX_VERTS, 2), np.float32)
    meta = np.zeros((n, 3), np.float32)
    for i in range(n):
        walls, (x0, x1, y0, y1) = _room(rng)
        segs[i, :N_WALLS] = walls
        placed = [(0.0, 0.0, 1.2)]  # keep the sensor's surroundings clear
        if poses is not None:
            placed += [(float(x), float(y), 1.2) for x, y in poses[i].tolist()]
        room = (x0, x1, y0, y1)
        nv = int(rng.integers(shapes.verts[0], shapes.verts[1] + 1))
        r = rng.uniform(*shapes.radius)
        c = _place(rng, placed, room, r, shapes.distance)
        if c is None:  # a tight room: retry nearer (the anomaly is always present)
            c = _place(rng, placed, room, r, (1.5 + r, 4.0))
        if c is None:  # last resort: beside the sensor's clear zone, across its path
            side = (1.0, 0.0) if poses is None else _across(poses[i])
            c = (1.6 + r) * np.array(side)
            placed.append((c[0], c[1], r))
        verts = _polygon(rng, c, r, nv, rng.uniform(*shapes.jag))
        segs[i, ANOMALY_LO:ANOMALY_LO + nv] = _sides(verts)
        anom[i, :nv], anom[i, nv:] = verts, verts[-1]
        meta[i] = (nv, r, math.hypot(*c))
        for j in range(int(rng.integers(3, MAX_BOXES + 1))):
            w, h = rng.uniform(0.4, 1.6, 2)
            cb = _place(rng, placed, room, 0.5 * math.hypot(w, h), (1.5, 12.0))
            if cb is None:
                continue
            rot = rng.uniform(0, math.pi)
            rx = np.array([[math.cos(rot), -math.sin(rot)], [math.sin(rot), math.cos(rot)]])
            box = np.array([[-w, -h], [w, -h], [w, h], [-w, h]]) / 2 @ rx.T + cb
            segs[i, N_WALLS + 4 * j:N_WALLS + 4 * j + 4] = _sides(box)
        for j in range(int(rng.integers(3, MAX_POLES + 1))):
            rp = rng.uniform(0.08, 0.25)
            cp = _place(rng, placed, room, rp, (1.5, 12.0))
            if cp is not None:
                circ[i, j] = (cp[0], cp[1], rp)
    t = torch.from_numpy
    return Scenes(t(segs), t(circ), t(anom), t(meta[:, 0]).long(), t(meta[:, 1]),
                  t(meta[:, 2]))


def beam_dirs(n_beams: int) -> torch.Tensor:
    """Unit directions of ``n_beams`` evenly spaced beams, ``[R, 2]`` float32."""
    theta = (torch.arange(n_beams, dtype=torch.float64) + 0.5) * (2 * math.pi / n_beams)
    return torch.stack([theta.cos(), theta.sin()], 1).float()


@dataclass(frozen=True)
class Scans:
    """Factual and counterfactual scans of a batch: clean ranges ``[B, R]`` (``max_range`` where
    nothing returns), the factual hit ids, per-beam anomaly labels, returns and shadow masks."""

    factual: torch.Tensor
    counterfactual: torch.Tensor
    hit_id: torch.Tensor
    label: torch.Tensor
    valid: torch.Tensor
    shadow: torch.Tensor


def shadow_mask(scenes: Scenes, n_beams: int, origin=(0.0, 0.0)) -> torch.Tensor:
    """Beams inside the anomaly's angular interval seen from ``origin``, ``[B, R]`` bool.

    The interval spans the vertices' bearings around the centroid's bearing (float64), closed.
    ``origin``: one point ``(x, y)`` for every scene, or one per scene ``[B, 2]``.
    """
    o = torch.as_tensor(origin, dtype=torch.float64).cpu()
    v = scenes.anomaly.double() - (o[:, None] if o.dim() == 2 else o)
    ang = torch.atan2(v[..., 1], v[..., 0])  # [B, V]
    cen = v.mean(1)
    mid = torch.atan2(cen[:, 1], cen[:, 0])[:, None]
    rel = torch.remainder(ang - mid + math.pi, 2 * math.pi) - math.pi
    lo, hi = rel.min(1, keepdim=True).values, rel.max(1, keepdim=True).values
    theta = (torch.arange(n_beams, dtype=torch.float64) + 0.5) * (2 * math.pi / n_beams)
    beam = torch.remainder(theta[None] - mid + math.pi, 2 * math.pi) - math.pi
    return (beam >= lo) & (beam <= hi)


def cast_scans(scenes: Scenes, n_beams: int, max_range: float, jitter: float = 0.0,
               impl: str = "auto", device=None) -> Scans:
    """Ray-cast the factual and counterfactual scans of every scene (clean ranges).

    ``jitter`` > 0 casts the counterfactual from a sensor moved by ``(jitter, jitter)`` m:
    the geometry is then no longer identical (the mutation of ``counterfactual_exact``).
    ``device``: where the rays are cast (default: the scenes' device; CUDA tensors take the
    Triton kernel under ``impl="auto"``); the scans are returned there.
    """
    b = len(scenes)
    dev = scenes.segments.device if device is None else torch.device(device)
    dirs = beam_dirs(n_beams).to(dev)
    origin = torch.zeros(b, 2).to(dev)
    seg, circ = scenes.segments.to(dev), scenes.circles.to(dev)
    f, fid = ray_cast(origin, dirs, seg, circ, max_range, impl=impl)
    cf, _ = ray_cast(origin + jitter, dirs, scenes.non_occluding().to(dev), circ,
                     max_range, impl=impl)
    label = (fid >= ANOMALY_LO) & (fid < ANOMALY_LO + MAX_VERTS)
    return Scans(f, cf, fid, label, fid >= 0, shadow_mask(scenes, n_beams).to(dev))


def sweep_poses(n: int, seed: int, n_sweeps: int, step: float) -> torch.Tensor:
    """Sensor positions of ``n_sweeps`` sweeps per scene, ``[B, K, 2]`` float32: the sensor
    drives a straight line of random heading through the origin, ``step`` m between sweeps;
    sweep 0 is the current (labelled) sweep at the origin, then ``-step, +step, -2 step, ...``.

    Drawn from their own generator (``seed``); ``make_scenes(..., poses=)`` keeps the path
    clear.  Every pose lies within 4 m of the origin (checked; rooms reach >= 5 m each way).
    """
    k = np.arange(1, n_sweeps)
    offsets = np.concatenate([[0.0], np.where(k % 2 == 1, -1.0, 1.0) * ((k + 1) // 2)]) * step
    if np.abs(offsets).max(initial=0.0) > 4.0:
        raise ValueError(f"sweeps reach {np.abs(offsets).max():.2f} m from the origin: "
                         "keep n_sweeps and sweep_step within 4 m (inside every room)")
    heading = np.random.default_rng([int(seed), 7]).uniform(0, 2 * math.pi, n)
    unit = np.stack([np.cos(heading), np.sin(heading)], 1)  # [B, 2]
    return torch.from_numpy((offsets[None, :, None] * unit[:, None]).astype(np.float32))


def cast_sweeps(scenes: Scenes, poses: torch.Tensor, n_beams: int, max_range: float,
                jitter: float = 0.0, impl: str = "auto", device=None) -> dict:
    """Factual and counterfactual scans of every sweep (``poses [B, K, 2]``; beams keep their
    world bearings), clean ranges ``[B, K, R]``, each sweep's anomaly shadow seen from its own
    pose ``[B, K, R]`` and ``exact_gap``: max |factual - counterfactual| outside the shadows over
    every sweep (0 for an exact counterfactual).  ``jitter`` moves every counterfactual sensor
    (the mutation)."""
    dev = scenes.segments.device if device is None else torch.device(device)
    dirs = beam_dirs(n_beams).to(dev)
    seg, circ = scenes.segments.to(dev), scenes.circles.to(dev)
    no_occ = scenes.non_occluding().to(dev)
    f, cf, shadow = [], [], []
    for k in range(poses.shape[1]):
        o = poses[:, k].to(dev)
        f.append(ray_cast(o, dirs, seg, circ, max_range, impl=impl)[0])
        cf.append(ray_cast(o + jitter, dirs, no_occ, circ, max_range, impl=impl)[0])
        shadow.append(shadow_mask(scenes, n_beams, poses[:, k]).to(dev))
    f, cf, shadow = torch.stack(f, 1), torch.stack(cf, 1), torch.stack(shadow, 1)
    return {"factual": f, "counterfactual": cf, "shadow": shadow,
            "exact_gap": float((f - cf)[~shadow].abs().max())}
