"""The market [derived from the abstract]: budget-constrained autobidders pacing by ODDB-R in
a quality-weighted second-price auction whose click-through rates the platform lifts with an
LLM creative investment ``z``.

Per round ``t`` of an episode of ``T`` rounds, in each of ``M`` independent markets (vectorised):

* values per click ``v_{i,t} = exp(m_i + sigma eps)`` (lognormal), times ``shift_i`` after the
  mid-episode shift when one is configured;
* quality ``q_i(z) = q_i0 (1 + theta_i (1 - e^{-z}))``; the platform pays ``kappa z`` per round;
* bid per click ``b_i = v_i / (1 + mu_i)``; score ``b_i q_i``; the highest score wins if it
  clears the reserve and pays the second score (or the reserve) per impression, i.e.
  ``price / q_winner`` per click; expected clicks ``q_winner``, welfare ``v_w q_w``;
* a bidder whose budget is spent bids 0, and a payment never exceeds the remaining budget
  (``hard_cap``; without it a bidder keeps bidding and may overspend);
* ODDB-R, per bidder: ``mu <- clip(mu - eta (rho_t - spend_t) - eta beta (mu - mu_ref),
  0, mu_max)`` with the target rate ``rho_t = remaining budget / remaining rounds`` and the
  anchor ``mu_ref`` a slow moving average of ``mu`` (``mu_ref += ref_rate (mu - mu_ref)``): the
  regulariser damps the dual's noise without biasing its fixed point.

The auction itself goes through ``icml26.kernels.auction_topk`` (Triton on CUDA tensors).
Every tensor of a market lives on the device of its state (``new_state(..., device)``; an
episode's markets follow the device of ``z``); the value draws come from a CPU
``torch.Generator`` and are moved there, so CPU results do not depend on the device plumbing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from icml26.common import check_int
from icml26.kernels.auction_topk import auction_topk

EXHAUSTED = 0.999  # a budget counts as spent at 99.9% (``pacing_stats``)


@dataclass(frozen=True)
class MarketConfig:
    """One market's parameters. Defaults: the spec's calibrated toy (5 advertisers); the
    numbers are ours (no paper values are public)."""

    q0: tuple = (1.0, 0.9, 0.8, 0.7, 0.6)          # base quality (click-through) per bidder
    theta: tuple = (0.6, 0.9, 1.2, 1.0, 0.8)       # creative lift at z -> infinity
    value_mu: tuple = (0.0, 0.05, 0.1, -0.1, 0.0)  # log-value means
    value_sigma: float = 0.5                        # lognormal spread of values
    budget: tuple = (0.12, 0.10, 0.10, 10.0, 10.0)  # per-round budget rate rho_i (10: unbound)
    kappa: float = 0.1           # inference cost per unit of z per round (PIM)
    reserve: float = 0.05        # reserve score
    horizon: int = 300           # rounds per episode (the spec: T = 300)
    eta: float = 0.5             # dual step size (the fast timescale)
    beta: float = 0.05           # ODDB-R regulariser weight (0: plain dual descent)
    ref_rate: float = 0.02       # speed of the anchor mu_ref
    mu_max: float = 20.0         # dual cap
    shift_at: float = 0.0        # fraction of the episode where values shift (0: no shift)
    shift: tuple = (1.6, 1.6, 0.7, 1.0, 1.0)  # value multipliers after the shift
    z_max: float = 4.0           # the platform's largest investment
    mu_init: float = 0.0         # the duals' starting value
    hard_cap: bool = True        # the platform stops a bidder at its budget (False: it may
    #                              overspend; the budget then binds only through the dual)

    def __post_init__(self):
        n = len(self.q0)
        for name in ("theta", "value_mu", "budget", "shift"):
            if len(getattr(self, name)) != n:
                raise ValueError(f"{name} must have one entry per bidder ({n}), got "
                                 f"{len(getattr(self, name))}")

    @property
    def n_bidders(self) -> int:
        return len(self.q0)

    def validate(self) -> None:
        check_int("horizon", self.horizon, 10, 100_000)
        if self.n_bidders < 2:
            raise ValueError(f"a second-price auction needs >= 2 bidders, got {self.n_bidders}")
        checks = [("kappa", self.kappa, 0.0), ("eta", self.eta, 0.0), ("beta", self.beta, 0.0),
                  ("reserve", self.reserve, 0.0), ("value_sigma", self.value_sigma, 0.0)]
        for name, value, low in checks:
            if not value >= low:
                raise ValueError(f"{name} must be >= {low}, got {value}")
        if not 0.0 <= self.shift_at < 1.0:
            raise ValueError(f"shift_at must be in [0, 1), got {self.shift_at}")
        if not 0.0 < self.ref_rate <= 1.0:
            raise ValueError(f"ref_rate must be in (0, 1], got {self.ref_rate}")
        if not self.z_max > 0:
            raise ValueError(f"z_max must be > 0, got {self.z_max}")
        if min(self.budget) <= 0 or min(self.q0) <= 0 or min(self.theta) < 0:
            raise ValueError("budgets and base qualities must be > 0 and lifts >= 0")


def quality(cfg: MarketConfig, z: torch.Tensor) -> torch.Tensor:
    """``q_i(z) = q_i0 (1 + theta_i (1 - e^{-z}))``: ``z [M] -> [M, N]``."""
    q0 = torch.tensor(cfg.q0, device=z.device)
    th = torch.tensor(cfg.theta, device=z.device)
    return q0 * (1 + th * (1 - torch.exp(-z))[:, None])


@dataclass
class MarketState:
    """The bidders' state in ``M`` markets: duals, anchors, spend so far and the round."""

    mu: torch.Tensor        # [M, N]
    mu_ref: torch.Tensor    # [M, N]
    spent: torch.Tensor     # [M, N]
    t: int = 0
    history: dict = field(default_factory=dict)


