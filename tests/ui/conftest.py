"""Browser fixtures: Debian's Chromium through Playwright, and one server for all apps."""

from __future__ import annotations

import os
import shutil

import pytest

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


@pytest.fixture(scope="session")
def chromium_path():
    from browser import CHROMIUM

    if not (os.path.exists(CHROMIUM) or shutil.which("chromium")):
        if IN_CI:
            pytest.fail(f"{CHROMIUM} is missing: the test command must apt-get install chromium")
        pytest.skip("no Chromium: apt-get install chromium, then pytest --ui")
    return CHROMIUM


@pytest.fixture(scope="session")
def browser(chromium_path):
    from browser import launch
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = launch(p)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = context.new_page()
    yield pg
    context.close()


@pytest.fixture(scope="session")
def app_server(tmp_path_factory):
    """Every reproduced paper's app, the index and the trivial yardstick on one server, in its
    own process (its log: ``app_server.log`` in pytest's temporary folder)."""
    from browser import ServedApps

    log = tmp_path_factory.mktemp("server") / "app_server.log"
    server = ServedApps(str(log))
    yield server.url
    server.stop()


@pytest.fixture
def offline(browser):
    """A page whose requests may not leave this machine: ``(page, blocked, page_errors,
    console_errors)``; ``blocked`` lists every request that tried."""
    from browser import block_network

    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    blocked = block_network(context)
    page = context.new_page()
    page_errors: list[str] = []
    console_errors: list[str] = []
    page.on("pageerror", lambda e: page_errors.append(str(e)))
    page.on("console", lambda m: console_errors.append(m.text) if m.type == "error" else None)
    yield page, blocked, page_errors, console_errors
    context.close()
