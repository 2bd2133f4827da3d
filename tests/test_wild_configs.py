"""Real config.json files from the Hub (the sweep of benchmarks/wild_configs.py) that kvplan read wrongly or
refused: each figure is worked out by hand from the config, and each source is named where the file is used.

tests/data/configs/:
- yayi2-30b-guanaco-llama-fp32.json: https://huggingface.co/mzbac/yayi2-30b-guanaco/blob/main/config.json
  (verbatim)
- tencent-hunyuan-large.json: https://huggingface.co/tencent/Tencent-Hunyuan-Large/blame/
  e264dea96ac935475166a9060b6fff94691de97e/config.json (verbatim)
- llama-3-8b-instruct-fp8-compression-config-trimmed.json: https://huggingface.co/nm-testing/
  Meta-llama3-8b-Instruct-quant-FP8/blob/e1dbda601e5750c980a670171b4bd3f87c8f7592/config.json, trimmed (its
  _name_or_path, pretraining_tp, rope_scaling, transformers_version and use_cache left out); its
  rms_norm_eps, rope_theta, tie_word_embeddings and vocab_size are meta-llama/Meta-Llama-3-8B-Instruct's
  config.json, the model it quantizes
- tulu-13b-awq-float32-config.json: https://huggingface.co/TheBloke/tulu-13B-AWQ/commit/
  6d746e849071e6e983ad66059b867dd3892d8fe0 (the config.json it adds, verbatim); the repo's model.safetensors is
  7.25 GB (https://huggingface.co/TheBloke/tulu-13B-AWQ/tree/main)
- gemma-2-9b-it-mlx-8bit.json: https://huggingface.co/mlx-community/gemma-2-9b-it-8bit/blob/
  70ae221feec7f6f73816efc50894b5d0a9f829e7/config.json (verbatim)
- phi-2-bigdl-mixed-fp4.json: https://huggingface.co/unrahul/phi-2-mixed_fp4/blob/
  a34019c6d1e398a67dda027a44fff63e3b174b5e/config.json (verbatim)
- qwen2.5-vl-7b-tf4531-saved-text-encoder.json: Qwen2.5-VL-7B-Instruct's config as transformers 4.53.1 saves it
  (the root says bfloat16, the nested text_config float32), embedded verbatim in a HunyuanImage-2.1 text-encoder
  loader (QWEN2_5_VL_CONFIG_JSON; code index id 1959876389); re-indented, values unchanged
- phi-3-small-8k-instruct.json: microsoft/Phi-3-small-8k-instruct's config.json as onnx-tool's llm builder copies it
  (Phi_3_small_8k_instruct; code index id 4881146369), its added "name" key left out
"""

from __future__ import annotations

from pathlib import Path

from tests.kvplan_inprocess import estimate_json, kvplan

CONFIGS = Path(__file__).resolve().parent / "data" / "configs"
YAYI2 = str(CONFIGS / "yayi2-30b-guanaco-llama-fp32.json")
HUNYUAN_LARGE = str(CONFIGS / "tencent-hunyuan-large.json")
LLAMA3_FP8_OLD = str(CONFIGS / "llama-3-8b-instruct-fp8-compression-config-trimmed.json")
TULU_AWQ = str(CONFIGS / "tulu-13b-awq-float32-config.json")
PHI2_BIGDL = str(CONFIGS / "phi-2-bigdl-mixed-fp4.json")
GEMMA2_MLX = str(CONFIGS / "gemma-2-9b-it-mlx-8bit.json")
QWEN25VL_TF453 = str(CONFIGS / "qwen2.5-vl-7b-tf4531-saved-text-encoder.json")
PHI3_SMALL = str(CONFIGS / "phi-3-small-8k-instruct.json")


