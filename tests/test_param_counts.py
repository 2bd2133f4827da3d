"""Config-estimated parameter counts of every bundled model against published figures.

When no checkpoint bytes are known, kvplan sizes the weights as parameter count x dtype
(kvplan/configs/params.py), so these counts decide capacity. Each figure below comes from
outside kvplan: an exact count (a model card, or the safetensors metadata a public page quotes),
a rounded figure from a model card or paper (then the tolerance is the rounding), or a count
worked out by hand from the architecture (the arithmetic is written out beside it). Sources
were checked with the search tools this session, except those marked [recalled] (figures from
memory of the model card or HF page, not re-checked: trust them less). "HF" means the Hugging Face
model page's safetensors count.

kvplan counts the text model only: a vision / audio encoder and a multi-token-prediction (MTP)
module are not counted. Where a published total includes them, the hand-counted encoder is
added (or the comparison says so).
"""

from __future__ import annotations

import pytest

from kvplan import load_model
from kvplan.configs.build import build_model

B = 10**9


def _within(got: int, expected: float, tolerance: float) -> bool:
    return abs(got - expected) <= tolerance * expected


# (alias, published count, tolerance, source). Tolerance 0.001 for exact counts (kvplan's count may
# differ by a bias or norm), 0.01 for figures given to three digits, and the rounding of the
# figure (half its last digit) where that is larger.
PUBLISHED = [
    # -- exact counts
    ("gpt2", 124_439_808, 0.001, "GPT-2 small with tied embeddings; quoted by public nanoGPT tests"),
    ("gpt-neo-125m", 125_198_592, 0.001, "EleutherAI/gpt-neo-125m, public parameter tables"),
    ("pythia-1b", 1_011_781_632, 0.001, "EleutherAI/pythia-1b, public parameter tables"),
    ("gpt-j-6b", 6_050_882_784, 0.001, "EleutherAI/gpt-j-6b as transformers loads it (public README); "
                                       "the model card's n_parameters 6,053,381,344 is mesh-transformer-jax's"),
    ("bloom", 176_247_271_424, 0.001, "bigscience/bloom model card: 176,247,271,424 parameters"),
    ("llama-2-7b", 6_738_415_616, 0.001, "HF meta-llama/Llama-2-7b-hf"),
    ("llama-3.1-8b", 8_030_261_248, 0.001, "HF safetensors metadata (public spec pages)"),
    ("llama-3.1-70b", 70_553_706_496, 0.001, "HF safetensors metadata"),
    ("llama-3.1-405b", 405_853_388_800, 0.001, "HF safetensors metadata (public recount)"),
    ("mistral-7b-v0.1", 7_241_732_096, 0.001, "HF mistralai/Mistral-7B-v0.1"),
    ("mistral-7b-v0.3", 7_248_023_552, 0.001, "HF mistralai/Mistral-7B-v0.3"),
    ("mixtral-8x7b", 46_702_792_704, 0.001, "HF safetensors metadata"),
    ("qwen2.5-7b", 7_615_616_512, 0.001, "HF safetensors metadata"),
    ("qwen3-8b", 8_190_735_360, 0.001, "HF Qwen/Qwen3-8B"),
    ("qwen3-30b-a3b", 30_532_122_624, 0.001, "HF Qwen/Qwen3-30B-A3B"),
    ("gemma-7b", 8_537_680_896, 0.001, "HF google/gemma-7b safetensors metadata"),
    ("gemma-2-9b", 9_241_705_984, 0.001, "HF google/gemma-2-9b safetensors metadata"),
    ("gemma-3-1b", 999_885_952, 0.001, "HF google/gemma-3-1b-it"),
    ("phi-3-mini-4k", 3_821_079_552, 0.001, "HF microsoft/Phi-3-mini-4k-instruct"),
    ("phi-4", 14_659_507_200, 0.001, "HF microsoft/phi-4 safetensors metadata"),
    ("mamba-2.8b", 2_768_345_600, 0.001, "HF state-spaces/mamba-2.8b-hf"),
    # Qwen-VL text models have the text shapes of the Qwen releases above (same widths, layers, vocab)
    ("qwen2.5-vl-7b", 7_615_616_512, 0.001, "text model = Qwen2.5-7B's published count"),
    ("qwen3-vl-8b", 8_190_735_360, 0.001, "text model = Qwen3-8B's published count"),
    ("qwen3-vl-30b-a3b", 30_532_122_624, 0.001, "text model = Qwen3-30B-A3B's published count"),
    ("qwen3-vl-4b", 4_022_468_096, 0.001, "text model = Qwen3-4B (tied): HF Qwen/Qwen3-4B"),
    # Qwen3.5 text decoders counted by public reimplementations (transformers meta-device counts, and a
    # GGUF tensor table): 26,895,998,464 text-only vs 27,356,728,560 with the vision tower for the 27B
    ("qwen3.6-27b", 26_895_998_464, 0.001, "public counts of the Qwen3.6/3.8-27B language model (GGUF tensor "
                                           "table; 27,356,728,560 with the 460,730,096-parameter vision tower)"),
    ("qwen3.5-35b-a3b", 34_660_610_688, 0.001, "public count of the Qwen3.5-35B-A3B text decoder "
                                               "(meta-device instantiation, 'match exactly')"),
    # -- figures to three digits, or rounded model-card figures (tolerance: the rounding)
    ("bamba-9b", 9.78 * B, 0.01, "ibm-fms/Bamba-9B model card: 9B (9.78B)"),
    ("nemotron-3-nano-30b-a3b", 31.6 * B, 0.01, "NVIDIA Nemotron 3 Nano: 31.6B total parameters (Replicate readme)"),
    ("granite-4.0-h-small", 32 * B, 0.5 / 32, "IBM Granite docs: H Small 32B total / 9B active"),
    ("granite-4.0-h-tiny", 6.94 * B, 0.01, "7B total / 1B active (IBM docs); 6.94B params (HF, whatmodel page)"),
    ("dbrx-instruct", 132 * B, 0.5 / 132, "DBRX model card: 132B total, 36B active"),
    ("llama-4-maverick", 400 * B, 0.01, "HF Llama 4 blog: ~400B total (402B with the vision encoder)"),
    ("longcat-flash-chat", 560 * B, 0.01, "LongCat-Flash report: 560B total"),
    ("minimax-m1", 456 * B, 0.5 / 456, "MiniMax-M1 / Text-01: 456B total, 45.9B activated"),
    ("minimax-m1-hf", 456 * B, 0.5 / 456, "as minimax-m1"),
    ("minimax-text-01", 456 * B, 0.5 / 456, "as minimax-m1"),
    ("minimax-m2", 230 * B, 0.01, "SGLang docs / MiniMax: 230B total, 10B active"),
    ("lfm2-8b-a1b", 8.3 * B, 0.01, "LFM2-8B-A1B: 8.3B total, 1.5B active [recalled]"),
    ("lfm2-1.2b", 1.2 * B, 0.05 / 1.2, "LFM2-1.2B (rounded name) [recalled]"),
    ("deepseek-v3", 671 * B, 0.01, "DeepSeek-V3: 671B (685B on HF with the 14B MTP module) [recalled]"),
    ("deepseek-v4-flash", 284_332_230_231 + 40 * 256, 0, "DeepSeek-V4-Flash as transformers 5.25 builds it (meta "
                                                         "device, sum of numel) with the e_score_correction_bias "
                                                         "buffers of its 40 non-hash layers; published: 284B "
                                                         "without the MTP layer"),
    ("deepseek-v4-pro", 1_572_997_179_491 + 58 * 384, 0, "DeepSeek-V4-Pro as transformers 5.25 builds it, with the "
                                                         "58 non-hash layers' e_score_correction_bias; published: "
                                                         "1.6T"),
    ("deepseek-v4.1-flash", 552 * B - 485_268_480, 0.5 / 552,
     "DeepSeek-V4.1-Flash: a 552B backbone (hosting docs, e.g. mittwald's and S3NS's model pages) less its vision "
     "tower (485,268,480 by hand from vLLM's v4/common/vision.py); its 197B of Engram tables are not weights"),
    ("deepseek-v3.2-exp", 671 * B, 0.01, "DeepSeek-V3.2-Exp: V3's 671B plus the indexer (685B with MTP) [recalled]"),
    ("deepseek-v2", 236 * B, 0.01, "DeepSeek-V2: 236B total, 21B active [recalled]"),
    ("deepseek-v2-lite", 15.7 * B, 0.01, "DeepSeek-V2-Lite: 15.7B total, 2.4B active [recalled]"),
    ("deepseek-llm-67b", 67 * B, 0.5 / 67, "DeepSeek LLM 67B (rounded) [recalled]"),
    ("glm-4.5-air", 106 * B, 0.01, "zai-org/GLM-4.5 model card: GLM-4.5-Air 106B total, 12B active (MTP layer not counted)"),
    ("glm-4.7", 355 * B, 0.01, "zai-org/GLM-4.5 model card: 355B total, 32B active; GLM-4.7 has its shapes (MTP not counted)"),
    ("glm-4.7-flash", 30 * B, 0.5 / 30, "GLM-4.7-Flash: 30B-A3B (rounded) [recalled]"),
    ("gpt-oss-120b", 116.83 * B, 0.01, "gpt-oss model card: 116.83B total [recalled]"),
    ("gpt-oss-20b", 20.91 * B, 0.01, "gpt-oss model card: 20.91B total [recalled]"),
    ("jamba-v0.1", 52 * B, 0.5 / 52, "Jamba v0.1: 52B total, 12B active (rounded) [recalled]"),
    ("qwen2-57b-a14b", 57 * B, 0.5 / 57, "Qwen2-57B-A14B (rounded) [recalled]"),
    ("qwen3-next-80b-a3b", 80 * B, 0.5 / 80, "Qwen3-Next-80B-A3B (rounded) [recalled]"),
    # MPT-7B by hand: vocab 50,432 x 4,096 tied + 32 x (Wqkv 3 x 4096^2 + out 4096^2 + MLP 2 x 4 x 4096^2
    # + two bias-free LayerNorms 2 x 4096) + final norm 4096 = 6,649,286,656
    ("mpt-7b-instruct", 50_432 * 4096 + 32 * (12 * 4096**2 + 2 * 4096) + 4096, 0.001,
     "hand count; the MPT-7B model card's 6.7B (recalled; not re-checked)"),
    ("opt-6.7b", 6.7 * B, 0.05 / 6.7, "OPT paper: OPT-6.7B [recalled]"),
    ("xglm-1.7b", 1.7 * B, 0.05 / 1.7, "XGLM paper: 1.7B [recalled]"),
    ("starcoder", 15.5 * B, 0.05 / 15.5, "StarCoder: 15.5B [recalled]"),
    ("stablelm-2-1.6b", 1.6 * B, 0.05 / 1.6, "StableLM 2 1.6B (rounded) [recalled]"),
    ("mamba-codestral-7b", 7.3 * B, 0.05 / 7.3, "Mamba-Codestral-7B: 7.3B (HF 7.29B) [recalled]"),
    ("exaone-4.0-32b", 32 * B, 0.5 / 32, "EXAONE 4.0 32B (rounded) [recalled]"),
    ("falcon-mamba-7b", 7.27 * B, 0.01, "HF tiiuae/falcon-mamba-7b: 7.27B [recalled]"),
    ("falcon-h1-7b", 7.59 * B, 0.01, "HF tiiuae/Falcon-H1-7B: 7.59B [recalled]"),
    ("nemotron-h-8b", 8 * B, 0.5 / 8, "Nemotron-H-8B (rounded) [recalled]"),
    ("olmo-3-7b", 7 * B, 0.5 / 7, "Olmo-3-1025-7B (rounded) [recalled]"),
    ("olmo-hybrid-7b", 7 * B, 0.5 / 7, "OLMo Hybrid 7B (rounded) [recalled]"),
    ("minicpm3-4b", 4 * B, 0.5 / 4, "MiniCPM3-4B (rounded) [recalled]"),
    ("glm-4-9b-chat", 9.4 * B, 0.01, "THUDM/glm-4-9b-chat: 9.4B (HF) [recalled]"),
    ("glm-4-9b-chat-hf", 9.4 * B, 0.01, "THUDM/glm-4-9b-chat-hf: 9.4B (HF) [recalled]"),
    ("glm-4-9b-0414", 9 * B, 0.5 / 9, "GLM-4-9B-0414 (rounded) [recalled]"),
    ("chatglm3-6b", 6.24 * B, 0.01, "THUDM/chatglm3-6b: 6.24B (HF) [recalled]"),
    ("zamba-7b-v1", 7 * B, 0.5 / 7, "Zyphra Zamba-7B (rounded) [recalled]"),
    ("zamba2-2.7b", 2.7 * B, 0.05 / 2.7, "Zyphra Zamba2-2.7B (rounded)"),
    ("rwkv-4-7b-pile", 7 * B, 0.5 / 7, "RWKV-4 Pile 7B (rounded name) [recalled]"),
    ("rwkv-4-430m-pile", 430 * 10**6, 0.005 / 0.43, "RWKV-4 Pile 430M (rounded name) [recalled]"),
    ("recurrentgemma-9b", 9 * B, 0.5 / 9, "RecurrentGemma paper (arXiv 2404.07839): 2B and 9B sizes"),
    ("mistral-small-3.1-24b", 24 * B, 0.5 / 24, "Mistral Small 3.1 24B (rounded; includes a ~0.4B vision encoder) [recalled]"),
    ("command-r7b", 8.03 * B, 0.01, "HF CohereForAI/c4ai-command-r7b-12-2024: 8.03B (tied embeddings once) [recalled]"),
    ("internlm2.5-7b-chat", 7.74 * B, 0.01, "HF internlm/internlm2_5-7b-chat: 7.74B [recalled]"),
    ("internlm3-8b-instruct", 8.80 * B, 0.01, "HF internlm/internlm3-8b-instruct: 8.8B [recalled]"),
    ("baichuan2-7b-chat", 7.51 * B, 0.01, "HF baichuan-inc/Baichuan2-7B-Chat: 7.51B [recalled]"),
    ("recurrentgemma-2b-it", 2.7 * B, 0.01, "RecurrentGemma 2B: 2.7B in all [recalled]"),
    ("recurrentgemma-9b", 8.6 * B, 0.01, "RecurrentGemma 9B: 8.6B in all [recalled]"),
    ("kimi-k2", 1.03e12, 0.01, "Kimi K2: 1T total, 32B active (1.03T on HF) [recalled]"),
]


