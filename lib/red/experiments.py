"""Scales, the cached teacher and students, and the data of the figures.

The teacher (``TinyLM``, d=128, 4 layers) is trained once (training seed ``teacher_seed``) on
pydoc text plus 1-3 hop chains with Adam and no weight decay, and cached: the same teacher for
every claim seed. Per seed, each initialisation's projection is drawn from that seed and the
student is distilled on generic text only (KL to the teacher's next-character distribution)
for the same steps and data; it is evaluated at ``checkpoints`` (eRank per layer, held-out
perplexity, 1-3 hop accuracy).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import torch
from torch.nn import functional as F

from icml26.common import cached, check_choice, check_int, device_key, generator, resolve_device
from icml26.common import config_for as _pick
from icml26.red.corpus import (
    BOS,
    MAX_HOPS,
    PROMPT_LEN,
    SYMBOL0,
    SYMBOLS,
    VOCAB,
    hop_sequences,
    mixed_hop_batch,
    text_split,
    text_windows,
)
from icml26.red.student import (
    INITS,
    ProjectedStudent,
    channel_energy,
    condition_number,
    erank,
    init_projection,
)
from icml26.tinylm import LMConfig, TinyLM, masked_ce, one_cycle

PAPER = "red"
CACHE_VERSION = 2  # 2: the second design's teacher (BOS, peak lr 1e-2; issue #34)
SHIPPED = Path(__file__).resolve().parent.parent / "data" / "red_teacher.pt"


@dataclass(frozen=True)
class RedConfig:
    d_model: int = 128  # the spec's teacher width
    n_layers: int = 4  # the spec's teacher depth
    n_heads: int = 4
    n_ctx: int = 64
    d_small: int = 64  # student width d' (d'/d = 1/2, the spec's probe)
    teacher_steps: int = 1500
    teacher_lr: float = 3e-3
    teacher_seed: int = 0
    text_batch: int = 16
    text_len: int = 64
    hop_batch: int = 64
    distill_steps: int = 100
    distill_lr: float = 3e-3
    distill_batch: int = 8
    checkpoints: int = 4  # evaluations during distillation (plus the init)
    eval_windows: int = 48  # held-out text windows (perplexity, eRank)
    eval_hops: int = 400  # hop prompts per hop count
    inits: tuple[str, ...] = INITS
    #: a fixed first token (BOS) before every sequence, a candidate attention sink (issue #34);
    #: its id is ``corpus.BOS`` (one more vocabulary entry); inputs are one token longer
    bos: bool = False

    def validate(self) -> None:
        for name in ("d_model", "n_layers", "n_heads", "teacher_steps", "distill_steps",
                     "text_batch", "hop_batch", "distill_batch", "eval_windows",
                     "eval_hops", "checkpoints"):
            check_int(name, getattr(self, name), 1)
        check_int("d_small", self.d_small, 1, self.d_model)
        check_int("text_len", self.text_len, 2, self.n_ctx - self.bos)
        for init in self.inits:
            check_choice("init", init, INITS)

    def lm(self) -> LMConfig:
        return LMConfig(vocab=VOCAB + self.bos, n_ctx=self.n_ctx, d_model=self.d_model,
                        n_layers=self.n_layers, n_heads=self.n_heads)

    def teacher_key(self) -> dict:
        keys = ("d_model", "n_layers", "n_heads", "n_ctx", "teacher_steps", "teacher_lr",
                "teacher_seed", "text_batch", "text_len", "hop_batch")
        key = {k: getattr(self, k) for k in keys}
        return {**key, "bos": True} if self.bos else key  # unchanged keys without a BOS


#: the second design (issue #34): the teacher of the ``bos_lr`` recipe, a BOS token first (one
#: more position: ``n_ctx`` 65, the text windows stay 64 long) and peak lr 1e-2, the only recipe
#: measured in ``benchmarks/red/red_outliers.csv`` that develops outlier channels; the rest as in
#: the first design (no BOS, peak lr 3e-3: ``FIRST_DESIGN``)
SECOND_DESIGN = {"bos": True, "n_ctx": 65, "teacher_lr": 1e-2}
FIRST_DESIGN = RedConfig()
SCALES = {
    "quick": RedConfig(**SECOND_DESIGN),
    "paper": RedConfig(**SECOND_DESIGN, teacher_steps=6000, distill_steps=1000,
                       distill_batch=16, eval_windows=128, eval_hops=2000),
}


def config_for(scale: str) -> RedConfig:
    return _pick(SCALES, scale)


# --------------------------------------------------------------------------- teacher
def train_teacher(cfg: RedConfig, progress: Callable[[int], None] | None = None,
                  device="cpu", probe: Callable[[int, TinyLM], None] | None = None) -> dict:
    """Train the teacher on text + hop chains on ``device``; returns its ``state_dict`` (on
    the CPU). Weights are initialised and batches drawn on the CPU, then moved. Gradients are
    enabled here: the first caller may be ``teacher_stats`` (under ``no_grad``). ``probe(step,
    model)`` is called before the first step and after every step (``benchmarks/red/
    red_outliers.py`` measures the outlier channels over training with it)."""
    with torch.enable_grad():
        return _train_teacher(cfg, progress, device, probe)


def lm_forward(model, cfg: RedConfig, x: torch.Tensor):
    """``logits [B, T, V], hidden`` of ``model`` (teacher or student) on the token ids ``x
    [B, T]``: with ``cfg.bos`` the BOS token is put first, the logits are those of ``x``'s
    positions and every ``hidden[l]`` keeps the BOS position first (``[B, T + 1, d]``)."""
    if not cfg.bos:
        return model(x)
    logits, hidden = model(torch.cat([torch.full_like(x[:, :1], BOS), x], 1))
    return logits[:, 1:], hidden


def _train_teacher(cfg: RedConfig, progress, device, probe=None) -> dict:
    cfg.validate()
    dev = resolve_device(device)
    torch.manual_seed(cfg.teacher_seed)
    model = TinyLM(cfg.lm()).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.teacher_lr)  # no weight decay
    sched = one_cycle(opt, cfg.teacher_steps, cfg.teacher_lr)
    gen, (train, _) = generator(cfg.teacher_seed), text_split()
    if probe is not None:
        probe(0, model)
    for step in range(cfg.teacher_steps):
        w = text_windows(train, cfg.text_batch, cfg.text_len + 1, gen).to(dev)
        logits, _ = lm_forward(model, cfg, w[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), w[:, 1:].reshape(-1))
        seq, mask = mixed_hop_batch(cfg.hop_batch, gen)
        seq, mask = seq.to(dev), mask.to(dev)
        logits, _ = lm_forward(model, cfg, seq[:, :-1])
        loss = loss + masked_ce(logits, seq[:, 1:], mask)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if progress is not None:
            progress(step)
        if probe is not None:
            probe(step + 1, model)
    return {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}


def shipped_teacher(cfg: RedConfig) -> dict | None:
    """The quick-scale teacher's weights shipped with the package (``benchmarks/red/
    red_ship_teacher.py``: ``train_teacher``'s output for ``SCALES["quick"]``, stored fp16 with
    the ``teacher_key`` it was trained with; returned fp32), else None: absent, or trained with
    another config than ``cfg``'s (1500 steps take ~8 min of one CPU core)."""
    if not SHIPPED.exists():
        return None
    blob = torch.load(SHIPPED, weights_only=True, map_location="cpu")
    if not isinstance(blob, dict) or blob.get("teacher_key") != cfg.teacher_key():
        return None  # e.g. the first design's file (a bare state_dict, no BOS)
    return {k: v.float() for k, v in blob["state"].items()}


