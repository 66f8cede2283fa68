"""LP-DS: Lagrangian Perturbation Diffusion Steering (latent RL for generative policies).

"Lagrangian Perturbation Diffusion Steering: Latent RL for Generative Policies",
https://arxiv.org/abs/2606.01151 (authors not retrieved; no code released).  Everything below
the abstract / project-page level is reconstructed (spec ``shared/specs/lpds.md``).

The paper's (abstract, project page): freeze a generative BC policy ``a = Phi(s, w)``
(deterministic given its input noise ``w``) and learn a state-conditioned perturbation of the
noise only, ``w = eps + Delta_theta(s)``, ``eps ~ N(0, I)``, under the trust region
``E_s ||Delta_theta(s)||^2 <= delta``, by the Lagrangian
``L(theta, lambda) = -E[Q(s, w)] + lambda (E||Delta||^2 - delta)`` with dual ascent
``lambda <- [lambda + eta_lambda (E||Delta||^2 - delta)]_+``.  Versus DSRL (an unconstrained
latent policy) it keeps latents on the N(0, I) support and the prior's multimodality.

Reconstructed (ours): the toy task (``env``: a 2-D point mass around two stacked disks with a
narrow gap; bimodal demos, 30% noisy), the flow-matching BC prior (``prior``: an MLP, 4 Euler
steps), the critic as a reward model over whole waypoint chunks (no bootstrapping), DSRL as a
tanh-squashed Gaussian latent policy with an auto-tuned SAC entropy bonus, residual RL on
actions (``steer``), the scales and the cache (``experiments``) and the claims (``claims``).

What holds at quick scale (seeds 0-6, 60 x 256 episodes per method, deltas 0.5 and 2): LP-DS
beats the frozen BC policy by 1.15-1.23x at delta = 2 (1.08-1.17x at delta = 0.5), its final
E||Delta||^2 / delta is 0.56-0.71 and 1.4-2.5% of its latents leave the prior's 99% ball;
with lambda frozen at 0 (the mutation) E||Delta||^2 / delta reaches ~60 and ~98% of latents
leave it.  NOT reproduced: LP-DS's entropy advantage over DSRL (DSRL's tanh-squashed latent
with its auto-tuned SAC bonus spreads ~4 nats wider than the prior here) and its sample
efficiency (episodes to 90% of final return, LP-DS / DSRL 0.82-10).

Figures (``notebooks/lpds.ipynb``): decoded trajectories per method over the obstacle map;
return and action entropy vs episodes; E||Delta||^2 and lambda vs iterations; the latent-norm
histogram against chi^2_16.
"""

from icml26.lpds.claims import CLAIM_SPECS, claims, claims_for
from icml26.lpds.env import (
    MapConfig,
    bump_paths,
    demonstrations,
    dense_path,
    rollout,
    sample_states,
)
from icml26.lpds.experiments import (
    CACHE_VERSION,
    PAPER,
    SCALES,
    TRUST_TAIL,
    LPDSConfig,
    bc_result,
    config_for,
    episodes_to_fraction,
    experiment,
    figure_training_data,
    figure_trajectories_data,
    final_trust,
    method_configs,
    run_method,
    summarize,
    trained_prior,
)
from icml26.lpds.prior import FlowPolicy, PriorConfig, train_prior
from icml26.lpds.steer import (
    METHODS,
    SteerConfig,
    Steerer,
    chi2_quantile,
    evaluate,
    evaluate_prior,
    kl_entropy,
    policy_entropy,
    train_steering,
)

__all__ = [
    "CACHE_VERSION", "CLAIM_SPECS", "METHODS", "PAPER", "SCALES", "TRUST_TAIL", "FlowPolicy",
    "LPDSConfig", "MapConfig", "PriorConfig", "SteerConfig", "Steerer", "bc_result",
    "bump_paths", "chi2_quantile", "claims", "claims_for", "config_for", "demonstrations",
    "dense_path", "episodes_to_fraction", "evaluate", "evaluate_prior", "experiment",
    "figure_training_data", "figure_trajectories_data", "final_trust", "kl_entropy",
    "method_configs", "policy_entropy", "rollout", "run_method", "sample_states", "summarize",
    "train_prior", "train_steering", "trained_prior",
]
