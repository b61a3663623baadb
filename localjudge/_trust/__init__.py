"""How far a verdict can be trusted: agreement with labels, its picture, choosing among runs, and calibration.

Calibration has three modules: :mod:`.correction` (the corrections as arithmetic
on probabilities, no judge, no files), :mod:`.fit` (fitting one on a judge's
verdicts of labelled rows) and :mod:`.calibration_file` (a fitted one on disk).
"""
