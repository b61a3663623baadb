"""A page over results files: ``localjudge view`` serves it, ``localjudge report`` writes it as one HTML file.

The modules, bottom to top: :mod:`.records` (one record as a table row),
:mod:`.index` (a results file in sqlite: pages, filters, following a
growing file), :mod:`.figures` (a run's figures and two runs compared, from
the trust layer's functions, and the judge the file beside the results
describes), :mod:`.sources` (labels and judged rows),
:mod:`.app` (the Starlette app) and :mod:`.report` (the HTML file).

The front end is plain HTML, CSS and JavaScript in ``assets/``: three small
files, no framework, no build step and nothing fetched at run time, so it
works offline from a fresh install and in a report opened from disk; its
size (a table, a few cards, bars drawn as boxes) does not pay for a
framework's build or its supply chain. The reliability diagram is
``agreement --plot``'s own picture (matplotlib).
"""