@pytest.mark.parametrize("alias, published, tolerance, source", PUBLISHED,
                         ids=[f"{row[0]}-{i}" for i, row in enumerate(PUBLISHED)])
def test_config_estimate_matches_published(alias, published, tolerance, source):
    got = load_model(alias).param_count
    assert _within(got, published, tolerance), f"{alias}: {got:,} vs {published:,.0f} ({source})"


# -- published figures that are not total parameters: the difference is worked out by hand

# RecurrentGemma-2B: "2B non-embedding parameters" (arXiv 2404.07839); vocab 256,000 x 2,560 tied
NON_EMBEDDING = [
    ("recurrentgemma-2b-it", 256_000 * 2_560, 2 * B, 0.05 / 2, "RecurrentGemma paper: 2B non-embedding parameters"),
]


@pytest.mark.parametrize("alias, embedding, published, tolerance, source", NON_EMBEDDING,
                         ids=[row[0] for row in NON_EMBEDDING])
def test_non_embedding_figures(alias, embedding, published, tolerance, source):
    got = load_model(alias).param_count - embedding
    assert _within(got, published, tolerance), f"{alias}: {got:,} without embeddings vs {published:,.0f} ({source})"


# Encoders kvplan does not count, counted by hand:
# SigLIP So400m/14 at 896 px (Gemma 3): 27 layers x (4 x (1152^2 + 1152) attention + 1152 x 4304 + 4304
# + 4304 x 1152 + 1152 MLP + 4 x 1152 norms) + patch 3 x 14 x 14 x 1152 + 1152 + 4096 positions x 1152
# + post norm 2 x 1152 = 416,866,032; the projector is 1152 x hidden plus a 1152 soft-embedding norm.
SIGLIP = 27 * (4 * (1152**2 + 1152) + 1152 * 4304 + 4304 + 4304 * 1152 + 1152 + 4 * 1152) \
    + 3 * 14 * 14 * 1152 + 1152 + 4096 * 1152 + 2 * 1152