def teacher_source(cfg: RedConfig) -> str:
    """Where ``cfg``'s teacher comes from: ``"shipped red_teacher.pt (sha256 <12 hex>)"`` when
    the shipped file matches ``cfg``, else ``"trained"`` (in this run's cache); claim notes
    name it."""
    if shipped_teacher(cfg) is None:
        return "trained"
    digest = hashlib.sha256(SHIPPED.read_bytes()).hexdigest()[:12]
    return f"shipped {SHIPPED.name} (sha256 {digest})"


def trained_teacher(cfg: RedConfig, progress=None, use_shipped: bool = True,
                    device="cpu") -> TinyLM:
    """The teacher of ``cfg`` on ``device``: the shipped weights at quick scale, else trained
    (on ``device``) and cached (keyed by device type)."""
    dev = resolve_device(device)
    state = shipped_teacher(cfg) if use_shipped else None
    if state is None:
        state = cached(PAPER, device_key("teacher", dev), cfg.teacher_key(), cfg.teacher_seed,
                       CACHE_VERSION, lambda: train_teacher(cfg, progress, dev))
    model = TinyLM(cfg.lm())
    model.load_state_dict(state)
    return model.to(dev).eval()


# --------------------------------------------------------------------------- evaluation
def eval_windows(cfg: RedConfig) -> torch.Tensor:
    """Held-out text windows ``[eval_windows, text_len + 1]`` (fixed, seed-independent)."""
    return text_windows(text_split()[1], cfg.eval_windows, cfg.text_len + 1, generator(12345))


