"""Browser tests of the web client: Debian's chromium driven by Playwright (never a downloaded browser),
the built client (make install), and the few helpers the scenarios share."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.support.processes import free_port

ROOT = Path(__file__).resolve().parents[2]
# One port per test process (pytest-xdist worker): each browser test serves the app there while it runs, and
# PUBLIC_URL names this origin so that the session cookie and the Origin check work in the browser.
PORT = free_port()
ORIGIN = f"http://localhost:{PORT}"
PASSWORD = "correct horse battery staple"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CLIENT_INDEX = ROOT / "meadhall" / "web" / "client" / "index.html"
AXE = ROOT / "web" / "node_modules" / "axe-core" / "axe.min.js"

needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it)")
needs_client = pytest.mark.skipif(not CLIENT_INDEX.exists(), reason="the web client is not built (make install)")


class _Browser:
    """The browser, whose new contexts block service workers unless a test asks for them
    (`service_workers="allow"`): the client registers its worker on every start, and the worker's install
    fetches the whole shell, work that only the tests of the installable app and of push need."""

    def __init__(self, browser: Any) -> None:
        self._browser = browser

    def __getattr__(self, name: str) -> Any:
        return getattr(self._browser, name)

    async def new_context(self, **options: Any) -> Any:
        options.setdefault("service_workers", "block")
        return await self._browser.new_context(**options)


@asynccontextmanager
async def chromium() -> AsyncIterator[Any]:
    from playwright.async_api import async_playwright
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield _Browser(browser)
        finally:
            await browser.close()


def watch_errors(page: Any) -> list[str]:
    """Script errors and console errors of a page (CSP violations are console errors)."""
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(f"pageerror: {e}"))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    return errors


async def signed_in_context(browser: Any, origin: str, login: str, password: str, **options: Any) -> Any:
    """A browser context signed in as the client does it: a same-origin POST from a page of the service
    (here /healthz, a page without scripts of its own), which leaves the `__Host-session` cookie."""
    context = await browser.new_context(**options)
    page = await context.new_page()
    await page.goto(f"{origin}/healthz")
    status = await page.evaluate(
        """async ([login, password]) => (await fetch('/api/v1/auth/login', {method: 'POST',
             headers: {'Content-Type': 'application/json'}, body: JSON.stringify({login, password})})).status""",
        [login, password])
    assert status == 200, status
    await page.close()
    return context


async def serious_axe_violations(page: Any) -> list[str]:
    """axe-core (the npm dev dependency) run in the page: the serious and critical violations, in words.
    The script is evaluated through the browser's debugging protocol, which the page's CSP does not
    govern; nothing is added to the page itself."""
    await page.evaluate(AXE.read_text(encoding="utf-8"))
    results = await page.evaluate("async () => (await axe.run(document, {resultTypes: ['violations']})).violations")
    return [f"{v['id']} ({v['impact']}): {v['help']} — "
            + "; ".join(f"{n['target']}: {n.get('failureSummary', '')}" for n in v["nodes"][:3])
            for v in results if v["impact"] in ("serious", "critical")]


async def show_scheme(page: Any, scheme: str) -> None:
    """The page in the dark or light theme, settled: the system's scheme emulated (with reduced motion, so no
    colour is caught mid-transition) and awaited until the client's theme follows it (lib/theme.ts applies it
    on the media query's change event, after this call returns)."""
    await page.emulate_media(color_scheme=scheme, reduced_motion="reduce")
    await page.wait_for_function("(s) => document.documentElement.dataset.theme === s", arg=scheme)


async def open_page(browser: Any, login: str, path: str, **options: Any) -> tuple[Any, Any, list[str]]:
    """A new signed-in context and page of `login` at `path`: (context, page, console errors)."""
    context = await signed_in_context(browser, ORIGIN, login, PASSWORD, **options)
    page = await context.new_page()
    errors = watch_errors(page)
    await page.goto(f"{ORIGIN}{path}")
    return context, page, errors


def only_expected(errors: list[str]) -> list[str]:
    """Console errors other than the refused requests the scenario provokes on purpose."""
    return [e for e in errors if not any(code in e for code in ("401", "403", "404", "409", "422"))]
