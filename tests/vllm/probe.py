#!/usr/bin/env python3
"""Measures a running vLLM server's prefix cache and KV-cache overflow.

    python probe.py http://127.0.0.1:PORT [--model tiny-llama] [--overflow]

Standard library only. Prints, for each probe, the change of
vllm:prefix_cache_queries_total / vllm:prefix_cache_hits_total and the
time to first streamed token:
  cold      a fresh ~1,000-token prompt
  same      the same prompt again
  first     the same prompt with its first word changed
  last      the same prompt with its last word changed
--overflow then sends 16 concurrent streams of a ~1,500-token prompt plus
500 tokens out (ignore_eos) and prints the peak of vllm:kv_cache_usage_perc,
vllm:num_requests_running/waiting and the change of
vllm:num_preemptions_total.
"""
import argparse
import json
import random
import re
import threading
import time
import urllib.request

WORDS = (
    "server token latency throughput request stream model cache prompt benchmark "
    "queue batch decode prefill memory block sequence context window length"
).split()


def metrics(base):
    text = urllib.request.urlopen(base + "/metrics").read().decode()
    out = {}
    for line in text.splitlines():
        m = re.match(r"^(vllm:[a-z_]+)(\{[^}]*\})? ([0-9.e+-]+)$", line)
        if m and "model_name" in (m.group(2) or ""):
            out[m.group(1)] = out.get(m.group(1), 0.0) + float(m.group(3))
    return out


def count_tokens(base, model, prompt):
    body = json.dumps({"model": model, "prompt": prompt}).encode()
    r = urllib.request.Request(base + "/tokenize", body, {"content-type": "application/json"})
    return json.load(urllib.request.urlopen(r))["count"]


def stream(base, model, prompt, max_tokens, extra=None):
    body = {
        "model": model,
        "prompt": prompt,
        "max_tokens": max_tokens,
        "temperature": 1.0,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    body.update(extra or {})
    r = urllib.request.Request(
        base + "/v1/completions", json.dumps(body).encode(), {"content-type": "application/json"}
    )
    t0 = time.monotonic()
    ttft = None
    usage = None
    with urllib.request.urlopen(r) as resp:
        for raw in resp:
            line = raw.decode().strip()
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            ev = json.loads(line[6:])
            if ev.get("choices") and ttft is None:
                ttft = time.monotonic() - t0
            if ev.get("usage"):
                usage = ev["usage"]
    return ttft, time.monotonic() - t0, usage


def probe(base, model, name, prompt):
    before = metrics(base)
    ttft, total, usage = stream(base, model, prompt, 1)
    after = metrics(base)
    d = lambda k: after.get(k, 0) - before.get(k, 0)
    print(
        f"{name:6} prompt_tokens={usage['prompt_tokens']:5} "
        f"queries+={d('vllm:prefix_cache_queries_total'):6.0f} "
        f"hits+={d('vllm:prefix_cache_hits_total'):6.0f} "
        f"prompt_tokens_cached+={d('vllm:prompt_tokens_cached_total'):6.0f} "
        f"ttft={ttft * 1000:7.1f} ms"
    )


def overflow(base, model, streams=16, prompt_words=1500, out_tokens=500):
    rng = random.Random(7)
    prompts = [
        " ".join(rng.choice(WORDS) for _ in range(prompt_words)) for _ in range(streams)
    ]
    before = metrics(base)
    peak = {}
    done = threading.Event()

    def watch():
        while not done.is_set():
            m = metrics(base)
            for k in ("vllm:kv_cache_usage_perc", "vllm:num_requests_running", "vllm:num_requests_waiting"):
                peak[k] = max(peak.get(k, 0), m.get(k, 0))
            time.sleep(0.25)

    results = []

    def one(p):
        results.append(stream(base, model, p, out_tokens, {"ignore_eos": True}))

    w = threading.Thread(target=watch)
    w.start()
    t0 = time.monotonic()
    ts = [threading.Thread(target=one, args=(p,)) for p in prompts]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    wall = time.monotonic() - t0
    done.set()
    w.join()
    after = metrics(base)
    gen = sum(r[2]["completion_tokens"] for r in results)
    print(
        f"overflow: {streams} streams, prompt {results[0][2]['prompt_tokens']} tokens, "
        f"{out_tokens} out each; wall {wall:.1f} s, {gen / wall:.0f} generated tok/s; "
        f"ttft min/max {min(r[0] for r in results):.2f}/{max(r[0] for r in results):.2f} s"
    )
    print(f"  peaks: {peak}")
    print(
        "  num_preemptions_total +=",
        after.get("vllm:num_preemptions_total", 0) - before.get("vllm:num_preemptions_total", 0),
    )


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("base")
    ap.add_argument("--model", default="tiny-llama")
    ap.add_argument("--overflow", action="store_true")
    a = ap.parse_args()
    rng = random.Random(time.time_ns())
    words = [rng.choice(WORDS) for _ in range(1000)]
    prompt = " ".join(words)
    n = count_tokens(a.base, a.model, prompt)
    print(f"prompt: {n} tokens (with BOS)")
    probe(a.base, a.model, "cold", prompt)
    probe(a.base, a.model, "same", prompt)
    probe(a.base, a.model, "same", prompt)
    first = " ".join(["zebra"] + words[1:])
    probe(a.base, a.model, "first", first)
    last = " ".join(words[:-1] + ["zebra"])
    probe(a.base, a.model, "last", last)
    if a.overflow:
        overflow(a.base, a.model)


if __name__ == "__main__":
    main()
