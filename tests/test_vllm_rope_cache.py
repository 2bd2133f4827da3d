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


def test_head_dim_families():
    # each: rows (the max_position the vLLM file passes) x rotary_dim (head x partial factor) x 2 B
    cases = {
        # qwen2_moe.py takes hidden / heads = 3,584 / 28 = 128; 131,072 positions
        "qwen2-57b-a14b": 131_072 * 128 * 2,
        # commandr.py (cohere2): max_position_embeddings 132,096 (no model_max_length); 4,096 / 32 = 128
        "command-r7b": 132_096 * 128 * 2,
        # exaone4.py: head_dim 128, llama3 rope keeps max_position rows: 131,072; one rope for sliding and full
        "exaone-4.0-32b": 131_072 * 128 * 2,
        # gemma2.py: head_dim 256, 8,192 positions (gemma.py and stablelm.py: test_backend_families_of_0_34)
        "gemma-2-9b": 8_192 * 256 * 2,
        # persimmon.py: 4,096 / 64 = 64 x PersimmonConfig's 0.5 = 32 wide, 16,384 rows
        "persimmon-8b-base": 16_384 * 32 * 2,
        # glm4.py / glm4_moe.py: head_dim 128 x 0.5 = 64 wide
        "glm-4-9b-0414": 32_768 * 64 * 2,
        "glm-4.5-air": 131_072 * 64 * 2,
        "glm-4.7": 202_752 * 64 * 2,
        # chatglm.py: seq_length rows, 4,096 / 32 = 128 x a fixed 0.5 = 64 wide
        "chatglm3-6b": 8_192 * 64 * 2,
        "glm-4-9b-chat": 131_072 * 64 * 2,
        # gpt_j.py: rotary_dim 64 (of 4,096 / 16 = 256), n_positions 2,048
        "gpt-j-6b": 2_048 * 64 * 2,
        # dbrx.py: max_seq_len 32,768 rows, d_model 6,144 / 48 heads = 128
        "dbrx-instruct": 32_768 * 128 * 2,
        # falcon.py: rotary (alibi false), FalconConfig's 2,048 positions, 4,544 / 71 = 64 and 8,192 / 128 = 64
        "falcon-7b": 2_048 * 64 * 2,
        "falcon-40b": 2_048 * 64 * 2,
        # baichuan.py: hidden_size 4,096 is the rope (7B) variant: 4,096 rows x 128
        "baichuan2-7b-chat": 4_096 * 128 * 2,
        # lfm2.py / lfm2_moe.py: 2,048 / 32 = 64 wide, 128,000 rows
        "lfm2-1.2b": 128_000 * 64 * 2,
        "lfm2-8b-a1b": 128_000 * 64 * 2,
        # falcon_h1.py: no attn_rotary_emb, so all of head_dim 128; 262,144 rows
        "falcon-h1-7b": 262_144 * 128 * 2,
        # bamba.py: attn_rotary_emb 64; BambaConfig's 262,144 positions
        "bamba-9b": 262_144 * 64 * 2,
        # llama.py serves Phi-3 (3,072 / 32 = 96 wide, 4,096 rows), phi-4 (5,120 / 40 = 128, 16,384), the Llama 3.2
        # Vision text model (mllama.py: llama.py's self-attention, 131,072 x 128) and Mistral Small 3.1 (131,072 x 128)
        "phi-3-mini-4k": 4_096 * 96 * 2,
        "phi-4": 16_384 * 128 * 2,
        "llama-3.2-11b-vision": 131_072 * 128 * 2,
        "mistral-small-3.1-24b": 131_072 * 128 * 2,
        # llama4.py: one rope for the rope layers, head_dim 128; Maverick 1,048,576 rows (256 MiB), Scout 10,485,760
        # rows (2.5 GiB on every rank)
        "llama-4-maverick": 1_048_576 * 128 * 2,
        "llama-4-scout": 10_485_760 * 128 * 2,
        # minimax_m2.py: rotary_dim 64 of head_dim 128, 196,608 rows
        "minimax-m2": 196_608 * 64 * 2,
    }
    for name, expected in cases.items():
        assert rope_cache_bytes(bundled(name)) == expected, name
    assert rope_cache_bytes(bundled("llama-4-scout")) == 2_684_354_560 == int(2.5 * GIB)


