"""SGLang 0.5.9's and 0.5.23's Transformers fallback for an architecture their registries do not list
(kvplan.engines.sglang_served; tables kvplan/engines/tf_classes_4_57_1.py and tf_classes_5_19_0.py from
benchmarks/transformers_backend_table.py --styles).

Worked from the sources, not from kvplan's output:
- METADATA Requires-Dist: sglang 0.5.9 transformers==4.57.1, sglang 0.5.23 transformers==5.19.0.
- srt/model_loader/utils.py get_model_architecture (both): no name registered -> resolve_transformers_arch, which
  takes getattr(transformers, arch), else auto_map["AutoModel"] (that key only), and under --model-impl auto raises
  ValueError when the class is not is_backend_compatible() (modeling_utils.py: cls._supports_attention_backend,
  False on PreTrainedModel); no _can_set_attn_implementation alternative, unlike vLLM 0.34.
- 0.5.9 srt/models/transformers.py TransformersForCausalLM.__init__: tensor_parallel raises without a
  base_model_tp_plan at TP > 1, replace_linear_class splits "colwise" / "rowwise" only (others ReplicatedLinear),
  then reads config.num_key_value_heads. 0.5.23 TransformersBase.recursive_replace: _normalize_tp_style raises
  ValueError for a style outside its table (e.g. colwise_gather_output), whatever the TP.
- No file of sglang/srt/models in either release defines GlmForCausalLM, GPTNeoXForCausalLM, FalconForCausalLM or
  RecurrentGemmaForCausalLM.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from kvplan.cli.app import app
from kvplan.engines.sglang_served import check
from kvplan.sources import load_model


def _check(name: str, release: str, tp=None):
    model = load_model(name)
    return check(model.registry_names, release, model.config_model_type or model.model_type, model, tp)


def test_glm_served_by_0_5_9_refused_by_0_5_23():
    # transformers 4.57.1 models/glm/modeling_glm.py GlmPreTrainedModel: _supports_attention_backend = True;
    # configuration_glm.py GlmConfig sets num_key_value_heads, and its plan names colwise, rowwise and
    # gate_up_proj "colwise_rep", down_proj "rowwise_rep"
    s = _check("glm-4-9b-chat-hf", "0.5.9", 1)
    assert (s.served, s.by, s.release) == (True, "transformers backend", "0.5.9")
    assert "transformers 4.57.1's GlmForCausalLM" in s.reason
    assert "the linears it names colwise_rep, rowwise_rep, which 0.5.9 replicates" in s.reason
    # at TP 2 those MLP linears are whole on every GPU while the attention takes heads / 2: not known
    assert _check("glm-4-9b-chat-hf", "0.5.9", 2).served is None
    # transformers 5.19.0 configuration_glm.py: gate_up_proj "colwise_gather_output", down_proj
    # "rowwise_split_input", neither of which 0.5.23's _normalize_tp_style maps: refused at any TP
    new = _check("glm-4-9b-chat-hf", "0.5.23", 1)
    assert new.served is False and new.by is None
    assert "style(s) colwise_gather_output, rowwise_split_input" in new.reason


def test_pythia_served_by_0_5_23_refused_by_0_5_9():
    # transformers 5.19.0 GPTNeoXPreTrainedModel: _supports_attention_backend = True; plan: colwise / rowwise only;
    # 0.5.23 _create_attention_instances takes num_key_value_heads with the attention heads as default
    s = _check("pythia-1b", "0.5.23", 2)
    assert (s.served, s.by) == (True, "transformers backend")
    assert "transformers 5.19.0's GPTNeoXForCausalLM" in s.reason and "holds whole on every GPU" in s.reason
    # transformers 4.57.1 configuration_gpt_neox.py GPTNeoXConfig has no num_key_value_heads (nor attribute_map),
    # and pythia-1b's config.json has none: 0.5.9's TransformersForCausalLM.__init__ fails on config.num_key_value_heads
    old = _check("pythia-1b", "0.5.9", 1)
    assert old.served is False and "reads config.num_key_value_heads" in old.reason


def test_incompatible_class_is_refused_even_with_an_auto_map():
    # falcon-7b's config.json has auto_map["AutoModel"], but getattr(transformers, "FalconForCausalLM") is found
    # first; FalconPreTrainedModel sets no _supports_attention_backend (4.57.1 and 5.19.0): PreTrainedModel's False
    for release, tf in (("0.5.9", "4.57.1"), ("0.5.23", "5.19.0")):
        s = _check("falcon-7b", release)
        assert s.served is False
        assert f"refuses transformers {tf}'s FalconForCausalLM: not is_backend_compatible()" in s.reason


def test_remote_code_needs_the_automodel_key():
    # minimax-text-01's auto_map: AutoConfig and AutoModelForCausalLM, no "AutoModel", and neither transformers
    # release has MiniMaxText01ForCausalLM: resolve_transformers_arch raises (vLLM 0.34 would try the remote class)
    for release in ("0.5.9", "0.5.23"):
        s = _check("minimax-text-01", release)
        assert s.served is False and "auto_map has no \"AutoModel\" key" in s.reason


def test_remote_code_with_automodel_is_not_known(tmp_path):
    config = {"model_type": "llama", "architectures": ["AcmeForCausalLM"], "hidden_size": 1024,
              "intermediate_size": 2816, "num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 8,
              "vocab_size": 32000, "auto_map": {"AutoConfig": "configuration_acme.AcmeConfig",
                                                "AutoModel": "modeling_acme.AcmeModel"}}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    model = load_model(str(path))
    for release in ("0.5.9", "0.5.23"):
        s = check(model.registry_names, release, "llama", model, 1)
        assert s.served is None and s.by is None
        assert "auto_map[\"AutoModel\"]" in s.reason and "is_backend_compatible()" in s.reason


def test_recurrent_layers_by_release_and_tp():
    # RecurrentGemma: 4.57.1's RecurrentGemmaPreTrainedModel sets no _supports_attention_backend (refused);
    # 5.19.0's sets True, but block_types (recurrent, recurrent, attention) over 26 layers leaves 26 - 8 = 18
    # recurrent layers, layer 0 first, which the fallback runs with use_cache=False; its config has no
    # base_model_tp_plan, so TP 2 is refused
    assert _check("recurrentgemma-2b-it", "0.5.9").served is False
    s = _check("recurrentgemma-2b-it", "0.5.23", 1)
    assert s.served is None and "18 of its 26 layers (layer 0 first)" in s.reason
    tp2 = _check("recurrentgemma-2b-it", "0.5.23", 2)
    assert tp2.served is False and "does not support tensor parallel yet" in tp2.reason


def test_cli_fields():
    r = CliRunner().invoke(app, ["estimate", "pythia-1b", "-c", "2k", "--kv-memory", "20GiB",
                                 "--engine", "sglang@0.5.23", "--format", "json"])
    assert r.exit_code == 0, r.output
    engine = json.loads(r.stdout)["engine"]
    assert (engine["served"], engine["served_by"]) == (True, "transformers backend")
    r = CliRunner().invoke(app, ["estimate", "pythia-1b", "-c", "2k", "--kv-memory", "20GiB",
                                 "--engine", "sglang@0.5.9", "--format", "json"])
    engine = json.loads(r.stdout)["engine"]
    assert (engine["served"], engine["served_by"]) == (False, None)


SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "transformers_backend_table.py"


def test_table_script_styles_and_kv_heads(tmp_path):
    # a 4.x-style tree: the config base is spelled PretrainedConfig
    src = tmp_path / "transformers"
    (src / "models" / "a").mkdir(parents=True)
    (src / "__init__.py").write_text('__version__ = "4.0.0"\n')
    (src / "modeling_utils.py").write_text("class PreTrainedModel:\n    _supports_attention_backend = False\n")
    (src / "configuration_utils.py").write_text("class PretrainedConfig:\n    base_model_tp_plan = None\n")
    (src / "models" / "a" / "configuration_a.py").write_text(
        "from ...configuration_utils import PretrainedConfig\n"
        "class AConfig(PretrainedConfig):\n"
        "    base_model_tp_plan = {'layers.*.q_proj': 'colwise', 'layers.*.o_proj': 'rowwise_rep',\n"
        "                          'layers.*.k_proj': 'colwise'}\n"
        "    def __init__(self, kv=None):\n        self.num_key_value_heads = kv\n"
        "class BConfig(PretrainedConfig):\n    attribute_map = {'hidden_size': 'n_embd'}\n")
    (src / "models" / "a" / "modeling_a.py").write_text(
        "from ...modeling_utils import PreTrainedModel\nfrom .configuration_a import AConfig, BConfig\n"
        "class AModel(PreTrainedModel):\n    config: AConfig\n    _supports_attention_backend = True\n"
        "class BModel(PreTrainedModel):\n    config_class = BConfig\n"
        "__all__ = ['AModel', 'BModel']\n")
    out = tmp_path / "table.py"
    r = subprocess.run([sys.executable, str(SCRIPT), str(src), "--styles", "--out", str(out)], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    ns: dict = {}
    exec(out.read_text(), ns)
    assert ns["ARCHITECTURES"] == {
        "AModel": ("a", True, True, True, False, ("colwise", "rowwise_rep"), True),
        "BModel": ("a", False, True, False, False, (), False),  # no plan, no num_key_value_heads
    }
