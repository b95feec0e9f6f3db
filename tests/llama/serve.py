"""Runs llama.cpp's own HTTP server in-process (the xllamacpp wheel) on 127.0.0.1.

usage: python serve.py MODEL.gguf PORT N_CTX N_PARALLEL THREADS
Prints "ready" when it accepts requests; runs until killed.
"""

import sys
import threading

import xllamacpp as xlc


def main(model, port, n_ctx, n_parallel, threads):
    params = xlc.CommonParams()
    params.model.path = model
    params.model_alias = {"tiny-llama"}
    params.hostnames = ["127.0.0.1"]
    params.port = int(port)
    params.n_ctx = int(n_ctx)
    params.n_parallel = int(n_parallel)
    params.cpuparams.n_threads = int(threads)
    params.endpoint_metrics = True
    params.endpoint_slots = True
    params.endpoint_props = True
    server = xlc.Server(params)
    print("ready", flush=True)
    threading.Event().wait()
    del server


if __name__ == "__main__":
    main(*sys.argv[1:6])