def _qwen35_vision(out: int) -> int:
    """Qwen3.5 vision tower (27 blocks of 1152, MLP 4304, biased; patch 3 x 2 x 16 x 16; 2304 positions)
    and its merger (LayerNorm 1152, 4608 x 4608 and 4608 x out, biased)."""
    block = 1152 * 3456 + 3456 + 1152**2 + 1152 + 1152 * 4304 + 4304 + 4304 * 1152 + 1152 + 4 * 1152
    return 27 * block + 3 * 2 * 16 * 16 * 1152 + 1152 + 2304 * 1152 + 2 * 1152 + 4608**2 + 4608 + 4608 * out + out


def _qwen35_mtp(hidden: int, heads: int, kv: int, ffn: int) -> int:
    """Qwen3.5's MTP module: one gated-attention decoder layer (q doubled for the gate, q/k norms, two norms),
    its feed-forward, the 2 x hidden -> hidden fc and three norms."""
    attn = hidden * heads * 256 * 2 + 2 * hidden * kv * 256 + heads * 256 * hidden + 2 * 256
    return attn + ffn + 2 * hidden + 2 * hidden * hidden + 3 * hidden


WITH_ENCODERS = [
    # Gemma 3: the HF counts (safetensors metadata: 4,300,079,472 / 12,187,325,040 / 27,432,406,640)
    ("gemma-3-4b", SIGLIP + 1152 * 2560 + 1152, 4_300_079_472, 0.001, "HF google/gemma-3-4b-it"),
    ("gemma-3-12b", SIGLIP + 1152 * 3840 + 1152, 12_187_325_040, 0.001, "HF google/gemma-3-12b-it"),
    ("gemma-3-27b", SIGLIP + 1152 * 5376 + 1152, 27_432_406_640, 0.001, "HF google/gemma-3-27b-it"),
    # Qwen3.6-27B: model.safetensors.index.json total_size 55.56 GB (bf16) -> 27.78B with vision and MTP
    ("qwen3.6-27b", _qwen35_vision(5120) + _qwen35_mtp(5120, 24, 4, 3 * 5120 * 17408), 27.78 * B, 0.005 / 27.78,
     "Qwen/Qwen3.6-27B total_size 55.56 GB (a public write-up of model.safetensors.index.json)"),
    # Qwen3.5-35B-A3B: 36B on HF with vision and MTP (MTP: one MoE layer, 256 x 3 x 2048 x 512 experts,
    # router, a shared expert of 512 and its gate)
    ("qwen3.5-35b-a3b", _qwen35_vision(2048) + _qwen35_mtp(2048, 16, 2, 256 * 3 * 2048 * 512 + 2048 * 256
                                                            + 3 * 2048 * 512 + 2048), 36 * B, 0.5 / 36,
     "whatmodel page: Qwen3.5 35B-A3B, 36B params (HF count, rounded)"),
    # Llama 4 Scout: ~109B with its vision encoder (HF blog / transformers docs); the encoder (34 blocks of
    # 1408, MLP 5632, biased; adapter and projector) is about 0.87B, so the text model is about 108.1B
    ("llama-4-scout", 870 * 10**6, 109 * B, 0.5 / 109, "HF Llama 4 blog: Scout ~109B total"),
    # LLaVA-1.5-7B: the language model is Vicuna-7B (Llama-2-7B's 6,738,415,616) with 64 more vocabulary
    # rows in embed_tokens and lm_head; CLIP-L/336 and the projector are not counted
    ("llava-1.5-7b", 0, 6_738_415_616 + 64 * 4096 * 2, 0.001, "Llama-2-7B's count + 2 x 64 x 4,096"),
]


