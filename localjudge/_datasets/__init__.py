"""Rows in, results out: reading rows, the results file, the result cache, batch and Ray runs, their progress.

Nothing here knows a judge: a run takes any evaluator, a callable returning a result.
"""
