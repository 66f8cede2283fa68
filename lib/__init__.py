"""icml26: small, exact reproductions of ICML 2026 papers.

Import a paper's module directly (``from icml26 import recruitment``); nothing heavy is
imported here, so ``icml26 claims`` starts fast and never pulls in panel.
"""

__version__ = "0.1.0"