def test_sglang_sizes_a_float32_checkpoint_at_16_bits_before_the_fit_check():
    # Llama, 64 layers, hidden 7168, 64 heads of 112, 1 K/V head, intermediate 16384, vocab 81920, untied:
    #   per layer q, o 7168 x 7168 (51,380,224 each), k, v 7168 x 112 (802,816 each), gate/up/down 3 x 7168 x 16384
    #   (352,321,536), 2 norms of 7168: 456,701,952; x 64 = 29,228,924,928; + embeddings and head
    #   2 x 81920 x 7168 = 1,174,405,120; + the final norm 7168 = 30,403,337,216 parameters (transformers 5.25
    #   builds the same count on the meta device)
    # torch_dtype float32: 121.6 GB as stored, which SGLang 0.5.23's dtype "auto" loads in float16 (2 B a
    # parameter: engines/sglang_report.served_16bit): 60,806,674,432 B, which fits one H100. kvplan refused it:
    # "does not fit on 1 x h100-sxm: weights 113.26 GiB" (the float32 figure; --engine vllm already used 2 B)
    d = estimate_json(YAYI2, "--gpu", "h100", "--engine", "sglang")
    assert d["model"]["param_count"] == 30_403_337_216
    assert d["capacity"]["weight_bytes_per_gpu"] == 30_403_337_216 * 2
    assert d["engine"]["fits"] is True
    # K/V: 2 x 64 layers x 1 head x 112 x 2 B = 28,672 B a token, SGLang's MHA pool cell too
    assert d["bytes_per_token"] == d["engine"]["cell_bytes"] == 28_672
    assert any("float32 checkpoint served in float16 (SGLang" in n for n in d["model"]["weights"]["notes"])


def test_unknown_type_with_cross_layer_attention_is_refused_not_read_flat():
    # Hunyuan-Large (model_type "hunyuan", remote code; neither transformers 5.25 nor vLLM 0.34 has the class)
    # writes use_cla: true, cla_share_factor: 2: pairs of layers share one K/V cache. The generic reading kept K/V
    # on all 64 layers, 2 x 64 x 8 x 80 x 2 B = 163,840 B a token, twice what 32 caching layers keep
    out = kvplan("estimate", HUNYUAN_LARGE)
    assert out.returncode == 1
    assert out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "unknown model_type 'hunyuan' carries 'cla_share_factor'" in lines[0]


def test_compression_config_is_the_quantization_of_an_older_compressed_tensors_checkpoint():
    # compressed-tensors FP8 (float-quantized, per-tensor weights) under "compression_config", read by vLLM 0.34
    # when there is no quantization_config. Llama-3-8B: per layer q 4096 x 4096, k, v 4096 x 1024, o 4096 x 4096,
    # gate, up, down 3 x 4096 x 14336 = 218,103,808 linear weights; x 32 = 6,979,321,856 at 1 B (the Linear
    # targets; lm_head ignored); embeddings and head 2 x 128256 x 4096 = 1,050,673,152 and 65 norms of 4096
    # (266,240) at 2 B = 2,101,878,784; total 9,081,200,640 B (as bf16 it was 16,060,522,496 B)
    d = estimate_json(LLAMA3_FP8_OLD)
    w = d["model"]["weights"]
    assert d["model"]["param_count"] == 8_030_261_248
    assert w["total_bytes"] == 6_979_321_856 + 2_101_878_784
    assert w["quantization"].startswith("compressed-tensors float-quantized")


def test_awq_checkpoint_of_a_float32_config_stores_its_float_tensors_in_float16():
    # Llama-13B: 40 layers, hidden 5120, 40 heads (K/V 40), intermediate 13824, vocab 32001, untied.
    # Quantized: per layer q, k, v, o 4 x 5120 x 5120 + gate, up, down 3 x 5120 x 13824 = 317,194,240; x 40 =
    # 12,687,769,600 weights at AWQ int4 group 128 with zero points: 1/2 + (2 B scale + 1/2 B zero) / 128 =
    # 0.51953125 B -> 6,591,692,800 B. Kept: embeddings and head 2 x 32001 x 5120 = 327,690,240, 81 norms of 5120
    # (414,720): 328,104,960 at 2 B (AutoAWQ's float16, not the config's float32) = 656,209,920 B.
    # Total 7,247,902,720 B: the 7.25 GB of the repo's model.safetensors (kvplan said 7,904,112,640 B, the kept
    # tensors at 4 B)
    d = estimate_json(TULU_AWQ)
    assert d["model"]["param_count"] == 12_687_769_600 + 328_104_960
    assert d["model"]["weights"]["total_bytes"] == 6_591_692_800 + 656_209_920
    assert d["model"]["weight_dtype"] == "int4 + float16"


