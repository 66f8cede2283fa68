"""What every app shares: the Explorer base (settings alert, live figures, the Run), the
page, the index, the live figures, the page settings and the ``icml26`` command line."""

from icml26.dashboards.app.live import Chart, Series, show
from icml26.dashboards.app.page import ExplorerBase, message_plot, paper_page

__all__ = ["Chart", "ExplorerBase", "Series", "message_plot", "paper_page", "show"]