@pytest.mark.parametrize("alias, uncounted, published, tolerance, source", WITH_ENCODERS,
                         ids=[row[0] for row in WITH_ENCODERS])
def test_published_totals_with_encoders(alias, uncounted, published, tolerance, source):
    got = load_model(alias).param_count + uncounted
    assert _within(got, published, tolerance), f"{alias}: {got:,} with encoders vs {published:,.0f} ({source})"


def test_siglip_hand_count():
    assert SIGLIP == 416_866_032


def test_qwen35_vision_hand_count():
    # the public 27B count: 27,356,728,560 with the vision tower - 26,895,998,464 text-only
    assert _qwen35_vision(5120) == 27_356_728_560 - 26_895_998_464


# -- counts worked out by hand where no published figure separates the text model

def test_persimmon_by_hand():
    # Adept's blog says "<10 billion parameters", transformers' docs "approximately 8 billion"; by hand:
    # 36 layers x (qkv 4096 x 12288 + 12288, dense 4096^2 + 4096, q/k LayerNorms 2 x 2 x 64,
    # MLP 4096 x 16384 + 16384 + 16384 x 4096 + 4096, two LayerNorms 4 x 4096) + untied 2 x 262,144 x 4096
    # + final LayerNorm 2 x 4096
    per_layer = 4096 * 12288 + 12288 + 4096**2 + 4096 + 4 * 64 + 4096 * 16384 + 16384 + 16384 * 4096 + 4096 + 4 * 4096
    assert load_model("persimmon-8b-base").param_count == 36 * per_layer + 2 * 262_144 * 4096 + 2 * 4096


