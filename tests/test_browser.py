"""A real browser (Debian's headless Chromium, driven by Playwright) against daphne + a Celery worker:
log in, open a paper, pick a preset, submit the form, watch the chart grow while running, see 'succeeded'."""

import os
import shutil

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
TARGETS = [
    # (paper, experiment, preset, series key drawn in the first panel)
    ("toptwo_bai", "live_run", "paper headline", None),
    ("demo", "counter", "slow", "demo/y"),
]


def _target():
    from apps.lab.registry import registry

    for paper, exp, preset, _key in TARGETS:
        decl = registry.experiments.get(f"{paper}/{exp}")
        if decl is not None and preset in decl.presets:
            return paper, exp, preset
    raise AssertionError("no browser-test target installed")


@pytest.mark.skipif(
    CHROMIUM is None, reason="Debian's chromium is not installed (make test installs it when run as root)"
)
def test_submit_form_and_watch_run_live(catalog, user, worker, live_asgi, monkeypatch):
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # Playwright's sync API runs an event loop in this thread
    from playwright.sync_api import expect, sync_playwright

    paper, exp, preset = _target()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        page = browser.new_page()
        page.set_default_timeout(30_000)
        page.goto(f"{live_asgi}/accounts/login/")
        page.fill("input[name=username]", "alice")
        page.fill("input[name=password]", "alice-password-1")
        page.click("button.primary")
        page.goto(f"{live_asgi}/papers/{paper}/")
        section = page.locator(f"#exp-{exp}")
        section.locator(f"button.preset[data-preset='{preset}']").click()
        if paper == "toptwo_bai":  # long enough to still be running while the page watches it grow
            page.fill(f"#id_{exp}-n_runs", "1000")
            page.fill(f"#id_{exp}-delta", "1e-10")
        section.locator("button.primary[type=submit]").click()
        page.wait_for_url("**/runs/*/")
        expect(page.locator("#run-status")).to_have_text("running", timeout=60_000)
        # the first line chart grows while the run is running
        counts = page.locator(".js-plotly-plot").first
        counts.wait_for()

        def npoints() -> int:
            return page.evaluate(
                "() => { const d = document.querySelector('.js-plotly-plot'); return d && d.data ? d.data.reduce((n, t) => n + (t.x ? t.x.length : 0), 0) : 0; }"
            )

        page.wait_for_function(
            "() => { const d = document.querySelector('.js-plotly-plot'); return d && d.data && d.data.length && d.data[0].x.length > 0; }",
            timeout=120_000,
        )
        first = npoints()
        page.wait_for_function(
            f"() => {{ const d = document.querySelector('.js-plotly-plot'); return d.data.reduce((n, t) => n + t.x.length, 0) > {first}; }}",
            timeout=120_000,
        )
        assert page.locator("#run-status").inner_text() in ("running", "succeeded")
        expect(page.locator("#run-status")).to_have_text("succeeded", timeout=120_000)
        assert npoints() > first
        page.screenshot(path=str(os.environ.get("PAPERLAB_SCREENSHOT", "/tmp/paperlab-run.png")), full_page=True)
        browser.close()
