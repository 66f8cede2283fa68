"""DetectRouter: one prototype per surrogate in an embedding of the text; route to the nearest.

The paper's two stages (arXiv 2602.01240; losses reconstructed from the abstract, spec
``shared/specs/detectrouter.md``):

* encoder ``e(x) = W f(x)``: ``f`` = character 1-3-gram tf-idf features (sublinear tf,
  l2-normalised rows), ``W`` a learned linear map to ``dim`` dimensions; one prototype ``p_k``
  per surrogate; ``d_k(x) = ||e(x) - p_k||^2``;
* stage 1 (white-box sources, whose generator is pool member ``k``):
  ``CE(softmax(-d(x) / T), k)``;
* stage 2 (black-box sources, generator unknown; only that the text is machine-made):
  ``KL(softmax(s(x) / T_s) || softmax(-d(x) / T))`` with ``s_k(x)`` the z-normalised score of
  surrogate ``k`` -- prototype distances are aligned with the observed detection scores --
  added to the stage-1 loss with weight ``stage2_weight``;
* routing: ``k(x) = argmin_k d_k(x)``; the text's score is surrogate ``k(x)``'s z-score.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from icml26.common import global_rng_from, resolve_device
from icml26.detectrouter.corpus import decode


@dataclass(frozen=True)
class RouterConfig:
    """Router hyper-parameters (derived: the paper gives no values)."""

    dim: int = 16  # embedding dimension
    temperature: float = 1.0  # T of softmax(-d / T)
    score_temperature: float = 0.1  # T_s of the stage-2 target softmax(s / T_s) (sharp:
    # tried 0.5, 0.2, 0.1 on seed 0; black-box AUROC 0.66, 0.69, 0.70)
    stage2_weight: float = 1.0  # 0 = stage 1 only
    steps: int = 150  # full-batch Adam steps per stage
    lr: float = 0.02
    max_features: int = 3000  # tf-idf vocabulary of character n-grams (and of words)
    char_ngrams: int = 3  # character 1..char_ngrams-grams
    weight_decay: float = 1e-4
    stats: bool = True  # also feed the texts' statistics under the pool (second design)
    prototypes: int = 1  # prototypes per surrogate; d_k = min over surrogate k's prototypes


class Featurizer:
    """Character 1-3-gram and word tf-idf of decoded texts (fitted on the router's training
    texts), concatenated: ``[B, <= 2 max_features]``."""

    def __init__(self, texts: np.ndarray, max_features: int, words: bool = True,
                 char_ngrams: int = 3):
        from sklearn.feature_extraction.text import TfidfVectorizer  # heavy: not at import

        docs = [decode(t) for t in texts]
        self.vecs = [TfidfVectorizer(analyzer="char", ngram_range=(1, char_ngrams),
                                     sublinear_tf=True,
                                     max_features=max_features, lowercase=False,
                                     dtype=np.float32).fit(docs)]
        if words:
            self.vecs.append(TfidfVectorizer(analyzer="word", sublinear_tf=True,
                                             max_features=max_features,
                                             dtype=np.float32).fit(docs))

    def __call__(self, texts: np.ndarray) -> torch.Tensor:
        docs = [decode(t) for t in texts]
        return torch.cat([torch.from_numpy(v.transform(docs).toarray()) for v in self.vecs], 1)


class Router(nn.Module):
    """``features [B, F] -> squared distances to the K surrogates [B, K]`` (with ``m``
    prototypes per surrogate, the distance to the nearest of them)."""

    def __init__(self, n_features: int, n_surrogates: int, dim: int, m: int = 1):
        super().__init__()
        self.k, self.m = n_surrogates, m
        self.proj = nn.Linear(n_features, dim)
        self.prototypes = nn.Parameter(torch.randn(n_surrogates * m, dim) * 0.1)

    def embed(self, f: torch.Tensor) -> torch.Tensor:
        return self.proj(f)

    def forward(self, f: torch.Tensor) -> torch.Tensor:
        d = torch.cdist(self.proj(f), self.prototypes).pow(2)
        return d.reshape(len(f), self.k, self.m).amin(-1)


class StatsFeaturizer:
    """Text features plus a text's statistics under every surrogate (``[B, S]``, z-scored on
    human reference text), standardised with the router's training texts' mean and std."""

    def __init__(self, text: Featurizer, stats: np.ndarray):
        self.text = text
        self.mu = stats.mean(0)
        self.sd = np.maximum(stats.std(0), 1e-6)

    def __call__(self, texts: np.ndarray, stats: np.ndarray) -> torch.Tensor:
        s = torch.as_tensor((stats - self.mu) / self.sd, dtype=torch.float32)
        return torch.cat([self.text(texts), s], 1)


@dataclass
class FittedRouter:
    featurizer: Featurizer | StatsFeaturizer
    model: Router
    temperature: float

    def features(self, texts: np.ndarray, stats: np.ndarray | None = None) -> torch.Tensor:
        f = (self.featurizer(texts, stats) if isinstance(self.featurizer, StatsFeaturizer)
             else self.featurizer(texts))
        return f.to(self.model.prototypes.device)

    @torch.no_grad()
    def embed(self, texts: np.ndarray, stats: np.ndarray | None = None) -> np.ndarray:
        return self.model.embed(self.features(texts, stats)).cpu().numpy()

    @torch.no_grad()
    def distances(self, texts: np.ndarray, stats: np.ndarray | None = None) -> np.ndarray:
        return self.model(self.features(texts, stats)).cpu().numpy()

    def route(self, texts: np.ndarray, stats: np.ndarray | None = None) -> np.ndarray:
        """The surrogate index chosen for each text ``[B]`` (``stats [B, S]``: its statistics
        under the pool, needed when the router was fitted with them)."""
        return self.distances(texts, stats).argmin(1)


def fit_router(white: np.ndarray, labels: np.ndarray, black: np.ndarray | None,
               black_scores: np.ndarray | None, n_surrogates: int, cfg: RouterConfig,
               gen: torch.Generator, device="cpu", white_stats: np.ndarray | None = None,
               black_stats: np.ndarray | None = None) -> FittedRouter:
    """Stage 1 on ``white [n, L]`` with pool labels ``[n]``; stage 2 (when ``black`` is given
    and ``stage2_weight > 0``) aligns distances with ``black_scores [m, K]`` (z-scores).
    With ``cfg.stats`` the features include ``white_stats`` / ``black_stats`` ``[., S]``."""
    if cfg.stats and (white_stats is None or (black is not None and black_stats is None)):
        raise ValueError("RouterConfig.stats: pass white_stats (and black_stats with black), "
                         "or set stats=False")
    texts = white if black is None else np.concatenate([white, black])
    feat = Featurizer(texts, cfg.max_features, char_ngrams=cfg.char_ngrams)
    if cfg.stats:
        feat = StatsFeaturizer(feat, white_stats if black is None
                               else np.concatenate([white_stats, black_stats]))
    fitted = FittedRouter(feat, None, cfg.temperature)
    dev = resolve_device(device)
    fw = (feat(white, white_stats) if cfg.stats else feat(white)).to(dev)
    with global_rng_from(gen):  # the initial parameters: the same draws as a seed alone
        model = Router(fw.shape[1], n_surrogates, cfg.dim, cfg.prototypes).to(dev)
    fitted.model = model
    y = torch.as_tensor(labels, dtype=torch.int64).to(dev)
    use2 = black is not None and cfg.stage2_weight > 0
    if use2:
        fb = (feat(black, black_stats) if cfg.stats else feat(black)).to(dev)
        target = torch.softmax(torch.as_tensor(black_scores, dtype=torch.float32)
                               / cfg.score_temperature, -1).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    stages = [False, True] if use2 else [False]
    for stage2 in stages:
        for _ in range(cfg.steps):
            loss = nn.functional.cross_entropy(-model(fw) / cfg.temperature, y)
            if stage2:
                logq = torch.log_softmax(-model(fb) / cfg.temperature, -1)
                kl = (target * (target.clamp_min(1e-12).log() - logq)).sum(-1).mean()
                loss = loss + cfg.stage2_weight * kl
            opt.zero_grad()
            loss.backward()
            opt.step()
    model.eval()
    return fitted
