"""UniLID's model: a shared unigram vocabulary, one unigram distribution per language.

* Vocabulary: a sentencepiece unigram model trained on the pooled *unlabelled* text; its
  pieces (``<s>``/``</s>`` never occur; ``<unk>`` stands for a character it never saw) and its
  piece probabilities ``p_0`` (the pooled distribution, the prior's base measure).
* Lattice of a text: after sentencepiece's normalisation (NFKC, spaces -> ``▁``), every
  substring of at most ``max_len`` characters that is a piece is an edge (an unseen character
  is a ``<unk>`` edge, so every text has a segmentation).
* Language ``L``: ``p_L(x) = sum over segmentations of prod p_L(piece)`` (language-specific
  segmentation); ``p_L`` is fitted by EM on ``L``'s labelled samples only: the E-step's
  expected piece counts ``c_L`` come from forward-backward on each sample's lattice, the
  M-step is the MAP estimate under a Dirichlet prior of total mass ``alpha`` centred on
  ``p_0``: ``p_L = (c_L + alpha p_0) / (|c_L| + alpha)``.
* Prediction: ``argmax_L log p_L(x) + log pi_L`` (uniform ``pi``), marginal likelihood or
  the Viterbi score.

A language's parameters depend only on its own samples, ``p_0`` and ``alpha``, so adding a
language never changes the others (``add_language``).  Two mistakes are available as flags
for the mutation tests: ``prior="per_entry"`` applies the prior's mass to every vocabulary
entry (total mass ``alpha V``), ``normalizer="shared"`` divides every language's smoothed
counts by one normaliser pooled over the languages present.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass, field, replace

import numpy as np
import torch

from icml26.common import check_choice, check_int
from icml26.kernels.lattice_forward import lattice_forward, reverse_edges

PRIORS = ("total", "per_entry")
NORMALIZERS = ("per_language", "shared")
SCORES = ("marginal", "viterbi")


@dataclass(frozen=True)
class ModelConfig:
    """UniLID's settings; defaults from the spec's calibrated design."""

    vocab_size: int = 2000  # sentencepiece unigram pieces (spec)
    max_len: int = 8  # longest piece in characters (spec); 1 = a character unigram model
    em_iters: int = 3  # EM iterations per language (spec)
    alpha: float = 20.0  # total prior mass in pseudo-tokens (spec)
    prior: str = "total"  # "per_entry": the mutation (mass alpha on every entry)
    normalizer: str = "per_language"  # "shared": the mutation (one pooled normaliser)
    score: str = "marginal"  # or "viterbi"

    def validate(self) -> None:
        check_int("vocab_size", self.vocab_size, 50, 16000)
        check_int("max_len", self.max_len, 1, 16)
        check_int("em_iters", self.em_iters, 0, 50)
        if not (self.alpha > 0 and math.isfinite(self.alpha)):
            raise ValueError(f"alpha must be a finite number > 0, got {self.alpha!r}")
        check_choice("prior", self.prior, PRIORS)
        check_choice("normalizer", self.normalizer, NORMALIZERS)
        check_choice("score", self.score, SCORES)


@dataclass
class Vocabulary:
    """The shared pieces, their ids and the pooled log-probabilities ``log_p0 [V]``."""

    proto: bytes
    pieces: list[str]
    index: dict[str, int]
    log_p0: torch.Tensor  # float64 [V]; -inf for control pieces
    unk: int
    max_len: int

    def normalize(self, text: str) -> str:
        return _processor(self.proto).normalize(text)

    def restricted(self, max_len: int) -> Vocabulary:
        """The same vocabulary with pieces longer than ``max_len`` removed (p_0 renormalised)."""
        lens = torch.tensor([len(p) if i != self.unk else 1 for i, p in enumerate(self.pieces)])
        lp = torch.where(lens <= max_len, self.log_p0, torch.tensor(float("-inf"),
                                                                   dtype=torch.float64))
        lp = lp - torch.logsumexp(lp, 0)
        index = {p: i for p, i in self.index.items() if len(p) <= max_len}
        return Vocabulary(self.proto, self.pieces, index, lp, self.unk, min(max_len,
                                                                            self.max_len))

    def to(self, device) -> Vocabulary:
        """The same vocabulary with ``log_p0`` on ``device`` (itself when already there)."""
        dev = torch.device(device)
        if self.log_p0.device == dev:
            return self
        return Vocabulary(self.proto, self.pieces, self.index, self.log_p0.to(dev), self.unk,
                          self.max_len)


_PROCESSORS: dict[int, object] = {}


def _processor(proto: bytes):
    import sentencepiece as spm

    key = hash(proto)
    if key not in _PROCESSORS:
        _PROCESSORS[key] = spm.SentencePieceProcessor(model_proto=proto)
    return _PROCESSORS[key]


def train_vocabulary(texts: list[str], vocab_size: int = 2000, max_len: int = 8
                     ) -> Vocabulary:
    """A sentencepiece unigram vocabulary of the pooled unlabelled ``texts`` (one thread)."""
    import sentencepiece as spm

    if not texts:
        raise ValueError("the vocabulary needs unlabelled text, got none")
    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(texts), model_writer=buf, vocab_size=vocab_size,
        model_type="unigram", max_sentencepiece_length=max_len, character_coverage=1.0,
        num_threads=1, minloglevel=2, hard_vocab_limit=False)
    proto = buf.getvalue()
    sp = _processor(proto)
    n = sp.get_piece_size()
    pieces = [sp.id_to_piece(i) for i in range(n)]
    scores = torch.tensor([sp.get_score(i) for i in range(n)], dtype=torch.float64)
    control = torch.tensor([sp.is_control(i) for i in range(n)])
    unk = sp.unk_id()
    # <unk> gets the smallest piece probability: an unseen character costs like a rare one
    scores[unk] = scores[~control & (torch.arange(n) != unk)].min()
    scores[control] = float("-inf")
    log_p0 = scores - torch.logsumexp(scores, 0)
    index = {p: i for i, p in enumerate(pieces) if not control[i] and i != unk}
    return Vocabulary(proto, pieces, index, log_p0, unk, max_len)


# --------------------------------------------------------------------------- lattices
@dataclass
class Lattice:
    """Edges of a batch of texts: ``edges [B, T, L]`` piece ids (-1: none), ``lengths [B]``."""

    edges: torch.Tensor
    lengths: torch.Tensor


def build_lattice(vocab: Vocabulary, texts: list[str], device=None) -> Lattice:
    """Every piece occurrence of every (normalised) text, as a padded edge tensor (built on
    the CPU, then moved to ``device``; default: where ``vocab.log_p0`` lives)."""
    norm = [vocab.normalize(t) for t in texts]
    n_t = max((len(s) for s in norm), default=1) or 1
    n_l = vocab.max_len
    edges = np.full((len(texts), n_t, n_l), -1, dtype=np.int64)
    index, unk = vocab.index, vocab.unk
    for b, s in enumerate(norm):
        for t in range(1, len(s) + 1):
            row = edges[b, t - 1]
            for ln in range(1, min(n_l, t) + 1):
                v = index.get(s[t - ln:t])
                if v is not None:
                    row[ln - 1] = v
            if row[0] < 0:
                row[0] = unk
    dev = vocab.log_p0.device if device is None else torch.device(device)
    return Lattice(torch.from_numpy(edges).to(dev),
                   torch.tensor([len(s) for s in norm]).to(dev))


def log_likelihood(lat: Lattice, logp: torch.Tensor, score: str = "marginal",
                   impl: str = "auto") -> torch.Tensor:
    """``log p_k(x_b)`` (or the Viterbi score) of every text under every row of
    ``logp [K, V]``: ``[B, K]``."""
    alpha = lattice_forward(lat.edges, logp, "log" if score == "marginal" else "max", impl)
    return alpha[torch.arange(alpha.shape[0], device=alpha.device), lat.lengths]


def expected_counts(lat: Lattice, logp: torch.Tensor, impl: str = "auto") -> torch.Tensor:
    """E-step: expected piece counts ``[V]`` of the texts under one distribution
    ``logp [1, V]`` (forward-backward: the backward pass is the forward pass of the reversed
    lattice)."""
    alpha = lattice_forward(lat.edges, logp, "log", impl)[..., 0]  # [B, T+1]
    rev = lattice_forward(reverse_edges(lat.edges, lat.lengths), logp, "log", impl)[..., 0]
    n_b, n_t, n_l = lat.edges.shape
    dev = lat.edges.device
    b = torch.arange(n_b, device=dev)[:, None]
    s = torch.arange(n_t + 1, device=dev)[None, :]
    beta = rev[b, (lat.lengths[:, None] - s).clamp(0, n_t)]  # beta[b, s] = rev[b, n - s]
    beta = torch.where(s <= lat.lengths[:, None], beta, torch.full_like(beta, -math.inf))
    log_z = alpha[torch.arange(n_b, device=dev), lat.lengths]  # [B]
    t = torch.arange(1, n_t + 1, device=dev)[None, :, None]
    ln = torch.arange(1, n_l + 1, device=dev)[None, None, :]
    ok = (lat.edges >= 0) & (ln <= t)  # an edge starting before the text is none
    start = (t - ln).clamp_min(0).expand_as(lat.edges)
    bb = torch.arange(n_b, device=dev)[:, None, None].expand_as(lat.edges)
    post = (alpha[bb, start] + logp[0][lat.edges.clamp_min(0)]
            + beta[bb, t.expand_as(lat.edges)] - log_z[:, None, None])
    post = torch.where(ok, post.exp(), torch.zeros_like(post))
    counts = torch.zeros(logp.shape[1], dtype=logp.dtype, device=logp.device)
    return counts.index_add_(0, lat.edges[ok], post[ok])


def expected_counts_rows(lat: Lattice, logp: torch.Tensor, rows: torch.Tensor,
                         impl: str = "auto") -> torch.Tensor:
    """E-step of many distributions at once: text ``b``'s expected piece counts under each of
    its rows ``rows[b, j]`` of ``logp [R, V]``, summed per row: ``[R, V]``.

    One forward and one backward pass over the whole batch and every row (the tuning grid's
    languages x alphas); each text then keeps only its own rows. The same sums as
    :func:`expected_counts` per (row, texts), up to the order of float additions."""
    fwd = lattice_forward(lat.edges, logp, "log", impl)  # [B, T+1, R]
    rev = lattice_forward(reverse_edges(lat.edges, lat.lengths), logp, "log", impl)
    n_b, n_t, n_l = lat.edges.shape
    n_j = rows.shape[1]
    dev = lat.edges.device
    alpha = torch.take_along_dim(fwd, rows[:, None, :], dim=2)  # [B, T+1, J]
    rev = torch.take_along_dim(rev, rows[:, None, :], dim=2)
    s = torch.arange(n_t + 1, device=dev)[None, :]
    back = (lat.lengths[:, None] - s).clamp(0, n_t)  # beta[b, s] = rev[b, n - s]
    beta = torch.take_along_dim(rev, back[:, :, None].expand(-1, -1, n_j), dim=1)
    beta = torch.where((s <= lat.lengths[:, None])[..., None], beta,
                       torch.full_like(beta, -math.inf))
    log_z = alpha[torch.arange(n_b, device=dev), lat.lengths]  # [B, J]
    t = torch.arange(1, n_t + 1, device=dev)[None, :, None]
    ln = torch.arange(1, n_l + 1, device=dev)[None, None, :]
    ok = (lat.edges >= 0) & (ln <= t)  # [B, T, L]
    start = (t - ln).clamp_min(0).expand_as(lat.edges).reshape(n_b, n_t * n_l)
    a_start = torch.take_along_dim(alpha, start[:, :, None].expand(-1, -1, n_j), dim=1)
    edge = lat.edges.clamp_min(0)
    w = logp[rows[:, None, None, :], edge[..., None]]  # [B, T, L, J]
    post = (a_start.reshape(n_b, n_t, n_l, n_j) + w + beta[:, 1:, None, :]
            - log_z[:, None, None, :])
    okj = ok[..., None].expand_as(post)
    flat = (rows[:, None, None, :] * logp.shape[1] + edge[..., None]).expand_as(post)
    counts = torch.zeros(logp.numel(), dtype=logp.dtype, device=logp.device)
    counts.index_add_(0, flat[okj], post[okj].exp())
    return counts.view_as(logp)


def m_step(counts: torch.Tensor, log_p0: torch.Tensor, alpha: float, prior: str
           ) -> torch.Tensor:
    """Smoothed counts ``c + alpha p_0`` (``prior="per_entry"``: ``c + alpha V p_0``)."""
    p0 = log_p0.exp()
    mass = alpha * int((p0 > 0).sum()) if prior == "per_entry" else alpha
    return counts + mass * p0


@dataclass
class UniLID:
    """Fitted languages: their smoothed counts (the parameters) over a shared vocabulary."""

    vocab: Vocabulary
    cfg: ModelConfig
    smoothed: dict[str, torch.Tensor] = field(default_factory=dict)

    @property
    def languages(self) -> list[str]:
        return list(self.smoothed)

    def fit_language(self, texts: list[str], impl: str = "auto") -> torch.Tensor:
        """EM on one language's samples: its smoothed counts ``[V]`` (float64)."""
        lat = build_lattice(self.vocab, texts)
        logp = self.vocab.log_p0.clone()
        sm = m_step(torch.zeros_like(logp), self.vocab.log_p0, self.cfg.alpha, self.cfg.prior)
        for _ in range(self.cfg.em_iters):
            counts = expected_counts(lat, logp[None], impl)
            sm = m_step(counts, self.vocab.log_p0, self.cfg.alpha, self.cfg.prior)
            logp = (sm / sm.sum()).log()
        return sm

    def add_language(self, code: str, texts: list[str], impl: str = "auto") -> None:
        """Fit ``code`` on its samples; the other languages are not touched."""
        if code in self.smoothed:
            raise ValueError(f"language {code!r} is already fitted")
        self.smoothed[code] = self.fit_language(texts, impl)

    def log_probs(self) -> torch.Tensor:
        """The parameters ``log p_L [K, V]`` of the fitted languages, in ``languages`` order."""
        sm = torch.stack(list(self.smoothed.values()))
        if self.cfg.normalizer == "shared":
            z = sm.sum(1).mean()  # one pooled normaliser: moves when a language is added
            return (sm / z).log()
        return (sm / sm.sum(1, keepdim=True)).log()

    def scores(self, texts: list[str], impl: str = "auto") -> torch.Tensor:
        """``log p_L(x)`` (or the Viterbi score) ``[B, K]`` of ``texts``."""
        return log_likelihood(build_lattice(self.vocab, texts), self.log_probs(),
                              self.cfg.score, impl)

    def predict(self, texts: list[str], impl: str = "auto") -> list[str]:
        """The most likely language of each text (uniform prior over languages)."""
        langs = self.languages
        return [langs[i] for i in self.scores(texts, impl).argmax(1).tolist()]


