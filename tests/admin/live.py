"""A live `slowave up` server and a headless Chromium driven by selenium, for browser tests."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.cli.runner import ENTRY, REPO_ROOT, cli_env

ARTIFACTS = REPO_ROOT / "tests" / "artifacts"
CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
CHROME_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1400,1000",
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def live_server(home: Path, ready: str = "/admin/login/", **env: str) -> Iterator[str]:
    """`slowave up --no-worker` on a free loopback port with the real embedding model (plus
    `env`); yields its base URL once `ready` answers, and stops it afterwards."""
    port = free_port()
    server_env = cli_env(home, SLOWAVE_EMBEDDER="onnx") | env
    log = (home / "up.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-c", ENTRY, "up", "--port", str(port), "--no-worker"],
        cwd=REPO_ROOT,
        env=server_env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{base}{ready}", timeout=2).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        "slowave up did not start:\n" + (home / "up.log").read_text()
                    ) from None
                time.sleep(0.2)
        yield base
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()


@contextmanager
def chromium() -> Iterator[object]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    profile = tempfile.mkdtemp(prefix="slowave-chromium-")
    for flag in (*CHROME_FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.implicitly_wait(5)
    try:
        yield driver
    finally:
        driver.quit()


def screenshot(driver: object, name: str) -> Path:
    """Full-height PNG under tests/artifacts/ (git-ignored) for people to look at."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    height = driver.execute_script("return document.documentElement.scrollHeight")  # type: ignore[attr-defined]
    driver.set_window_size(1400, min(max(int(height) + 40, 900), 4000))  # type: ignore[attr-defined]
    path = ARTIFACTS / name
    driver.save_screenshot(str(path))  # type: ignore[attr-defined]
    driver.set_window_size(1400, 1000)  # type: ignore[attr-defined]
    return path
