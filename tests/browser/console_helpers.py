"""What the console's browser test shares: the page's checks (contrast, CSP violations), what
the page did (Watch), and the steps every test takes (signing in and out, the store's rows, a
screenshot). The fixtures that drive one Chromium page are in conftest.py."""

import os
import re
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from playwright.sync_api import expect

expect.set_options(timeout=15_000)  # the page refreshes on its own every 10 s; changes show at once
STATES = re.compile(r"^(normal|constrained|critical|emergency)$")
COUNTDOWN = re.compile(r"expires in (\d+ h )?\d+ min \d\d s")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
# Reports every CSP violation as a console error (Chromium prints most of them anyway). Added by
# Playwright through the DevTools protocol, so the page's own CSP does not apply to it.
# Every visible text whose contrast with its background is under 4.5:1 (WCAG 1.4.3; disabled controls exempt).
LOW_CONTRAST = """() => {
  const rgb = (s) => (s.match(/[\\d.]+/g) || []).map(Number);
  const lum = (c) => c.slice(0, 3).map((v) => (v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4)
    .reduce((sum, v, i) => sum + v * [0.2126, 0.7152, 0.0722][i], 0);
  const background = (el) => {
    for (; el; el = el.parentElement) { const c = rgb(getComputedStyle(el).backgroundColor); if (c.length === 3 || c[3] > 0) return c; }
    return [255, 255, 255];
  };
  const low = [];
  for (const el of document.querySelectorAll('body *')) {
    if (![...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim()) || !el.getClientRects().length) continue;
    if (el.closest('[hidden], :disabled') || getComputedStyle(el).visibility === 'hidden') continue;
    const [a, b] = [lum(rgb(getComputedStyle(el).color)), lum(background(el))];
    const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    if (ratio < 4.5) low.push(`${el.tagName} #${el.id} .${el.className}: ${ratio.toFixed(2)} "${el.textContent.trim().slice(0, 40)}"`);
  }
  return low;
}"""
CSP_WATCH = """document.addEventListener('securitypolicyviolation', (e) =>
  console.error(`CSP violation: ${e.violatedDirective} blocked ${e.blockedURI || 'inline'} (${e.sourceFile}:${e.lineNumber})`));"""


def env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is not set: run tests/browser.sh, which starts a server and sets it")
    return value


class Watch:
    """What the page did: console errors, failed loads of expected statuses, requests."""

    def __init__(self) -> None:
        self.errors: list[str] = []
        self.expected_statuses: set[int] = set()  # a refusal the current step provokes on purpose
        self.requests = []

    def on_console(self, msg) -> None:
        if msg.type not in ("error", "assert"):
            return
        status = re.search(r"the server responded with a status of (\d{3})", msg.text)
        if status and int(status.group(1)) in self.expected_statuses:
            return
        self.errors.append(f"{msg.type}: {msg.text} ({msg.location.get('url')})")

    def on_request(self, request) -> None:
        self.requests.append(request)

    def puts(self) -> list:
        return [r for r in self.requests if r.method == "PUT" and r.url.endswith("/v1/pin")]


def shot(page, name: str) -> None:
    folder = Path(os.environ.get("ARTIFACTS", "target/browser-artifacts"))
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(folder / name), full_page=True)


def db_rows(sql: str) -> list:
    uri = Path(env("DB_PATH")).resolve().as_uri() + "?mode=ro"
    with closing(sqlite3.connect(uri, uri=True)) as db:
        return db.execute(sql).fetchall()


def db_snapshot() -> tuple:
    return (db_rows("SELECT count(*) FROM pin_audit WHERE action != 'refused'"), db_rows("SELECT pin FROM pin"))


def local_input(page, hours: float) -> str:
    """A datetime-local value `hours` ahead, in the browser's own time zone."""
    return page.evaluate("""(h) => { const d = new Date(Date.now() + h * 3600e3); const p = (n) => String(n).padStart(2, '0');
        return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`; }""", hours)


def sign_in(page, token: str) -> None:
    page.fill("#token", token)
    page.click("#signin-submit")


def sign_out(page) -> None:
    page.click("#signout")
    expect(page.locator("#signin-form")).to_be_visible()
    expect(page.locator("#message")).to_have_text("Signed out.")
    assert page.evaluate("() => sessionStorage.getItem('sentinel-token')") is None


def newest_audit(page):
    return page.locator("#audit tr").first
