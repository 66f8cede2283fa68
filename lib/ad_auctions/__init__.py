"""ad_auctions: autobidding auctions with LLM-powered creatives (PIM, ODDB-R, TTSL-PPO).

"Autobidding Auctions with LLM-Powered Creatives", ICML 2026 poster 65017 (no arXiv id and no
code were found).  The abstract describes a dynamic Stackelberg game: the platform (leader)
picks the LLM creative investment ``z`` to maximise net revenue (payments minus the inference
cost it pays: PIM endogenises that cost); budget-constrained autobidders (followers) respond
by online dual descent with a regulariser (ODDB-R); the platform learns ``z`` by two-timescale
Stackelberg learning with PPO (TTSL-PPO), which converges to a Stackelberg stationary point and
beats heuristics on revenue, welfare and engagement.

EVERYTHING BELOW THE ABSTRACT IS DERIVED (spec ``shared/specs/ad_auctions.md``):

* quality ``q_i(z) = q_i0 (1 + theta_i (1 - e^{-z}))``, inference cost ``kappa z`` per round;
* a quality-weighted single-slot second-price auction (score ``v_i q_i / (1 + mu_i)``) with a
  reserve; 5 advertisers, lognormal values, ``T = 300`` rounds per episode, 3 of the 5
  budget-bound;
* ODDB-R: ``mu <- clip(mu - eta (rho_t - spend_t) - eta beta (mu - mu_ref), 0, mu_max)``,
  ``rho_t`` = remaining budget / remaining rounds, ``mu_ref`` a slow average of ``mu``;
* TTSL-PPO: a Gaussian policy on ``logit(z / z_max)``, PPO's clipped surrogate on whole
  episodes' net revenue, duals carried across episodes (fast) while the policy moves once
  per episode (slow);
* a mid-episode value shift (the spec's scenario, a finding); the abstract's own
  non-stationarity is the leader's ``z`` moving while TTSL-PPO learns, during which the
  training records the bidders' pacing;
* heuristics tuned on TTSL-PPO's training budget and draws (issue 46): a fixed ``z`` on a
  40-point grid and the myopic rule with learned frozen duals; social welfare is counted net
  of the inference cost (``v_w q_w - kappa z``).

Figures reproduced (``notebooks/ad_auctions.ipynb``): F1 net revenue, payments, welfare and
clicks vs ``z`` with the optimum; F2 TTSL-PPO's ``z`` over training vs the heuristics and the
grid optimum, and every rule (TTSL-PPO, tuned and untuned heuristics) on the net-revenue and
net-welfare curves; F3 each bidder's spend / budget over an episode with a value shift; F4 the duals
through the shift with and without the regulariser.

Every random draw comes from a CPU ``torch.Generator`` seeded from ``seed`` (moved to the
device afterwards).  ``claims(seed, scale, device)`` runs the markets on ``device``; the auctions
are resolved by ``icml26.kernels.auction_topk`` (Triton on CUDA tensors, ``torch.topk`` on
CPU).  Pacing (``market.pacing_stats``): a bound bidder's budget lasts the horizon and is
spent.

Modules, one idea each: ``market`` (the bidders and the auction), ``platform`` (grid,
heuristics, TTSL-PPO), ``experiments`` (scales, figure data, cache) and ``claims``.
"""

from icml26.ad_auctions.claims import CLAIM_SPECS, claims, claims_for
from icml26.ad_auctions.experiments import (
    BETAS,
    CACHE_VERSION,
    PAPER,
    SCALES,
    AuctionConfig,
    bound_bidders,
    config_for,
    eval_seed,
    figure_curve_data,
    figure_pacing_data,
    figure_ppo_data,
    figure_shift_data,
    trained_ppo,
    tuned_heuristics,
)
from icml26.ad_auctions.market import (
    MarketConfig,
    MarketState,
    episode,
    new_state,
    pacing_stats,
    quality,
    run_rounds,
)
from icml26.ad_auctions.platform import (
    OBJECTIVES,
    PPOConfig,
    PPOTrainer,
    evaluate,
    evaluate_all,
    grid_curve,
    myopic_z,
    train_ppo,
    training_batches,
    tune_fixed_z,
    tune_grid,
    tune_myopic,
)

__all__ = [
    "BETAS", "CACHE_VERSION", "CLAIM_SPECS", "OBJECTIVES", "PAPER", "SCALES", "AuctionConfig",
    "MarketConfig", "MarketState", "PPOConfig", "PPOTrainer",
    "bound_bidders", "claims", "claims_for", "config_for",
    "episode", "eval_seed", "evaluate", "evaluate_all", "figure_curve_data",
    "figure_pacing_data", "figure_ppo_data", "figure_shift_data", "grid_curve", "myopic_z",
    "new_state", "pacing_stats", "quality", "run_rounds", "train_ppo", "trained_ppo",
    "training_batches", "tune_fixed_z", "tune_grid", "tune_myopic", "tuned_heuristics",
]
