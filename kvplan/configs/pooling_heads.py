"""The head a pooling architecture carries in place of the LM head, for the config-sized weight count.

Which architectures: those vLLM runs on its pooling runner by default (kvplan.engines.vllm_pooling.pooling_of, with
the newest release kvplan's registry table reads): a registered pooling class, or a name no release registers whose
suffix sets --runner pooling (config/model.py _SUFFIX_TO_DEFAULTS: configs/vllm_suffixes.py, which
kvplan.engines.vllm_served reads too). A registered generation class with such a suffix (LlamaModel, Qwen2Model,
ChatGLMModel) keeps its LM head: vLLM builds it.

What they hold (transformers 5.25; vLLM 0.34 model_executor/models/adapters.py for the converted classes):
- no LM head: transformers' *ForSequenceClassification / *ForTokenClassification / *Model wrap the base model
  (modeling_layers.py GenericForSequenceClassification / GenericForTokenClassification: AutoModel.from_config; the
  decoders' own classes, modeling_gpt2.py GPT2ForSequenceClassification and the like, the same), and vLLM's adapter
  builds the generation class with no_init_weights over ParallelLMHead (_create_pooling_model_cls). A tied head is
  the embedding table, so nothing is dropped then;
- *ForSequenceClassification: `score`, nn.Linear(hidden, num_labels, bias=False) (GenericForSequenceClassification,
  and every decoder's own class read: GPT-2, GPT-BigCode, GPT-Neo, GPT-NeoX, Bloom, Falcon, MPT, BioGPT; vLLM's
  as_seq_cls_model: ReplicatedLinear(hidden, num_labels, bias=False));
- *ForTokenClassification: `score`, nn.Linear(hidden, num_labels, bias=config.token_classification_bias, True when
  left out) (GenericForTokenClassification; vLLM's as_seq_cls_model loads a checkpoint's score.bias too,
  auto_set_score_bias);
- the embedding runner (*Model, *EmbeddingModel, *ForTextEncoding, and the unregistered *RewardModel /
  *ForRewardModeling, which vLLM converts for embedding): no head (adapters.py as_embedding_model builds none);
- the registered reward classes whose heads were read: Qwen2ForRewardModel / Qwen2ForProcessRewardModel (a
  two-layer score) and InternLM2ForRewardModel (v_head) (_reward_heads); any other registered classification class
  with a head of its own: not counted (a note says so);
- *ForQuestionAnswering (transformers: qa_outputs, nn.Linear(hidden, 2) with a bias, GenericForQuestionAnswering) is
  not a pooling architecture for vLLM (no suffix of _SUFFIX_TO_DEFAULTS): not changed.

num_labels as transformers 5.25 reads it (configuration_utils.py PreTrainedConfig.__init__ and its num_labels
property): the length of id2label when the config has one, else num_labels, else 2.

vLLM builds every one of these heads in float32 (config/model.py _get_head_dtype for the pooling runner: the
converted score's params_dtype, gpt2.py / jamba.py nn.Linear dtype, qwen2_rm.py and internlm2.py params_dtype),
which its profile adds (engines/vllm_profile.py); the plan sizes the head as the checkpoint stores it, in its float
dtype.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ConfigError
from .fields import Fields

DEFAULT_LABELS = 2  # transformers 5.25 PreTrainedConfig: num_labels when the config has neither id2label nor num_labels


@dataclass(frozen=True)
class HeadPart:
    """One linear layer of a pooling head, as vLLM holds it under TP: "whole" on every rank (ReplicatedLinear,
    nn.Linear), "column" split by outputs with its bias (ColumnParallelLinear), "row" split by inputs with its
    bias whole (RowParallelLinear)."""

    name: str  # the checkpoint's name, from the top ("score", "score.0", "v_head")
    inputs: int
    outputs: int
    bias: bool
    split: str = "whole"

    @property
    def params(self) -> int:
        return self.inputs * self.outputs + (self.outputs if self.bias else 0)

    def per_rank(self, tp: int) -> int:
        """Its parameters on one TP rank of `tp`."""
        tp = max(tp, 1)
        if self.split == "whole":
            return self.params
        if self.split == "column":
            return self.params // tp
        return self.inputs * self.outputs // tp + (self.outputs if self.bias else 0)


@dataclass(frozen=True)
class PoolingHead:
    architecture: str
    kind: str  # vllm_pooling's: "embed" | "classify"
    parts: tuple[HeadPart, ...]  # () for an embedding model, or a head kvplan has not read
    known: bool  # False: a registered class whose head kvplan has not read (not counted)
    labels: int | None = None
    source: str = "transformers 5.25 modeling_layers.py Generic*Classification; vLLM models/adapters.py"

    @property
    def params(self) -> int:
        return sum(p.params for p in self.parts)

    def per_rank(self, tp: int) -> int:
        return sum(p.per_rank(tp) for p in self.parts)

    def describe(self, lm_head: int) -> str:
        """The note a plan carries: what the count dropped and added."""
        dropped = f"no untied lm_head ({lm_head:,} parameters)" if lm_head else "no lm_head (tied: nothing dropped)"
        if not self.known:
            head = "its own head, which kvplan has not read, not counted"
        elif self.parts:
            labels = f"{self.labels} label" + ("" if self.labels == 1 else "s")
            head = f"+ {' + '.join(p.name for p in self.parts)}, {labels} ({self.params:,} parameters)"
        else:
            head = "no head (an embedding model)"
        return (f"parameters counted for {self.architecture}, a pooling architecture: {dropped}, {head} "
                f"({self.source}; configs/pooling_heads.py)")


def _reward_heads(hidden: int) -> dict:
    """The registered reward classes whose heads were read (vLLM 0.34): Qwen2's (qwen2_rm.py Qwen2RewardBaseModel:
    score = Sequential(ColumnParallelLinear(hidden, hidden), ReLU, RowParallelLinear(hidden, num_labels)), both
    with their default bias; Qwen2ForRewardModel sets num_labels 1, Qwen2ForProcessRewardModel 2) and InternLM2's
    (internlm2.py InternLM2ForRewardModel: v_head = RowParallelLinear(hidden, 1, bias=False)). -> (labels, parts,
    source)."""
    def qwen2(labels):
        return labels, (HeadPart("score.0", hidden, hidden, True, "column"),
                        HeadPart("score.2", hidden, labels, True, "row")), "vLLM 0.34 qwen2_rm.py Qwen2RewardBaseModel"

    return {"Qwen2ForRewardModel": qwen2(1), "Qwen2ForProcessRewardModel": qwen2(2),
            "InternLM2ForRewardModel": (1, (HeadPart("v_head", hidden, 1, False, "row"),),
                                        "vLLM 0.34 internlm2.py InternLM2ForRewardModel")}


def num_labels(f: Fields) -> int:
    """The config's label count as transformers 5.25 reads it (module doc)."""
    id2label = f.raw.get("id2label")
    if id2label is not None:
        if not isinstance(id2label, dict):
            raise ConfigError(f"{f.source}: 'id2label' is a {type(id2label).__name__}, not a JSON object "
                              f"(model_type {f.model_type!r})", "fix the config or pass --set id2label=null")
        return len(id2label)
    return f.int("num_labels", default=DEFAULT_LABELS, minimum=0, maximum=10**8)


