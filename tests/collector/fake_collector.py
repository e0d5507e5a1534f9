#!/usr/bin/env python3
"""A stand-in collector that answers POST /v1/reports the way a test needs,
to check blur-device-sim's handling of answers the real collector rarely
gives. Prints its port, then serves until killed.

  fake_collector.py conflict   every POST: 409 {"error", "report_id"}
  fake_collector.py flaky      POSTs alternate 503 / 200 (accepted = reports)
  fake_collector.py miscount   200 counting one report fewer than the batch had

GET /stats answers {"posts": N, "reports": R}: POSTs received and reports
in the batches answered 200.
"""
import http.server
import json
import sys
import threading

mode = sys.argv[1]
lock = threading.Lock()
stats = {"posts": 0, "reports": 0}


def varint(data, i):
    value = shift = 0
    while True:
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, i


def report_ids(batch):
    """The report ids of a blur.ReportBatch (field 3: Report, whose field 1 is the id)."""
    ids, i = [], 0
    while i < len(batch):
        tag, i = varint(batch, i)
        field, wire = tag >> 3, tag & 7
        if wire == 0:
            _, i = varint(batch, i)
        elif wire == 1:
            i += 8
        elif wire == 2:
            length, i = varint(batch, i)
            if field == 3:
                report = batch[i:i + length]
                assert report[0] == 0x08, "Report.report_id first"
                ids.append(varint(report, 1)[0])
            i += length
        else:
            raise ValueError("unexpected wire type %d" % wire)
    return ids


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        with lock:
            self.answer(200, dict(stats))

    def do_POST(self):
        batch = self.rfile.read(int(self.headers["Content-Length"]))
        ids = report_ids(batch)
        with lock:
            stats["posts"] += 1
            post = stats["posts"]
        if mode == "conflict":
            return self.answer(409, {"error": "report %d reuses a stored id with another payload"
                                     % ids[0], "report_id": ids[0]})
        if mode == "flaky" and post % 2 == 1:
            return self.answer(503, {"error": "storage failure, retry later"})
        counted = len(ids) - (1 if mode == "miscount" else 0)
        with lock:
            stats["reports"] += len(ids)
        self.answer(200, {"accepted": counted, "duplicates": 0})


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
