"""Parity with transformers: kvplan's per-layer cache against the cache transformers builds.

For every causal-LM model_type of the installed transformers: build the model from
its default config, shrunk (harness.py), run one cached forward on CPU, count the
elements of every cached tensor per layer, and compare with kvplan's reading of
the same config at the same token count. Deltas must be explained exactly, layer
by layer, by the named rules in rules.py; types kvplan refuses or guesses must be
listed in gaps.py. Types transformers cannot build or run are skipped with the reason.
The same comparison runs on harness.VARIANTS (windows on, older file forms) and on
every config kvplan bundles (model_specs/*.json, real hub files, shrunk in place).
"""

from __future__ import annotations

import pytest

pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from . import check, gaps, harness  # noqa: E402

# (model_type, built as an image-text-to-text wrapper): every causal-LM type, then the
# image-text-to-text types that are not causal-LM types themselves, run on text tokens only.
CASES = [pytest.param(mt, False, None, id=mt) for mt in harness.causal_types()] + [
    pytest.param(mt, True, None, id=f"{mt}[image-text]") for mt in harness.wrapper_types()] + [
    pytest.param(base, not harness.is_causal(base), variant, id=variant)
    for variant, (base, *_) in harness.VARIANTS.items()]


@pytest.fixture(scope="module", autouse=True)
def _quiet_single_thread():
    import torch
    from transformers.utils import logging

    threads, verbosity = torch.get_num_threads(), logging.get_verbosity()
    torch.set_num_threads(1)  # tiny models: one thread is fastest and shares the machine
    logging.set_verbosity_error()
    yield
    torch.set_num_threads(threads)
    logging.set_verbosity(verbosity)


def _table(outcome: check.Outcome) -> str:
    lines = ["layer  transformers  kvplan  kvplan+rules  rules"]
    for layer, theirs, ours, expected, used in outcome.rows:
        mark = "" if theirs == expected else "   <-- differs"
        lines.append(f"{layer:5d}  {theirs!s:>12}  {ours!s:>6}  {expected!s:>12}  {', '.join(used)}{mark}")
    return "\n".join(lines)


@pytest.mark.parametrize("path", harness.bundled_files(), ids=lambda p: f"file:{p.stem}")
def test_bundled_config_matches_transformers(path):
    """kvplan's bundled configs (real hub files, in their authors' forms), shrunk, against transformers."""
    outcome = check.evaluate_file(path)
    if outcome.status == check.SKIPPED:
        pytest.skip(f"transformers cannot build/run {path.name} here: {outcome.detail}")
    assert outcome.status in (check.MATCH, check.RULES), (
        f"{path.name}: kvplan {outcome.status} ({outcome.detail})\n{_table(outcome)}")


@pytest.mark.parametrize(("model_type", "wrapper", "variant"), CASES)
def test_cache_matches_transformers(model_type, wrapper, variant):
    outcome = check.evaluate(model_type, wrapper, variant)
    model_type = variant or model_type
    gap = gaps.KNOWN_GAPS.get(model_type)
    if outcome.status == check.SKIPPED:
        if outcome.reading == "guessed" and gap is None:  # nothing to compare, but a guess is never silent
            pytest.fail(f"kvplan guesses model_type {model_type!r} (transformers cannot run it here: "
                        f"{outcome.detail}); add the family, or list it in tests/parity/gaps.py with a reason")
        assert not (gap and outcome.reading == "exact"), (
            f"{model_type} is listed in gaps.py ({gap}) but kvplan now reads it: remove it from the list")
        pytest.skip(f"transformers cannot build/run {model_type} here: {outcome.detail}")
    if outcome.status in (check.GUESSED, check.REFUSED):
        if gap is None:
            pytest.fail(f"kvplan {outcome.status} model_type {model_type!r}: {outcome.detail}; "
                        "add the family, or list it in tests/parity/gaps.py with a reason")
        pytest.skip(f"known gap ({gap}): kvplan {outcome.status}: {outcome.detail}")
    assert gap is None, (f"{model_type} is listed in gaps.py ({gap}) but kvplan now reads it "
                         f"({outcome.status}): remove it from the list")
    assert outcome.status in (check.MATCH, check.RULES), (
        f"{model_type}: kvplan's cache differs from transformers' after {check.harness.PROMPT_TOKENS} tokens "
        f"({outcome.detail})\n{_table(outcome)}")