def test_minimax_text_01_is_float32_and_follows_max_model_len():
    # minimax_text_01.py: dtype=torch.float32, rotary_dim 64; rows min(max_position_embeddings, served max_model_len):
    # by default 10,240,000 x 64 x 4 B = 2,621,440,000 B (2.44 GiB); served at 131,072 tokens 131,072 x 64 x 4
    for name in ("minimax-text-01", "minimax-m1", "minimax-m1-hf"):
        assert rope_cache_bytes(bundled(name)) == 2_621_440_000
    assert rope_cache_bytes(bundled("minimax-text-01"), max_model_len=131_072) == 33_554_432
    # minimax_m2.py takes the larger: 196,608 rows stay at 131,072, grow to 262,144 x 64 x 2 B
    assert rope_cache_bytes(bundled("minimax-m2"), max_model_len=131_072) == 196_608 * 64 * 2
    assert rope_cache_bytes(bundled("minimax-m2"), max_model_len=262_144) == 33_554_432


def test_layer_type_ropes():
    # gemma3n.py: sliding layers rope_local_base_freq 10,000, full layers 1,000,000, both 32,768 x 256
    assert [(t.rows, t.rotary_dim) for t in rope_tables(bundled("gemma-3n-e4b"))] == [(32_768, 256)] * 2
    # OLMo 3 (olmo2.py in 0.19.0, olmo3.py in 0.27.1): sliding layers unscaled, 65,536 rows; full layers yarn
    # 8,192 x 8 = 65,536 rows; 4,096 / 32 = 128 wide: 2 x 16,777,216 B; from 0.29.0 the Transformers backend keeps none
    assert rope_cache_bytes(bundled("olmo-3-7b"), version="0.19.0") == 2 * 65_536 * 128 * 2
    assert rope_cache_bytes(bundled("olmo-3-7b"), version="0.27.1") == 33_554_432
    assert rope_cache_bytes(bundled("olmo-3-7b"), version="0.29.0") == 0
    assert rope_cache_bytes(bundled("olmo-3-7b")) is None


def test_mla_families():
    # deepseek_v2.py's MLA attention (kimi_k2, glm4_moe_lite, longcat_flash): qk_rope_head_dim 64; yarn -> deepseek_yarn
    # original 4,096 x factor 32 = 131,072 rows (Kimi K2); no scaling: max_position rows
    assert rope_cache_bytes(bundled("kimi-k2")) == 131_072 * 64 * 2
    assert rope_cache_bytes(bundled("glm-4.7-flash")) == 202_752 * 64 * 2
    assert rope_cache_bytes(bundled("longcat-flash-chat")) == 131_072 * 64 * 2
    # minicpm3.py: get_rope(qk_rope_head_dim 32, 32,768 positions)
    assert rope_cache_bytes(bundled("minicpm3-4b")) == 32_768 * 32 * 2
    # DeepSeek-V3.2: 4,096 x 40 = 163,840 rows x 64; from 0.12.0 the indexer's neox rope is a second table
    v32 = bundled("deepseek-v3.2-exp")
    assert rope_cache_bytes(v32, version="0.11.0") == 163_840 * 64 * 2 == 20_971_520
    assert rope_cache_bytes(v32, version="0.12.0") == rope_cache_bytes(v32, version="0.33.0") == 41_943_040
    assert rope_cache_bytes(v32) is None


def test_dynamic_rows_changed_in_0_22():
    # InternLM2.5-7B (internlm2.py, hidden / heads = 128): dynamic x 2 over 32,768 positions. Up to 0.21.0
    # DynamicNTKScalingRotaryEmbedding builds arange(32,768 x 2) = 65,536 rows; from 0.22.0 arange(32,768)
    f = bundled("internlm2.5-7b-chat")
    assert rope_cache_bytes(f, version="0.21.0") == 65_536 * 128 * 2
    assert rope_cache_bytes(f, version="0.22.0") == 32_768 * 128 * 2
    assert rope_cache_bytes(f) is None
    # InternLM3 (llama.py): x 6: 196,608 rows, then 32,768
    assert rope_cache_bytes(bundled("internlm3-8b-instruct"), version="0.10.2") == 196_608 * 128 * 2
    assert rope_cache_bytes(bundled("internlm3-8b-instruct"), version="0.33.0") == 32_768 * 128 * 2


