"""A real headless Chromium (Debian's ``chromium`` + ``chromium-driver``, installed by
``compose/chromium/install.sh``) driven by selenium, with the network blocked.

Every request the page makes is logged (Chrome's performance log of DevTools ``Network``
events) so a test can assert that nothing left the page; requests to anything but
``file:`` and ``data:`` are also refused by DevTools, and DNS resolves nothing."""

from __future__ import annotations

import json
import shutil
from contextlib import contextmanager
from typing import Iterator

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

LOCAL_SCHEMES = ("file:", "data:", "about:", "chrome-error:")
BLOCKED_URLS = ["http://*", "https://*", "ws://*", "wss://*", "ftp://*"]


def binaries() -> tuple[str, str] | None:
    """(chromium, chromedriver), or None when either is not installed."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    return (browser, driver) if browser and driver else None


@contextmanager
def offline_chromium(width: int = 1400, height: int = 1000, *,
                     loopback: bool = False) -> Iterator[webdriver.Chrome]:
    """``loopback``: http on 127.0.0.1 is let through (``ktrace serve``'s page); every other
    host still resolves to nothing and goes to a proxy that is not there."""
    found = binaries()
    if found is None:
        raise RuntimeError("chromium and chromedriver are not installed: run "
                           "compose/chromium/install.sh")
    browser, driver_path = found
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                f"--window-size={width},{height}",
                "--host-resolver-rules=MAP * ~NOTFOUND" + (", EXCLUDE 127.0.0.1" if loopback else ""),
                "--proxy-server=127.0.0.1:9", "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    try:
        driver.execute_cdp_cmd("Network.enable", {})
        blocked = [u for u in BLOCKED_URLS if not (loopback and u == "http://*")]
        driver.execute_cdp_cmd("Network.setBlockedURLs", {"urls": blocked})
        yield driver
    finally:
        driver.quit()


def requested_urls(driver: webdriver.Chrome) -> list[str]:
    """Every URL the page asked for since the last call (DevTools requestWillBeSent)."""
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


def leaving(urls: list[str]) -> list[str]:
    return [u for u in urls if not u.startswith(LOCAL_SCHEMES)]
