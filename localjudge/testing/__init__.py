"""For test suites: judged assertions, the pytest plugin's judge (``local_judge``), and a scripted client.

:class:`ScriptedClient` answers from a script and records each request: a
judge for tests of code that calls a judge, where no model is needed.
"""

from .._clients.scripted import ScriptedClient
from .assertions import JudgedResult, Judgement, assert_judged, judgements

__all__ = ["JudgedResult", "Judgement", "ScriptedClient", "assert_judged", "judgements"]
