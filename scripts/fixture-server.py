#!/usr/bin/env python3
"""Tiny capacity server for producing k6 fixtures (seed 002 shape), loopback only.

WORKERS slots; each request holds one for SERVICE_MS; requests beyond WORKERS wait for a slot
(an unbounded queue, like a listen backlog). With ERROR_RATE > 0 a request answers 500 with that
probability (after its service time). Usage:
    fixture-server.py PORT [WORKERS=16] [SERVICE_MS=40] [ERROR_RATE=0]
"""
import random
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT = int(sys.argv[1])
WORKERS = int(sys.argv[2]) if len(sys.argv) > 2 else 16
SERVICE_S = (float(sys.argv[3]) if len(sys.argv) > 3 else 40.0) / 1000.0
ERROR_RATE = float(sys.argv[4]) if len(sys.argv) > 4 else 0.0
SLOTS = threading.BoundedSemaphore(WORKERS)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as k6 uses it

    def do_GET(self):
        with SLOTS:
            time.sleep(SERVICE_S)
        status = 500 if random.random() < ERROR_RATE else 200
        body = b"ok\n" if status == 200 else b"error\n"
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024

    def handle_error(self, request, client_address):
        pass  # the client gave up (k6 timeout): nothing to report


if __name__ == "__main__":
    Server(("127.0.0.1", PORT), Handler).serve_forever()
