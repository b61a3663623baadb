"""What each command does, as library calls that return data: the command line only parses and prints.

Options that misfit raise :class:`~localjudge.errors.OptionError`, naming them by keyword, never by flag.
"""
