"""``python -m localjudge._cli``: the command line."""

from . import main

if __name__ == "__main__":  # pragma: no cover
    main()
