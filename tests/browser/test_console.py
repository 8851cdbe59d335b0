"""The console of `sentinel serve` (/, /console.js, /console.css) in a real Chromium.

Run by tests/browser.sh, which starts a server and sets SENTINEL_URL, STAFF_TOKEN, VIEWER_TOKEN,
OIDC_STAFF_JWT, DB_PATH and ARTIFACTS. One page is driven through the whole flow, in order:
signed out, a refused token, a viewer, an OpenID Connect staff member setting a refused and then
a valid pin and clearing it, a static staff token surviving a reload, a phone-sized screen. A
full-page screenshot of each step is kept in ARTIFACTS. Any console error or CSP violation, on
any step, fails the run; so does a token in any URL.

The page and what it watched are conftest.py's fixtures; the helpers every step uses are in
console_helpers.py.
"""

import datetime as dt
import json
import re
from urllib.parse import parse_qs, urlparse
from pathlib import Path

from playwright.sync_api import expect

from console_helpers import (
    COUNTDOWN,
    LOW_CONTRAST,
    STATES,
    db_snapshot,
    env,
    local_input,
    newest_audit,
    shot,
    sign_in,
    sign_out,
)


def test_01_signed_out_page_and_its_headers(page, watch):
    response = page.goto(env("SENTINEL_URL") + "/")
    assert response is not None and response.ok, response
    headers = response.headers
    csp = headers.get("content-security-policy", "")
    for directive in ("default-src 'none'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'", "base-uri 'none'"):
        assert directive in csp, f"{directive} missing from the CSP: {csp!r}"
    assert headers.get("x-frame-options", "").upper() == "DENY", headers
    assert headers.get("referrer-policy", "") == "no-referrer", headers
    html = response.text()
    assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>|<style|\sstyle=|\son[a-z]+=", html, re.I), "inline script, style or handler"
    expect(page.locator("#signin-form")).to_be_visible()
    expect(page.locator("#signin-form")).to_have_attribute("method", "post")
    expect(page.locator("#token")).to_have_attribute("type", "password")
    expect(page.locator("label[for=token]")).to_have_text("API token")
    expect(page.locator("#console")).to_be_hidden()
    expect(page.locator("#signout")).to_be_hidden()
    assert page.locator("h1").count() == 1
    for landmark in ("header", "main"):
        assert page.locator(landmark).count() == 1, landmark
    for section in page.locator("section").all():
        assert page.locator("#" + section.get_attribute("aria-labelledby")).count() == 1
    for field in ("token", "pin-state", "pin-reason", "pin-expires"):
        assert page.locator(f"label[for={field}]").count() == 1, field
    shot(page, "01-signed-out.png")


def test_02_keyboard_reaches_the_sign_in_form(page):
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    for _ in range(6):
        page.keyboard.press("Tab")
        if page.evaluate("() => document.activeElement.id") == "token":
            break
    assert page.evaluate("() => document.activeElement.id") == "token", "Tab from the top never reached the token field"
    outline = page.evaluate("() => getComputedStyle(document.activeElement).outlineStyle")
    assert outline not in ("none", ""), "no visible focus outline on the token field"
    page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement.id") == "signin-submit"


def test_03_a_wrong_token_is_refused(page, watch):
    watch.expected_statuses = {401}
    sign_in(page, "not-a-token-of-this-server")
    expect(page.locator("#signin-error")).to_have_text("That token was refused (401)")
    expect(page.locator("#signin-error")).to_have_attribute("aria-live", "polite")
    expect(page.locator("#token")).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#console")).to_be_hidden()
    assert page.evaluate("() => sessionStorage.getItem('sentinel-token')") is None
    watch.expected_statuses = set()


def test_04_a_viewer_sees_everything_but_the_pin_form(page):
    sign_in(page, env("VIEWER_TOKEN"))
    expect(page.locator("#console")).to_be_visible()
    expect(page.locator("#whoami")).to_contain_text("viewer")
    expect(page.locator("#signout")).to_be_visible()
    expect(page.locator("#state")).to_have_text(STATES)
    expect(page.locator("#factors li").first).to_be_visible()
    expect(page.locator("#cause")).not_to_have_text("—")
    expect(page.locator("#readings tbody tr")).to_have_count(3)
    expect(page.locator("#policies tbody tr").first).to_be_visible()
    expect(page.locator("#audit tr").first).to_be_visible()
    expect(page.locator("#timeline")).to_have_attribute("alt", "The last 24 hours: state and readings")
    page.wait_for_function("() => { const i = document.getElementById('timeline');"
                           " return i.src.startsWith('blob:') && i.complete && i.naturalWidth > 0; }")
    expect(page.locator("#pin")).to_contain_text("No pin")
    expect(page.locator("#pin-form")).to_be_hidden()
    assert page.locator("#pin-form").get_attribute("hidden") is not None
    expect(page.locator("#pin-submit")).to_be_disabled()
    expect(page.locator("#pin-clear")).to_be_hidden()
    assert page.evaluate("() => sessionStorage.getItem('sentinel-token')") == env("VIEWER_TOKEN")
    assert page.evaluate("() => localStorage.length") == 0
    shot(page, "02-viewer.png")


