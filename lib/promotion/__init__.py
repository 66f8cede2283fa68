"""Multi-level strategic classification: promotion and relegation that make honest effort pay.

Ziyuan Huang, Lina Alkarmi, Mingyan Liu. "Multi-Level Strategic Classification: Incentivizing
Improvement through Promotion and Relegation Dynamics". ICML 2026,
https://arxiv.org/abs/2602.11439. No code was released.

Figures reproduced (``notebooks/promotion.ipynb``):
F1 incentive phase diagram over (c-/c+, beta*gamma) with the analytic line c-/c+ = 1 - beta*gamma
and the myopic line c-/c+ = 1; F2 trajectories (level, skill, honest effort, gaming) under the
steady-state ladder, a 2x steeper one, the steady-state ladder without leg-up and a naive
equal-step ladder half as steep (the headline's second measurement, issue 46); F3 arbitrarily
high honest attainment (target skill M -> final skill and level); F4 sensitivity of the highest
honestly reached level to retention gamma and leg-up delta; optional F5, a greedy principal.

The model (the paper's, from public summaries):

* levels ``l = 1..L``; level ``l`` uses a ternary classifier with thresholds: pass -> promotion,
  abstain -> stay, fail -> relegation;
* the agent has skill ``x_t`` (unobserved) and shows ``z_t = x_t + a+_t + a-_t``: honest
  improvement ``a+`` at unit cost ``c+``, gaming ``a-`` at unit cost ``c-``, ``0 < c- < c+``;
* ``x_{t+1} = gamma (x_t + a+_t) + delta (l_{t+1} - 1)``: improvement is retained (gamma),
  gaming is not, and a higher level gives a leg-up (delta); discount ``beta``.

Known results reproduced: honesty can be incentivised iff ``c-/c+ > 1 - beta*gamma`` (one unit
of improvement is worth ``1 + beta*gamma + (beta*gamma)^2 + ... = 1/(1 - beta*gamma)`` units of
feature) instead of never (one-shot: gaming dominates whenever ``c- < c+``); the steady-state
ladder ``mu_l = delta l / (1 - gamma)`` lets agents climb honestly to arbitrary heights, with
``L = ceil((1 - gamma) M / delta)`` levels for target skill ``M`` in the paper's indexing.

Reconstructed here (the abstract gives no equations; see the spec):

* Index convention: ``mu_l`` is the threshold for LEAVING level ``l`` upward, ``l = 1..L-1``.
  At level ``l`` the agent is promoted if ``z >= mu_l``, relegated if ``z < mu_{l-1}``
  (``mu_0 = -inf``: no relegation from level 1; no promotion from level L), stays otherwise:
  you keep a level as long as you clear the threshold that got you in. One summary writes
  ``mu_l = delta (l-1)/(1-gamma)`` (thresholds indexed by the level they lead INTO), another
  ``delta l/(1-gamma)`` (ours). With ours the ladder has ``L-1`` thresholds, so reaching skill
  ``M`` needs ``L = ceil((1-gamma) M / delta) + 1`` levels (:func:`levels_for_target`).
* Steady state: after promotion into ``l+1`` with no further effort, ``x -> delta l/(1-gamma)``
  from above, which is exactly ``mu_l``, the stay threshold of level ``l+1``: maintenance is
  free and each level costs one improvement of ``delta/(1-gamma)``.
* Timing and payoff: per period ``R(l_{t+1}) - c+ a+ - c- a-`` with ``R(l) = r (l-1)``; the
  agent maximises the discounted sum over an infinite horizon.
* Solver: value iteration on a skill grid per level, batched over configurations, with
  policy-evaluation steps between Bellman backups (Howard's policy iteration; every backup is
  the same fused operator, ``icml26.kernels.bellman_interp``); converged when a full backup
  changes ``V`` by at most ``1e-8``. ``V`` between grid points is linear interpolation.
  Actions: ``a+`` on a grid PLUS THE EXACT GAPS ``mu_j - x``; given ``a+``, only three gaming
  amounts can be optimal with linear costs: 0, the gap to ``mu_l`` (promotion) and the gap to
  ``mu_{l-1}`` (keep the level). Without the exact gaps, missing a threshold by part of a grid
  step is patched with a little gaming, which looks like strategic manipulation but is an
  artefact (the spec's prototype saw 0.02-0.3 units); ``exact_gaps=False`` is that pitfall.
* Thresholds are compared with a ``1e-9`` tolerance (``z >= mu - 1e-9``): the steady-state
  design puts the agent exactly on ``mu``, where rounding would otherwise relegate it.

Layout: ``model`` (thresholds, config, the batched ladder and its backup), ``solver`` (policy
iteration, greedy actions, simulation), ``studies`` (the figure settings and scale presets),
``figures`` (each figure's data), ``claims`` (the claim table). Everything public is
re-exported here.
"""

from icml26.promotion.claims import (
    CACHE_VERSION,
    CLAIM_SPECS,
    CLAIMS_VERSION,
    PART_CLAIMS,
    PARTS,
    cached_figure,
    claims,
    claims_for,
    honest_maintenance_free,
)
from icml26.promotion.figures import (
    DESIGN_TITLES,
    SEPARATE_DESIGNS,
    classify,
    figure_greedy_data,
    figure_height_data,
    figure_phase_data,
    figure_sensitivity_data,
    figure_trajectories_data,
    held_level,
    level_before_gaming,
    phase_configs,
    spearman,
    trajectory_designs,
    trajectory_frame,
    trajectory_summary,
)
from icml26.promotion.model import (
    DESIGN_LABELS,
    DESIGNS,
    DTYPE,
    EPS_ACTION,
    PAPER,
    Ladder,
    PromotionConfig,
    backup,
    decode,
    levels_for_target,
    make_ladder,
    steady_state_thresholds,
)
from icml26.promotion.solver import (
    Solution,
    act,
    residual,
    simulate,
    solve,
    solve_configs,
    truncated_vi,
)
from icml26.promotion.studies import (
    SCALES,
    GreedyConfig,
    PhaseConfig,
    StudyConfig,
    config_for,
    seeded_generator,
    uniform_draws,
)

__all__ = [
    "CACHE_VERSION", "CLAIMS_VERSION", "CLAIM_SPECS", "DESIGNS", "DESIGN_LABELS",
    "DESIGN_TITLES", "DTYPE", "EPS_ACTION", "PAPER", "PARTS", "PART_CLAIMS", "SCALES",
    "SEPARATE_DESIGNS", "GreedyConfig", "Ladder",
    "PhaseConfig", "PromotionConfig", "Solution", "StudyConfig", "act", "backup",
    "cached_figure", "claims", "claims_for", "classify", "config_for", "decode",
    "figure_greedy_data", "figure_height_data", "figure_phase_data", "figure_sensitivity_data",
    "figure_trajectories_data", "held_level", "honest_maintenance_free", "level_before_gaming",
    "levels_for_target",
    "make_ladder", "phase_configs", "residual", "seeded_generator", "simulate", "solve",
    "solve_configs", "spearman", "steady_state_thresholds", "trajectory_designs",
    "trajectory_frame", "trajectory_summary", "truncated_vi", "uniform_draws",
]
