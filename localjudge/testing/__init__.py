"""Judged assertions for test suites, and the pytest plugin that provides a judge (``local_judge``)."""

from .assertions import JudgedResult, Judgement, assert_judged, judgements

__all__ = ["JudgedResult", "Judgement", "assert_judged", "judgements"]
