"""vLLM 0.34's Transformers-backend fallback for an architecture its registry does not list
(kvplan.engines.vllm_served, table kvplan.engines.vllm_tf_backend_data from benchmarks/transformers_backend_table.py).

Worked from the sources, not from kvplan's output:
- vLLM 0.34 model_executor/models/registry.py inspect_model_cls / resolve_model_cls: when no name of
  `architectures` is registered and model_impl is "auto", _try_resolve_transformers(architectures[0]) takes
  `getattr(transformers, arch)` first and only then the config's auto_map AutoModel* class (remote code); the class
  must be is_backend_compatible() or _can_set_attn_implementation(). requirements/common.txt pins transformers
  >= 5.16.1, < 5.23.0, so the table is transformers 5.22.2's.
- transformers 5.22.2 models/dots1/modeling_dots1.py Dots1PreTrainedModel: `_supports_attention_backend = True`;
  configuration_dots1.py Dots1Config has a base_model_tp_plan (q/k/v_proj colwise ...).
- models/codegen/modeling_codegen.py: `class CodeGenAttention(nn.Module)` and no
  `ALL_ATTENTION_FUNCTIONS.get_interface(` in the module, and CodeGenPreTrainedModel sets no
  `_supports_attention_backend` (PreTrainedModel's False): neither test holds, so vLLM returns None (refuses).
- Bamba-9B (model_specs/bamba-9b.json): attn_layer_indices [9, 18, 27] of 32 layers, so 32 - 3 = 29 layers are
  Mamba mixers with no attention; transformers 5.22.2's BambaForCausalLM passes the registry test (its
  BambaAttention calls get_interface), and vLLM 0.34 transformers/base.py create_attention_instances raises for
  layer 0, the first without attention.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from kvplan.cli.app import app
from kvplan.configs.build import build_model
from kvplan.engines.vllm_served import check

DOTS1 = {"architectures": ["Dots1ForCausalLM"], "model_type": "dots1", "hidden_size": 4096,
         "intermediate_size": 10944, "moe_intermediate_size": 1408, "num_hidden_layers": 62,
         "num_attention_heads": 32, "num_key_value_heads": 32, "head_dim": 128, "n_routed_experts": 128,
         "n_shared_experts": 2, "num_experts_per_tok": 6, "first_k_dense_replace": 1, "vocab_size": 152064,
         "max_position_embeddings": 32768, "torch_dtype": "bfloat16", "tie_word_embeddings": False,
         "rms_norm_eps": 1e-5, "rope_theta": 10000000}
CODEGEN = {"model_type": "codegen", "architectures": ["CodeGenForCausalLM"], "n_embd": 1024, "n_layer": 20,
           "n_head": 16, "rotary_dim": 32, "vocab_size": 51200, "n_positions": 2048, "n_ctx": 2048}
# a llama-shaped checkpoint whose class exists only as its own code
REMOTE = {"model_type": "llama", "architectures": ["AcmeForCausalLM"], "hidden_size": 1024,
          "intermediate_size": 2816, "num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 8,
          "vocab_size": 32000, "auto_map": {"AutoConfig": "configuration_acme.AcmeConfig",
                                            "AutoModelForCausalLM": "modeling_acme.AcmeForCausalLM"}}


def _check(config: dict, release: str = "0.34"):
    model = build_model(config, "t")
    return check(model.registry_names, release, model)


def test_unregistered_architecture_falls_back_to_transformers():
    s = _check(DOTS1)
    assert (s.served, s.by, s.release) == (True, "transformers backend", "0.34.0")
    assert "transformers 5.22.2's Dots1ForCausalLM, with _supports_attention_backend" in s.reason
    assert "follows its config's base_model_tp_plan" in s.reason
    assert "kvplan splits the weights by its per-module table of dots1" in s.reason  # weight_tables/moe_more.py
    # 0.33 pins transformers < 5.21.0, not read: the old answer stays
    old = _check(DOTS1, "0.33")
    assert old.served is False and "unless its Transformers backend can load it" in old.reason


def test_no_tp_plan_leaves_the_split_to_the_fusers():
    # transformers 5.22.2 modeling_persimmon.py PersimmonPreTrainedModel: _supports_attention_backend = True;
    # configuration_persimmon.py names no base_model_tp_plan; vLLM registers Persimmon natively until 0.25.1 only
    from kvplan.sources import load_model

    model = load_model("persimmon-8b-base")
    s = check(model.registry_names, "0.34", model)
    assert (s.served, s.by) == (True, "transformers backend")
    assert "whose config has no base_model_tp_plan, so at TP > 1 the backend's fusers shard" in s.reason


def test_transformers_class_wins_over_auto_map():
    # _try_resolve_transformers: getattr(transformers, "Dots1ForCausalLM") is found, the auto_map is not used
    s = _check(dict(DOTS1, auto_map={"AutoModelForCausalLM": "modeling_dots.Dots1ForCausalLM"}))
    assert s.served is True and "modeling_dots" not in s.reason


def test_incompatible_transformers_class_is_refused():
    s = _check(CODEGEN)
    assert s.served is False and s.by is None
    assert ("its Transformers backend refuses transformers 5.22.2's CodeGenForCausalLM: not "
            "_supports_attention_backend") in s.reason


def test_remote_code_class_is_not_known():
    s = _check(REMOTE)
    assert s.served is None and s.by is None
    assert "own code (modeling_acme.AcmeForCausalLM, config.json's auto_map) with --trust-remote-code" in s.reason
    # without an AutoModel entry there is nothing to load: refused
    bare = _check({k: v for k, v in REMOTE.items() if k != "auto_map"})
    assert bare.served is False and "auto_map names no AutoModel class" in bare.reason


def test_layers_without_attention_fail_in_the_backend():
    from kvplan.sources import load_model

    model = load_model("bamba-9b")
    s = check(model.registry_names, "0.34", model)
    assert s.served is False
    assert "29 of its 32 layers (layer 0 first) have no attention" in s.reason
    assert "create_attention_instances" in s.reason


def test_cli_note_is_one_line(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(DOTS1))
    r = CliRunner().invoke(app, ["estimate", str(path), "-c", "8k", "--kv-memory", "20GiB", "--engine", "vllm"])
    assert r.exit_code == 0, r.output
    lines = [line for line in r.output.splitlines() if "Transformers backend" in line]
    assert len(lines) == 1 and lines[0].strip().startswith("note: vLLM 0.34.0 serves Dots1ForCausalLM through")
    doc = json.loads(CliRunner().invoke(app, ["estimate", str(path), "-c", "8k", "--kv-memory", "20GiB",
                                              "--engine", "vllm", "--format", "json"]).stdout)
    assert (doc["engine"]["served"], doc["engine"]["served_by"]) == (True, "transformers backend")


SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "transformers_backend_table.py"


def _fake_transformers(root: Path) -> Path:
    src = root / "transformers"
    (src / "models" / "a").mkdir(parents=True)
    (src / "models" / "b").mkdir(parents=True)
    (src / "__init__.py").write_text('__version__ = "9.9.9"\n')
    (src / "modeling_utils.py").write_text(
        "class PreTrainedModel:\n    _supports_attention_backend = False\n")
    (src / "configuration_utils.py").write_text("class PreTrainedConfig:\n    pass\n")
    (src / "models" / "a" / "configuration_a.py").write_text(
        "from ...configuration_utils import PreTrainedConfig\n"
        "class AConfig(PreTrainedConfig):\n    base_model_tp_plan = {'layers.*.q_proj': 'colwise'}\n")
    # a: flagged, and its attention uses the interface
    (src / "models" / "a" / "modeling_a.py").write_text(
        "from ...modeling_utils import PreTrainedModel\nfrom .configuration_a import AConfig\n"
        "class AAttention(nn.Module):\n    def f(self):\n        ALL_ATTENTION_FUNCTIONS.get_interface(1, 2)\n"
        "class APreTrainedModel(PreTrainedModel):\n    config: AConfig\n    _supports_attention_backend = True\n"
        "class AForCausalLM(APreTrainedModel):\n    pass\n"
        "__all__ = ['APreTrainedModel', 'AForCausalLM']\n")
    # b: inherits a's base from another module, but its own attention does not use the interface
    (src / "models" / "b" / "modeling_b.py").write_text(
        "from ..a.modeling_a import AForCausalLM\nfrom ...modeling_utils import PreTrainedModel\n"
        "class BAttention(nn.Module):\n    pass\n"
        "class BForCausalLM(AForCausalLM):\n    _supports_attention_backend = False\n"
        "class BModel(PreTrainedModel):\n    pass\n"
        "class NotAModel:\n    pass\n"
        "__all__ = ['BForCausalLM', 'BModel', 'NotAModel']\n")
    return src


def test_table_script_reads_classes(tmp_path):
    src = _fake_transformers(tmp_path)
    out = tmp_path / "table.py"
    r = subprocess.run([sys.executable, str(SCRIPT), str(src), "--out", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    ns: dict = {}
    exec(out.read_text(), ns)
    assert ns["TRANSFORMERS_RELEASE"] == "9.9.9"
    assert ns["ARCHITECTURES"] == {
        "APreTrainedModel": ("a", True, True, True, False),
        "AForCausalLM": ("a", True, True, True, False),  # flag inherited, AConfig's plan through the base
        "BForCausalLM": ("b", False, False, True, False),  # flag overridden; modeling_b's attention: no interface
        "BModel": ("b", False, False, None, None),  # no config class named
    }


def test_table_script_bad_folder_one_line(tmp_path):
    r = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert "is not a transformers source folder (no modeling_utils.py)" in r.stderr


def test_attention_layers_with_a_recurrent_state_are_not_known():
    # a layer with an attention cache and a Mamba state (a parallel hybrid): create_attention_instances finds its
    # attention, but nothing under vLLM 0.34 model_executor/models/transformers/ allocates a recurrent state
    from types import SimpleNamespace

    layer = SimpleNamespace(caches=("kv",), shares_cache_of=None, state="mamba")
    model = SimpleNamespace(config_model_code="", model_type="dots1", layers=[layer, layer])
    s = check(["Dots1ForCausalLM"], "0.34", model)
    assert s.served is None and "also keep a recurrent state" in s.reason


def test_pooling_suffix_is_converted_from_the_registered_decoder():
    # vLLM 0.34 config/model.py: no name registered, so _get_default_runner_type / _get_default_convert_type read
    # the suffix: "ForSequenceClassification" -> ("pooling", "classify"). inspect_model_cls then skips its first
    # Transformers-backend fallback (convert_type is not "none") and _normalize_arch swaps the suffix for
    # "ForCausalLM" first: LlamaForCausalLM / GraniteForCausalLM are registered (llama.py, granite.py), so vLLM
    # serves a reward model such as Skywork-Reward-Llama-3.1-8B natively, converted (adapters.py).
    for name, base in (("LlamaForSequenceClassification", "LlamaForCausalLM"),
                       ("GraniteForSequenceClassification", "GraniteForCausalLM")):
        served = check(name, "0.34.0")
        assert served.served is True and served.by == "vllm", served
        assert base in served.reason and "--convert classify" in served.reason
    # GPTNeoForCausalLM (and every other suffix) is not registered: the last fallback, transformers' own
    # GPTNeoForSequenceClassification, is not backend-compatible (as GPTNeoForCausalLM above): refused
    assert check("GPTNeoForSequenceClassification", "0.34.0").served is False


def test_mllama_cross_attention_layers_are_not_layers_without_attention():
    # transformers 5.22.2 models/mllama/modeling_mllama.py: MllamaTextModel builds a MllamaCrossAttentionDecoderLayer
    # on each of cross_attention_layers ([3, 8, ..., 38] by default: 8 of 40), whose MllamaTextCrossAttention sets
    # self.layer_idx and calls ALL_ATTENTION_FUNCTIONS.get_interface once; vLLM 0.34 fusers/attention.py
    # AttentionFuser.match / layer_index take it, so create_attention_instances does not raise for those layers.
    # MllamaForCausalLM is not registered (MllamaForConditionalGeneration was removed in 0.10.2) and
    # MllamaPreTrainedModel sets _supports_attention_backend = True: the registry falls back; the build is not known.
    config = {"architectures": ["MllamaForCausalLM"], "model_type": "mllama_text_model", "hidden_size": 4096,
              "intermediate_size": 14336, "num_hidden_layers": 40, "num_attention_heads": 32,
              "num_key_value_heads": 8, "vocab_size": 128256, "cross_attention_layers": [3, 8, 13, 18, 23, 28, 33, 38],
              "max_position_embeddings": 131072, "rope_theta": 500000.0, "torch_dtype": "bfloat16"}
    model = build_model(config, "mllama-text")
    served = check(model.registry_names, "0.34.0", model)
    assert served.served is None, served
    assert "cross-attention" in served.reason and "layer 3 first" in served.reason


def test_remote_code_with_lightning_layers_names_the_build_check():
    # bundled minimax-text-01: architectures MiniMaxText01ForCausalLM, which transformers 5.22.2 does not export,
    # auto_map AutoModelForCausalLM modeling_minimax_text_01.MiniMaxText01ForCausalLM (remote code: not known);
    # attn_type_list 0 (lightning) x 7 then 1 (softmax), ten times: 80 - 10 = 70 layers without a softmax KV cache,
    # layer 0 the first, each of which transformers/base.py create_attention_instances must find dispatching
    from kvplan.sources import load_model

    model = load_model("minimax-text-01")
    served = check(model.registry_names, "0.34.0", model)
    assert served.served is None
    assert "70 of its 80 layers (layer 0 first)" in served.reason and "create_attention_instances" in served.reason
