"""Does the engine's serve command need --trust-remote-code to read the model's config?

vLLM's HFConfigParser.parse (vllm/transformers_utils/config.py) reads a model_type it registers a config
class for (`_CONFIG_REGISTRY`) with remote code off; SGLang registers the classes of its `_CONFIG_REGISTRY`
(sglang/srt/utils/hf_transformers/common.py) with AutoConfig when it starts. Any other model_type goes to
transformers' AutoConfig.from_pretrained, which uses its own class for a model_type in CONFIG_MAPPING and
otherwise runs the class the config's auto_map names, only when trust_remote_code is set. The tables are
read from the released sources (kvplan.engines.vllm_remote_code_data and sglang_remote_code_data, generated
by benchmarks/remote_code_tables.py): vLLM 0.33.0 with transformers 5.20.0 and SGLang 0.5.23 with 5.19.0, the
newest transformers each accepts. Other releases register other config classes, so for them a model_type
only the engine registers is reported as unchecked.

Only config.json is read: a tokenizer that ships its own code (tokenizer_config.json's auto_map) needs the
flag too, and kvplan does not read tokenizers.
"""

from __future__ import annotations

from .._record import record
from .vllm_release import release_key


@record
class RemoteCode:
    needed: bool  # add --trust-remote-code
    note: str | None  # why, or why the engine cannot read the config at all (None: nothing to say)


def _tables(engine: str):
    if engine == "sglang":
        from . import sglang_remote_code_data as data

        return "SGLang", data
    from . import vllm_remote_code_data as data

    return "vLLM", data


def check(config_model_type: str, ships_code: bool, release: str, engine: str = "vllm") -> RemoteCode:
    """Whether `engine` ("vllm" | "sglang") `release` needs --trust-remote-code for a config of that model_type."""
    label, data = _tables(engine)
    if not config_model_type or config_model_type in data.TRANSFORMERS_CONFIG_TYPES:
        return RemoteCode(False, None)
    read = data.ENGINE_RELEASE
    if config_model_type in data.ENGINE_CONFIG_TYPES:
        asked, table = release_key(release), release_key(read)
        if asked is None or asked[:len(table)] == table[:len(asked)]:
            return RemoteCode(False, None)
        return RemoteCode(ships_code, f"model_type {config_model_type!r}: {label} {read} reads its config with its "
                          f"own class; whether {label} {release} does is not checked"
                          + (" (--trust-remote-code added in case it does not)" if ships_code else ""))
    tables = f"transformers {data.TRANSFORMERS_RELEASE} and {label} {read}"
    if ships_code:
        return RemoteCode(True, f"--trust-remote-code: model_type {config_model_type!r} is not a config class of "
                          f"{tables}, so {label} reads the config with the checkpoint's own code (its auto_map), "
                          "which this flag lets run: review that code before serving")
    return RemoteCode(False, f"model_type {config_model_type!r} is not a config class of {tables}, and the config "
                      f"names no code of its own (auto_map AutoConfig): {label} cannot read it as it is")


__all__ = ["RemoteCode", "check"]