def test_04b_the_timeline_is_in_local_time_and_read_at_its_size(page, watch):
    """The timeline is drawn in the browser's zone (Asia/Kolkata, half an hour off any UTC
    hour), at the width it is shown, with no report title and a legend of what is there."""
    asked = [r for r in watch.requests if "/v1/timeline.svg" in r.url]
    assert asked, "the console never asked for the timeline"
    query = parse_qs(urlparse(asked[-1].url).query)
    # Chromium's ICU names the zone by its older link, Asia/Calcutta.
    assert query.get("zone") in (["Asia/Kolkata"], ["Asia/Calcutta"]), asked[-1].url
    # The same drawing again, asked for as the page asked (Chromium keeps no body of a blob's source).
    reply = page.request.get(asked[-1].url, headers={"Authorization": f"Bearer {env('VIEWER_TOKEN')}"})
    assert reply.ok, (reply.status, reply.text())
    svg = reply.text()
    assert f"times in {query['zone'][0]} (IST, UTC+05:30)" in svg, svg[:2000]
    end = re.search(r"to (\d{4}-\d\d-\d\d \d\d:\d\d), times in", svg)
    assert end, svg[:2000]
    india = dt.timezone(dt.timedelta(hours=5, minutes=30))
    last_tick = dt.datetime.strptime(end.group(1), "%Y-%m-%d %H:%M").replace(tzinfo=india)
    assert abs(dt.datetime.now(dt.timezone.utc) - last_tick) < dt.timedelta(minutes=10), (end.group(1), "is not the local time now")
    for wrong in ("trace the last", "whole trace", "candidate more protective", "recovery held by flap damping"):
        assert wrong not in svg, f"the console's timeline says {wrong!r}"
    # 1.1.0 runs in shadow: its band beside the active version's, the legend naming it.
    assert "shadow 1.1.0" in svg and "shadow more protective" in svg, svg[-3000:]
    natural, shown, box = page.evaluate("() => { const i = document.getElementById('timeline');"
                                        " return [i.naturalWidth, i.clientWidth, i.parentElement.clientWidth]; }")
    assert int(query["width"][0]) == natural and abs(natural - shown) <= 1, (query["width"], natural, shown)
    assert shown + 2 <= box, f"the drawing ({shown} px and its border) is wider than its box ({box} px): it scrolls on a wide screen"
    texts = re.findall(r'font-size="([\d.]+)"[^>]*>\s*([^<]*?)\s*<', svg)
    size, text = min((float(size), text) for size, text in texts if text)
    assert size * shown / natural >= 11.5, f"the timeline's smallest text, {text!r}, is {size * shown / natural:.1f} px on screen"


def test_04c_the_policies_section_shows_the_shadows_scorecard(page):
    """1.1.0 runs in shadow of 1.0.0: the policies section shows the shadow's scorecard, scored
    in the background, with the numbers `sentinel policy shadow-report` prints for the period."""
    card = json.loads(Path(env("SHADOW_REPORT")).read_text())["scorecard"]
    assert "error" not in card, card
    active, shadow = card["report"]["traces"][0]["summaries"]
    # The first answer starts the scoring; a later refresh (every 10 s) shows it.
    expect(page.locator("#scorecard-table")).to_be_visible(timeout=30_000)
    expect(page.locator("#scorecard-status")).to_contain_text(f"Shadow 1.1.0 against active 1.0.0 over {card['ticks']} ticks")
    expect(page.locator("#scorecard-status time")).to_have_count(3)  # the period's ends, when it was scored
    expect(page.locator("#scorecard-active-heading")).to_have_text("1.0.0 (active)")
    expect(page.locator("#scorecard-shadow-heading")).to_have_text("1.1.0 (shadow)")
    days = max(card["ticks"] / 1440, 1.0)
    expected = {
        "flaps_per_day": lambda s: f"{s['flaps'] / days:.2f}",
        "transitions": lambda s: str(s["transitions"]),
        "bulk_capacity_minutes": lambda s: f"{s['bulk_capacity_minutes']:.1f}",
        "over_protection_minutes": lambda s: str(s["over_protection_minutes"]),
        "invariant_violations": lambda s: str(len(s["violations"])),
    }
    for measure, shown in expected.items():
        cells = page.locator(f'#scorecard-table tr[data-measure="{measure}"] td')
        expect(cells).to_have_text([shown(active), shown(shadow)])
    assert active["transitions"] != shadow["transitions"] or active["bulk_capacity_minutes"] != shadow["bulk_capacity_minutes"], \
        "the two versions decide alike on this trace: the card shows nothing to tell them apart"
    expect(page.locator("#scorecard-live")).to_contain_text("The replay decided as the shadow did live")
    shot(page, "02c-scorecard.png")


