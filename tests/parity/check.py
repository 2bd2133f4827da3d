"""One model_type through both sides: transformers' cache against kvplan's reading."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

from . import harness, rules

MATCH, RULES, MISMATCH, GUESSED, REFUSED, SKIPPED = "match", "match-with-rules", "mismatch", "guessed", "refused", \
    "skipped"


@dataclass
class Outcome:
    model_type: str
    status: str
    detail: str = ""
    rules: list[str] = field(default_factory=list)
    rows: list[tuple] = field(default_factory=list)  # (layer, transformers, kvplan, expected by rules, rules)
    tokens: int = harness.PROMPT_TOKENS
    reading: str = ""  # kvplan's ModelSpec.reading when it read the config ("exact" or "guessed")


def evaluate(model_type: str, wrapper: bool = False, variant: str | None = None) -> Outcome:
    """kvplan's reading first (a refused config needs no model run), then transformers' cache.
    variant: an id of harness.VARIANTS (model_type is then its base type)."""
    from kvplan.configs import build_model
    from kvplan.errors import ConfigError

    mt = model_type
    try:
        top = harness.shrunk_config(mt, variant)
    except harness.Skip as exc:
        return Outcome(variant or mt, SKIPPED, str(exc))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            spec = build_model(harness.saved_form(top, variant), mt, f"parity:{variant or mt}")
    except ConfigError as exc:
        return Outcome(variant or mt, REFUSED, exc.message if hasattr(exc, "message") else str(exc))
    try:
        # default configs of causal LMs are all small once shrunk: weigh only wrappers (vision towers)
        built = harness.run(mt, wrapper, top, weigh=wrapper)
    except harness.Skip as exc:
        return Outcome(variant or mt, SKIPPED, str(exc) + ("; kvplan guesses it" if spec.reading == "guessed" else ""),
                       reading=spec.reading)
    text = built.config.get_text_config(decoder=True).to_dict()
    judged = _judge(built, spec, text, mt)  # the rules see the base model_type
    if spec.reading == "guessed":
        agree = "agree" if judged.status in (MATCH, RULES) else f"do NOT agree ({judged.detail})"
        judged = Outcome(mt, GUESSED, f"kvplan reads it by the generic rule; its numbers {agree}", judged.rules,
                         judged.rows)
    judged.model_type = variant or mt
    judged.reading = spec.reading
    return judged


def evaluate_file(path) -> Outcome:
    """A bundled config.json: kvplan reads the shrunk file as saved, transformers builds the same dict."""
    from kvplan.configs import build_model
    from kvplan.errors import ConfigError

    name = f"file:{path.stem}"
    try:
        raw, config = harness.shrunk_file(path)
    except harness.Skip as exc:
        return Outcome(name, SKIPPED, str(exc))
    mt = raw["model_type"]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            spec = build_model(raw, path.stem, f"parity:{path.name}")
    except ConfigError as exc:
        return Outcome(name, REFUSED, exc.message if hasattr(exc, "message") else str(exc))
    try:
        built = harness.run(mt, not harness.is_causal(mt), config)
    except harness.Skip as exc:
        return Outcome(name, SKIPPED, str(exc), reading=spec.reading)
    judged = _judge(built, spec, built.config.get_text_config(decoder=True).to_dict(), mt)
    if spec.reading == "guessed":
        judged.status, judged.detail = GUESSED, f"kvplan guesses it; {judged.status} {judged.detail}".strip()
    judged.model_type, judged.reading = name, spec.reading
    return judged


def _judge(built, spec, text, mt) -> Outcome:
    n = harness.PROMPT_TOKENS
    caps = {c.policy.cap_tokens for layer in spec.layers for c in layer.caches} - {None}
    if caps and max(caps) >= n:  # a window the prompt never fills would hide a wrong window reading
        return Outcome(mt, MISMATCH, f"harness: kvplan reads a window or chunk of {max(caps)} tokens, not shorter "
                                     f"than the {n}-token prompt: shrink the field that sets it")
    rows, used = [], []
    if len(spec.layers) != len(built.layers):
        return Outcome(mt, MISMATCH, f"kvplan reads {len(spec.layers)} layers, transformers caches "
                                     f"{len(built.layers)}", rows=_rows(built, spec, n, text, mt))
    rows = _rows(built, spec, n, text, mt)
    bad = [r for r in rows if r[1] != r[3]]
    for r in rows:
        used += [u for u in r[4] if u not in used]
    if bad:
        first = bad[0]
        return Outcome(mt, MISMATCH, f"{len(bad)} of {len(rows)} layers differ; first: layer {first[0]} "
                                     f"transformers {first[1]}, kvplan {first[2]} (by the rules {first[3]})",
                       used, rows)
    return Outcome(mt, RULES if used else MATCH, "", used, rows)


def _rows(built, spec, n, text, mt):
    rows = []
    for i, layer in enumerate(spec.layers):
        ours, expected, used = rules.explain(mt, layer, n, text)
        theirs = built.layers[i] if i < len(built.layers) else None
        rows.append((i, theirs, ours, expected, used))
    for i in range(len(spec.layers), len(built.layers)):
        rows.append((i, built.layers[i], None, None, []))
    return rows
