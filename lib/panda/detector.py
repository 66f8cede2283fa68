"""PANDA's second-order detector: autograd graphs built during a backward pass, and calls of
the exact lower-level solver (second-order Jacobians computed outside autograd)."""

from __future__ import annotations

import contextlib
import inspect

import torch

from icml26.panda.equilibrium import EXACT_CALLS


class SecondOrderDetector:
    """Detects second-order work: autograd graphs built *during* a backward pass, and the
    exact lower-level solver, whose Newton steps use analytic second-order Jacobians under
    ``no_grad`` (invisible to autograd: e.g. a warm start of the lower level at the exact
    saddle point, or an implicit hypergradient).

    Five signals, all counted while the context is active:

    * ``ops`` (with ``dispatch=True``): every ATen op the autograd engine runs inside a
      backward node (``torch._C._current_autograd_node() is not None``) while grad mode is
      on -- exactly what ``create_graph=True`` does, whichever API asked for it (a
      ``TorchDispatchMode``);
    * ``saved``: tensors saved for a *new* backward node while a backward node runs
      (``saved_tensors_hooks``): the nodes of the second-order graph itself;
    * ``create_graph_calls``: calls of ``torch.autograd.grad`` / ``backward`` with
      ``create_graph=True`` (the spec's wrapper);
    * ``exact_solves`` / ``analytic_jacobians``: calls of
      :func:`~icml26.panda.equilibrium.solve_equilibrium` and of the analytic Jacobians
      (counted by :data:`~icml26.panda.equilibrium.EXACT_CALLS`).

    ``fired`` is true when any of them is non-zero. A first-order ``loss.backward()`` runs its
    backward ops with grad mode off and saves nothing, so it never fires.
    """

    def __init__(self, dispatch: bool = True):
        self.dispatch = dispatch  # the op-level signal costs ~3x; the others are ~free
        self.ops = 0
        self.saved = 0
        self.create_graph_calls = 0
        self.exact_solves = 0
        self.analytic_jacobians = 0
        self._stack = []

    @property
    def events(self) -> int:
        return (self.ops + self.saved + self.create_graph_calls + self.exact_solves
                + self.analytic_jacobians)

    @property
    def fired(self) -> bool:
        return self.events > 0

    def counts(self) -> dict:
        return {"ops": self.ops, "saved": self.saved,
                "create_graph_calls": self.create_graph_calls,
                "exact_solves": self.exact_solves, "analytic_jacobians": self.analytic_jacobians,
                "events": self.events,
                "dispatch": self.dispatch}

    def __enter__(self):
        from torch.utils._python_dispatch import TorchDispatchMode

        det = self

        class _Mode(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                if torch.is_grad_enabled() and torch._C._current_autograd_node() is not None:
                    det.ops += 1
                return func(*args, **(kwargs or {}))

        def pack(t):
            if torch._C._current_autograd_node() is not None:
                det.saved += 1
            return t

        grad, backward = torch.autograd.grad, torch.autograd.backward

        def wrap(func):
            sig = inspect.signature(func)

            def wrapper(*args, **kwargs):
                if sig.bind(*args, **kwargs).arguments.get("create_graph"):
                    det.create_graph_calls += 1
                return func(*args, **kwargs)

            return wrapper

        grad_wrapper, backward_wrapper = wrap(grad), wrap(backward)

        hooks = torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t)
        mode = _Mode() if self.dispatch else contextlib.nullcontext()
        hooks.__enter__()
        mode.__enter__()
        torch.autograd.grad, torch.autograd.backward = grad_wrapper, backward_wrapper
        self._stack = [hooks, mode, grad, backward,
                       (EXACT_CALLS.equilibria, EXACT_CALLS.jacobians)]
        return self

    def __exit__(self, *exc):
        hooks, mode, grad, backward, (equilibria, jacs) = self._stack
        self.exact_solves += EXACT_CALLS.equilibria - equilibria
        self.analytic_jacobians += EXACT_CALLS.jacobians - jacs
        torch.autograd.grad, torch.autograd.backward = grad, backward
        mode.__exit__(*exc)
        hooks.__exit__(*exc)
        return False
