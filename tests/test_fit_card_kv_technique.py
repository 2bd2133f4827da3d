"""`kvplan fit --engine vllm` on a card below SM 8.0 with a KV quantizer technique (--allow fp8): the candidate
"kv bf16 + fp8" stores its cache in fp8, which vLLM 0.34 refuses there as it refuses --kv-dtype fp8 (engines/
vllm_sm7.py check_pre_ampere: v1/attention/backends/triton_attn.py TritonAttentionImpl needs SM 8.9 for an fp8 KV
cache), so it is refused for the card ('engine refuses the card') and never offered as the closest; its label does
not say the cache is served as float16 (only a cache left in the checkpoint's dtype is: vllm_sm7.served_kv_dtype).

Qwen3-8B, 32K, 40 sequences on at most two 32 GB V100s: no candidate fits. With the fp8 technique refused, the
closest is the 16-bit one at TP 2, as with --kv-dtype auto alone (tests/test_fit_sm7_label.py)."""

FIT = ["fit", "qwen3-8b", "-c", "32k", "-n", "40", "--max-gpus", "2", "--gpu", "v100-32gb", "--engine", "vllm",
       "--kv-dtype", "auto"]


def test_fp8_technique_is_refused_for_the_card_not_offered_as_closest(cli):
    code, out, err = cli(*FIT, "--allow", "fp8")
    assert code != 0
    assert "closest: 2 x v100-32gb (tp 2, pp 1), kv bf16 (served as float16): pool too small" in err, err
    assert "+ fp8" not in err, err


def test_fp8_technique_row_says_the_card(cli, monkeypatch):
    # 8 sequences: the 16-bit cache fits at TP 2 (8.8 of vLLM's requests: tests/test_fit_sm7_label.py); the fp8
    # candidates are listed as refused for the card, not for vLLM's pool
    monkeypatch.setenv("COLUMNS", "250")
    code, out, err = cli(*FIT[:5], "8", *FIT[6:], "--allow", "fp8", "--explain")
    assert code == 0, err
    rows = [line for line in out.splitlines() if "+ fp8" in line]
    assert rows and all("engine refuses the card" in line and "served as" not in line for line in rows), out