PHI4_MINI = {"model_type": "phi3", "architectures": ["Phi3ForCausalLM"], "hidden_size": 3072,
             "intermediate_size": 8192, "num_attention_heads": 24, "num_key_value_heads": 8, "num_hidden_layers": 32,
             "max_position_embeddings": 131072, "original_max_position_embeddings": 4096,
             "partial_rotary_factor": 0.75, "rope_theta": 10000.0, "vocab_size": 200064, "tie_word_embeddings": True,
             "rope_scaling": {"type": "longrope", "long_factor": [1.0] * 48, "short_factor": [1.0] * 48}}


def test_longrope_kept_three_buffers_until_0_7():
    # Phi-4-mini: head 3,072 / 24 = 128 x partial 0.75 = 96 wide; original 4,096 (top level: llama.py copies it
    # into the rope), 131,072 positions. Up to 0.6.6.post1 short (4,096) + long (131,072) + both (135,168) rows;
    # from 0.7.0 only the concatenation, 135,168 x 96 x 2 = 25,952,256 B
    f = fields_of(PHI4_MINI)
    assert rope_cache_bytes(f, version="0.6.6") == 2 * 135_168 * 96 * 2
    assert rope_cache_bytes(f, version="0.7.0") == 135_168 * 96 * 2 == 25_952_256
    assert rope_cache_bytes(f) is None
    # vLLM 0.7.3 (a Colab run of a merged microsoft/phi-4-mini-instruct, fp16, published notebook) logs "Loading
    # model weights took 7.1694 GB": 3,836,021,760 parameters (embedding 200,064 x 3,072 = 614,596,608, tied; 32
    # layers x (qkv 3,072 x 5,120 + o 3,072^2 + gate_up 3,072 x 16,384 + down 8,192 x 3,072 + 2 norms) = 32 x
    # 100,669,440; final norm 3,072) x 2 B = 7,672,043,520 B (7.1451 GiB); with the table 7,697,995,776 B = 7.16931
    # GiB, 0.0001 below the print; three buffers (7.1934) or none (7.1451) would miss by 0.024 GiB
    assert round((7_672_043_520 + 25_952_256) / GIB, 4) == 7.1693


def test_families_without_a_rope_hold_no_table():
    # learned positions (gpt2, opt, gpt_bigcode), ALiBi (bloom, mpt), state-space models (mamba, mamba2,
    # falcon_mamba), attention without positions (jamba, nemotron_h, kimi_linear's MLA with rotary_emb=None),
    # Granite 4.0-H (position_embedding_type not 'rope'), Zamba2 without use_mem_rope
    for name in ("gpt2", "opt-6.7b", "starcoder", "bloom", "mpt-7b-instruct", "mamba-2.8b", "mamba-codestral-7b",
                 "falcon-mamba-7b", "jamba-v0.1", "nemotron-h-8b", "nemotron-3-nano-30b-a3b", "kimi-linear-48b-a3b",
                 "granite-4.0-h-small", "zamba2-2.7b"):
        assert rope_tables(bundled(name)) == (), name
    # falcon with alibi: none; Pythia (gpt_neox.py, 2,048 / 8 = 256 x rotary_pct 0.25 = 64 wide, 2,048 rows) up to
    # 0.31.0, the Transformers backend's HF rotary (no table) from 0.32.0
    raw = json.loads((SPECS / "falcon-7b.json").read_text())
    assert rope_tables(fields_of({**raw, "alibi": True})) == ()
    assert rope_cache_bytes(bundled("pythia-1b"), version="0.31.0") == 2_048 * 64 * 2
    assert rope_cache_bytes(bundled("pythia-1b"), version="0.32.0") == 0
    # GlmForCausalLM (glm.py: llama.py with partial 0.5): 131,072 x 64 up to 0.31.0
    assert rope_cache_bytes(bundled("glm-4-9b-chat-hf"), version="0.31.0") == 131_072 * 64 * 2