@torch.no_grad()
def hop_accuracy(model, hops: int, n: int, seed: int = 777, bos: bool = False) -> float:
    """Exact match of the last symbol of the greedily written ``hops``-hop chain (chance
    ``1 / SYMBOLS``), on the device of ``model`` (``bos``: the prompts start with BOS)."""
    seq = hop_sequences(n, hops, generator(seed)).to(_device_of(model))
    x = seq[:, :PROMPT_LEN]
    for _ in range(hops):  # constrained to the symbols: a text-distilled student may prefer
        logits, _ = lm_forward(model, RedConfig(bos=bos), x)  # characters, which would
        # score below chance
        pick = logits[:, -1, SYMBOL0:SYMBOL0 + SYMBOLS].argmax(-1, keepdim=True) + SYMBOL0
        x = torch.cat([x, pick], 1)
    return float((x[:, -1] == seq[:, -1]).float().mean())


@torch.no_grad()
def evaluate(model, cfg: RedConfig) -> dict:
    """Held-out perplexity, eRank of every layer's residual stream, 1-3 hop accuracy."""
    w = eval_windows(cfg).to(_device_of(model))
    logits, hidden = lm_forward(model, cfg, w[:, :-1])
    nll = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), w[:, 1:].reshape(-1))
    # eRank over the text tokens: the BOS state is the same in every window (no token info)
    out = {"ppl": float(torch.exp(nll)), "erank": [erank(h[:, int(cfg.bos):]) for h in hidden]}
    for h in range(1, MAX_HOPS + 1):
        out[f"acc{h}"] = hop_accuracy(model, h, cfg.eval_hops, bos=cfg.bos)
    return out


@torch.no_grad()
def teacher_stats(cfg: RedConfig, progress=None, device="cpu") -> dict:
    """The teacher's evaluation and activation statistics: per layer, channel RMS sorted
    (the outlier check: max / median RMS, excess kurtosis of the channel energies) and the
    channel energy ``E[h^2]`` that RED selects by (tensors returned on the CPU)."""
    dev = resolve_device(device)
    teacher = trained_teacher(cfg, progress, device=dev)
    return {**evaluate(teacher, cfg), "layers": outlier_layers(teacher, cfg),
            "energy": teacher_energy(cfg, dev)}


@torch.no_grad()
def outlier_layers(model, cfg: RedConfig, keep_hidden: bool = False) -> list[dict]:
    """Per layer of ``model``'s residual stream on the held-out windows (every position, the
    BOS one included): channel RMS sorted, max / median channel RMS (``teacher_outliers``),
    the excess kurtosis of the channel energies (and ``hidden [B, T, d]`` if asked)."""
    _, hidden = lm_forward(model, cfg, eval_windows(cfg).to(_device_of(model))[:, :-1])
    layers = []
    for h in hidden:
        r = (h.reshape(-1, h.shape[-1]) ** 2).mean(0).sqrt()
        e = r ** 2
        kurt = float(((e - e.mean()) ** 4).mean() / e.var(unbiased=False) ** 2 - 3)
        layers.append({"rms_sorted": r.sort(descending=True).values.cpu(),
                       "outlier_ratio": float(r.max() / r.median()), "energy_kurtosis": kurt,
                       **({"hidden": h.cpu()} if keep_hidden else {})})
    return layers