def test_05_staff_signs_in_with_an_openid_connect_token(page):
    sign_out(page)
    sign_in(page, env("OIDC_STAFF_JWT"))
    expect(page.locator("#whoami")).to_contain_text("staff")
    expect(page.locator("#pin-form")).to_be_visible()
    # No pin: nothing to clear, so no button for it.
    expect(page.locator("#pin-clear")).to_be_hidden()
    expect(page.locator("#pin-clear-confirm")).to_be_hidden()
    expect(page.locator("#pin-expires")).to_have_attribute("type", "datetime-local")
    expect(page.locator("#pin-expires")).not_to_have_value("")
    shot(page, "03-staff.png")


def test_06_an_invalid_pin_changes_nothing(page, watch):
    before = db_snapshot()
    # A blank reason is refused by the page itself: no request.
    puts = len(watch.puts())
    page.select_option("#pin-state", "critical")
    page.fill("#pin-reason", "   ")
    page.fill("#pin-expires", local_input(page, 2))
    page.click("#pin-submit")
    expect(page.locator("#pin-reason-error")).not_to_be_empty()
    expect(page.locator("#pin-reason")).to_have_attribute("aria-invalid", "true")
    page.wait_for_timeout(500)
    assert len(watch.puts()) == puts, "a blank reason was sent to the server"
    # An expiry 30 h ahead is refused by the server (422, field expires_at).
    watch.expected_statuses = {422}
    page.fill("#pin-reason", "browser test: too far ahead")
    page.fill("#pin-expires", local_input(page, 30))
    page.click("#pin-submit")
    expect(page.locator("#pin-expires-error")).to_contain_text("expires_at")
    expect(page.locator("#pin-expires")).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#pin-reason")).not_to_have_attribute("aria-invalid", "true")
    expect(page.locator("#pin-reason-error")).to_be_empty()
    expect(page.locator("#pin-reason")).to_have_value("browser test: too far ahead")
    assert len(watch.puts()) == puts + 1
    expect(newest_audit(page).locator(".audit-action")).to_have_text("refused")
    expect(newest_audit(page).locator(".audit-actor")).to_contain_text("oidc:u-1234")
    expect(page.locator("#pin")).to_contain_text("No pin")
    assert db_snapshot() == before, "a refused pin changed the store"
    watch.expected_statuses = set()
    shot(page, "04-invalid-pin.png")


def test_07_a_valid_pin_is_set_and_counts_down(page, watch):
    before_count, _ = db_snapshot()
    page.select_option("#pin-state", "critical")
    page.fill("#pin-reason", "browser test: load drill")
    page.fill("#pin-expires", local_input(page, 2))
    page.click("#pin-submit")
    pin = page.locator("#pin")
    expect(page.locator("#pin-state-value")).to_have_text("critical")
    expect(pin).to_contain_text("browser test: load drill")
    expect(pin).not_to_contain_text("No pin")
    expect(page.locator("#pin-clear")).to_be_enabled()
    expect(page.locator("#pin-expires-error")).to_be_empty()
    # No tick has run since: the state card says so, and when the pin takes effect.
    expect(page.locator("#pinned")).to_contain_text("no (a pin to critical is set: it takes effect at the next tick, within 60 s)")
    expect(page.locator("#message")).to_contain_text("takes effect at the next tick, within 60 s")
    # The body: the local time of the form as an RFC 3339 instant in UTC, with the console's header.
    request = watch.puts()[-1]
    body = json.loads(request.post_data or "{}")
    assert body["state"] == "critical" and body["reason"] == "browser test: load drill", body
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:00Z", body["expires_at"]), body
    ahead = dt.datetime.fromisoformat(body["expires_at"].replace("Z", "+00:00")) - dt.datetime.now(dt.timezone.utc)
    assert dt.timedelta(hours=1, minutes=57) < ahead <= dt.timedelta(hours=2), ahead
    headers = request.all_headers()
    assert headers.get("x-sentinel-console") == "1" and headers.get("content-type", "").startswith("application/json"), headers
    assert headers.get("authorization") == "Bearer " + env("OIDC_STAFF_JWT")
    # The countdown ticks.
    countdown = page.locator("#pin-countdown")
    expect(countdown).to_have_text(COUNTDOWN)
    first = countdown.inner_text()
    page.wait_for_timeout(2_000)
    expect(countdown).not_to_have_text(first)
    expect(countdown).to_have_text(COUNTDOWN)
    expect(newest_audit(page).locator(".audit-action")).to_have_text("set")
    expect(newest_audit(page).locator(".audit-actor")).to_have_text(re.compile(r"^oidc:"))
    count, pins = db_snapshot()
    assert count[0][0] == before_count[0][0] + 1 and len(pins) == 1, (count, pins)
    assert not page.evaluate(LOW_CONTRAST), page.evaluate(LOW_CONTRAST)
    shot(page, "05-pinned.png")


