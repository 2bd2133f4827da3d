"""Classify what kvplan does with every model_type of the importable transformers' CONFIG_MAPPING.

Each type's default config (`CONFIG_MAPPING[type]().to_dict()`) is read by kvplan.configs.build_model and
put in one class: exact (a family record reads it), guessed (the generic rule reads it, with its warning),
refused (refused by name: families.REFUSED), error (another one-line refusal: no decoder fields, fields of
an unknown structure, a nested config kvplan cannot place, a wrapper of a refused text model, ...), or
unbuilt (transformers cannot build the default config). Prints one line per type that is not exact or refused by name, then the counts.
Builds configs only (no model), so it runs in a few seconds:

    cd /tmp && $REPO/.venv/bin/python $REPO/benchmarks/model_type_scan.py [--all]
"""

from __future__ import annotations

import argparse
import warnings
from collections import Counter


def classify(model_type: str) -> tuple[str, str]:
    from transformers import CONFIG_MAPPING

    from kvplan.configs.build import build_model
    from kvplan.configs.families import REFUSED
    from kvplan.errors import KvplanError

    try:
        raw = CONFIG_MAPPING[model_type]().to_dict()
    except Exception as exc:  # transformers' own failure on its default config
        return "unbuilt", f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0][:120]}"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            model = build_model(raw, model_type)
        except KvplanError as exc:
            return ("refused", "") if model_type in REFUSED else ("error", str(exc)[:160])
    if model.reading == "guessed" or any("guessed" in str(w.message) for w in caught):
        return "guessed", model.reading
    return model.reading, ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="print a line for every type")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    import transformers
    from transformers import CONFIG_MAPPING
    from transformers.utils import logging

    logging.set_verbosity_error()
    counts: Counter = Counter()
    for model_type in sorted(CONFIG_MAPPING.keys()):
        kind, detail = classify(model_type)
        counts[kind] += 1
        if args.all or kind not in ("exact", "refused"):
            print(f"{model_type:36s} {kind:8s} {detail}")
    print(f"transformers {transformers.__version__}: {sum(counts.values())} model_types: "
          + ", ".join(f"{n} {kind}" for kind, n in counts.most_common()))


if __name__ == "__main__":
    main()
