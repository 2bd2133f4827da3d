"""Real configs from the fifth sweep (docs/models.md "Sweep 5"): each checkpoint's model.safetensors.index.json
gives metadata.total_size, the bytes of every tensor it stores, and its weight_map names every tensor; each
expected figure here is that total_size, checked against a count by hand from the config's shapes.

tests/data/configs/:
- granite-3b-code-instruct-128k.json: ibm-granite/granite-3b-code-instruct-128k's config.json as the public repo
  ashishn-08/granite-3b-code-instruct-128k holds it (commit 6c2060816a990f5e7f85ea034fbe17deca0b9ba3), unchanged
"""

from __future__ import annotations

from pathlib import Path

from tests.kvplan_inprocess import estimate_json

CONFIGS = Path(__file__).resolve().parent / "data" / "configs"


def test_llama_mlp_bias_is_counted():
    # granite-3b-code-instruct-128k: a LlamaForCausalLM config with attention_bias and mlp_bias true; its index
    # (same repo and commit) lists mlp.gate_proj.bias, up_proj.bias and down_proj.bias on each of the 32 layers
    # and gives total_size 6,965,007,360 B. By hand, BF16: tied embeddings 49,152 x 2,560, final norm 2,560; a
    # layer: q/k/v/o 4 x 2,560 x 2,560 with biases 4 x 2,560 (32 heads = 32 KV heads of 80), MLP 3 x 2,560 x
    # 10,240 with biases 2 x 10,240 + 2,560, two norms 2 x 2,560
    layer = 4 * 2560 * 2560 + 4 * 2560 + 3 * 2560 * 10240 + 2 * 10240 + 2560 + 2 * 2560
    params = 49152 * 2560 + 2560 + 32 * layer
    assert 2 * params == 6_965_007_360
    m = estimate_json(str(CONFIGS / "granite-3b-code-instruct-128k.json"))["model"]
    # before: the MLP biases were left out (737,280 parameters, 1,474,560 B, 0.021% under)
    assert m["param_count"] == params
    assert m["weight_bytes"] == 6_965_007_360
