"""Run llama-cpp-python's OpenAI-compatible server with weight repacking turned off.

llama-cpp-python 0.3.36 built from source crashes on CPUs with AMX while
repacking weights into the extra buffer types, and neither its ``Llama`` class
nor the server's settings expose ``use_extra_bufts``. The server builds its
model parameters from ``llama_model_default_params()``, so this launcher
changes that default, then hands over to the server's own command line:

    python tests/support/llama_server.py --model M.gguf --host 127.0.0.1 --port 8000
"""

from __future__ import annotations

from localjudge._runtimes.llamacpp import without_extra_bufts

if __name__ == "__main__":
    from llama_cpp.server.__main__ import main

    with without_extra_bufts():
        main()