def test_bigdl_low_bit_checkpoint_is_not_sized_as_its_float32_config():
    # ipex-llm's save_low_bit writes "bigdl_transformers_low_bit": qtype into config.json and its own low-bit
    # tensors beside it; the config still says float32, which kvplan sized as 2,779,683,840 x 4 B = 11.12 GB and
    # --engine vllm planned (vLLM has no BigDL method). Phi-2's K/V are still read: 2 x 32 layers x 32 heads x
    # 80 x 2 B = 327,680 B a token
    d = estimate_json(PHI2_BIGDL)
    assert d["bytes_per_token"] == 2 * 32 * 32 * 80 * 2
    assert d["model"]["param_count"] == 2_779_683_840
    assert d["model"]["weight_bytes"] is None  # not known (capacity.weights.require_known); it said 0 B before
    out = kvplan("estimate", PHI2_BIGDL, "--gpu", "h100", "--engine", "vllm")
    assert out.returncode == 2 and out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "bigdl_transformers_low_bit 'mixed_fp4'" in lines[0]


def test_gemma2_mlx_checkpoint_is_sized_as_mlx_lm_stores_it():
    # mlx-lm gemma2.py (ml-explore/mlx-lm d78bf58): nn.Linear q/k/v/o_proj, gate/up/down_proj (no biases),
    # nn.Embedding, the head tied (embed_tokens.as_linear), 4 RMSNorms a layer + the final one. 8-bit affine,
    # group 64, bfloat16 scales and biases: 1 + 2 x 2 / 64 = 1.0625 B a quantized weight.
    # Per layer q 3584 x 4096, k, v 3584 x 2048, o 4096 x 3584, gate, up 3584 x 14336, down 14336 x 3584 =
    # 198,180,864; x 42 = 8,323,596,288; + embeddings 256000 x 3584 = 917,504,000: 9,241,100,288 quantized
    # (every input width divides by 64) = 9,818,669,056 B; norms (42 x 4 + 1) x 3584 = 605,696 at 2 B = 1,211,392
    d = estimate_json(GEMMA2_MLX)
    assert d["model"]["param_count"] == 9_241_100_288 + 605_696
    assert d["model"]["weight_bytes"] == 9_241_100_288 * 17 // 16 + 605_696 * 2 == 9_819_880_448


def test_wrapper_root_dtype_sizes_the_checkpoint_not_the_nested_text_configs():
    # The root says bfloat16, text_config float32: vLLM 0.34 get_torch_dtype reads the root's first. Text model
    # (Qwen2.5-7B): embeddings and untied head 2 x 152064 x 3584 = 1,089,994,752; a layer q 3584 x 3584 + 3584,
    # k and v 3584 x 512 + 512 each, o 3584 x 3584, MLP 3 x 3584 x 18944, 2 norms x 3584 = 233,057,792, x 28 =
    # 6,525,618,176; final norm 3584: 7,615,616,512 parameters at 2 B (it said 30.46 GB, at 4 B); the vision tower
    # (676,550,144 parameters: tests/test_vision_towers.py) at the root's 2 B too, not its vision_config's float32
    d = estimate_json(QWEN25VL_TF453)
    assert d["model"]["param_count"] == 7_615_616_512
    assert d["model"]["weight_bytes"] == (7_615_616_512 + 676_550_144) * 2
    assert d["bytes_per_token"] == 2 * 28 * 4 * 128 * 2


def test_phi3_small_is_read_as_sglang_builds_it_not_guessed():
    # SGLang 0.5.23 phi3_small.py: RadixAttention on every layer (the blocksparse ones too), 8 KV heads of
    # 4096 / 32 = 128. Parameters (biased query_key_value, dense, up_proj, down_proj; LayerNorms with a bias; head
    # tied): a layer 4096 x 6144 + 6144 + 4096 x 4096 + 4096 + 4096 x 28672 + 28672 + 14336 x 4096 + 4096 + 4 x 4096
    # = 218,163,200, x 32 = 6,981,222,400; embeddings 100352 x 4096 = 411,041,792; final LayerNorm 8192:
    # 7,392,272,384 (the model card's 7.39B); it was guessed at 8,606,978,048
    d = estimate_json(PHI3_SMALL)
    assert d["model"]["reading"] == "exact"
    assert d["bytes_per_token"] == 2 * 32 * 8 * 128 * 2
    assert d["model"]["param_count"] == 7_392_272_384
    assert d["model"]["weight_bytes"] == 7_392_272_384 * 2
