"""The installable app in a real headless Chromium (docs/client.md, "The installable app"): after one visit the
service worker keeps the client's shell, so a reload without a network shows the client saying it is offline
(in the browser's language) instead of the sign-in screen or the browser's error page, and the client starts
once the network is back; Lighthouse 11's installability audits pass and the sign-in page has no accessibility
failure."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from typing import Any

import pytest

from tests.support.browser import CHROMIUM, ORIGIN, ROOT, needs_chromium, needs_client

pytestmark = [needs_chromium, needs_client]

WAIT = 15000
LIGHTHOUSE = ROOT / "web" / "node_modules" / "lighthouse" / "cli" / "index.js"
NODE = shutil.which("node")
# The audits of Lighthouse 11's PWA category that make the client installable and look like an app.
INSTALLABLE = ("installable-manifest", "service-worker", "maskable-icon", "themed-omnibox", "viewport",
               "content-width", "splash-screen")


@pytest.fixture
def backend() -> str:
    return "sqlite"


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    return {"PUBLIC_URL": ORIGIN}


async def visit_until_the_worker_controls(context: Any) -> Any:
    page = await context.new_page()
    await page.goto(f"{ORIGIN}/login")
    await page.locator('input[type="password"]').wait_for(timeout=WAIT)
    # Installed (its shell kept) and in control of the page: the next load goes through it.
    await page.wait_for_function("async () => !!(await navigator.serviceWorker.ready).active", timeout=WAIT)
    await page.wait_for_function("() => !!navigator.serviceWorker.controller", timeout=WAIT)
    # The language catalogue this page loaded before the worker was there is kept too (src/lib/worker.ts).
    language = await page.evaluate("document.documentElement.lang")
    await page.wait_for_function(
        """async (lang) => { for (const name of await caches.keys()) {
             const kept = await (await caches.open(name)).keys();
             if (kept.some((r) => new RegExp(`/assets/${lang}-[\\w-]+\\.js$`).test(r.url))) return true; }
           return false; }""", arg=language, timeout=WAIT)
    return page


@pytest.mark.parametrize(("locale", "offline"), [("en-US", "Offline"), ("ru-RU", "Нет соединения")])
async def test_a_reload_without_a_network_shows_the_client_offline_and_it_starts_when_back(
        site, browser, locale, offline):
    from playwright.async_api import expect

    context = await browser.new_context(locale=locale, service_workers="allow")
    page = await visit_until_the_worker_controls(context)

    await context.set_offline(True)
    await page.reload()
    status = page.get_by_role("status").filter(has_text=offline)
    await expect(status).to_be_visible(timeout=WAIT)
    assert await page.evaluate("document.documentElement.lang") == locale[:2]
    # Not taken for "signed out": no sign-in form while offline (found by its password field, in any language).
    password = page.locator('input[type="password"]')
    await expect(password).to_have_count(0)

    await context.set_offline(False)
    await expect(password).to_be_visible(timeout=WAIT)
    await expect(page.get_by_role("status").filter(has_text=offline)).to_have_count(0)
    await context.close()


@pytest.mark.skipif(NODE is None or not LIGHTHOUSE.exists(),
                    reason="Node.js or the lighthouse dev dependency is missing (cd web && npm ci)")
async def test_lighthouse_finds_the_client_installable_and_the_sign_in_page_accessible(site, tmp_path):
    assert NODE is not None and CHROMIUM is not None
    report = tmp_path / "lighthouse.json"
    process = await asyncio.create_subprocess_exec(
        NODE, str(LIGHTHOUSE), f"{ORIGIN}/login", "--only-categories=pwa,accessibility", "--output=json",
        f"--output-path={report}", "--chrome-flags=--headless=new --no-sandbox", "--quiet",
        env={**os.environ, "CHROME_PATH": CHROMIUM}, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == 0, err.decode()[-2000:]
    result = json.loads(report.read_text(encoding="utf-8"))
    audits = result["audits"]
    failed = {name: audits[name].get("explanation") or audits[name]["title"]
              for name in INSTALLABLE if name in audits and audits[name]["score"] != 1}
    assert failed == {}, failed
    assert {"installable-manifest", "maskable-icon", "themed-omnibox", "viewport", "splash-screen"} <= audits.keys()
    accessibility = result["categories"]["accessibility"]
    failing = [ref["id"] for ref in accessibility["auditRefs"]
               if ref["weight"] > 0 and audits[ref["id"]]["score"] is not None and audits[ref["id"]]["score"] < 1]
    assert accessibility["score"] == 1.0, failing