def test_rwkv_world_169m_by_hand():
    # RWKV-4 169M (Pile, vocab 50,277) is 169M; the World model is the same 12 x 768 network with a 65,536
    # vocabulary in the embeddings and the untied head: + 2 x (65,536 - 50,277) x 768 over the Pile model.
    # Pile 169M by hand: 12 blocks x (time-mix 2 x 768 + 3 x 768 + 4 x 768^2, channel-mix 2 x 768
    # + 2 x 768 x 3072 + 768^2, 2 LayerNorms 4 x 768) + ln0 and ln_out 4 x 768 + 2 x 50,277 x 768
    block = 5 * 768 + 4 * 768**2 + 2 * 768 + 2 * 768 * 3072 + 768**2 + 4 * 768
    pile = 12 * block + 4 * 768 + 2 * 50_277 * 768
    assert 168.5e6 < pile < 169.5e6  # the published 169M
    assert load_model("rwkv-4-world-169m").param_count == pile + 2 * (65_536 - 50_277) * 768


def test_falcon_tied_head_on_hf():
    # HF lists falcon-7b at 7.22B and falcon-40b at 41.8B: their checkpoints store lm_head beside the
    # tied word embeddings. Loaded, the head is the embedding matrix (tie_word_embeddings), so the
    # weights are the HF figure less vocab 65,024 x hidden.
    assert _within(load_model("falcon-7b").param_count + 65_024 * 4_544, 7.22 * B, 0.005 / 7.22)
    assert _within(load_model("falcon-40b").param_count + 65_024 * 8_192, 41.8 * B, 0.05 / 41.8)


