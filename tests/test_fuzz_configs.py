"""Property: whatever a config.json holds, `kvplan estimate` answers or says what is
wrong in one line (exit 1 or 2), within 2 s, with and without a GPU and vLLM's
accounting (issue 12, item 6). Mutations and the runner: tests/config_fuzz.py;
the long run with crashes per thousand: benchmarks/fuzz_configs.py.

No xfail: a crash anywhere fails this test, with the bundled config, the
mutations, the variant and the innermost kvplan frame in the message.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings

import config_fuzz

FUZZ = settings(max_examples=120, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])


@FUZZ
@given(case=config_fuzz.mutated_configs())
def test_mutated_configs_answer_or_fail_cleanly(case, tmp_path):
    config_fuzz.check_case(case, tmp_path)


@pytest.mark.parametrize("name", config_fuzz.CONFIG_NAMES)
def test_every_bundled_config_runs_unmutated(name, tmp_path):
    """The baseline of the fuzz: each config as bundled gives a result or a clean
    refusal on all three variants (a crash here is not the mutation's doing)."""
    for variant in config_fuzz.VARIANTS:
        outcome = config_fuzz.run_estimate(config_fuzz.bundled(name), variant, tmp_path)
        assert outcome.crash is None, f"{name} {' '.join(variant)}: {outcome.crash} at {outcome.site}"


def test_the_mutator_covers_every_json_type_and_both_operations():
    from hypothesis import find
    from hypothesis import strategies as st

    kinds = {type(None), bool, int, float, str, list, dict}
    for kind in kinds:
        find(config_fuzz.JUNK, lambda v, k=kind: type(v) is k)
    find(config_fuzz.JUNK, lambda v: isinstance(v, float) and math.isnan(v))
    find(config_fuzz.JUNK, lambda v: isinstance(v, int) and not isinstance(v, bool) and v > 2**60)
    find(config_fuzz.JUNK, lambda v: isinstance(v, list) and any(isinstance(x, (list, dict)) for x in v))
    find(config_fuzz.mutated_configs(), lambda c: any(m.op == "drop" for m in c[1]))
    find(config_fuzz.mutated_configs(), lambda c: any(len(m.path) > 1 for m in c[1]))
    assert len(config_fuzz.CONFIG_NAMES) >= 30
    find(st.tuples(config_fuzz.mutated_configs()), lambda c: c[0][0] == config_fuzz.CONFIG_NAMES[-1])


def test_a_drop_and_a_set_change_exactly_one_place():
    base = {"a": 1, "b": {"c": [1, 2, 3]}}
    assert config_fuzz.apply(base, config_fuzz.Mutation(("b", "c", 1), "drop")) == {"a": 1, "b": {"c": [1, 3]}}
    assert config_fuzz.apply(base, config_fuzz.Mutation(("a",), "set", [None])) == {"a": [None], "b": {"c": [1, 2, 3]}}
    assert base == {"a": 1, "b": {"c": [1, 2, 3]}}


def test_a_crash_is_detected_with_its_site(tmp_path, monkeypatch):
    """The oracle itself can fail: an internal error planted in the report is caught and located."""
    from kvplan.reports import estimate

    def broken(*args, **kwargs):
        raise ZeroDivisionError("planted")

    monkeypatch.setattr(estimate, "build", broken)
    outcome = config_fuzz.run_estimate(config_fuzz.bundled("llama-3.1-8b"), (), tmp_path)
    assert outcome.crash is not None and "internal error" in outcome.crash
    assert outcome.site.startswith("kvplan/workflows.py:") and outcome.site.endswith(": ZeroDivisionError")


def test_a_hang_is_detected(tmp_path, monkeypatch):
    import time

    from kvplan import workflows

    monkeypatch.setattr(config_fuzz, "TIME_LIMIT_S", 0.3)
    monkeypatch.setattr(workflows, "check_budgets", lambda *a: time.sleep(5))
    outcome = config_fuzz.run_estimate(config_fuzz.bundled("llama-3.1-8b"), (), tmp_path)
    assert outcome.crash is not None and outcome.site.startswith("timeout at") and outcome.seconds < 1


@pytest.mark.parametrize("name, mutation", [
    # found by benchmarks/fuzz_configs.py; crashed outside kvplan/configs/ (fixed there)
    ("jamba-v0.1", config_fuzz.Mutation(("mamba_expand",), "set", 0)),  # engines/vllm.py: empty Mamba page
    ("llama-3.1-8b", config_fuzz.Mutation(("max_position_embeddings",), "set", [1, 2])),  # context warning
])
def test_former_crashes_outside_configs(name, mutation, tmp_path):
    config = config_fuzz.apply(config_fuzz.bundled(name), mutation)
    for variant in config_fuzz.VARIANTS:
        outcome = config_fuzz.run_estimate(config, variant, tmp_path)
        assert outcome.crash is None, f"{name} {mutation.describe()} {' '.join(variant)}: {outcome.crash} at {outcome.site}"
