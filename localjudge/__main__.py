"""``python -m localjudge``: the command line."""

from ._cli import main

if __name__ == "__main__":
    main()
