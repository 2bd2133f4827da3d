"""Workloads: scenario files (`kvplan plan`), context sweeps (`kvplan sweep`) and
model comparisons (`kvplan compare`), all built on `kvplan.planner`.

The YAML scenarios themselves ship as package data in `kvplan.scenarios`
(the repository's scenarios/ folder); this package reads, checks and plans them.
"""