def test_08_the_pin_is_cleared_after_a_confirmation(page, watch):
    deletes = len([r for r in watch.requests if r.method == "DELETE"])
    # The first click only asks; "Keep it" (which has the focus) keeps the pin.
    page.click("#pin-clear")
    expect(page.locator("#pin-clear-confirm")).to_be_visible()
    expect(page.locator("#pin-clear-no")).to_be_focused()
    expect(page.locator("#pin-clear")).to_be_hidden()
    page.click("#pin-clear-no")
    expect(page.locator("#pin-clear-confirm")).to_be_hidden()
    expect(page.locator("#pin-clear")).to_be_focused()
    expect(page.locator("#pin-state-value")).to_have_text("critical")
    page.wait_for_timeout(300)
    assert len([r for r in watch.requests if r.method == "DELETE"]) == deletes, "asking sent a request"
    page.click("#pin-clear")
    page.click("#pin-clear-yes")
    expect(page.locator("#pin")).to_contain_text("No pin")
    expect(page.locator("#pin-clear-confirm")).to_be_hidden()
    expect(page.locator("#pinned")).to_have_text("no")
    expect(page.locator("#pin-countdown")).to_be_empty()
    expect(newest_audit(page).locator(".audit-action")).to_have_text("clear")
    expect(page.locator("#pin-clear")).to_be_hidden()
    assert db_snapshot()[1] == [], "the pin is still stored"
    shot(page, "06-cleared.png")


def test_09_a_static_staff_token_survives_a_reload(page):
    sign_out(page)
    sign_in(page, env("STAFF_TOKEN"))
    expect(page.locator("#whoami")).to_contain_text("staff")
    page.reload()
    expect(page.locator("#console")).to_be_visible()
    expect(page.locator("#pin-form")).to_be_visible()
    expect(page.locator("#state")).to_have_text(STATES)


def test_10_a_phone_sized_screen(page):
    page.set_viewport_size({"width": 375, "height": 812})
    page.reload()  # as a phone opens it: the drawing is asked for at the phone's width
    expect(page.locator("#state")).to_be_visible()
    page.wait_for_function("() => document.getElementById('timeline').naturalWidth > 0")
    page.wait_for_timeout(300)
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= 375 + 1, f"the page scrolls sideways at 375 px: scrollWidth {width}"
    box = page.locator(".timeline-scroll").bounding_box()
    assert box is not None and box["width"] <= 375, box
    # The drawing keeps its size and its box scrolls: its smallest text is read at its size (it
    # was about 7 px when the drawing was shrunk to the screen).
    natural, shown = page.evaluate("() => { const i = document.getElementById('timeline');"
                                   " return [i.naturalWidth, i.clientWidth]; }")
    assert natural == 640 and abs(natural - shown) <= 1, (natural, shown)
    scrolls = page.evaluate("() => { const b = document.querySelector('.timeline-scroll'); return b.scrollWidth > b.clientWidth; }")
    assert scrolls, "the timeline's box does not scroll sideways at 375 px"
    assert not page.evaluate(LOW_CONTRAST), page.evaluate(LOW_CONTRAST)
    shot(page, "07-phone.png")


def test_11_no_token_in_any_url(page, watch):
    tokens = [env("VIEWER_TOKEN"), env("STAFF_TOKEN"), env("OIDC_STAFF_JWT")]
    assert watch.requests, "no request was recorded"
    for token in tokens:
        assert token not in page.url
        leaked = [r.url for r in watch.requests if token in r.url]
        assert not leaked, f"a token went into a URL: {leaked}"


def test_12_no_console_error_and_no_csp_violation(watch):
    assert not watch.errors, "\n".join(watch.errors)
