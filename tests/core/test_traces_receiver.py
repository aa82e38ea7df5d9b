"""``sonar traces serve``: what it accepts, what it refuses (answered, counted, never a crash), its files, Ctrl-C.

The real OTLP exporter's requests are accepted in tests/core/test_traces_instrumented.py; here each kind
of bad request is sent by hand over a real socket.
"""

from __future__ import annotations

import gzip
import http.client
import json
import os
import signal
import subprocess
import threading

import pytest

from otlp_builders import request, span, to_protobuf
from sonar_core.traces.load import load_traces
from sonar_core.traces.receiver import Receiver
from sonar_core.traces.spec import TraceInput

TRACE, ROOT = "7" * 32, "77" * 8
GOOD = request([span(TRACE, ROOT, "", "agent", 0, 1, {"openinference.span.kind": "CHAIN", "input.value": "q",
                                                      "output.value": "a"})])


@pytest.fixture
def receiver(tmp_path):
    said: list[str] = []
    server = Receiver(tmp_path / "spans", port=0, max_body_bytes=64 * 1024, max_file_bytes=400, say=said.append)
    server.said = said
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    thread.join(timeout=10)


def post(server, body: bytes, content_type="application/json", path="/v1/traces", headers=None):
    host, port = server.server.server_address[:2]
    connection = http.client.HTTPConnection(host, port, timeout=10)
    try:
        connection.request("POST", path, body=body, headers={"Content-Type": content_type, **(headers or {})})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def test_json_and_protobuf_requests_become_span_files_a_run_reads(receiver):
    body = json.dumps(GOOD, indent=2).encode()  # a pretty-printed body becomes one line
    assert post(receiver, body) == (200, b"{}")
    assert post(receiver, to_protobuf(GOOD).SerializeToString(), "application/x-protobuf") == (200, b"")
    assert post(receiver, gzip.compress(body), headers={"Content-Encoding": "gzip"}) == (200, b"{}")
    summary = receiver.summary()
    assert (summary["accepted_requests"], summary["spans"], summary["rejected_requests"]) == (3, 3, {})
    # max_file_bytes 400: the second JSON request (546 bytes) starts a new file.
    names = [os.path.basename(f) for f in summary["files"]]
    assert names == ["spans-000001.jsonl", "spans-000002.pb", "spans-000003.jsonl"]
    folder = receiver.files.folder
    assert len((folder / "spans-000001.jsonl").read_text().splitlines()) == 1
    dataset = load_traces(TraceInput(files=[str(folder)]))
    # Three copies of one span: the first is kept, the two others are duplicates.
    assert [r.test_case_key for r in dataset.rows] == [TRACE]
    assert dataset.summary()["traces"]["spans_skipped"] == {"duplicate span id": 2}


def test_bad_requests_are_answered_and_counted(receiver):
    big = json.dumps({"resourceSpans": [], "pad": "x" * 70_000}).encode()
    assert post(receiver, big)[0] == 400
    bomb = gzip.compress(b"{" + b" " * 2_000_000 + b"}")
    assert post(receiver, bomb, headers={"Content-Encoding": "gzip"})[0] == 400
    assert post(receiver, b"\x00\x01", headers={"Content-Encoding": "gzip"})[0] == 400
    status, body = post(receiver, b'{"resourceSpans": [')
    assert status == 400 and json.loads(body)["message"].startswith("malformed JSON: ")
    assert post(receiver, b'{"resourceSpans": 3}')[0] == 400
    status, body = post(receiver, b"\xff\xff\xff\xff", "application/x-protobuf")
    assert status == 400 and body.startswith(b"\x08\x03\x12")  # a google.rpc.Status: code 3, then the message
    assert post(receiver, b"{}", "text/plain")[0] == 415
    assert post(receiver, json.dumps(GOOD).encode(), path="/v1/logs")[0] == 404
    assert post(receiver, b"{}", headers={"Content-Encoding": "br"})[0] == 400
    assert receiver.summary()["rejected_requests"] == {
        "body too large": 2, "malformed JSON": 1, "malformed gzip": 1, "malformed protobuf": 1, "not found": 1,
        "not an OTLP trace request": 1, "unknown content encoding": 1, "unsupported content type": 1}
    assert receiver.summary()["files"] == []  # nothing bad was written
    assert receiver.said[0] == "rejected a request from 127.0.0.1: body too large: 70,032 bytes (limit 65,536)"
    # ... and it still serves.
    assert post(receiver, json.dumps(GOOD).encode())[0] == 200


def test_ctrl_c_stops_it_cleanly(tmp_path, sonar_cli):
    process = subprocess.Popen([sonar_cli, "traces", "serve", "--port", "0", "-o", str(tmp_path / "spans")],
                               stderr=subprocess.PIPE, text=True)
    try:
        line = process.stderr.readline()
        assert line.startswith("listening on http://127.0.0.1:") and line.rstrip().endswith("(Ctrl-C stops)")
        port = int(line.split("127.0.0.1:")[1].split("/")[0])
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        connection.request("POST", "/v1/traces", body=json.dumps(GOOD), headers={"Content-Type": "application/json"})
        assert connection.getresponse().status == 200
        connection.close()
        process.send_signal(signal.SIGINT)
        rest = process.communicate(timeout=30)[1]
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0
    assert rest.splitlines() == ["stopped: 1 request(s) with 1 span(s) written to 1 file(s); 0 request(s) rejected"]
    assert (tmp_path / "spans" / "spans-000001.jsonl").read_text().count("\n") == 1
