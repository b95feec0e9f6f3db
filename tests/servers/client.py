"""An independent client for the real-server tiers: streams completions at
concurrency 1 for a fixed window, each request sent again as soon as it
ends, and counts the tokens that arrived inside the window, one per text
event (the server streams no usage). Python's standard library only, none
of sitegen's code.

usage: python client.py URL MODEL PROMPT_FILE WINDOW_S MAX_TOKENS
Prints {"tokens": N, "window_s": W, "total_tok_per_s": N / W} as JSON.
"""

import http.client
import json
import sys
import time
import urllib.parse


def stream_once(url, model, prompt, max_tokens, deadline, arrivals):
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    body = json.dumps({"model": model, "prompt": prompt, "max_tokens": max_tokens,
                       "min_tokens": max_tokens, "temperature": 1.0, "stream": True})
    conn.request("POST", "/v1/completions", body, {"Content-Type": "application/json"})
    response = conn.getresponse()
    for raw in response:
        line = raw.decode("utf-8", "replace").strip()
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if data == "[DONE]":
            break
        choice = json.loads(data)["choices"][0]
        if choice.get("finish_reason") is None and "text" in choice:
            arrivals.append(time.monotonic())
        if time.monotonic() >= deadline:
            break
    conn.close()


def main(url, model, prompt_file, window_s, max_tokens):
    prompt = open(prompt_file, encoding="utf-8").read()
    window_s, max_tokens = float(window_s), int(max_tokens)
    arrivals = []
    start = time.monotonic()
    deadline = start + window_s
    while time.monotonic() < deadline:
        stream_once(url, model, prompt, max_tokens, deadline, arrivals)
    tokens = sum(1 for t in arrivals if t <= deadline)
    print(json.dumps({"tokens": tokens, "window_s": window_s, "total_tok_per_s": tokens / window_s}))


if __name__ == "__main__":
    main(*sys.argv[1:])
