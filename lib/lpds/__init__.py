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

Claims v3 (issue 46 item 5; 60 x 256 episodes per run, every method at its validation-best of
3 settings on one shared validation split, LP-DS deploying its averaged iterate), over seeds
0-15 and 100-104: the deployed policy's E||Delta||^2 / delta is at most 0.69 on every seed
(the last iterate left it on 2 of 16 in v2); LP-DS beats the frozen BC policy (1.20x mean) and
the tuned residual RL (+17% mean, fresh seed 102 below), but loses to DSRL's validation-best
bound by about 11% on every seed. Against the least-constrained DSRL (W = 3) LP-DS has about
14 nats LESS action entropy on every seed (``entropy_vs_unconstrained`` fails; v2's
``entropy_vs_dsrl`` held only against the W = 1 box); the support contrast and sample
efficiency do not hold either. Mutations: lambda frozen at 0 (the averaged iterate leaves the
trust region) and a latent that replaces the noise (entropy falls further) fail their claims;
the critic fed the unsteered noise drives only the last iterate out (the average stays inside).

Figures (``notebooks/lpds.ipynb``): decoded trajectories per method over the obstacle map;
return and action entropy vs episodes; E||Delta||^2 and lambda vs iterations; the latent-norm
histogram against chi^2_16.

The paper's status is computed from its claims' roles, units and committed per-seed values,
never written here: ``icml26 list`` / :mod:`icml26.status`.
"""

from icml26.lpds.claims import (
    CLAIM_SPECS,
    CLAIMS_VERSION,
    claims,
    claims_for,
    claims_from,
    measure,
)
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
    LPDSConfig,
    bc_result,
    config_for,
    episodes_to_fraction,
    experiment,
    figure_training_data,
    figure_trajectories_data,
    final_trust,
    method_configs,
    method_groups,
    online_run,
    run_method,
    summarize,
    trained_prior,
    tuned,
)
from icml26.lpds.prior import FlowPolicy, PriorConfig, train_prior
from icml26.lpds.steer import (
    AVERAGE_SUFFIX,
    METHODS,
    AveragedActor,
    SteerConfig,
    Steerer,
    chi2_quantile,
    evaluate,
    evaluate_prior,
    kl_entropy,
    policy_entropy,
    train_steering,
    validation_return,
)

__all__ = [
    "AVERAGE_SUFFIX", "AveragedActor", "CACHE_VERSION", "CLAIMS_VERSION", "CLAIM_SPECS",
    "FlowPolicy", "LPDSConfig", "METHODS", "MapConfig", "PAPER", "PriorConfig", "SCALES",
    "SteerConfig", "Steerer", "bc_result", "bump_paths", "chi2_quantile", "claims", "claims_for",
    "claims_from", "config_for", "demonstrations", "dense_path", "episodes_to_fraction",
    "evaluate", "evaluate_prior", "experiment", "figure_training_data", "figure_trajectories_data",
    "final_trust", "kl_entropy", "measure", "method_configs", "method_groups", "online_run",
    "policy_entropy", "rollout", "run_method", "sample_states", "summarize", "train_prior",
    "train_steering", "trained_prior", "tuned", "validation_return",
]
