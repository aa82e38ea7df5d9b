"""index.html and the evaluator fragments as a browser renders them (headless Chromium).

The browser is driven over the DevTools protocol on ``--remote-debugging-pipe`` with the
standard library only: commands go to the browser's fd 3 and replies come from its fd 4, as
NUL-terminated JSON messages. The page's console errors, uncaught exceptions and failed
loads are the protocol's ``Runtime.consoleAPICalled``, ``Runtime.exceptionThrown`` and
``Log.entryAdded`` events. A canary page with a deliberate error shows the capture works.

Needs the ``chromium`` package (``apt-get install chromium``); without it the test is
skipped, except when ``CI=true``, where a missing browser is a failure.
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

from hostile_run import MODELS, run_hostile
from sonar_core import names

CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage", "--hide-scrollbars", "--window-size=1280,2000", "--remote-debugging-pipe",
]
#: Seconds to wait for any one protocol reply or page load.
TIMEOUT_S = 20.0


def _chromium() -> str:
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
        deadline = time.monotonic() + TIMEOUT_S
        while not any(e.get("method") == "Page.loadEventFired" for e in self.events):
            self.events.append(self._read_message(deadline))
        # A round trip after the load event collects the events queued before it.
        self.evaluate("document.readyState")
        return self.errors()

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

    def screenshot(self, path: Path) -> None:
        data = self.call("Page.captureScreenshot", session=True, format="png")["data"]
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


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    binary = _chromium()
    folder = tmp_path_factory.mktemp("chromium")
    instance = Browser(binary, folder / "profile", folder / "chromium.log")
    yield instance
    instance.close()


# Per leaderboard table: the section heading, the evaluator id and the rendered cells.
_LEADERBOARDS_JS = """
JSON.stringify(Array.from(document.querySelectorAll('table.leaderboard')).map(t => ({
  evaluator: t.dataset.evaluator,
  heading: t.closest('section, main').querySelector('h2, h1').innerText,
  header: Array.from(t.querySelectorAll('thead th')).map(th => th.innerText),
  rows: Array.from(t.querySelectorAll('tbody tr')).map(tr => Array.from(tr.cells).map(td => td.innerText)),
})))
"""


def test_capture_sees_console_errors(browser, tmp_path):
    """The canary: a script error and a missing image must both be reported."""
    canary = tmp_path / "canary.html"
    canary.write_text('<!DOCTYPE html><html><body><p>canary</p><img src="missing.png">'
                      '<script>console.error("canary error"); undefinedFunction();</script></body></html>',
                      encoding="utf-8")
    errors = browser.load(canary.as_uri())
    assert any("canary error" in e for e in errors), errors
    assert any(e.startswith("Uncaught ReferenceError") for e in errors), errors
    assert any("missing.png" in e or "ERR_FILE_NOT_FOUND" in e for e in errors), errors


def test_index_html_renders_every_leaderboard(browser, tmp_path):
    result = run_hostile(tmp_path)
    assert result.status == "success", result.message
    record = json.loads((result.run_dir / names.RUN_JSON).read_text(encoding="utf-8"))
    executed = record["result"]["executed_explainers"]
    assert executed

    errors = browser.load((result.run_dir / names.INDEX_HTML).as_uri())
    assert errors == []
    browser.screenshot(tmp_path / "index.png")
    assert (tmp_path / "index.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    text = browser.evaluate("document.body.innerText")
    for model in MODELS:
        assert model in text, model  # escaped in the source, shown verbatim
    assert browser.evaluate("document.querySelectorAll('script').length") == 0
    # The stylesheet applies: the body font is the sans-serif stack, not the serif default.
    assert "Helvetica" in browser.evaluate("getComputedStyle(document.body).fontFamily")
    assert browser.evaluate("document.getElementById('best-model').innerText") == record["result"]["overall_result"]["best_model"]

    tables = {t["evaluator"]: t for t in json.loads(browser.evaluate(_LEADERBOARDS_JS))}
    assert sorted(tables) == sorted(e["evaluator_id"] for e in executed)
    links = {e["evaluator_id"]: browser.evaluate(f"document.querySelector('#ev-{e['evaluator_id']} a').getAttribute('href')")
             for e in executed}
    for entry in executed:
        folder = result.run_dir / entry["job_location"]
        descriptor = json.loads((folder / names.RESULT_DESCRIPTOR).read_text(encoding="utf-8"))
        board_dir = folder / (names.BOOL_LEADERBOARD if descriptor["result_kind"] == "bool" else names.HEATMAP_LEADERBOARD)
        board = json.loads((board_dir / "application_json" / "leaderboard_0.json").read_text(encoding="utf-8"))
        table = tables[entry["evaluator_id"]]
        assert table["heading"] == descriptor["display_name"]
        assert table["header"][:2] == ["Rank", "LLM"]
        rendered = [(row[0], row[1]) for row in table["rows"]]
        assert rendered == [(str(n), model) for n, model in enumerate(board["ranking"], start=1)]
        assert rendered[0][0] == "1" and sorted(m for _, m in rendered) == sorted(MODELS)

        # The evaluator's own report opens from its link, without errors, with its leaderboard.
        fragment = result.run_dir / links[entry["evaluator_id"]]
        assert fragment.is_file(), links[entry["evaluator_id"]]
        assert browser.load(fragment.as_uri()) == []
        fragment_tables = json.loads(browser.evaluate(_LEADERBOARDS_JS))
        assert [t["heading"] for t in fragment_tables] == [descriptor["display_name"]]
        assert [row[1] for row in fragment_tables[0]["rows"]] == board["ranking"]
