"""Headless Chromium driven over the DevTools protocol, for the browser tests.

The browser is driven over ``--remote-debugging-pipe`` with the standard library only:
commands go to the browser's fd 3 and replies come from its fd 4, as NUL-terminated JSON
messages. The page's console errors, uncaught exceptions and failed loads are the
protocol's ``Runtime.consoleAPICalled``, ``Runtime.exceptionThrown`` and ``Log.entryAdded``
events.

Needs the ``chromium`` package (``apt-get install chromium``); without it the tests that use
it are skipped, except when ``CI=true``, where a missing browser is a failure.
"""

from __future__ import annotations

import base64
import json
import os
import selectors
import shutil
import subprocess
import time
from pathlib import Path

import pytest

CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage", "--hide-scrollbars", "--window-size=1280,2000", "--remote-debugging-pipe",
]
#: Seconds to wait for any one protocol reply or page load.
TIMEOUT_S = 20.0


def chromium_binary() -> str:
    found = next((shutil.which(n) for n in ("chromium", "chromium-browser") if shutil.which(n)), None)
    if found:
        return found
    reason = "chromium is not installed (Debian/Ubuntu: apt-get install -y chromium)"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}; CI must install it for this test")
    pytest.skip(reason)


class Browser:
    """A headless Chromium with one page, driven over the DevTools pipe."""

    def __init__(self, binary: str, profile: Path, log: Path) -> None:
        self._log = open(log, "wb")
        # The shell hands our stdin/stdout pipes to the browser as fds 3 and 4.
        self.proc = subprocess.Popen(
            ["sh", "-c", 'exec "$0" "$@" 3<&0 4>&1 </dev/null >/dev/null', binary, *CHROMIUM_FLAGS,
             f"--user-data-dir={profile}"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log,
        )
        self._selector = selectors.DefaultSelector()
        self._selector.register(self.proc.stdout, selectors.EVENT_READ)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict] = []
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable", session=True)

    def _read_message(self, deadline: float) -> dict:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not self._selector.select(left):
                raise TimeoutError("no reply from chromium (see its log)")
            chunk = os.read(self.proc.stdout.fileno(), 1 << 20)
            if not chunk:
                raise RuntimeError(f"chromium exited with code {self.proc.wait()}")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method: str, session: bool = False, **params) -> dict:
        self._next_id += 1
        request = {"id": self._next_id, "method": method, "params": params}
        if session:
            request["sessionId"] = self.session
        self.proc.stdin.write(json.dumps(request).encode() + b"\0")
        self.proc.stdin.flush()
        deadline = time.monotonic() + TIMEOUT_S
        while True:
            message = self._read_message(deadline)
            if message.get("id") == self._next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            self.events.append(message)

    def load(self, url: str) -> list[str]:
        """Open ``url``, wait for its load event; return the console errors it caused."""
        self.events.clear()
        self.call("Page.navigate", session=True, url=url)
        self._wait_for_load()
        return self.errors()

    def follow(self, selector: str) -> list[str]:
        """Click the first element matching ``selector`` (a link), wait for the page it opens.

        Returns the console errors of the new page.
        """
        self.events.clear()
        clicked = self.evaluate(f"(() => {{ const el = document.querySelector({json.dumps(selector)}); "
                                "if (!el) return false; el.click(); return true; })()")
        if not clicked:
            raise AssertionError(f"no element matches {selector!r}")
        self._wait_for_load()
        return self.errors()

    def _wait_for_load(self) -> None:
        deadline = time.monotonic() + TIMEOUT_S
        while not any(e.get("method") == "Page.loadEventFired" for e in self.events):
            self.events.append(self._read_message(deadline))
        # A round trip after the load event collects the events queued before it.
        self.evaluate("document.readyState")

    def errors(self) -> list[str]:
        found = []
        for event in self.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.exceptionThrown":
                details = params["exceptionDetails"]
                found.append("Uncaught " + details.get("exception", {}).get("description", details.get("text", "")))
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                found.append("console.error: " + " ".join(str(a.get("value", a.get("description", "")))
                                                          for a in params.get("args", [])))
            elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
                found.append(f"{params['entry']['source']}: {params['entry']['text']} {params['entry'].get('url', '')}")
        return found

    def evaluate(self, expression: str):
        result = self.call("Runtime.evaluate", session=True, expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"evaluation failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, path: Path, full_page: bool = False, max_height: int = 8000) -> None:
        """A PNG of the viewport, or of the whole page (at most ``max_height`` CSS pixels)."""
        params = {"format": "png"}
        if full_page:
            size = self.call("Page.getLayoutMetrics", session=True)["cssContentSize"]
            params.update(captureBeyondViewport=True, clip={
                "x": 0, "y": 0, "width": size["width"], "height": min(size["height"], max_height), "scale": 1})
        data = self.call("Page.captureScreenshot", session=True, **params)["data"]
        path.write_bytes(base64.b64decode(data))

    def close(self) -> None:
        try:
            self.call("Browser.close")
        except Exception:  # the browser may close the pipe before it answers
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._selector.close()
        self.proc.stdin.close()
        self.proc.stdout.close()
        self._log.close()


def wait_for(browser: "Browser", condition: str, timeout_s: float = 20.0) -> float:
    """Poll ``condition`` (a JS expression) until it is true; the seconds it took."""
    started = time.perf_counter()
    while not browser.evaluate(condition):
        if time.perf_counter() - started > timeout_s:
            raise AssertionError(f"not true after {timeout_s} s: {condition}")
        time.sleep(0.005)
    return time.perf_counter() - started


def act(browser: "Browser", script: str, ready: str, timeout_s: float = 20.0) -> float:
    """Run ``script`` (it starts a request), wait until ``ready``; the seconds from start to shown."""
    started = time.perf_counter()
    browser.evaluate(script)
    wait_for(browser, ready, timeout_s)
    return time.perf_counter() - started
