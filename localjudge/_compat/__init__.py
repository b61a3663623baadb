"""The one place where localjudge relies on other libraries' internals.

Each module holds the hooks into one library: small named functions, each
saying what it relies on and what the public API lacks. Every hook checks
that the internal it needs is there before it relies on it (the attribute or
method itself, not only a version number) and raises
:class:`~localjudge.errors.IncompatibleDependencyError` naming the library,
the version found and the versions tested, rather than failing open or
later, somewhere else. :mod:`.versions` holds the tested ranges, the same as
the pins in ``pyproject.toml``.

- :mod:`.httpx_pool`: the network backend of httpx's connection pool (the address a remote judge connects to).
- :mod:`.uvicorn_h11`: uvicorn's h11 protocol and its signal handling (``localjudge serve``'s deadlines and stop).
- :mod:`.jinja_sandbox`: Jinja's compiler, sandbox and ``namespace()`` (the budget of an untrusted chat template).
- :mod:`.llama_cpp_internals`: llama-cpp-python's ``_internals`` and ``Llama._model`` (the local runtime).
"""
