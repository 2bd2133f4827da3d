"""`kvplan fit`: the inverse of `kvplan estimate`.

Given a model and a workload's budgets, search GPU kind x GPU count x TP x PP
x KV dtype x technique set for the deployments that meet every budget, and
rank them (docs/fit.md). Every number comes from the planner's own functions
(kvplan.planner.evaluate, kvplan.capacity, kvplan.engines.vllm); the search
only screens the grid with the same arithmetic and then re-evaluates the
options it prints through `evaluate`, as `kvplan estimate` would.
"""