def new_state(cfg: MarketConfig, n_markets: int,
              mu0: float | torch.Tensor | None = None,
              device: torch.device | str = "cpu") -> MarketState:
    """Fresh budgets; duals at ``mu0`` (default ``cfg.mu_init``), on ``device``."""
    start = cfg.mu_init if mu0 is None else mu0
    if isinstance(start, torch.Tensor):
        start = start.to(device)
    mu = torch.zeros(n_markets, cfg.n_bidders, device=device) + start
    return MarketState(mu=mu.clone(), mu_ref=mu.clone(),
                       spent=torch.zeros(n_markets, cfg.n_bidders, device=device))


def run_rounds(cfg: MarketConfig, state: MarketState, z: torch.Tensor, n_rounds: int,
               gen: torch.Generator, record: bool = False, respond: bool = True,
               impl: str = "auto", tile: int = 1, beta: torch.Tensor | None = None) -> dict:
    """Play ``n_rounds`` rounds in every market at investments ``z [M]`` (updating ``state``).

    Returns per-market totals ``payments, clicks, welfare, cost [M]`` and, with ``record``,
    the paths ``spent [R, M, N]`` and ``mu [R, M, N]``.  ``respond=False`` freezes the duals
    (bidders do not react: the myopic platform's assumption).  ``tile > 1`` draws values for
    ``M / tile`` markets and repeats them ``tile`` times (common random numbers across blocks
    of markets, e.g. one block per investment level of a grid).  ``beta [M]`` overrides
    ``cfg.beta`` per market (both arms of the regulariser comparison in one batch).
    """
    m, n = state.mu.shape
    dev = state.mu.device
    z = z.to(dev)
    budget_total = torch.tensor(cfg.budget, device=dev) * cfg.horizon
    log_v0 = torch.tensor(cfg.value_mu, device=dev)
    shift = torch.tensor(cfg.shift, device=dev).log()
    q = quality(cfg, z)
    tot = {k: torch.zeros(m, device=dev) for k in ("payments", "clicks", "welfare")}
    spent_path, mu_path = [], []
    if m % tile:
        raise ValueError(f"tile ({tile}) must divide the number of markets ({m})")
    shift_round = int(cfg.shift_at * cfg.horizon) if cfg.shift_at > 0 else cfg.horizon + 1
    rows = torch.arange(m, device=dev)
    if beta is not None:
        beta = beta.to(dev)
    for _ in range(n_rounds):
        t = state.t
        eps = torch.randn(m // tile, n, generator=gen).to(dev)  # CPU draws, then the device
        log_v = log_v0 + cfg.value_sigma * eps.repeat(tile, 1)
        if t >= shift_round:
            log_v = log_v + shift
        v = log_v.exp()
        remaining = budget_total - state.spent
        alive = remaining > 1e-9 if cfg.hard_cap else torch.ones_like(remaining, dtype=bool)
        score = torch.where(alive, v * q / (1 + state.mu), 0.0)
        winner, _, _, price = auction_topk(score, cfg.reserve, impl=impl)
        sale = winner >= 0
        w = winner.clamp_min(0)
        pay = (torch.minimum(price, remaining[rows, w]) if cfg.hard_cap else price) * sale
        spend = torch.zeros(m, n, device=dev)
        spend[rows, w] = pay
        tot["payments"] += pay
        tot["clicks"] += q[rows, w] * sale
        tot["welfare"] += (v * q)[rows, w] * sale
        state.spent += spend
        if respond:
            left = max(cfg.horizon - t, 1)
            rho_t = (budget_total - state.spent + spend) / left
            reg = cfg.beta if beta is None else beta[:, None]
            step = (rho_t - spend) + reg * (state.mu - state.mu_ref)
            state.mu = (state.mu - cfg.eta * step).clamp(0.0, cfg.mu_max)
            state.mu_ref += cfg.ref_rate * (state.mu - state.mu_ref)
        state.t = t + 1
        if record:
            spent_path.append(state.spent.clone())
            mu_path.append(state.mu.clone())
    tot["cost"] = cfg.kappa * z * n_rounds
    if record:
        tot["spent"], tot["mu"] = torch.stack(spent_path), torch.stack(mu_path)
    return tot


def episode(cfg: MarketConfig, z: torch.Tensor, gen: torch.Generator, record: bool = False,
            respond: bool = True, mu0: float | torch.Tensor | None = None, impl: str = "auto",
            tile: int = 1, beta: torch.Tensor | None = None) -> dict:
    """One full episode in ``len(z)`` markets from fresh duals, on ``z``'s device; per-round
    means ``net, payments, clicks, welfare, net_welfare [M]`` (net = payments - kappa z; social
    welfare net of the inference cost, net_welfare = welfare - kappa z: payments are transfers,
    the cost is the economy's)."""
    cfg.validate()
    state = new_state(cfg, len(z), mu0, device=z.device)
    tot = run_rounds(cfg, state, z, cfg.horizon, gen, record=record, respond=respond,
                     impl=impl, tile=tile, beta=beta)
    out = {k: tot[k] / cfg.horizon for k in ("payments", "clicks", "welfare", "cost")}
    out["net"] = out["payments"] - out["cost"]
    out["net_welfare"] = out["welfare"] - out["cost"]  # social welfare: value - inference cost
    out["spent"] = state.spent
    out["mu"] = state.mu
    if record:
        out["spent_path"], out["mu_path"] = tot["spent"], tot["mu"]
    return out


def pacing_stats(spent_path: torch.Tensor, budget: torch.Tensor) -> dict:
    """Per bidder, from cumulative spend ``[T, M, N]`` and budgets ``[N]``: ``exhaust_round``
    (the first round index at which half the markets have spent 99.9% of the budget; T when
    never), ``lasts`` = (exhaust_round + 1) / T capped at 1, ``spent`` (mean final spend /
    budget) and ``paced = min(lasts, spent)`` (``icml26.ad_auctions.experiments`` says why)."""
    T = spent_path.shape[0]
    ratio = spent_path / budget
    gone = (ratio > EXHAUSTED).float().mean(1).T  # [N, T]
    exhaust = [int(torch.nonzero(col > 0.5).min()) if (col > 0.5).any() else T
               for col in gone.cpu()]
    lasts = [min((r + 1) / T, 1.0) for r in exhaust]
    spent = ratio[-1].mean(0).tolist()
    return {"exhaust_round": exhaust, "lasts": lasts, "spent": spent,
            "paced": [min(a, b) for a, b in zip(lasts, spent)]}
