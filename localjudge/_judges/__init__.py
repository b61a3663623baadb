"""The judges: the core they share, the single judge, pairwise, ensembles, trajectories, ready-made evaluators."""
