"""An independent observer for the real-server tiers: a pass-through HTTP
proxy that forwards every request to the server and every byte of its answer
back, and notes when each streamed text event went by and when each
streamed request began and ended. Python's standard library only, none of
sitegen's code: it sees what crossed the wire, not what sitegen made of it.

usage: python observer.py UPSTREAM_URL PORT
GET /observed (answered by the observer itself) gives
{"requests": [{"sent": T, "ended": T, "events": [T, ...],
               "tokens": [[T, K], ...], "reasoning_events": N}, ...],
 "metrics": [{"sent": T, "ended": T, "text": "..."}, ...]}, times in Unix
seconds: one entry per streamed request, events being the choices with text
(or delta content) and no finish reason, or a non-empty text with one (vLLM
sends its last token with the finish reason); tokens the events that carry
output (text, content or reasoning) with the tokens each brought, by the
growth of the usage it states (vLLM's continuous usage: an event may carry
two tokens when the server runs ahead of the stream, and the token that
ends reasoning brings no event of its own), else 1; and every /metrics
answer the server gave, as it gave it.
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
metrics_reads = []
lock = threading.Lock()


def output_tokens(line, usage_before):
    """(tokens this event brought, its usage's completion tokens or None,
    whether it carried reasoning)."""
    if not line.startswith("data:"):
        return 0, None, False
    data = line[5:].strip()
    if data == "[DONE]":
        return 0, None, False
    try:
        event = json.loads(data)
    except ValueError:
        return 0, None, False
    usage = (event.get("usage") or {}).get("completion_tokens")
    choices = event.get("choices") or [{}]
    choice = choices[0] if isinstance(choices[0], dict) else {}
    delta = choice.get("delta") or {}
    reasoning = bool(delta.get("reasoning") or delta.get("reasoning_content"))
    output = bool(choice.get("text") or delta.get("content")) or reasoning
    if usage is not None:
        return usage - (usage_before or 0), usage, reasoning
    return (1 if output else 0), None, reasoning


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
    delta = choice.get("delta") or {}
    if choice.get("finish_reason") is not None:
        return bool(choice.get("text")) or bool(delta.get("content"))
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
                body = json.dumps({"requests": observed, "metrics": metrics_reads}).encode()
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
        # A streamed request's entry is listed from its first byte and grows
        # as events pass, so /observed shows requests still in flight (the
        # ones a client cancelled end only at the server's next event).
        entry = {"sent": sent, "ended": sent, "events": [], "tokens": [], "reasoning_events": 0}
        if streamed:
            with lock:
                observed.append(entry)
        usage = None
        metrics = [] if self.command == "GET" and self.path == "/metrics" else None
        try:
            while True:
                line = answer.readline()
                if not line:
                    break
                if streamed:
                    text = line.decode("utf-8", "replace").strip()
                    now = time.time()
                    k, stated, reasoning = output_tokens(text, usage)
                    usage = stated if stated is not None else usage
                    with lock:
                        if text_event(text):
                            entry["events"].append(now)
                        entry["reasoning_events"] += reasoning
                        if k > 0:
                            entry["tokens"].append([now, k])
                        entry["ended"] = now
                if metrics is not None:
                    metrics.append(line)
                self.wfile.write(line)
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass
        finally:
            up.close()
            ended = time.time()
            with lock:
                entry["ended"] = ended
                if metrics is not None:
                    text = b"".join(metrics).decode("utf-8", "replace")
                    metrics_reads.append({"sent": sent, "ended": ended, "text": text})

if __name__ == "__main__":
    UPSTREAM = urllib.parse.urlsplit(sys.argv[1])
    # Every stream of a window connects at once: a backlog of 5 (the
    # default) would hold some back a second or more.
    http.server.ThreadingHTTPServer.request_queue_size = 256
    server = http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[2])), Handler)
    server.daemon_threads = True
    server.serve_forever()