def pooling_head(f: Fields) -> PoolingHead | None:
    """The pooling head of the config's architecture (module doc), None for any other architecture."""
    from .resolve_family import _architectures
    from .vllm_suffixes import match

    names = list(_architectures(f.raw))
    # a suffix check first: a config whose every name has a generate suffix (no registered pooling class has one:
    # vllm_pooling EMBED_ARCHS, CLASSIFY_ARCHS) loads neither the engines nor vLLM's registry table here
    if all((match(n) or ("", ("pooling",)))[1][0] == "generate" for n in names):
        return None
    from ..engines.vllm_pooling import pooling_of
    from ..engines.vllm_registry_data import REGISTRY, RELEASES

    pooling = pooling_of(names, RELEASES[-1])
    if pooling is None or (pooling.converted and pooling.architecture in REGISTRY):
        return None  # a generate model; or a name some release registers as a generation class (PEagleDraftModel)
    name = pooling.architecture
    if pooling.kind == "embed":
        return PoolingHead(name, "embed", (), True)
    hidden = f.int("hidden_size", "n_embd")
    if name.endswith("ForSequenceClassification"):
        labels = num_labels(f)
        return PoolingHead(name, "classify", (HeadPart("score", hidden, labels, False),) if labels else (), True,
                           labels)
    if name.endswith("ForTokenClassification"):
        labels = num_labels(f)
        bias = f.flag("token_classification_bias", default=True)
        return PoolingHead(name, "classify", (HeadPart("score", hidden, labels, bias),) if labels else (), True,
                           labels)
    reward = _reward_heads(hidden).get(name)
    if reward is not None:
        labels, parts, source = reward
        return PoolingHead(name, "classify", parts, True, labels, source)
    return PoolingHead(name, "classify", (), False)


def config_pooling_head(raw: dict | None, source: str) -> tuple[PoolingHead | None, Fields | None]:
    """(pooling_head, the Fields it was read from) of a config dict; (None, None) where it does not read."""
    from ..errors import KvplanError
    from .layer_assembly import _read

    if not isinstance(raw, dict):
        return None, None
    try:
        f = _read(raw, source)[1]
        return pooling_head(f), f
    except KvplanError:
        return None, None


__all__ = ["HeadPart", "PoolingHead", "pooling_head", "config_pooling_head", "num_labels", "DEFAULT_LABELS"]
