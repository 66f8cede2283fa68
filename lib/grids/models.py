"""The frozen encoder, the token head and the five ways of choosing K tokens.

Shapes: images ``[B, 3, S, S]``; feature map ``[B, H, W, C]`` (channels last, H = W = S/P for
a patch of P px: the second design's P = 16 gives 4 x 4 = 16 tokens of 16 px, as coarse as
SigLIP's 14-px patches against a contact point of a few px; the first design's P = 4 gave 256);
tokens ``[B, K, C]`` with coordinates ``[B, K, 2]`` (x, y) in ``[0, 1]`` (``x = j / (W - 1)``,
token centres; pixel ``P (W - 1) x + (P - 1) / 2``); actions ``[B, 4]`` = contact point in
``[0, 1]`` and ``(cos, sin) theta``.

Selectors (``METHODS``):
* ``full`` -- all H W tokens at their grid coordinates;
* ``grids`` -- the paper's ``ActiveTokenSampler``: LayerNorm -> [position-aware: each token
  concatenated with a Fourier encoding of its centre, a token-wise ``Linear + ReLU``] ->
  mean-pool -> (exploration:
  the average over ``probes`` copies with Gaussian noise ``noise_scale`` on the pooled
  feature, training only) -> scout MLP ``C -> 256 -> 2K`` -> ``sigmoid(z / temperature)`` ->
  optional margin -> bilinear sampling (:func:`icml26.kernels.grid_sample.grid_sample`);
* ``topk`` -- learned saliency, hard top-K with a straight-through softmax gate
  (DynamicViT-style); the scorer (:class:`Saliency`) has the scout's capacity (issue 46): each
  LayerNormed token [position-aware: with the Fourier encoding of its centre, the same
  token-wise ``Linear + ReLU``] -> MLP ``C -> 256 -> 1`` (the scout's hidden width), trained
  with the same budget; before issue 46 a linear score of each LayerNormed token;
* ``avgpool`` -- adaptive average pooling of the map to ``sqrt(K) x sqrt(K)`` cells;
* ``random`` -- K tokens drawn uniformly without replacement, anew at every call.
Every selector hands its tokens' coordinates to the head, whose coordinate embedding
``2 -> hidden -> d`` is added to the projected token (the paper's optional embedding; on for
every method, so only the choice of tokens differs).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from icml26.kernels.grid_sample import grid_sample

METHODS = ("full", "grids", "topk", "avgpool", "random")


def grid_coords(h: int, w: int, device=None) -> torch.Tensor:
    """Token-centre coordinates of an ``h x w`` map, ``[h w, 2]`` (x, y) in ``[0, 1]``."""
    ys, xs = torch.meshgrid(torch.linspace(0, 1, h, device=device),
                            torch.linspace(0, 1, w, device=device), indexing="ij")
    return torch.stack([xs.reshape(-1), ys.reshape(-1)], 1)


class Encoder(nn.Module):
    """CoordConv patch encoder ``[B, 3, S, S] -> [B, S/P, S/P, C]``: a 4x4 stride-4 patch
    embedding (as a ViT's, SigLIP's included) of the image plus x/y channels, two 3x3 residual
    convolutions, and the token coordinates appended before a 1x1 output convolution.  For
    ``P > 4`` (the second design) a (P/4)x(P/4) stride-P/4 merge of the 4-px cells (with their
    coordinates) and a 3x3 residual convolution make the P-px tokens, a hybrid-ViT stem: a
    single linear 16x16 patch embedding did not find the contact token (pretraining
    accuracy 0.3 of 16 tokens after 400 steps, every readout at chance, seed 0).

    ``dense`` (``[B, H, W, C] -> [B, H, W, 5]``) is the pretraining readout: a contact logit
    per token and, per token, the contact's offset from the token centre and ``(cos, sin)``.
    """

    def __init__(self, channels: int = 32, patch: int = 16):
        super().__init__()
        if patch % 4 or patch < 4:
            raise ValueError(f"patch must be a multiple of 4, got {patch}")
        self.patch = nn.Conv2d(5, channels, 4, stride=4)
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)
        self.value = nn.Linear(channels + 2, channels)
        self.out = nn.Conv2d(channels + 2, channels, 1)
        self.dense = nn.Linear(channels, 5)
        # created last, so the 4-px encoder draws the same initial weights as the first design
        self.merge = (nn.Conv2d(channels + 2, channels, patch // 4, stride=patch // 4)
                      if patch > 4 else None)
        self.conv3 = nn.Conv2d(channels, channels, 3, padding=1) if patch > 4 else None

    @staticmethod
    def coord_channels(b: int, h: int, w: int, device) -> torch.Tensor:
        return grid_coords(h, w, device).T.reshape(1, 2, h, w).expand(b, 2, h, w)

    def forward(self, img: torch.Tensor) -> torch.Tensor:
        b, _, h, w = img.shape
        x = F.relu(self.patch(torch.cat([img, self.coord_channels(b, h, w, img.device)], 1)))
        x = x + F.relu(self.conv1(x))
        x = x + F.relu(self.conv2(x))
        if self.merge is not None:
            x = F.relu(self.merge(torch.cat([x, self.coord_channels(b, *x.shape[2:],
                                                                    img.device)], 1)))
            x = x + F.relu(self.conv3(x))
        x = self.out(torch.cat([x, self.coord_channels(b, *x.shape[2:], img.device)], 1))
        return x.permute(0, 2, 3, 1)

    def pooled(self, fmap: torch.Tensor, detach_saliency: bool = False) -> torch.Tensor:
        """Attention-pooled global feature ``[B, H, W, C] -> [B, C]`` (SigLIP's MAP head with
        one query, whose logits are the dense readout's contact logits; the values see the
        token coordinates).  ``detach_saliency``: no gradient from the pooled feature into the
        logits (pretraining of the second design: they learn from the contact cross-entropy
        alone)."""
        b, h, w, c = fmap.shape
        flat = fmap.reshape(b, h * w, c)
        logits = self.dense(flat)[..., 0]
        att = torch.softmax(logits.detach() if detach_saliency else logits, 1)  # [B, N]
        vals = self.value(torch.cat([flat, grid_coords(h, w, fmap.device).expand(b, -1, -1)],
                                    -1))
        return torch.einsum("bn,bnc->bc", att, vals)


class TokenHead(nn.Module):
    """Project tokens, add the coordinate embedding, 2-layer transformer, read a query token."""

    def __init__(self, channels: int, d_model: int = 32, layers: int = 2, heads: int = 2,
                 coord_hidden: int = 64, coord_embed: bool = True, out_dim: int = 4):
        super().__init__()
        self.proj = nn.Sequential(nn.LayerNorm(channels), nn.Linear(channels, d_model))
        self.coord = (nn.Sequential(nn.Linear(2, coord_hidden), nn.ReLU(),
                                    nn.Linear(coord_hidden, d_model)) if coord_embed else None)
        self.query = nn.Parameter(torch.zeros(1, 1, d_model))
        layer = nn.TransformerEncoderLayer(d_model, heads, 2 * d_model, dropout=0.0,
                                           batch_first=True, norm_first=True)
        self.body = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.out = nn.Sequential(nn.LayerNorm(d_model), nn.Linear(d_model, out_dim))

    def forward(self, tokens: torch.Tensor, coords: torch.Tensor) -> torch.Tensor:
        x = self.proj(tokens)
        if self.coord is not None:
            x = x + self.coord(coords)
        x = torch.cat([self.query.expand(x.shape[0], -1, -1), x], 1)
        return self.out(self.body(x)[:, 0])


def fourier_coords(coords: torch.Tensor, bands: int = 3) -> torch.Tensor:
    """Fourier encoding ``[..., 2] -> [..., 4 bands]`` of points in ``[0, 1]^2``:
    ``sin, cos (2^b pi x)`` and the same of ``y`` for ``b < bands``."""
    freq = math.pi * 2.0 ** torch.arange(bands, device=coords.device, dtype=coords.dtype)
    ang = (coords[..., None] * freq).flatten(-2)  # [..., 2 bands]
    return torch.cat([ang.sin(), ang.cos()], -1)


class Scout(nn.Module):
    """GridS's coordinate predictor: pooled feature -> K points in ``[0, 1]^2``.

    ``position_aware`` (the second design): before the mean-pool each LayerNormed token is
    concatenated with :func:`fourier_coords` of its centre and passed through a token-wise
    ``Linear(C + 12, C) + ReLU``, so the pooled feature can say *where* a feature is (as the
    authors' scout reads SigLIP tokens that carry position embeddings); without it the mean of
    local features carries no position (the first design's ``"mean"`` stall).

    ``init_grid``: the last layer starts with weights scaled by 0.1 and biases placing the
    points on the cell centres of a ``ceil(sqrt K)`` grid inside the margin (the "initial
    grid" remedy); otherwise PyTorch's default init.
    ``temperature`` divides the logits before the sigmoid (the coordinate temperature).
    """

    def __init__(self, channels: int, k: int, hidden: int = 256, temperature: float = 1.0,
                 margin: float = 0.0, init_grid: bool = True, position_aware: bool = False):
        super().__init__()
        self.k, self.temperature, self.margin = k, temperature, margin
        self.norm = nn.LayerNorm(channels)
        self.mlp = nn.Sequential(nn.Linear(channels, hidden), nn.ReLU(), nn.Linear(hidden, 2 * k))
        if init_grid:
            side = math.ceil(math.sqrt(k))
            pts = grid_coords(side, side)[:k] * (side - 1) / side + 0.5 / side if side > 1 \
                else torch.full((k, 2), 0.5)
            with torch.no_grad():
                self.mlp[2].weight.mul_(0.1)
                self.mlp[2].bias.copy_(temperature * torch.logit(pts.clamp(0.02, 0.98)).reshape(-1))
        # created last, so a scout without it draws the same initial weights as before
        self.token = nn.Linear(channels + 12, channels) if position_aware else None

    def forward(self, fmap: torch.Tensor, noise_scale: float = 0.0, probes: int = 1,
                gen: torch.Generator | None = None, pooled: torch.Tensor | None = None
                ) -> torch.Tensor:
        """``pooled [B, C]``: the global feature to read; ``None`` = the paper's LayerNorm +
        mean-pool of ``fmap`` (of its position-aware tokens with ``position_aware``)."""
        if pooled is None and self.token is not None:
            b, h, w, _ = fmap.shape
            pe = fourier_coords(grid_coords(h, w, fmap.device)).reshape(1, h, w, -1)
            tok = torch.cat([self.norm(fmap), pe.expand(b, -1, -1, -1).to(fmap)], -1)
            pooled = F.relu(self.token(tok)).mean(dim=(1, 2))  # [B, C]
        elif pooled is None:
            pooled = self.norm(fmap).mean(dim=(1, 2))  # [B, C]
        if noise_scale > 0 and probes > 0:
            noise = torch.randn(probes, *pooled.shape, generator=gen).to(pooled)
            logits = self.mlp(pooled[None] + noise_scale * noise).mean(0)
        else:
            logits = self.mlp(pooled)
        xy = torch.sigmoid(logits / self.temperature).reshape(-1, self.k, 2)
        return self.margin + (1 - 2 * self.margin) * xy


class Saliency(nn.Module):
    """Learned top-K's token scorer with the scout's capacity: ``[B, H, W, C] -> [B, H W]``.

    Each token is LayerNormed, [``position_aware``: concatenated with :func:`fourier_coords`
    of its centre and passed through a token-wise ``Linear(C + 12, C) + ReLU``, as the
    scout's tokens are], then scored by an MLP ``C -> hidden -> 1`` (``hidden = 256``, the
    scout's).  The scout's MLP reads the pooled tokens, this one each token: the same layers,
    sizes and training budget, so only the choice (discrete tokens vs continuous points)
    differs.
    """

    def __init__(self, channels: int, hidden: int = 256, position_aware: bool = False):
        super().__init__()
        self.norm = nn.LayerNorm(channels)
        self.mlp = nn.Sequential(nn.Linear(channels, hidden), nn.ReLU(), nn.Linear(hidden, 1))
        self.token = nn.Linear(channels + 12, channels) if position_aware else None

    def forward(self, fmap: torch.Tensor) -> torch.Tensor:
        b, h, w, c = fmap.shape
        x = self.norm(fmap)
        if self.token is not None:
            pe = fourier_coords(grid_coords(h, w, fmap.device)).reshape(1, h, w, -1)
            x = F.relu(self.token(torch.cat([x, pe.expand(b, -1, -1, -1).to(fmap)], -1)))
        return self.mlp(x).reshape(b, h * w)


class TokenPolicy(nn.Module):
    """A selector of K tokens from a frozen feature map plus the :class:`TokenHead`."""

    def __init__(self, method: str, k: int, channels: int, h: int, w: int, d_model: int = 32,
                 coord_embed: bool = True, temperature: float = 1.0, margin: float = 0.0,
                 noise_scale: float = 0.1, probes: int = 4, init_grid: bool = True,
                 round_coords: bool = False, position_aware: bool = False,
                 impl: str = "auto"):
        super().__init__()
        if method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {method!r}")
        if not 1 <= k <= h * w:
            raise ValueError(f"k must be in [1, {h * w}], got {k}")
        if method == "avgpool" and math.isqrt(k) ** 2 != k:
            raise ValueError(f"avgpool needs a square k (k = s^2), got {k}")
        self.method, self.k, self.h, self.w = method, k, h, w
        self.noise_scale, self.probes, self.round_coords, self.impl = (noise_scale, probes,
                                                                       round_coords, impl)
        self.head = TokenHead(channels, d_model, coord_embed=coord_embed)
        self.register_buffer("grid", grid_coords(h, w), persistent=False)
        if method == "grids":
            self.scout = Scout(channels, k, temperature=temperature, margin=margin,
                               init_grid=init_grid, position_aware=position_aware)
        if method == "topk":
            self.saliency = Saliency(channels, position_aware=position_aware)

    def select(self, fmap: torch.Tensor, gen: torch.Generator | None = None,
               pooled: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """``[B, H, W, C] -> (tokens [B, K, C], coords [B, K, 2])``."""
        b, h, w, c = fmap.shape
        flat = fmap.reshape(b, h * w, c)
        grid = self.grid.expand(b, -1, -1)
        if self.method == "full":
            return flat, grid
        if self.method == "grids":
            noisy = self.training and self.noise_scale > 0
            coords = self.scout(fmap, self.noise_scale if noisy else 0.0, self.probes, gen,
                                pooled)
            if self.round_coords:  # the mutation: nearest-neighbour sampling, no gradient
                scale = coords.new_tensor([w - 1, h - 1])
                coords = (coords.detach() * scale).round() / scale
            return grid_sample(fmap, coords, impl=self.impl), coords
        if self.method == "avgpool":
            side = math.isqrt(self.k)
            pooled = F.adaptive_avg_pool2d(fmap.permute(0, 3, 1, 2), side)
            centres = F.adaptive_avg_pool2d(self.grid.T.reshape(1, 2, h, w), side)
            return (pooled.flatten(2).transpose(1, 2),
                    centres.flatten(2).transpose(1, 2).expand(b, -1, -1))
        if self.method == "random":
            idx = torch.rand(b, h * w, generator=gen).argsort(1)[:, : self.k].to(fmap.device)
        else:  # topk: hard top-K, straight-through softmax gate
            score = self.saliency(fmap)  # [B, N]
            idx = score.topk(self.k, dim=1).indices
            soft = torch.softmax(score, 1)
            hard = torch.zeros_like(soft).scatter_(1, idx, 1.0)
            flat = flat * (hard + soft - soft.detach())[..., None]
        take = idx[..., None]
        return (torch.gather(flat, 1, take.expand(-1, -1, c)),
                torch.gather(grid, 1, take.expand(-1, -1, 2)))

    def forward(self, fmap: torch.Tensor, gen: torch.Generator | None = None,
                pooled: torch.Tensor | None = None) -> torch.Tensor:
        tokens, coords = self.select(fmap, gen, pooled)
        return self.head(tokens, coords)


def head_flops(n_tokens: int, d_model: int, layers: int = 2) -> float:
    """Analytic transformer FLOPs of the head, ``L (24 N d^2 + 4 N^2 d)`` (spec, the usual
    count with a 4d MLP; the query token is included in ``N``)."""
    n = n_tokens + 1
    return layers * (24 * n * d_model ** 2 + 4 * n ** 2 * d_model)
