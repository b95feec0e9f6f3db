"""An independent observer for the real-server tiers: a pass-through HTTP
proxy that forwards every request to the server and every byte of its answer
back, and notes when each streamed text event went by and when each
streamed request began and ended. Python's standard library only, none of
sitegen's code: it sees what crossed the wire, not what sitegen made of it.

usage: python observer.py UPSTREAM_URL PORT
GET /observed (answered by the observer itself) gives
{"requests": [{"sent": T, "ended": T, "events": [T, ...]}, ...]}, times in
Unix seconds, one entry per streamed request, events being the choices with
text (or delta content) and no finish reason.
"""

import http.client
import http.server
import json
import sys
import threading
import time
import urllib.parse

HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer",
              "upgrade", "proxy-connection", "content-length"}
observed = []
lock = threading.Lock()


def text_event(line):
    if not line.startswith("data:"):
        return False
    data = line[5:].strip()
    if data == "[DONE]":
        return False
    try:
        choice = json.loads(data)["choices"][0]
    except (ValueError, KeyError, IndexError, TypeError):
        return False
    if choice.get("finish_reason") is not None:
        return False
    delta = choice.get("delta") or {}
    if "role" in delta:
        return False
    return isinstance(choice.get("text"), str) or isinstance(delta.get("content"), str)


class Handler(http.server.BaseHTTPRequestHandler):
    # HTTP/1.0: the answer ends when the connection closes, so it streams
    # through unchanged in timing without re-chunking.
    protocol_version = "HTTP/1.0"

    def log_message(self, *args):
        pass

    def do_GET(self):
        if self.path == "/observed":
            with lock:
                body = json.dumps({"requests": observed}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body)
            return
        self.forward()

    def do_POST(self):
        self.forward()

    def forward(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        streamed = bool(body) and b'"stream":true' in body.replace(b" ", b"")
        sent = time.time()
        up = http.client.HTTPConnection(UPSTREAM.hostname, UPSTREAM.port, timeout=600)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP | {"host"}}
        up.request(self.command, self.path, body, headers)
        answer = up.getresponse()
        self.send_response(answer.status, answer.reason)
        for k, v in answer.getheaders():
            if k.lower() not in HOP_BY_HOP:
                self.send_header(k, v)
        self.end_headers()
        events = []
        try:
            while True:
                line = answer.readline()
                if not line:
                    break
                if streamed and text_event(line.decode("utf-8", "replace").strip()):
                    events.append(time.time())
                self.wfile.write(line)
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass
        finally:
            up.close()
            if streamed:
                with lock:
                    observed.append({"sent": sent, "ended": time.time(), "events": events})


if __name__ == "__main__":
    UPSTREAM = urllib.parse.urlsplit(sys.argv[1])
    server = http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[2])), Handler)
    server.daemon_threads = True
    server.serve_forever()
