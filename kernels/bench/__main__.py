"""``python -m icml26.kernels.bench``: see :mod:`icml26.kernels.bench.cli`."""

import sys

from icml26.kernels.bench.cli import main

if __name__ == "__main__":
    sys.exit(main())
