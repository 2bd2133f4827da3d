"""vLLM's rotary cos/sin tables (kvplan.engines.vllm_rope_cache): rows x rotary_dim x dtype bytes per distinct
rope, worked out by hand from each config and checked against loads public logs print."""

import json
from pathlib import Path

from kvplan.configs.build import resolve
from kvplan.engines.vllm_rope_cache import rope_cache_bytes, rope_tables

GIB = 2**30
SPECS = Path(__file__).parent.parent / "model_specs"


def fields_of(raw: dict):
    return resolve(raw, "test")[1]


def bundled(name: str):
    return fields_of(json.loads((SPECS / f"{name}.json").read_text()))


LLAMA3_8B = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 4096,
             "intermediate_size": 14336, "num_attention_heads": 32, "num_key_value_heads": 8,
             "num_hidden_layers": 32, "max_position_embeddings": 8192, "rope_theta": 500000.0,
             "rope_scaling": None, "vocab_size": 128256, "torch_dtype": "bfloat16"}


def test_llama_tables_match_the_logged_loads():
    # Llama-3.1-8B (llama3 rope: max_position rows): 131,072 x 128 x 2 B = 33,554,432 B. vLLM 0.6.4 logged
    # "Loading model weights took 14.9888 GB" (vllm#10517) for 8,030,261,248 parameters x 2 B = 16,060,522,496 B
    # (14.9575 GiB): with the table, 16,094,076,928 B = 14.98877 GiB
    assert rope_cache_bytes(bundled("llama-3.1-8b")) == 131_072 * 128 * 2 == 33_554_432
    assert round((16_060_522_496 + 33_554_432) / GIB, 4) == 14.9888
    # Meta-Llama-3-8B (no rope scaling, 8,192 positions): 8,192 x 128 x 2 = 2,097,152 B; vLLM 0.6.6 logged
    # 14.9595 GB (vllm#12330) for the same parameter count: 16,062,619,648 B = 14.95948 GiB
    assert rope_cache_bytes(fields_of(LLAMA3_8B)) == 2_097_152
    assert round((16_060_522_496 + 2_097_152) / GIB, 4) == 14.9595


def test_gemma3_holds_two_tables_the_global_one_scaled():
    # gemma-3-4b: sliding layers rope_local_base_freq unscaled (131,072 rows), global layers linear x 8
    # (1,048,576 rows), head_dim 256 (Gemma3TextConfig's defaults fill the sparse text_config): 67,108,864 +
    # 536,870,912 = 603,979,776 B. PR #21489 logs 8.58 GiB "for weight": the HF count 4,300,079,472 x 2 B =
    # 8,600,158,944 B (8.01 GiB) + the tables = 9,204,138,720 B = 8.57 GiB
    f = bundled("gemma-3-4b")
    assert [(t.rows, t.rotary_dim) for t in rope_tables(f)] == [(131_072, 256), (1_048_576, 256)]
    assert rope_cache_bytes(f) == 603_979_776
    assert round((8_600_158_944 + 603_979_776) / GIB, 2) == 8.57
    # gemma-3-1b: no scaling, but the two ropes differ in base, so get_rope builds two: 2 x 32,768 x 256 x 2
    assert rope_cache_bytes(bundled("gemma-3-1b")) == 2 * 32_768 * 256 * 2
    # transformers 5 keys rope_parameters by layer type: the global layers' entry decides the scaled table
    raw = json.loads((SPECS / "gemma-3-1b.json").read_text())
    raw["rope_parameters"] = {"full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1e6},
                              "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}}
    raw.pop("rope_scaling", None)
    assert rope_cache_bytes(fields_of(raw)) == 32_768 * 256 * 2 + 262_144 * 256 * 2


def test_yarn_rows_are_the_original_length_times_the_factor():
    # gpt-oss: yarn, original 4,096 x factor 32 = 131,072 rows of head_dim 64, in float32 (gpt_oss.py passes
    # dtype=torch.float32): 33,554,432 B
    assert rope_cache_bytes(bundled("gpt-oss-20b")) == 131_072 * 64 * 4
    # DeepSeek-V3 (MLA): the rope part of the head, qk_rope_head_dim 64, deepseek_yarn 4,096 x 40 = 163,840 rows
    assert rope_cache_bytes(bundled("deepseek-v3")) == 163_840 * 64 * 2
    # a Qwen3 config extended with YaRN (factor 4 over 32,768): 131,072 rows x 128 x 2 B
    raw = json.loads((SPECS / "qwen3-8b.json").read_text())
    raw["rope_scaling"] = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}
    assert rope_cache_bytes(fields_of(raw)) == 131_072 * 128 * 2


def test_partial_rotary_and_plain_families():
    # Qwen3-Next: partial_rotary_factor 0.25 of head_dim 256 = 64 wide, 262,144 rows: 33,554,432 B
    assert rope_cache_bytes(bundled("qwen3-next-80b-a3b")) == 262_144 * 64 * 2
    # Qwen3-8B: 40,960 x 128 x 2 = 10,485,760 B (the bundled checkpoint's 16,381,470,720 B + this is 15.266 GiB;
    # a 0.19.1 log prints "Model loading took 15.27 GiB")
    assert rope_cache_bytes(bundled("qwen3-8b")) == 10_485_760
    assert round((16_381_470_720 + 10_485_760) / GIB, 2) == 15.27
    # Mixtral: head_dim = 4,096 / 32 = 128, 32,768 rows
    assert rope_cache_bytes(bundled("mixtral-8x7b")) == 32_768 * 128 * 2


def test_unread_ropes_and_families_are_none():
    # a family whose vLLM get_rope call was not read, and rope types whose rows changed between releases
    assert rope_cache_bytes(bundled("phi-4")) is None
    raw = json.loads((SPECS / "llama-3.1-8b.json").read_text())
    raw["rope_scaling"] = {"rope_type": "dynamic", "factor": 2.0}
    assert rope_cache_bytes(fields_of(raw)) is None
    raw["rope_scaling"] = {"rope_type": "yarn", "factor": 2.0}  # no original length: not guessed
    assert rope_cache_bytes(fields_of(raw)) is None