def test_backend_families_of_0_34():
    # gemma.py (head_dim 256, 8,192 positions) and stablelm.py (2,048 / 32 = 64 x partial_rotary_factor 0.25 = 16
    # wide, 4,096 rows) up to 0.33.0; vLLM 0.34.0's registry.py serves GemmaForCausalLM and StableLmForCausalLM with
    # the Transformers backend (both files removed), whose HF rotary keeps no table; without the release: unknown
    assert rope_cache_bytes(bundled("gemma-7b"), version="0.33.0") == 8_192 * 256 * 2
    assert rope_cache_bytes(bundled("stablelm-2-1.6b"), version="0.33.0") == 4_096 * 16 * 2
    for name in ("gemma-7b", "stablelm-2-1.6b"):
        assert rope_cache_bytes(bundled(name), version="0.34.0") == 0, name
        assert rope_cache_bytes(bundled(name)) is None, name
    # gemma2.py stays a vLLM file in 0.34.0
    assert rope_cache_bytes(bundled("gemma-2-9b"), version="0.34.0") == 8_192 * 256 * 2


def test_mrope_rows_per_release():
    # MRotaryEmbedding: max_position rows up to 0.7.1, x 4 from 0.7.2. Qwen2.5-VL-7B (qwen2.py, 3,584 / 28 = 128):
    # 128,000 x 128 x 2 B = 32,768,000 B, then 512,000 rows = 131,072,000 B
    vl = bundled("qwen2.5-vl-7b")
    assert rope_cache_bytes(vl, version="0.7.1") == 128_000 * 128 * 2
    assert rope_cache_bytes(vl, version="0.7.2") == rope_cache_bytes(vl, version="0.33.0") == 131_072_000
    assert rope_cache_bytes(vl) is None
    # Public v1 logs of Qwen2.5-VL-7B print "Model loading took 15.6271 GiB" (0.9-0.10) and 15.6269 GiB (0.10.1,
    # an RTX 5090): 8,292,166,656 parameters (text 7,615,616,512: 2 x 152,064 x 3,584 untied + 28 x 233,057,792 +
    # 3,584; vision 676,550,144: patch 1,505,280 + 32 x 19,702,200 + merger 44,574,464) x 2 B = 16,584,333,312 B
    # (15.4454 GiB); with the x 4 table 16,715,405,312 B = 15.5674 GiB, 0.060 GiB under the print (not explained
    # here); with an x 1 table 15.4759, 0.151 under
    assert round((16_584_333_312 + 131_072_000) / GIB, 4) == 15.5674
    # Qwen3-VL-8B (qwen3_vl.py): 262,144 x 4 = 1,048,576 rows x 128 (256 MiB) up to 0.31.0; from 0.32.0 the file
    # passes mrope_positions_factor 1 without video pruning: 262,144 rows (64 MiB)
    q3 = bundled("qwen3-vl-8b")
    assert rope_cache_bytes(q3, version="0.31.0") == 1_048_576 * 128 * 2 == 256 * 2**20
    assert rope_cache_bytes(q3, version="0.32.0") == 262_144 * 128 * 2 == 64 * 2**20
    # Qwen3.5 (qwen3_5.py): head_dim 256 x partial 0.25 (in rope_parameters) = 64 wide
    assert rope_cache_bytes(bundled("qwen3.5-35b-a3b"), version="0.33.0") == 262_144 * 64 * 2
    assert rope_cache_bytes(bundled("qwen3.6-27b"), version="0.19.0") == 1_048_576 * 64 * 2


def test_unread_ropes_and_families_are_none():
    # families whose rope was not read through, families vLLM has no file for
    for name in ("gemma-4-31b", "olmo-hybrid-7b", "gpt-neo-125m",
                 "rwkv-4-7b-pile", "zamba-7b-v1", "recurrentgemma-2b-it", "xglm-1.7b"):
        assert rope_cache_bytes(bundled(name), version="0.19.0") is None, name
    raw = json.loads((SPECS / "llama-3.1-8b.json").read_text())
    raw["rope_scaling"] = {"rope_type": "dynamic", "factor": 2.0}  # rows changed between releases: none without one
    assert rope_cache_bytes(fields_of(raw)) is None
    raw["rope_scaling"] = {"rope_type": "yarn", "factor": 2.0}  # no original length: not guessed
    assert rope_cache_bytes(fields_of(raw)) is None
