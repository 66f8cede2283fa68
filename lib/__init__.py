"""icml26: small, exact reproductions of ICML 2026 papers.

Import a paper's module directly (``from icml26 import recruitment``); nothing heavy is
imported here, so ``icml26 claims`` starts fast and never pulls in panel. Importing the package
pins the numeric code paths claims are computed on (:mod:`icml26.numerics`): it must run before
torch's or numpy's first computation, so it runs here, first.
"""

from icml26 import allocator as _allocator
from icml26 import numerics as _numerics

_numerics.pin()
_allocator.keep_freed_memory()

__version__ = "0.1.0"
