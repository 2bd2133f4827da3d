"""Reports for the catalogs: bundled models, techniques, GPUs."""

from __future__ import annotations

from ..core.estimate import estimate
from ..planner import as_number
from ..render import Report, Table
from . import tidy
from ..units import GIB


def models_report() -> Report:
    from ..sources import bundled_index, load_model

    rows, data = [], []
    for alias, entry in sorted(bundled_index().items()):
        model = load_model(alias)
        shape = model.attention_shape()
        kinds = {}
        for layer in model.layers:
            kinds[layer.kind] = kinds.get(layer.kind, 0) + 1
        kind_text = ", ".join(f"{n} {k}" for k, n in kinds.items())
        per_token = as_number(estimate(model, 1).bytes_per_token)
        rows.append([alias, entry.hf_id, entry.provenance, model.num_layers, shape[0] if shape else None,
                     shape[1] if shape else None, kind_text, per_token])
        data.append({"alias": alias, "hf_id": entry.hf_id, "provenance": entry.provenance,
                     "config_source": entry.source, "model_type": model.model_type, "layers": model.num_layers,
                     "kv_heads": shape[0] if shape else None, "head_dim": shape[1] if shape else None,
                     "layer_kinds": kinds, "bytes_per_token": per_token, "param_count": model.param_count})
    table = Table("bundled models (bytes per token at the model's dtype)",
                  ["alias", "HF id", "config", "layers", "KV heads", "head dim", "layer kinds", "B/token"], rows,
                  {3, 4, 5, 7})
    lines = ["config: a copy of the published file, or rebuilt from its published values "
             "(model_specs/index.json says from what)"]
    return Report({"models": data}, [table], lines, tidy=tidy.catalog("models", data))


def families_report() -> Report:
    """Every model_type the reader knows: its layer kinds and how it caches."""
    from ..configs.families import FAMILIES

    rows, data = [], []
    for model_type, family in sorted(FAMILIES.items()):
        if family.wraps:
            text = family.text or f"its {family.nested_key}"
            if family.text and family.text_rule:  # picked by a field, or checked, before the default applies
                text += " by default"
            kinds, rules = f"(text model: {text})", "; ".join(family.rules)
        else:
            names = sorted("latent (MLA)" if k == "full_attention" and family.attention == "latent" else k
                           for k in family.kinds)
            kinds, rules = ", ".join(names), "; ".join(family.rules)
        rows.append([model_type, kinds, rules])
        data.append({"model_type": model_type, "text_model_type": family.text,
                     "layer_kinds": [] if family.wraps else sorted(family.kinds), "rules": list(family.rules)})
    from ..configs.families import REFUSED

    table = Table(f"model families kvplan reads exactly ({len(rows)} model_types; another model_type is read as a "
                  "guess, marked so, only when nothing in it hints at another structure)",
                  ["model_type", "layer kinds", "how it caches"], rows)
    refused = [[model_type, why] for model_type, why in sorted(REFUSED.items())]
    refused_table = Table(f"model_types refused with a reason ({len(refused)})", ["model_type", "why"], refused)
    return Report({"families": data, "refused": [{"model_type": m, "reason": r} for m, r in refused]},
                  [table, refused_table], tidy=tidy.catalog("families", data))


def techniques_report() -> Report:
    from ..techniques.registry import CATALOG

    rows = [[name, syntax, term, caveat, text] for name, (syntax, term, caveat, text) in CATALOG.items()]
    data = [dict(zip(["name", "syntax", "term", "caveat", "description"], r)) for r in rows]
    return Report({"techniques": data}, tidy=tidy.catalog("techniques", data), tables=[Table("techniques (-t SPEC, applied in order)", ["name", "syntax", "reduces", "caveat", "what it does"], rows)])


def gpus_report() -> Report:
    from ..capacity.gpus import CATALOG, LIST_PRICES

    rows = [[g.name, round(g.memory_bytes / GIB, 1), round(g.driver_bytes / GIB, 2) if g.driver_bytes else None,
             g.hbm_gbps, g.link_gbps, g.bf16_tflops, g.note] for g in CATALOG.values()]
    data = [dict(zip(["name", "memory_gib", "driver_gib", "hbm_gbps", "link_gbps", "bf16_tflops", "note"], r))
            for r in rows]
    for row, item, g in zip(rows, data, CATALOG.values()):  # the list price `kvplan fit --objective cost` uses
        price = LIST_PRICES.get(item["name"])
        row.insert(6, price.usd_per_gpu_hour if price else None)
        item["usd_per_gpu_hour"] = price.usd_per_gpu_hour if price else None
        item["price_source"] = f"{price.source}, {price.date}" if price else None
        item["driver_source"] = g.driver_from or None
        sm = f"{g.cuda_capability[0]}.{g.cuda_capability[1]}" if g.cuda_capability else None
        row.insert(7, sm or "ROCm")
        # AMD's Instinct cards link over Infinity Fabric (xGMI), not NVLink
        row.insert(8, "PCIe" if g.pcie_only else "NVLink" if g.cuda_capability else "Infinity Fabric")
        item["cuda_capability"] = sm
        item["pcie_only"] = g.pcie_only
    columns = ["name", "memory GiB", "driver GiB", "HBM GB/s", "host link GB/s", "bf16 TFLOP/s", "USD/GPU hour", "SM",
               "GPU link", "note"]
    lines = ["driver GiB: the card's total as a public start-up log prints it, which plans size the pool from (blank: "
             "the datasheet's memory, which the driver reports less of; give --gpu-memory)",
             "USD/GPU hour: on-demand list prices, sources and dates in docs/fit.md; kvplan fit --price GPU=USD overrides",
             "SM: the CUDA compute capability, which picks the engines' kernels and layouts (ROCm cards: not modelled); "
             "GPU link: NVLink (AMD's cards: Infinity Fabric), or PCIe only (no NVLink in the card's usual form: NCCL "
             "over PCIe, vLLM's custom all-reduce off above two GPUs)"]
    return Report({"gpus": data}, [Table("GPU catalog", columns, rows, {1, 2, 3, 4, 5, 6})], lines,
                  tidy=tidy.catalog("gpus", data))