def fit(vocab: Vocabulary, cfg: ModelConfig, train: dict[str, list[str]],
        impl: str = "auto", device=None) -> UniLID:
    """UniLID with every language of ``train`` added (in order); its tensors on ``device``
    (default: where ``vocab`` lives)."""
    cfg.validate()
    v = vocab.restricted(cfg.max_len) if cfg.max_len < vocab.max_len else vocab
    if device is not None:
        v = v.to(device)
    model = UniLID(v, cfg)
    for code, texts in train.items():
        model.add_language(code, texts, impl)
    return model


def tune(vocab: Vocabulary, cfg: ModelConfig, train: dict[str, list[str]],
         valid: dict[str, list[str]], alphas: tuple[float, ...], iters: tuple[int, ...],
         impl: str = "auto", device=None, chunk: int = 16) -> tuple[tuple[float, int], dict]:
    """UniLID's ``alpha`` x ``em_iters`` grid scored on ``valid`` (the baselines' split).

    Each EM iteration runs every alpha of a language at once (:func:`expected_counts_rows`,
    one forward and one backward pass per language); after each iteration of ``iters`` the
    validation texts (in chunks of similar length) are scored under every (alpha, language)
    row, with the model's normaliser and score exactly as :meth:`UniLID.log_probs` /
    :meth:`UniLID.scores`. Returns the best ``(alpha, iters)`` (first on ties, in the order
    alpha then iterations) and ``{(alpha, iters): validation accuracy}``."""
    cfg.validate()
    if not alphas or not iters or min(iters) < 1:
        raise ValueError(f"the grid needs alphas and iterations >= 1, got {alphas}, {iters}")
    v = vocab.restricted(cfg.max_len) if cfg.max_len < vocab.max_len else vocab
    if device is not None:
        v = v.to(device)
    dev = v.log_p0.device
    langs = list(train)
    n_a, n_k, n_v = len(alphas), len(langs), v.log_p0.shape[0]
    lats = [build_lattice(v, train[code]) for code in langs]
    val = sorted(((t, code) for code, ts in valid.items() for t in ts), key=lambda x: len(x[0]))
    val_lats = [build_lattice(v, [t for t, _ in val[i:i + chunk]])
                for i in range(0, len(val), chunk)]
    gold = [code for _, code in val]
    mine = [torch.arange(n_a, device=dev).expand(len(train[code]), n_a) for code in langs]
    logp = [v.log_p0.expand(n_a, n_v).clone() for _ in langs]  # [A, V] per language
    acc: dict[tuple[float, int], float] = {}
    for it in range(1, max(iters) + 1):
        models = [UniLID(v, replace(cfg, alpha=float(a), em_iters=it)) for a in alphas]
        for i, code in enumerate(langs):
            counts = expected_counts_rows(lats[i], logp[i], mine[i], impl)  # [A, V]
            for a, m in enumerate(models):
                m.smoothed[code] = m_step(counts[a], v.log_p0, m.cfg.alpha, cfg.prior)
            logp[i] = torch.stack([(m.smoothed[code] / m.smoothed[code].sum()).log()
                                   for m in models])
        if it in iters:
            lp = torch.cat([m.log_probs() for m in models])  # [A * K, V]
            sc = torch.cat([log_likelihood(lat, lp, cfg.score, impl) for lat in val_lats])
            best = sc.view(-1, n_a, n_k).argmax(2).cpu()  # [B, A]
            for a, alpha in enumerate(alphas):
                hits = sum(langs[j] == g for j, g in zip(best[:, a].tolist(), gold))
                acc[(float(alpha), it)] = hits / max(1, len(gold))
    order = [(float(a), it) for a in alphas for it in sorted(iters)]
    top = max(acc[c] for c in order)
    return next(c for c in order if acc[c] == top), acc