@torch.no_grad()
def teacher_energy(cfg: RedConfig, device="cpu") -> torch.Tensor:
    """``E[h^2]`` per channel of the teacher's residual streams (summed over layers) on
    calibration windows of the training text: what RED selects by (returned on the CPU)."""
    dev = resolve_device(device)
    calib = text_windows(text_split()[0], cfg.eval_windows, cfg.text_len, generator(54321))
    return channel_energy(lm_forward(trained_teacher(cfg, device=dev), cfg,
                                     calib.to(dev))[1]).cpu()


def _device_of(model) -> torch.device:
    return next(model.parameters()).device


# --------------------------------------------------------------------------- students
def projection(cfg: RedConfig, init: str, seed: int,
               energy: torch.Tensor | None = None) -> torch.Tensor:
    """The initial ``P [d, d']`` of ``init`` for claim seed ``seed`` (``energy``: the
    teacher's ``E[h^2]`` per channel, computed when ``None`` and needed)."""
    if init == "red" and energy is None:
        energy = teacher_energy(cfg)
    gen = generator(1000 * seed + INITS.index(init))
    return init_projection(init, cfg.d_model, cfg.d_small, energy, gen)


def distill(cfg: RedConfig, seed: int, inits=None, progress=None, device="cpu") -> dict:
    """Distil one student per init in ``inits`` on generic text only, in lockstep on the same
    batches (the teacher's targets computed once per step); evaluations at checkpoints.
    Returns ``{init: {"p0_singular", "cond", "curve": [{"step", "ppl", "erank", "acc1",
    ...}]}}``."""
    cfg.validate()
    dev = resolve_device(device)
    inits = cfg.inits if inits is None else tuple(inits)
    teacher = trained_teacher(cfg, device=dev)
    energy = teacher_energy(cfg, dev) if "red" in inits else None
    p0 = {i: projection(cfg, i, seed, energy) for i in inits}  # drawn on the CPU
    students = {i: ProjectedStudent(teacher, p0[i].to(dev)) for i in inits}
    opts = {i: torch.optim.Adam(s.parameters(), lr=cfg.distill_lr) for i, s in students.items()}
    scheds = {i: one_cycle(o, cfg.distill_steps, cfg.distill_lr) for i, o in opts.items()}
    gen, train = generator(seed), text_split()[0]
    marks = {round(cfg.distill_steps * (k + 1) / cfg.checkpoints) for k in range(cfg.checkpoints)}
    curves = {i: [{"step": 0, **evaluate(s, cfg)}] for i, s in students.items()}
    for step in range(1, cfg.distill_steps + 1):
        w = text_windows(train, cfg.distill_batch, cfg.text_len, gen).to(dev)
        with torch.no_grad():
            target = F.log_softmax(lm_forward(teacher, cfg, w)[0], -1)
        for i, student in students.items():
            logp = F.log_softmax(lm_forward(student, cfg, w)[0], -1)
            loss = F.kl_div(logp, target, log_target=True, reduction="none").sum(-1).mean()
            opts[i].zero_grad()
            loss.backward()
            opts[i].step()
            scheds[i].step()
            if step in marks:
                curves[i].append({"step": step, **evaluate(student, cfg)})
        if progress is not None:
            progress(step)
    return {i: {"p0_singular": torch.linalg.svdvals(p0[i]), "cond": condition_number(p0[i]),
                "curve": curves[i]} for i in inits}


def distilled(cfg: RedConfig, seed: int, progress=None, device="cpu") -> dict:
    """Every init of ``cfg.inits`` distilled for claim seed ``seed`` on ``device`` (cached
    together, keyed by device type)."""
    dev = resolve_device(device)
    return cached(PAPER, device_key("students", dev), cfg, seed, CACHE_VERSION,
                  lambda: distill(cfg, seed, progress=progress, device=dev))


def figure_data(cfg: RedConfig, seed: int, progress=None, device="cpu") -> dict:
    """Everything the figures and claims read: the teacher's stats and every student's."""
    dev = resolve_device(device)
    return {"teacher": teacher_stats(cfg, device=dev),
            "students": distilled(cfg, seed, progress, dev)}


def with_overrides(cfg: RedConfig, **kw) -> RedConfig:
    out = replace(cfg, **kw)
    out.validate()
    return out
