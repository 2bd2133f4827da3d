"""Which modules a quantization config's list of unquantized modules names, matched as the format's own code does.

A quantized checkpoint often keeps some modules in its float dtype: the LM head, attention, a dense first layer,
the shared experts. The config lists them, and each format reads its list its own way:

  ModelOpt           `exclude_modules` (hf_quant_config.json) or `ignore` (config.json): fnmatch wildcards on
                     module names (vllm/model_executor/layers/quantization/modelopt.py is_layer_excluded). A
                     trailing `name*` with no dot before the star stands for the subtree rooted at `name`:
                     vLLM rewrites it to `name` and `name.*` (ModelOptQuantConfigBase.apply_vllm_mapper), so
                     `model.layers.1*` is layer 1, not layers 10-19.
  compressed-tensors `ignore`: `re:` + a regular expression matched from the start of the name (re.match), else
                     the exact module name (compressed_tensors.utils.match is_match / _match_name; vLLM's
                     compressed_tensors/utils.py _is_equal_or_regex_match), or a module class name.
  FP8 (fp8)          `ignored_layers`, else `modules_to_not_convert` (vLLM 0.34 fp8.py Fp8Config.from_config
                     reads them in that order): module names; vLLM matches them exactly (quant_utils.py
                     is_layer_skipped), and short names such as `gate` or `lm_head` at a component boundary
                     (its "suffix" match mode), which is what checkpoints that write short names mean.
  Quark              `exclude`: `re:` + a regular expression matched from the start of the name, else the exact
                     name (vLLM 0.34 quark/utils.py should_ignore_layer -> config_utils.py find_matching_patterns
                     -> is_equal_or_regex_match, without fnmatch); an entry with a shell wildcard (* ? [) is read
                     with fnmatch, as Quark's quantizer decides with it what it leaves unquantized (amd/Quark
                     quantization/model_transformation.py setup_config_per_layer, which then writes the exact names
                     it matched; file2file_utils.py match_modules, whose file-to-file flow keeps the pattern:
                     amd/GLM-5.2-MXFP4's `model.layers.78.mlp.experts.*.down_proj`). vLLM 0.34 reads such an
                     entry only for routed experts (should_ignore_layer check_children: any entry under the
                     experts' name leaves the whole block unquantized); the checkpoint's bytes follow Quark.
  torchao            `modules_to_not_convert`: the exact name, or a run of whole components anywhere in it
                     (vLLM 0.34 torchao.py should_skip: `f".{s}." in f".{prefix}."`, so `layers.1` is layer 1 and
                     `visual` any module under it); a ModuleFqnToConfig's `re:` entry of None by re.fullmatch;
                     the routed experts are always kept (TorchAOConfig.get_quant_method quantizes LinearBase
                     layers only, not FusedMoE).
  AutoRound (inc)    `extra_config` entries of 16 bits or more: the exact name, or a short name at a component
                     boundary (vLLM 0.34 inc/config_parser.py _resolve_raw: `layer_name.endswith("." + key)`), as FP8's.

A `Matcher` answers for one full module name. What it cannot answer exactly it says at construction: a name
that picks single experts out of a layer, a class name, a broken regular expression (kvplan.configs.quant_bytes
then gives no figure, with the reason).
"""

from __future__ import annotations

import fnmatch
import re

from .quant_bytes import Unsized

MODELOPT, COMPRESSED_TENSORS, FP8, QUARK, AUTO_ROUND = "ModelOpt", "compressed-tensors", "FP8", "Quark", "AutoRound"
TORCHAO = "torchao"
# not a list a format writes: vLLM 0.34's online experts_int8 (configs/quant_online.py) quantizes the routed experts
# only (ExpertsInt8Config: RoutedExperts int8, every LinearBase unquantized), which the per-module count reads by
# each module's routed-expert count (weight_tables.split routed_experts_only), not by name
ROUTED_EXPERTS_ONLY = "routed experts only"

_WILDCARD = re.compile(r"[*?\[]")
# a name or pattern that picks single routed experts (experts.7 / experts\.7 / experts.[0-3]): the per-module
# count holds a layer's experts as one block
_SINGLE_EXPERT = re.compile(r"experts(?:\\?\.)(?:\d|\[)")


class Matcher:
    """Whether a module name is on a format's list of unquantized modules."""

    def __init__(self, style: str, names: tuple[str, ...]):
        self.style = style
        self.names = names
        self.exact: set[str] = set()
        patterns: list[str] = []
        for name in names:
            if _SINGLE_EXPERT.search(name):
                raise Unsized(f"{style} leaves {name!r} unquantized: single routed experts, which kvplan's "
                              "per-module count holds as one block per layer")
            if style == TORCHAO and name.startswith("re:"):  # a ModuleFqnToConfig pattern: re.fullmatch
                patterns.append(name[3:] + r"\Z")
            elif style in (COMPRESSED_TENSORS, QUARK):
                if name.startswith("re:"):
                    patterns.append(name[3:])
                elif style == QUARK and _WILDCARD.search(name):
                    patterns.append(fnmatch.translate(name))
                elif style == COMPRESSED_TENSORS and "." not in name and name[:1].isupper():
                    raise Unsized(f"{style} leaves the module class {name!r} unquantized, which kvplan's "
                                  "per-module count does not map to module names")
                else:
                    self.exact.add(name)
            elif style == MODELOPT and _WILDCARD.search(name):
                if name.endswith("*") and len(name) >= 2 and name[-2] != ".":  # apply_vllm_mapper: a subtree
                    self.exact.add(name[:-1])
                    patterns.append(fnmatch.translate(name[:-1] + ".*"))
                else:
                    patterns.append(fnmatch.translate(name))
            else:
                self.exact.add(name)
        self.regex = None
        if patterns:
            try:
                self.regex = re.compile("|".join(f"(?:{p})" for p in patterns))
            except re.error:  # a pattern with its own inline flags: one by one
                try:
                    self.each = [re.compile(p) for p in patterns]
                except re.error as exc:
                    raise Unsized(f"{style}: an unquantized-module pattern is not a regular expression ({exc})") \
                        from None
                self.regex = _Each(self.each)

    def __call__(self, name: str) -> bool:
        if name in self.exact:
            return True
        if self.style == TORCHAO:  # whole components anywhere in the name; routed experts never quantized
            dotted = f".{name}."
            return (".experts." in dotted or any(f".{s}." in dotted for s in self.exact)
                    or (self.regex is not None and self.regex.match(name) is not None))
        if self.style in (FP8, AUTO_ROUND):  # a short name at a component boundary
            parts = name.split(".")
            return any(".".join(parts[i:]) in self.exact for i in range(1, len(parts)))
        return self.regex is not None and self.regex.match(name) is not None


class _Each:
    def __init__(self, regexes):
        self.regexes = regexes

    def match(self, name: str):
        return next((m for r in self.regexes if (m := r.match(name))), None)
