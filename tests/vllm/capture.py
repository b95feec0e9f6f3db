#!/usr/bin/env python3
"""Captures real vLLM HTTP exchanges as test fixtures.

    python capture.py OUT_DIR PLAIN_PORT REASONING_PORT [--details-port PORT] [--model tiny-llama] [--seed N]

PLAIN_PORT: a server started by serve.sh with its defaults and no request
served yet (the first capture is the idle /metrics); REASONING_PORT: one
started with `--reasoning-parser deepseek_r1`; --details-port: one started
with `--max-model-len 4096 --enable-prompt-tokens-details` (each answer's
usage then says the prompt tokens found in the prefix cache). Standard
library only.
Each response body is written byte for byte (chunked transfer decoded, as a
client reads it) to OUT_DIR/NAME.EXT, and OUT_DIR/index.json lists for each
the server, method, path, request body, status line and content-type.
"""
import argparse
import http.client
import json
import os

WORDS = (
    "server token latency throughput request stream model cache prompt benchmark"
).split()


def words(n):
    return " ".join(WORDS[i % len(WORDS)] for i in range(n))


def exchange(port, method, path, body=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    data = None if body is None else json.dumps(body).encode()
    headers = {} if body is None else {"content-type": "application/json"}
    c.request(method, path, data, headers)
    r = c.getresponse()
    raw = r.read()
    status = f"HTTP/{r.version // 10}.{r.version % 10} {r.status} {r.reason}"
    ctype = r.getheader("content-type")
    c.close()
    return status, ctype, raw


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out_dir")
    ap.add_argument("plain_port", type=int)
    ap.add_argument("reasoning_port", type=int)
    ap.add_argument("--details-port", type=int, default=None)
    ap.add_argument("--model", default="tiny-llama")
    ap.add_argument("--seed", type=int, default=1, help="the sampling seed of every request")
    ap.add_argument("--only", action="append", default=[],
                    help="capture just this file (repeatable), keeping index.json's other entries")
    a = ap.parse_args()
    os.makedirs(a.out_dir, exist_ok=True)
    m = a.model
    usage = {"include_usage": True}
    chat = [{"role": "user", "content": "Hello there"}]
    sample = {"temperature": 1.0, "seed": a.seed}
    plan = [
        ("metrics_idle.txt", a.plain_port, "GET", "/metrics", None),
        ("models.json", a.plain_port, "GET", "/v1/models", None),
        ("tokenize.json", a.plain_port, "POST", "/tokenize",
         {"model": m, "prompt": "The server token latency"}),
        ("completion_stream.sse", a.plain_port, "POST", "/v1/completions",
         {"model": m, "prompt": "The server token latency", "max_tokens": 8, **sample,
          "stream": True, "stream_options": usage}),
        ("chat_stream.sse", a.plain_port, "POST", "/v1/chat/completions",
         {"model": m, "messages": chat, "max_tokens": 8, **sample,
          "stream": True, "stream_options": usage}),
        # 2,100 words are 2,101 tokens with BOS: over --max-model-len 2048.
        ("overlong_prompt_stream_400.json", a.plain_port, "POST", "/v1/completions",
         {"model": m, "prompt": words(2100), "max_tokens": 8, **sample,
          "stream": True, "stream_options": usage}),
        # 2,040 words are 2,042 tokens: 2,042 + 100 > 2,048, cut to 6 tokens out.
        ("max_tokens_cut_stream.sse", a.plain_port, "POST", "/v1/completions",
         {"model": m, "prompt": words(2040), "max_tokens": 100, **sample,
          "stream": True, "stream_options": usage}),
        # The same again: its first 15 blocks of 128 tokens come from the prefix cache.
        ("max_tokens_cut_stream_repeat.sse", a.plain_port, "POST", "/v1/completions",
         {"model": m, "prompt": words(2040), "max_tokens": 100, **sample,
          "stream": True, "stream_options": usage}),
        ("metrics_after.txt", a.plain_port, "GET", "/metrics", None),
        # The same cut, with min_tokens over the cut max_tokens (as sitegen's
        # decode requests ask): refused, after metrics_after.txt.
        ("min_tokens_over_cut_400.json", a.plain_port, "POST", "/v1/completions",
         {"model": m, "prompt": words(2040), "max_tokens": 100, "min_tokens": 50, **sample,
          "stream": True, "stream_options": usage}),
        ("chat_stream_reasoning.sse", a.reasoning_port, "POST", "/v1/chat/completions",
         {"model": m, "messages": chat, "max_tokens": 8, **sample,
          "stream": True, "stream_options": usage}),
        ("chat_reasoning.json", a.reasoning_port, "POST", "/v1/chat/completions",
         {"model": m, "messages": chat, "max_tokens": 8, **sample}),
    ]
    if a.details_port is not None:
        # As sitegen's session turns ask: usage on every chunk. The same
        # prompt twice: the second finds its first 2 blocks of 128 cached.
        continuous = {"include_usage": True, "continuous_usage_stats": True}
        turn = {"model": m, "prompt": words(300), "max_tokens": 4, **sample,
                "stream": True, "stream_options": continuous}
        plan += [
            ("prompt_details_stream.sse", a.details_port, "POST", "/v1/completions", turn),
            ("prompt_details_stream_repeat.sse", a.details_port, "POST", "/v1/completions", turn),
        ]
    index = []
    if a.only:
        with open(os.path.join(a.out_dir, "index.json")) as f:
            index = [e for e in json.load(f) if e["file"] not in a.only]
        plan = [p for p in plan if p[0] in a.only]
    for name, port, method, path, body in plan:
        status, ctype, raw = exchange(port, method, path, body)
        with open(os.path.join(a.out_dir, name), "wb") as f:
            f.write(raw)
        server = {a.plain_port: "plain", a.reasoning_port: "reasoning"}.get(port, "details")
        index.append({"file": name, "server": server, "method": method, "path": path,
                      "request": body, "status_line": status, "content_type": ctype})
        print(f"{name}: {status}, {ctype}, {len(raw)} bytes")
    with open(os.path.join(a.out_dir, "index.json"), "w") as f:
        json.dump(index, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
