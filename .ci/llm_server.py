"""Serve a GGUF model through llama.cpp's OpenAI-compatible HTTP server (xllamacpp).

Usage: llm_server.py MODEL_PATH PORT [--embedding] [--chat-template PATH]
Stays in the foreground until SIGTERM. Used by .ci/setup/llm-server.sh.
"""

import signal
import sys
import time

import xllamacpp as xlc


def main() -> None:
    model, port = sys.argv[1], int(sys.argv[2])
    embedding = "--embedding" in sys.argv[3:]
    template = None
    if "--chat-template" in sys.argv[3:]:
        with open(sys.argv[sys.argv.index("--chat-template") + 1]) as f:
            template = f.read()
    p = xlc.CommonParams()
    p.model.path = model
    p.port = port
    p.hostnames = ["127.0.0.1"]
    p.n_ctx = 2048
    p.n_parallel = 1
    # A cap on every reply: a request without max_tokens (a chat through
    # `ragloom serve`, say) would otherwise let the small model ramble to the
    # end of its context, minutes on one loaded core.
    p.n_predict = 256
    p.warmup = False
    p.use_jinja = True
    if template is not None:
        # SmolLM2's own template has no tools; this one renders chats without
        # tools exactly as SmolLM2's does, and tools and tool calls in the
        # <tool_call> form llama.cpp parses (and can force with a grammar).
        p.chat_template = template
    # One thread: llama.cpp's spinning workers collapse when they share two
    # cores with a compiler.
    p.cpuparams.n_threads = 1
    p.cpuparams_batch.n_threads = 1
    if embedding:
        p.embedding = True
        p.pooling_type = xlc.llama_pooling_type.LLAMA_POOLING_TYPE_MEAN
    server = xlc.Server(p)
    print("listening", server.listening_address, flush=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
