"""A notebook in JupyterLab, as a new user opens one: JupyterLab from this virtual environment
on a free localhost port (no token), Chromium with every request off the machine blocked; the
notebook opens with its kernel (no "Select Kernel" dialog), Run All runs every cell, and no
cell shows an error or a warning (stderr), and nothing was requested from another host.

The notebook runs in a copy (JupyterLab saves what it runs) in a temporary folder; JupyterLab's
settings, workspaces and runtime files go there too, so the user's own are neither used nor
touched."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from browser import block_network, free_port

pytestmark = pytest.mark.ui

ROOT = Path(__file__).resolve().parents[2]
#: a cheap notebook (about half a minute at quick scale from an empty cache) that shows
#: Panel panes, HoloViews elements and tqdm bars; another paper's slug, or the path of any
#: notebook (a scratch check), through ICML26_JUPYTERLAB_NOTEBOOK
CHOSEN = os.environ.get("ICML26_JUPYTERLAB_NOTEBOOK", "grids")
SOURCE = Path(CHOSEN) if CHOSEN.endswith(".ipynb") else ROOT / "notebooks" / f"{CHOSEN}.ipynb"
NOTEBOOK = SOURCE.stem
START_S, RUN_S = 90, 240


@pytest.fixture(scope="module")
def jupyterlab(tmp_path_factory):
    """``(url, folder)``: JupyterLab serving a copy of the notebook, stopped afterwards."""
    folder = tmp_path_factory.mktemp("lab")
    shutil.copy(SOURCE, folder)
    port = free_port()
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(folder / ".config"),
           "JUPYTERLAB_SETTINGS_DIR": str(folder / ".settings"),
           "JUPYTERLAB_WORKSPACES_DIR": str(folder / ".workspaces"),
           "JUPYTER_RUNTIME_DIR": str(folder / ".runtime"), "OMP_NUM_THREADS": "1"}
    jupyter = Path(sys.executable).with_name("jupyter")  # the venv's, as the README runs it
    log = open(folder / "jupyterlab.log", "w")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [str(jupyter), "lab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
         "--port-retries=0", "--IdentityProvider.token=", "--ServerApp.password=",
         f"--ServerApp.root_dir={folder}", "--allow-root"],
        cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + START_S
        import urllib.request

        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"jupyter lab exited ({proc.returncode}): "
                                   f"{(folder / 'jupyterlab.log').read_text()[-2000:]}")
            try:
                urllib.request.urlopen(f"{url}/api/status", timeout=2)
                break
            except OSError:
                if time.time() > deadline:
                    raise RuntimeError(f"jupyter lab did not answer within {START_S} s") \
                        from None
                time.sleep(0.5)
        yield url, folder
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


#: true once the notebook's kernel runs (the toolbar names it, the indicator says idle) or a
#: dialog is open (JupyterLab's "Select Kernel" when it cannot start the notebook's kernel)
KERNEL_READY_OR_DIALOG_JS = """() => {
  if (document.querySelector('.jp-Dialog')) return true;
  const name = document.querySelector('.jp-NotebookPanel-toolbar .jp-Toolbar-kernelName');
  const status = document.querySelector('.jp-NotebookPanel .jp-Notebook-ExecutionIndicator');
  return !!(name && !/No Kernel/.test(name.textContent) && status
            && status.getAttribute('data-status') === 'idle');
}"""

#: the prompts of every code cell ("[*]:" while queued or running, "[3]:" when done)
PROMPTS_JS = """() => [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')]
  .map((e) => e.textContent.trim())"""


def run_all(page, timeout_s: float) -> list[str]:
    """Run > Run All Cells, then wait until no cell is queued or running and the last code
    cell has run (or a cell failed: the cells after it are not run). Returns the prompts."""
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_text("Run All Cells", exact=True).click()
    deadline = time.time() + timeout_s
    time.sleep(1.0)
    while time.time() < deadline:
        prompts = page.evaluate(PROMPTS_JS)
        failed = page.locator(".jp-OutputArea-output[data-mime-type="
                              "'application/vnd.jupyter.stderr']").count()
        if prompts and not any("*" in p for p in prompts) and (
                prompts[-1] not in ("", "[ ]:") or failed):
            return prompts
        time.sleep(1.0)
    raise AssertionError(f"the notebook did not finish within {timeout_s:.0f} s: "
                         f"{page.evaluate(PROMPTS_JS)}")


def test_notebook_runs_offline_in_jupyterlab(jupyterlab, browser):
    url, folder = jupyterlab
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    blocked = block_network(context)
    requested: list[str] = []
    context.on("request", lambda r: requested.append(r.url))
    page = context.new_page()
    page_errors: list[str] = []
    page.on("pageerror", lambda e: page_errors.append(str(e)))
    try:
        page.goto(f"{url}/lab/tree/{NOTEBOOK}.ipynb", timeout=START_S * 1000)
        page.locator(".jp-NotebookPanel").first.wait_for(state="visible",
                                                         timeout=START_S * 1000)
        # the kernel starts by itself (its name in the toolbar, idle), or a dialog asks
        page.wait_for_function(KERNEL_READY_OR_DIALOG_JS, timeout=START_S * 1000)
        dialogs = page.locator(".jp-Dialog").all_inner_texts()
        assert not dialogs, f"a dialog opened with the notebook: {dialogs}"
        kernel = page.locator(".jp-NotebookPanel-toolbar .jp-Toolbar-kernelName").inner_text()
        assert "Python" in kernel, kernel
        prompts = run_all(page, RUN_S)
        page.screenshot(path=str(folder / "jupyterlab.png"), full_page=True)
        stderr = page.locator(".jp-OutputArea-output[data-mime-type="
                              "'application/vnd.jupyter.stderr']").all_inner_texts()
        assert not stderr, f"error or warning outputs: {[s[:300] for s in stderr]}"
        assert all(p.startswith("[") and p[1:-2].isdigit() for p in prompts), prompts
        assert not page.locator(".jp-Dialog").all_inner_texts(), "a dialog opened"
        assert not page_errors, page_errors
    finally:
        context.close()
    off_machine = [u for u in requested if not u.startswith((url, "data:", "blob:"))]
    assert not blocked and not off_machine, f"requests off the machine: {blocked or off_machine}"