def test_gemma_3n_text_by_hand():
    # Hugging Face's Gemma 3n post: E4B has 8B parameters in all, its audio (~0.7B) and vision (~0.3B)
    # encoders included. The text model by hand: embeddings 262,400 x 2048 (tied); per-layer embeddings
    # 262,144 x 35 x 256 and their projection 2048 x 8960 (+ norm 256); AltUp projections 6 x 2048^2; final
    # norm. Per layer: q 2048 x 2048 + q_norm 256 + o 2048 x 2048; k and v 2 x 2048 x 512 + k_norm 256 on
    # the first 20 layers; MLP 3 x 2048 x 16384; four norms; LAuReL 2 x 2048 x 64 + 2048; AltUp
    # 2048 + 16 + 64 + 2048 x 4 + 2048; per-layer gate and projection 2 x 2048 x 256 + 2048
    shared = 262_400 * 2048 + 262_144 * 35 * 256 + 2048 * 8960 + 256 + 6 * 2048**2 + 2048
    layer = 2 * 2048**2 + 256 + 3 * 2048 * 16384 + 4 * 2048 + 2 * 2048 * 64 + 2048 \
        + 2048 + 16 + 64 + 2048 * 4 + 2048 + 2 * 2048 * 256 + 2048
    kv = 2 * 2048 * 512 + 256
    by_hand = shared + 35 * layer + 20 * kv
    got = load_model("gemma-3n-e4b").param_count
    assert got == by_hand
    assert 8 * B - 1.5 * B < got < 8 * B


