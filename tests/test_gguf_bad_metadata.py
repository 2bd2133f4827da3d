"""GGUF files whose metadata or header is junk: each is one stderr line naming the
key (or the header entry) and exit 1, never a traceback, an internal error or a
hang. Before, a 1 KB file with gemma2.block_count = 10**12 built a per-layer list
for ever, and wrong-typed counts reached int(), // and set() (fuzz report 1.2, 1.3).

The files are written here byte by byte, not with the gguf package (which
test_weights_gguf.py uses for real files): its writer cannot give a count the
wrong type or claim more entries than the file holds.
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import pytest

_TYPES = {"u32": 4, "i32": 5, "f32": 6, "bool": 7, "str": 8, "array": 9, "u64": 10, "i64": 11, "f64": 12}
_PACK = {"u32": "<I", "i32": "<i", "f32": "<f", "bool": "<?", "u64": "<Q", "i64": "<q", "f64": "<d"}


class Raw:
    """A value written as given: a GGUF value type and its bytes (a length claim the bytes do not back)."""

    def __init__(self, vtype: str, payload: bytes):
        self.vtype, self.payload = vtype, payload


def _string(text: str) -> bytes:
    raw = text.encode()
    return struct.pack("<Q", len(raw)) + raw


def _value(v) -> tuple[str, bytes]:
    if isinstance(v, Raw):
        return v.vtype, v.payload
    if isinstance(v, bool):
        return "bool", struct.pack("<?", v)
    if isinstance(v, int):
        kind = "u32" if 0 <= v < 2**32 else "u64" if v >= 0 else "i64"
        return kind, struct.pack(_PACK[kind], v)
    if isinstance(v, float):
        return "f64", struct.pack("<d", v)
    if isinstance(v, str):
        return "str", _string(v)
    assert isinstance(v, list)
    etype = _value(v[0])[0] if v else "u32"
    return "array", struct.pack("<IQ", _TYPES[etype], len(v)) + b"".join(_value(x)[1] for x in v)


def gguf_bytes(meta: dict, tensors: int | None = None) -> bytes:
    """GGUF v3 with `meta` and one F16 tensor token_embd.weight of 4 x 512 (4 KiB of zeros);
    `tensors` overrides the tensor count the header claims."""
    body = b""
    for key, v in meta.items():
        vtype, payload = _value(v)
        body += _string(key) + struct.pack("<I", _TYPES[vtype]) + payload
    table = _string("token_embd.weight") + struct.pack("<I", 2) + struct.pack("<QQ", 512, 4) + struct.pack("<IQ", 1, 0)
    out = b"GGUF" + struct.pack("<IQQ", 3, 1 if tensors is None else tensors, len(meta)) + body + table
    out += b"\0" * (-len(out) % 32)
    return out + b"\0" * (4 * 512 * 2)


BASE = {
    "llama": {"llama.block_count": 4, "llama.attention.head_count": 8, "llama.attention.head_count_kv": 2,
              "llama.embedding_length": 512},
    "qwen2": {"qwen2.block_count": 4, "qwen2.attention.head_count": 8, "qwen2.attention.head_count_kv": 2,
              "qwen2.embedding_length": 512},
    "qwen3moe": {"qwen3moe.block_count": 2, "qwen3moe.attention.head_count": 8, "qwen3moe.attention.head_count_kv": 4,
                 "qwen3moe.embedding_length": 512, "qwen3moe.attention.key_length": 128,
                 "qwen3moe.attention.value_length": 128, "qwen3moe.expert_count": 8, "qwen3moe.expert_used_count": 2,
                 "qwen3moe.expert_feed_forward_length": 256},
    "gemma2": {"gemma2.block_count": 4, "gemma2.attention.head_count": 8, "gemma2.attention.head_count_kv": 2,
               "gemma2.embedding_length": 512},
    "gemma3": {"gemma3.block_count": 12, "gemma3.attention.head_count": 4, "gemma3.attention.head_count_kv": 1,
               "gemma3.embedding_length": 512, "gemma3.attention.key_length": 256, "gemma3.attention.value_length": 256,
               "gemma3.attention.sliding_window": 512},
}

NAN, INF = float("nan"), float("inf")
FOUR = Raw("str", struct.pack("<Q", 2**62))  # a string that claims 4 EiB

# id: (architecture, metadata set over the base, text the one line must hold)
CASES = {
    # counts that size a per-layer list: refused before the list is built
    "block_count_1e12_gemma2": ("gemma2", {"gemma2.block_count": 10**12}, "gemma2.block_count must be an integer <= 10,000, got 1,000,000,000,000"),
    "block_count_1e12_gemma3": ("gemma3", {"gemma3.block_count": 10**12}, "gemma3.block_count must be an integer <= 10,000"),
    "block_count_2e64_llama": ("llama", {"llama.block_count": 2**64 - 1}, "llama.block_count must be an integer <= 10,000"),
    "block_count_10001": ("qwen2", {"qwen2.block_count": 10_001}, "qwen2.block_count must be an integer <= 10,000"),
    "block_count_zero": ("llama", {"llama.block_count": 0}, "llama.block_count must be an integer >= 1, got 0"),
    "block_count_negative": ("llama", {"llama.block_count": -1}, "llama.block_count must be an integer >= 1, got -1"),
    "block_count_fraction": ("llama", {"llama.block_count": 1.5}, "llama.block_count must be an integer >= 1, got 1.5"),
    "block_count_whole_float": ("llama", {"llama.block_count": 4.0}, "llama.block_count must be an integer"),
    "block_count_f32": ("llama", {"llama.block_count": Raw("f32", struct.pack("<f", 4.0))}, "llama.block_count must be an integer"),
    "block_count_nan": ("llama", {"llama.block_count": NAN}, "llama.block_count must be an integer >= 1, got nan"),
    "block_count_inf": ("llama", {"llama.block_count": INF}, "llama.block_count must be an integer >= 1, got inf"),
    "block_count_text": ("llama", {"llama.block_count": "abc"}, "llama.block_count must be an integer >= 1, got 'abc'"),
    "block_count_text_digits": ("llama", {"llama.block_count": "4"}, "llama.block_count must be an integer >= 1, got '4'"),
    "block_count_bool": ("llama", {"llama.block_count": True}, "llama.block_count must be an integer >= 1, got True"),
    "block_count_array": ("llama", {"llama.block_count": [4, 4]}, "llama.block_count must be an integer >= 1, got [4, 4]"),
    "block_count_nested": ("llama", {"llama.block_count": [[4], [4]]}, "llama.block_count must be an integer"),
    "gemma2_block_count_text": ("gemma2", {"gemma2.block_count": "x"}, "gemma2.block_count must be an integer"),
    # the other counts
    "head_count_zero": ("llama", {"llama.attention.head_count": 0}, "llama.attention.head_count must be an integer >= 1, got 0"),
    "head_count_nan": ("llama", {"llama.attention.head_count": NAN}, "llama.attention.head_count must be an integer"),
    "head_count_huge": ("llama", {"llama.attention.head_count": 2**40}, "llama.attention.head_count must be an integer <= 100,000"),
    "head_count_kv_fraction": ("llama", {"llama.attention.head_count_kv": 1.5}, "llama.attention.head_count_kv must be an integer >= 1, got 1.5"),
    "head_count_kv_zero": ("llama", {"llama.attention.head_count_kv": 0}, "llama.attention.head_count_kv must be an integer >= 1, got 0"),
    "head_count_kv_nested": ("llama", {"llama.attention.head_count_kv": [[1], [2]]}, "llama.attention.head_count_kv must be an integer or an array of 4 (block_count) integers"),
    "head_count_kv_nested_per_layer": ("llama", {"llama.attention.head_count_kv": [[2], [2], [2], [2]]}, "llama.attention.head_count_kv[0] must be an integer >= 1, got [2]"),
    "head_count_kv_layer_zero": ("llama", {"llama.attention.head_count_kv": [2, 0, 2, 2]}, "llama.attention.head_count_kv[1] must be an integer >= 1, got 0"),
    "head_count_kv_text": ("llama", {"llama.attention.head_count_kv": "2"}, "llama.attention.head_count_kv must be an integer"),
    "embedding_length_text": ("llama", {"llama.embedding_length": "512"}, "llama.embedding_length must be an integer >= 1, got '512'"),
    "embedding_length_inf": ("llama", {"llama.embedding_length": INF}, "llama.embedding_length must be an integer"),
    "embedding_length_below_heads": ("llama", {"llama.embedding_length": 4}, "llama.embedding_length must be >= llama.attention.head_count (8)"),
    "feed_forward_length_negative": ("llama", {"llama.feed_forward_length": -1}, "llama.feed_forward_length must be an integer >= 1, got -1"),
    "feed_forward_length_array": ("llama", {"llama.feed_forward_length": [2048, 2048]}, "llama.feed_forward_length must be an integer"),
    "context_length_nan": ("llama", {"llama.context_length": NAN}, "llama.context_length must be an integer >= 0, got nan"),
    "context_length_negative": ("llama", {"llama.context_length": -8192}, "llama.context_length must be an integer >= 0, got -8,192"),
    "key_length_zero": ("llama", {"llama.attention.key_length": 0}, "llama.attention.key_length must be an integer >= 1, got 0"),
    "value_length_text": ("llama", {"llama.attention.value_length": "x"}, "llama.attention.value_length must be an integer"),
    "vocab_size_negative": ("llama", {"llama.vocab_size": -1}, "llama.vocab_size must be an integer >= 0, got -1"),
    "vocab_size_nan": ("llama", {"llama.vocab_size": NAN}, "llama.vocab_size must be an integer"),
    "expert_count_text": ("qwen3moe", {"qwen3moe.expert_count": "8"}, "qwen3moe.expert_count must be an integer >= 0, got '8'"),
    "expert_count_nested": ("qwen3moe", {"qwen3moe.expert_count": [[8]]}, "qwen3moe.expert_count must be an integer"),
    "expert_used_over_experts": ("qwen3moe", {"qwen3moe.expert_used_count": 9}, "qwen3moe.expert_used_count must be an integer <= 8, got 9"),
    "expert_used_fraction": ("qwen3moe", {"qwen3moe.expert_used_count": 1.5}, "qwen3moe.expert_used_count must be an integer"),
    # windows
    "sliding_window_text": ("qwen2", {"qwen2.attention.sliding_window": "x"}, "qwen2.attention.sliding_window must be an integer >= 0, got 'x'"),
    "sliding_window_fraction": ("gemma2", {"gemma2.attention.sliding_window": 1.5}, "gemma2.attention.sliding_window must be an integer"),
    "sliding_window_array": ("gemma3", {"gemma3.attention.sliding_window": [512]}, "gemma3.attention.sliding_window must be an integer"),
    "sliding_window_negative": ("gemma2", {"gemma2.attention.sliding_window": -4096}, "gemma2.attention.sliding_window must be an integer >= 0"),
    "sliding_window_pattern_text": ("gemma3", {"gemma3.attention.sliding_window_pattern": "x"}, "gemma3.attention.sliding_window_pattern must be an integer >= 0, got 'x'"),
    "sliding_window_pattern_bool": ("gemma3", {"gemma3.attention.sliding_window_pattern": True}, "gemma3.attention.sliding_window_pattern must be an integer"),
    "sliding_window_pattern_huge": ("gemma2", {"gemma2.attention.sliding_window_pattern": 10**12}, "gemma2.attention.sliding_window_pattern must be an integer <= 10,000"),
    "sliding_window_pattern_short": ("gemma3", {"gemma3.attention.sliding_window_pattern": [True, False]}, "gemma3.attention.sliding_window_pattern must be an integer or an array of 12 (block_count) booleans"),
    "sliding_window_pattern_floats": ("gemma2", {"gemma2.attention.sliding_window_pattern": [1.5, 0.0, 1.5, 0.0]}, "gemma2.attention.sliding_window_pattern[0] must be true or false, got 1.5"),
    "architecture_array": ("llama", {"general.architecture": ["llama", "qwen2"]}, "GGUF general.architecture an array of 2 entries is not one kvplan translates"),
    "alignment_text": ("llama", {"general.alignment": "x" * 5000}, "GGUF metadata general.alignment must be an integer >= 1, got 'xxx"),
    "alignment_bool": ("llama", {"general.alignment": True}, "GGUF metadata general.alignment must be an integer >= 1, got True"),
    # a header that claims more than the file holds: refused before reading or allocating
    "array_claims_2e60_entries": ("llama", {"llama.block_count": Raw("array", struct.pack("<IQ", 10, 2**60))},
                                  "metadata key 'llama.block_count': an array of 1,152,921,504,606,846,976 entries cannot fit"),
    "string_array_claims_2e40": ("llama", {"tokenizer.ggml.tokens": Raw("array", struct.pack("<IQ", 8, 2**40))},
                                 "metadata key 'tokenizer.ggml.tokens': an array of 1,099,511,627,776 entries cannot fit"),
    "nested_array_claims_2e62": ("llama", {"tokenizer.ggml.merges": Raw("array", struct.pack("<IQ", 9, 2**62))},
                                 "metadata key 'tokenizer.ggml.merges': an array of 4,611,686,018,427,387,904 entries cannot fit"),
    "string_claims_4_eib": ("llama", {"general.name": FOUR}, "metadata key 'general.name': a 4,611,686,018,427,387,904-byte string runs past the end"),
    "architecture_claims_4_eib": ("llama", {"general.architecture": FOUR}, "metadata key 'general.architecture': a 4,611,686,018,427,387,904-byte string"),
}


def _write(tmp_path: Path, arch: str, changes: dict, tensors: int | None = None) -> str:
    meta = {"general.architecture": arch, **BASE[arch], **changes}
    path = tmp_path / "m.gguf"
    path.write_bytes(gguf_bytes(meta, tensors))
    return str(path)


class _WorkBudget:
    """Fail fast by construction: at most `lines` Python lines run in kvplan/weights/
    (the GGUF reader and the weights loader) during the command; one more raises, and
    the command reports an internal error. A per-layer list of 10**12 entries needs
    10**12 lines; reading one of these files, a few hundred."""

    def __init__(self, lines: int = 200_000):
        self.left = lines

    def _local(self, frame, event, arg):
        if event == "line":
            self.left -= 1
            if self.left < 0:
                raise RuntimeError("the GGUF reader ran past its work budget")
        return self._local

    def _global(self, frame, event, arg):
        name = Path(frame.f_code.co_filename)
        if name.parent.name == "weights" and name.parent.parent.name == "kvplan":
            return self._local
        return None

    def __enter__(self):
        self.saved = sys.gettrace()
        sys.settrace(self._global)
        return self

    def __exit__(self, *exc):
        sys.settrace(self.saved)


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err and "internal error" not in err, err
    return lines[0]


@pytest.mark.parametrize("command", ["estimate", "weights"])
@pytest.mark.parametrize("arch", list(BASE))
def test_the_base_files_read(cli, tmp_path, arch, command):
    # the writer above makes files kvplan reads: each refusal below is the changed key's
    code, out, err = cli(command, _write(tmp_path, arch, {}))
    assert code == 0, err


@pytest.mark.parametrize("command", ["estimate", "weights"])
@pytest.mark.parametrize("case", list(CASES))
def test_bad_metadata_is_one_line_naming_the_key(cli, tmp_path, case, command):
    arch, changes, words = CASES[case]
    path = _write(tmp_path, arch, changes)
    with _WorkBudget():
        code, out, err = cli(command, path)
    line = _one_line(err)
    assert code in (1, 2) and out == "" and path in line and words in line, line


@pytest.mark.parametrize("tensors, words", [
    (2**63, "9,223,372,036,854,775,808 tensors and 5 metadata entries cannot fit in"),
    (2**64 - 1, "18,446,744,073,709,551,615 tensors"),
])
def test_a_tensor_count_past_the_file_is_one_line(cli, tmp_path, tensors, words):
    path = _write(tmp_path, "llama", {}, tensors=tensors)
    for command in ("estimate", "weights"):
        with _WorkBudget():
            code, out, err = cli(command, path)
        line = _one_line(err)
        assert code == 1 and path in line and words in line, line


def test_a_key_claiming_4_eib_is_one_line(cli, tmp_path):
    path = tmp_path / "key.gguf"
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", 2**62) + b"\0" * 64)
    with _WorkBudget():
        code, out, err = cli("estimate", str(path))
    line = _one_line(err)
    assert code == 1 and "the key of metadata entry 1 of 1: a 4,611,686,018,427,387,904-byte string" in line, line


@pytest.mark.parametrize("value, words", [
    (10**9, "split.count must be an integer from 0 to 99,999, got 1,000,000,000"),
    ("2", "split.count must be an integer from 0 to 99,999, got '2'"),
])
def test_a_split_count_past_five_digits_is_one_line(cli, tmp_path, value, words):
    # 10**9 built a list of a billion part names (a hang)
    path = tmp_path / "m-00001-of-00002.gguf"
    path.write_bytes(gguf_bytes({"general.architecture": "llama", **BASE["llama"], "split.count": value}))
    with _WorkBudget():
        code, out, err = cli("weights", "llama-3.1-8b", "--weights", str(path))
    line = _one_line(err)
    assert code == 1 and words in line, line
