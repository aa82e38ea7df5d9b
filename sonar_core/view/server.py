"""``sonar view``'s server: a read-only JSON API and one page that reads it (docs/view.md).

``GET /api/runs``: the runs under the given folders. ``GET /api/runs/<id>/cases?q=&page=&model=&evaluator=
&failing=1&metric=&min=&max=&category=&sort=&order=asc|desc``: one page of a run's rows (``sort``: a column or
``EVALUATOR.METRIC``). ``GET /api/compare?a=<id>&b=<id>``: two runs compared; ``GET /api/compare/flips?a=&b=
&evaluator=&metric=&model=&direction=&page=``: a page of the rows that flipped. ``GET /api/runs/<id>/case?key=K``:
one row with every evaluator's values. ``GET /api/runs/<id>/filters``: the metrics and categories to
filter by. ``GET /``: the page. Anything else is 404; there is
no way to name a file: runs are found under the given folders and known only by their ids. Bound to
127.0.0.1 unless told otherwise. The page builds its table with ``textContent``, so no text from a
dataset or model is ever read as HTML, and a Content-Security-Policy allows only its own script.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from .page import PAGE
from .case import case, filters
from .comparison import comparison, flips
from .queries import cases, connection, find_runs, run_summary

__all__ = ["make_server", "serve_in_thread"]


def _number(query: dict[str, str], name: str) -> float | None:
    """A bound of a metric range: absent or empty is None; anything but a finite number is a 400."""
    text = query.get(name, "").strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{name}: not a number: {text[:40]}") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"{name}: not a finite number: {text[:40]}")
    return value


def _descending(query: dict[str, str]) -> bool:
    """``order=asc|desc`` (``desc=1``, the older spelling, when there is no ``order``)."""
    order = query.get("order")
    if order is None:
        return query.get("desc") == "1"
    if order not in ("asc", "desc"):
        raise ValueError(f"order: asc or desc; got '{order[:20]}'")
    return order == "desc"


def _handler(roots: list[Path]):
    class Handler(BaseHTTPRequestHandler):
        server_version = "sonar-view"

        def log_message(self, *args: Any) -> None:  # quiet: the terminal shows the address only
            pass

        def _send(self, status: int, body: bytes, kind: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("X-Content-Type-Options", "nosniff")
            self.send_header("Content-Security-Policy",
                             "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'unsafe-inline'; "
                             "connect-src 'self'")
            self.end_headers()
            self.wfile.write(body)

        def _json(self, status: int, data: Any) -> None:
            self._send(status, json.dumps(data, ensure_ascii=True, default=str).encode(), "application/json")

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            url = urlsplit(self.path)
            parts = [unquote(p) for p in url.path.split("/") if p]
            query = {k: v[-1] for k, v in parse_qs(url.query).items()}
            runs = find_runs(roots)
            try:
                if not parts:
                    self._send(200, PAGE.encode("utf-8"), "text/html; charset=utf-8")
                elif parts == ["api", "runs"]:
                    self._json(200, {"runs": [run_summary(r) for r in runs.values()]})
                elif len(parts) == 4 and parts[:2] == ["api", "runs"] and parts[2] in runs:
                    run = runs[parts[2]]
                    if parts[3] == "cases":
                        self._json(200, cases(run, q=query.get("q", ""), page=int(query.get("page", "1")),
                                              model=query.get("model", ""), evaluator=query.get("evaluator", ""),
                                              failing=query.get("failing") == "1", sort=query.get("sort", "key"),
                                              descending=_descending(query), metric=query.get("metric", ""),
                                              low=_number(query, "min"), high=_number(query, "max"),
                                              category=query.get("category", "")))
                    elif parts[3] == "case":
                        self._json(200, case(run, query.get("key", "")))
                    elif parts[3] == "filters":
                        self._json(200, filters(run))
                    else:
                        self._json(404, {"error": "not found"})
                elif parts[:2] == ["api", "compare"] and len(parts) <= 3 and parts[2:] in ([], ["flips"]):
                    if query.get("a") not in runs or query.get("b") not in runs:
                        self._json(404, {"error": "compare: a and b must each be a listed run's id"})
                    elif parts[2:] == ["flips"]:
                        self._json(200, flips(runs[query["a"]], runs[query["b"]], evaluator=query.get("evaluator", ""),
                                              metric=query.get("metric", ""), model=query.get("model", ""),
                                              direction=query.get("direction", ""), page=int(query.get("page", "1"))))
                    else:
                        self._json(200, comparison(runs[query["a"]], runs[query["b"]]))
                else:
                    self._json(404, {"error": "not found"})
            except KeyError as exc:  # an evaluator or a key the run does not have
                self._json(404 if parts[3:] == ["case"] else 400, {"error": str(exc.args[0] if exc.args else exc)})
            except (ValueError, FileNotFoundError) as exc:
                self._json(400, {"error": str(exc)})

        def do_POST(self) -> None:  # noqa: N802
            self._json(405, {"error": "read-only"})

        do_PUT = do_DELETE = do_PATCH = do_POST

    return Handler


def make_server(roots: list[Path], host: str = "127.0.0.1", port: int = 0) -> ThreadingHTTPServer:
    """A server over the runs under ``roots`` (port 0: any free port; ``server.server_address`` says which)."""
    try:  # imported and opened now (a second or more), so the first page does not wait for them
        import pyarrow.parquet  # noqa: F401

        connection().close()
    except ImportError:  # `sonar view` refuses to start without them (cli/view.py)
        pass
    server = ThreadingHTTPServer((host, port), _handler([Path(r) for r in roots]))
    server.daemon_threads = True
    return server


def serve_in_thread(roots: list[Path], host: str = "127.0.0.1", port: int = 0) -> ThreadingHTTPServer:
    """Start a server in a daemon thread (tests); ``server.shutdown()`` ends it."""
    server = make_server(roots, host, port)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server
