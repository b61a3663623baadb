"""The command line's option types (localjudge._cli.options)."""

from __future__ import annotations

import click

from localjudge._cli.options import WayName
from localjudge._judges.ways import WAYS


def test_the_way_metavar_lists_the_ways_however_click_asks_for_it():
    """click 8.1, which pyproject allows, asks with the parameter alone; later versions add the context."""
    param = click.Option(["--way"], type=WayName())
    expected = "[" + "|".join(WAYS) + "]"
    assert WayName().get_metavar(param) == expected
    assert WayName().get_metavar(param, click.Context(click.Command("score"))) == expected
