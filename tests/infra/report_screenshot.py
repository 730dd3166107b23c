"""The README's picture of the demo's report: ``python -m tests.infra.report_screenshot
[OUT.png]`` (default docs/report-demo.png) replays the demo recording, writes its report
and has the offline headless Chromium (tests/infra/browser.py) photograph its Pods
section with only the raced rollout's group open (as a reader would fold the others)."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from click.testing import CliRunner
from selenium.webdriver.common.by import By

from ktrace.cli import cli
from tests.infra.browser import offline_chromium

DEFAULT_OUT = Path(__file__).resolve().parents[2] / "docs" / "report-demo.png"
#: The lane group shown: the demo's rollout whose old pods stopped before their endpoints.
GROUP = "race / Deployment/web"


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else DEFAULT_OUT
    with tempfile.TemporaryDirectory(prefix="ktrace-screenshot-") as tmp:
        html = Path(tmp) / "demo.html"
        result = CliRunner().invoke(cli, ["demo", "--html", str(html)])
        if result.exit_code != 0:
            print(f"Error: ktrace demo failed: {result.output}", file=sys.stderr)
            return 1
        with offline_chromium(width=1150, height=1400) as browser:
            browser.get(html.as_uri())
            for group in browser.find_elements(By.CSS_SELECTOR, "details.group"):
                if not group.find_element(By.TAG_NAME, "summary").text.startswith(GROUP):
                    browser.execute_script("arguments[0].open = false", group)
            browser.find_element(By.ID, "pods").screenshot(str(out))
    print(f"{out} ({out.stat().st_size // 1024} KB)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
