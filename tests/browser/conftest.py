"""The one Chromium page the console's browser test drives through its steps in order, and what
it watched on the way (console_helpers.Watch)."""

import os

import pytest
from playwright.sync_api import sync_playwright

from console_helpers import CHROMIUM_ARGS, CSP_WATCH, Watch


@pytest.fixture(scope="module")
def watch() -> Watch:
    return Watch()


@pytest.fixture(scope="module")
def page(watch):
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=os.environ.get("CHROMIUM", "/usr/bin/chromium"), args=CHROMIUM_ARGS)
        # A zone with a half-hour offset: the pin's local expiry must reach the API as the right UTC instant.
        context = browser.new_context(viewport={"width": 1280, "height": 900}, timezone_id="Asia/Kolkata", locale="en-GB")
        context.add_init_script(CSP_WATCH)
        page = context.new_page()
        page.set_default_timeout(15_000)
        page.on("console", watch.on_console)
        page.on("pageerror", lambda e: watch.errors.append(f"page error: {e}"))
        page.on("request", watch.on_request)
        yield page
        context.close()
        browser.close()