def test_opt_125m_exact():
    # OPT-125M: 125,239,296 parameters (public parameter tables). vocab 50,272, 768 wide, 12 layers,
    # ffn 3,072, 2,048 positions (+2 offset), biased projections, LayerNorms with bias, tied head.
    raw = {"model_type": "opt", "vocab_size": 50272, "hidden_size": 768, "num_hidden_layers": 12,
           "num_attention_heads": 12, "ffn_dim": 3072, "max_position_embeddings": 2048, "word_embed_proj_dim": 768}
    assert build_model(raw, "opt-125m").param_count == 125_239_296


def test_every_bundled_model_is_checked():
    from kvplan.sources import bundled_index

    checked = {row[0] for row in PUBLISHED + NON_EMBEDDING + WITH_ENCODERS}
    checked |= {"persimmon-8b-base", "rwkv-4-world-169m", "falcon-7b", "falcon-40b", "gemma-3n-e4b"}
    checked |= set(UNCHECKED)
    assert set(bundled_index()) <= checked, sorted(set(bundled_index()) - checked)


# Bundled models whose text-model count has no published figure to compare against: say why.
UNCHECKED = {
    "gemma-4-31b": "the published 31B includes the vision encoder, which is not counted by hand here",
    "llama-3.2-11b-vision": "the published 10.7B includes the vision encoder and cross-attention adapter",
    "kimi-linear-48b-a3b": "published as 48B (a name): 26 MoE layers x 256 experts x 3 x 2304 x 1024 alone "
                           "are 47.1B, with 0.75B of embeddings; kvplan counts 49.1B",
}


def test_kimi_linear_experts_by_hand():
    # The "48B" of Kimi-Linear-48B-A3B is a rounded name: the routed experts alone (26 MoE layers x 256 x
    # 3 x 2304 x 1024) and the untied 163,840 x 2304 embeddings exceed 47.8B.
    floor = 26 * 256 * 3 * 2304 * 1024 + 2 * 163_840 * 2304
    got = load_model("kimi-linear-48b-a3b").param_count
    assert floor < got < floor + 2 * B


@pytest.mark.parametrize("name, edit", [
    # found by benchmarks/fuzz_configs.py: a model with no attention layer gave the counters no dims
    ("recurrentgemma-9b", lambda c: c.update(block_types=["recurrent"])),
    ("zamba2-2.7b", lambda c: c.update(hybrid_layer_ids=[], layers_block_type=["mamba"] * c["num_hidden_layers"])),
])
def test_models_without_attention_layers_are_counted(name, edit):
    from kvplan.sources import bundled_config, bundled_index

    raw = bundled_config(bundled_index()[name])
    edit(raw)
    spec = build_model(raw, name, "test")
    assert not any(layer.caches for layer in spec.layers)
    delta = spec.param_count - load_model(name).param_count
    if name == "recurrentgemma-9b":
        # the 12 local-attention layers (of 38, pattern r r a) become recurrent blocks, by hand (h = lru = 4,096,
        # 16 heads of 256, 1 KV head, conv width 4, gate blocks 256): recurrent 2 x (h x lru + lru) + lru x h + h
        # + lru x 4 + lru + lru + 2 x (16 x 256^2 + lru) = 52,473,856; attention q + k + v + o = 16,777,216 +
        # 2,097,152 + 16,777,216 + o bias 4,096 = 35,655,680; 12 x (52,473,856 - 35,655,680) = 201,818,112
        assert delta == 201_818_112
    else:  # Zamba2 without hybrid layers: no shared transformer block, no per-call linears or adapters
        assert delta < 0 and spec.param_count > 0
