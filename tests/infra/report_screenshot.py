"""The README's pictures of the demo's report: ``python -m tests.infra.report_screenshot
[DIR]`` (default docs/) replays the demo recording, writes its report and has the offline
headless Chromium (tests/infra/browser.py) photograph its first screen and its Pods section
with only the raced rollout's group open (as a reader would fold the others), at each of
``WIDTHS`` px: ``report-demo-WIDTH.png`` and ``report-demo-pods-WIDTH.png``; and the same
database served live (``ktrace serve``'s server, on a free local port) with a finding's
evidence open: ``serve-demo.png``."""

from __future__ import annotations

import sys
import tempfile
import threading
from pathlib import Path

from click.testing import CliRunner
from selenium.webdriver.common.by import By

from ktrace.cli import cli
from replayer.report.live import LiveReport
from replayer.report.server import make_server
from tests.infra.browser import offline_chromium

DEFAULT_DIR = Path(__file__).resolve().parents[2] / "docs"
#: A wide screen and the narrow one the report must fit without scrolling sideways.
WIDTHS = (1400, 1000)
#: The lane group shown: the demo's rollout whose old pods stopped before their endpoints.
GROUP = "race / Deployment/web"


def main(argv: list[str]) -> int:
    folder = Path(argv[0]) if argv else DEFAULT_DIR
    with tempfile.TemporaryDirectory(prefix="ktrace-screenshot-") as tmp:
        html, db = Path(tmp) / "demo.html", Path(tmp) / "demo.duckdb"
        result = CliRunner().invoke(cli, ["demo", "--db", str(db), "--html", str(html)])
        if result.exit_code != 0:
            print(f"Error: ktrace demo failed: {result.output}", file=sys.stderr)
            return 1
        for width in WIDTHS:
            for out in photograph(html, width, folder):
                print(f"{out} ({out.stat().st_size // 1024} KB)")
        out = photograph_live(db, folder)
        print(f"{out} ({out.stat().st_size // 1024} KB)")
    return 0


def photograph(html: Path, width: int, folder: Path) -> list[Path]:
    first, pods = folder / f"report-demo-{width}.png", folder / f"report-demo-pods-{width}.png"
    with offline_chromium(width=width, height=900) as browser:
        browser.get(html.as_uri())
        browser.save_screenshot(str(first))
        for group in browser.find_elements(By.CSS_SELECTOR, "details.group"):
            if not group.find_element(By.TAG_NAME, "summary").text.startswith(GROUP):
                browser.execute_script("arguments[0].open = false", group)
        browser.set_window_size(width, 2400)
        browser.find_element(By.ID, "pods").screenshot(str(pods))
    return [first, pods]


def photograph_live(db: Path, folder: Path) -> Path:
    """The served page, scrolled to the raced rollout, one race's evidence open."""
    out = folder / "serve-demo.png"
    server = make_server(LiveReport(str(db)), "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with offline_chromium(width=WIDTHS[0], height=900, loopback=True) as browser:
            browser.get(f"http://127.0.0.1:{server.server_address[1]}/")
            browser.find_element(By.CSS_SELECTOR, "tr.finding-race a").click()
            browser.find_element(By.CSS_SELECTOR, ":target .race rect").click()
            browser.save_screenshot(str(out))
    finally:
        server.shutdown()
        server.server_close()
    return out


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
