"""PANDA: bilevel optimisation over the saddle point of a regularised zero-sum Markov game.

Zihao Zheng, Irwin King, Songtao Lu. "Bilevel Optimization over Saddle Points of Zero-Sum
Markov Games", ICML 2026, https://arxiv.org/abs/2605.26654 (no public code).

Figures reproduced (``notebooks/panda.ipynb``; the Markov game with S = 3 states carries the
claims, the matrix game is shown too):
F1 the upper-level objective Phi(x_k) against iteration for every method, with the oracle
Phi*; F2 the Nikaido-Isoda gap (log scale) against iteration with the penalty rho_k; F3 the
landscape Phi(x) over a 2-D grid of x with the optimisation trajectories drawn on it.

Setting (the abstract's; the concrete instance is ours).  The lower level is an
entropy-regularised zero-sum Markov game with ``S`` states, ``n`` actions for the maximiser
``pi`` and ``m`` for the minimiser ``nu``, discount ``gamma`` and reward affine in the
upper-level variable ``x in R^D`` (incentives)::

    r_x(s, a, b) = r0(s, a, b) + sum_d x_d B_d(s, a, b)
    V_x^{pi,nu}(s) = E[ sum_t gamma^t ( r_x(s_t,a_t,b_t) + tau H(pi(.|s_t)) - tau H(nu(.|s_t)) ) ]
    (pi*(x), nu*(x)) = the unique saddle point of  max_pi min_nu  rho0 . V_x^{pi,nu}

A matrix game is the special case ``S = 1, gamma = 0``.  The upper level steers the players
towards target policies at a quadratic incentive cost::

    f(x, pi, nu) = mean_s ||pi(.|s) - pi_tgt(.|s)||^2 + ||nu(.|s) - nu_tgt(.|s)||^2 + lam ||x||^2
    Phi(x) = f(x, pi*(x), nu*(x)),     Phi* = min_x Phi(x).

Nikaido-Isoda gap (the paper's penalty; >= 0, and 0 exactly at the saddle point)::

    NI(x; pi, nu) = rho0 . ( V_x^{dagger, nu} - V_x^{pi, dagger} )

where ``dagger`` is a soft best response, computed by soft policy iteration (policy
evaluation by a linear solve, improvement by the soft Bellman backup of
``icml26.kernels.soft_bellman``).  PANDA (our reading of the abstract) runs descent on
``(x, pi, nu)`` for the penalised problem ``f + rho_k NI`` with ``rho_k = rho0 + growth * k``;
the gradient of NI is taken by Danskin's theorem at the current best responses (held fixed),
so no hypergradient and no second-order derivative is ever formed.  The schedule constants
of the paper are not public: ``rho_k = 1 + 0.01 k`` with Adam(0.02) for 6000 steps from a cold
start (x0 = 0, uniform policies) comes from the spec's probe.

Baselines, compared with PANDA at equal first-order oracle calls from the same start (the
abstract's "closely related baselines"; the headline compares them with sampled gradients
at an equal sample budget, :mod:`~icml26.panda.sampled`): unrolled descent-ascent
differentiated through ``K`` GDA steps (second order, ``create_graph=True``) and approximate
implicit differentiation (GDA steps, then MINRES on Hessian-vector products). References:
ignore-the-response (the partial gradient ``d f / d x``, which is 0 at x0 = 0), implicit
differentiation at the exact equilibrium (Newton with analytic Jacobians), and brute force on
a grid + zoom for ``Phi*``.

Reconstructed (ours, not the paper's): the instance family (reachable targets: the saddle
point at a hidden incentive of norm 2.5), the target-steering objective, the final step-size
anneal, the Shapley + Newton solver of the exact equilibrium (evaluation and references only),
the soft-policy-iteration best responses on the known model (the paper samples policy
gradients; the headline's comparison samples transitions from a generative model instead),
the baselines' step sizes and the oracle-call accounting, the detector.

Package layout (one idea per module): :mod:`~icml26.panda.game` (the game, values, soft best
responses, NI gap, ``f``), :mod:`~icml26.panda.equilibrium` (the exact saddle point, ``Phi``,
the landscape, the instances), :mod:`~icml26.panda.methods` (PANDA, the trace, oracle calls),
:mod:`~icml26.panda.baselines` (the related baselines and the references),
:mod:`~icml26.panda.sampled` (issue 48: every method on sampled transitions at an equal sample
budget, the headline's setting),
:mod:`~icml26.panda.detector` (the second-order detector), :mod:`~icml26.panda.oracle`
(brute-force ``Phi*``), :mod:`~icml26.panda.experiments` (configs, one seed's run, figure
data), :mod:`~icml26.panda.claims` (the claims).
"""

from __future__ import annotations

from icml26.panda.baselines import (
    BaselineConfig,
    aid_hypergradient,
    gda_steps,
    hypergradient,
    ignore_response,
    implicit_aid,
    implicit_oracle,
    minres,
    unrolled_gda,
)
from icml26.panda.claims import (
    CLAIM_SPECS,
    SPECS,
    baseline_comparison,
    claims,
    claims_for,
    gaps,
    sampled_comparison,
    sampled_gaps,
)
from icml26.panda.detector import SecondOrderDetector
from icml26.panda.equilibrium import (
    EXACT_CALLS,
    Equilibrium,
    jacobians,
    jacobians_autograd,
    landscape,
    make_game,
    phi,
    phi_radius,
    residual,
    solve_equilibrium,
)
from icml26.panda.experiments import (
    MATRIX_GAME,
    METHOD_LABELS,
    METHODS,
    PAPER,
    RELATED,
    SCALES,
    ExperimentConfig,
    config_for,
    experiment,
    figure_convergence_data,
    figure_landscape_data,
    figure_ni_data,
    figure_sampled_data,
    in_cache,
    run_experiment,
)
from icml26.panda.game import (
    DTYPE,
    TARGETS,
    BestResponse,
    GameConfig,
    MarkovGame,
    backup,
    best_response,
    ni_gap,
    policies,
    policy_value,
    reward,
    upper_objective,
)
from icml26.panda.methods import PandaConfig, Trace, anneal_factor, evaluate, panda
from icml26.panda.oracle import OracleConfig, brute_force
from icml26.panda.sampled import LR_GRID, TUNING_SEED, SampledConfig, run_sampled

__all__ = [
    "BaselineConfig", "aid_hypergradient", "gda_steps", "hypergradient", "ignore_response",
    "implicit_aid", "implicit_oracle", "minres", "unrolled_gda", "Equilibrium", "EXACT_CALLS",
    "jacobians", "jacobians_autograd", "landscape", "make_game", "phi", "phi_radius", "residual",
    "solve_equilibrium", "MATRIX_GAME", "METHOD_LABELS", "METHODS", "PAPER", "SCALES",
    "ExperimentConfig", "config_for", "experiment", "figure_convergence_data",
    "figure_landscape_data", "figure_ni_data", "in_cache", "run_experiment", "DTYPE", "TARGETS",
    "BestResponse", "GameConfig", "MarkovGame", "backup", "best_response", "ni_gap", "policies",
    "policy_value", "reward", "upper_objective", "claims", "claims_for", "SPECS", "CLAIM_SPECS",
    "baseline_comparison", "gaps", "RELATED", "SecondOrderDetector", "PandaConfig", "Trace",
    "anneal_factor", "evaluate", "panda", "OracleConfig", "brute_force",
    "sampled_comparison", "sampled_gaps", "SampledConfig", "run_sampled", "LR_GRID",
    "TUNING_SEED", "figure_sampled_data",
]
