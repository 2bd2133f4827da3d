"""SGLang's state pool for two hybrids it serves beyond the text-only ones: Nemotron Nano VL V2 (its nemotron_h text
model under llm_config) and Ling 3.0 (BailingMoeV3ForCausalLM: KDA linear layers + MLA). Read in the 0.5.23 wheel
(python/sglang/srt/...):
- configs/hybrid_arch.py mamba2_config: a NemotronH_Nano_VL_V2_Config gives its llm_config, a NemotronHConfig, whose
  mamba2_cache_params (configs/nemotron_h.py) is Mamba2StateShape.create(intermediate_size = mamba_num_heads x
  mamba_head_dim, n_groups, mamba_num_heads, mamba_head_dim, ssm_state_size, conv_kernel) in
  mamba2_state_dtype(llm_config); arg_groups/overrides.py: NemotronH_Nano_VL_V2 is in neither _MAMBA_RADIX_CACHE_ARCHS
  nor _MAMBA_EXTRA_BUFFER_ARCHS, so no extra buffer: max_running_requests <= K // 3
  (kv_cache_configurator._calculate_mamba_ratio).
- configs/hybrid_arch.py kimi_linear_config: a BailingHybridConfig with use_kda (configs/bailing_hybrid.py:
  short_conv_kernel_size set) is pooled as Kimi Linear: KimiLinearCacheParams(KimiLinearStateShape.create(
  num_attention_heads, head_dim, short_conv_kernel_size)) on linear_layer_ids ((i + 1) % layer_group_size != 0),
  the MLA cell on full_attention_layer_ids; BailingMoeV3ForCausalLM is in _MAMBA_EXTRA_BUFFER_ARCHS (3 + 2 slots).
Configs: tests/data/configs/edge0-8b-a1b-preview.json (a real Ling 3.0 config, see tests/test_families_bailing.py);
no real NemotronH_Nano_VL_V2 config.json was found in time, so its test wraps the real nemotron-h-8b-tf5.json text
config under llm_config by hand (the wrapper is hand-written, the text model's fields are real)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvplan.engines.sglang import cell, pool
from kvplan.engines.sglang_report import _has_kda, ssm_bytes_of
from kvplan.engines.sglang_rules import RULES
from kvplan.errors import UsageError
from kvplan.sources import load_model

GIB = 2**30
DATA = Path(__file__).parent / "data" / "configs"
R0523 = RULES["0.5.23"]


def _nano_vl(tmp_path, **text):
    llm = dict(json.loads((DATA / "nemotron-h-8b-tf5.json").read_text()), **text)
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "NemotronH_Nano_VL_V2", "architectures": ["NemotronH_Nano_VL_V2"],
                                "llm_config": llm}))
    return load_model(str(path))


def _ling3(tmp_path, **changes):
    raw = json.loads((DATA / "edge0-8b-a1b-preview.json").read_text())
    raw.update(changes)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw))
    return load_model(str(path))


def test_nemotron_nano_vl_v2_state_pool(tmp_path):
    # llm_config: 24 Mamba-2 layers ("linear_attention"), 4 attention layers of 8 KV heads x 128. A layer's state:
    # conv (4 - 1) x (d_inner 128 x 64 + 2 x n_groups 8 x 128) = 3 x 10,240 x 2 B = 61,440 B; temporal 128 x 64 x
    # 128 x 4 B (no mamba_ssm_dtype: float32) = 4,194,304 B; x 24 = 102,137,856 B a request. Cell 4 x 8 x 128 x 2
    # x 2 B = 16,384 B. 0.5.23 at 20 GiB: B = 20 GiB x 0.9 / 1.9; K = int((B - per) // per) = 98; tokens
    # (20 GiB - 99 x per) // 16,384 = 693,554; no extra buffer: requests <= 98 // 3 = 32
    model = _nano_vl(tmp_path)
    c = cell(model, 1)
    assert (c.bytes, c.state.conv_bytes, c.state.ssm_bytes) == (16_384, 24 * 61_440, 24 * 4_194_304)
    got = pool(model, rest_bytes=20 * GIB, context_len=8192, rules=R0523)
    assert (got.mamba_cache_size, got.max_total_num_tokens, got.max_running_requests) == (98, 693_554, 32)


def test_nemotron_nano_vl_v2_reads_the_ssm_dtype_of_its_llm_config(tmp_path, monkeypatch):
    # mamba2_state_dtype(llm_config): its mamba_ssm_dtype bfloat16 makes the temporal state 2 B an element
    monkeypatch.delenv("SGLANG_MAMBA_SSM_DTYPE", raising=False)
    assert ssm_bytes_of(_nano_vl(tmp_path, mamba_ssm_dtype="bfloat16"))[0] == 2
    assert ssm_bytes_of(_nano_vl(tmp_path))[0] == 4


def test_ling3_kda_state_pool():
    # Edge0-8B-A1B-preview: 24 layers, layer_group_size 4: MLA on 3, 7, ..., 23 (6 layers, 512 + 64), KDA on the
    # other 18 (16 heads of head_dim 128, short_conv_kernel_size 4). KimiLinearStateShape: conv 3 x 16 x 128 x 3 x
    # 2 B = 36,864 B, temporal 16 x 128 x 128 x 4 B = 1,048,576 B a layer; x 18 = 19,537,920 B. Cell 6 x 576 x 2 B =
    # 6,912 B. 0.5.23 at 20 GiB: K = int((B - per) // per) = 519, tokens (20 GiB - 520 x per) // 6,912 = 1,637,025,
    # extra_buffer: requests <= 519 // 5 = 103
    model = load_model(str(DATA / "edge0-8b-a1b-preview.json"))
    c = cell(model, 1)
    assert (c.kind, c.bytes, c.state.conv_bytes, c.state.ssm_bytes) == ("mla", 6_912, 18 * 36_864, 18 * 1_048_576)
    got = pool(model, rest_bytes=20 * GIB, context_len=8192, rules=R0523)
    assert (got.mamba_cache_size, got.max_total_num_tokens, got.max_running_requests) == (519, 1_637_025, 103)
    # uses_kda_attention: no layer_types / linear_num_heads in this config, so the breakable prefill graph stays on
    assert not _has_kda(model)


@pytest.mark.parametrize("changes, message", [
    # 26 layers: kvplan (vLLM's _is_kda_layer) makes the trailing 24, 25 MLA; SGLang keeps them linear
    ({"num_hidden_layers": 26}, "no tail rule"),
    ({"use_mla_nope": True}, "use_mla_nope"),
    ({"full_attention_type": "gqa"}, "GQA"),
    ({"linear_head_dim": 64}, "KDA state"),
])
def test_ling3_where_sglang_pools_otherwise_is_refused(tmp_path, changes, message):
    with pytest.raises(UsageError, match=message):
        cell(_ling3(tmp_path, **changes), 1)


def test_ling3_cli_and_the_older_release(cli):
    path = str(DATA / "edge0-8b-a1b-preview.json")
    rc, out, err = cli("estimate", path, "--kv-memory", "20GiB", "--context", "8k", "--engine", "sglang",
                       "--format", "json")
    assert rc == 0, err
    assert json.loads(out)["engine"]["state_bytes_per_request"] == 19_537_920
    rc, out, err = cli("estimate", path, "--kv-memory", "20GiB", "--context", "8k", "--engine", "sglang@0.5.9")
    # 0.5.9 (model_runner.hybrid_lightning_config) would pool it as lightning attention: refused
    assert rc == 2 and "hybrid_lightning_config" in err and "Traceback" not in err
