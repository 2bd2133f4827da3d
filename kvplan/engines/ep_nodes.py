"""Which nodes the expert-parallel ranks sit on (`--gpus-per-node N`, default 8), and what vLLM 0.34, SGLang 0.5.23
and DeepEP make of it: the one node rule engines/vllm_a2a.py and engines/sglang_a2a.py read.

- A node is a host: vLLM 0.34 distributed/parallel_state.py in_the_same_node_as tests whether the processes share
  memory (shared memory), so a GB200 NVL72 rack is 18 nodes of 4 GPUs to it, not one of 72.
- kvplan's assumption (not an engine's rule): global rank r runs on node r // N, the nodes filled in rank order (a
  deployment of more than N GPUs that N does not divide leaves its last node part-filled: 12 GPUs on nodes of 8 are
  8 + 4).
- The EP group's ranks: vLLM 0.34 parallel_state.py initialize_model_parallel lays the ranks out as
  arange(world).reshape(-1, dp, pp, pcp, tp) and takes the EP group as transpose(1, 2).reshape(-1, dp x pcp x tp):
  with PP the group is strided (rank d x pp x tp + stage x tp + t; prefill context parallelism not modelled).
  SGLang 0.5.23 (distributed/parallel_state.py): its --tp GPUs (the attention DP ranks included) are a contiguous
  block of ranks, stage x tp onwards; DeepEP's group is that TP group (--ep-size = --tp under DeepEP).
- vLLM 0.34 base_device_communicator.py All2AllManagerBase.__init__: internode = not all(in_the_same_node_as(
  cpu_group, source_rank=0)): the group spans nodes (EPNodes.spans_nodes); all2all.py DeepEPHTAll2AllManager passes
  the RDMA buffer only then.
- SGLang 0.5.23 layers/moe/token_dispatcher/deepep.py DeepEPBuffer.get_deepep_buffer sizes the buffers from the
  group's size alone (DeepEP's own rule, engines/deepep.py rank_groups): no node count enters.
- DeepEP 73b6ea4 (engines/deepep.py): the NVLink peers are blocks of 8 group ranks whatever the node
  (rank_groups), their buffers opened with cudaIpcOpenMemHandle (Buffer::sync), which works within one host only;
  a block across nodes (EPNodes.nvl_peers_split: N < 8, or N not a multiple of 8) runs only with a DeepEP build
  that opens them over multi-node NVLink (SGLang's CUDA 12 fork fzyzcjy/DeepEP enables fabric handles, per
  deepep.py's comment; the pinned commit does not), and a node of more than 8 GPUs is still blocks of 8 to DeepEP.
"""

from __future__ import annotations

from .._record import record
from .deepep import NUM_MAX_NVL_PEERS

DEFAULT_GPUS_PER_NODE = 8


@record
class EPNodes:
    """One EP group's global ranks (in its rank order) on nodes of `gpus_per_node` GPUs."""

    ranks: tuple[int, ...]
    gpus_per_node: int

    def _nodes(self, ranks) -> set[int]:
        return {r // self.gpus_per_node for r in ranks}

    @property
    def nodes(self) -> int:
        return len(self._nodes(self.ranks))

    @property
    def spans_nodes(self) -> bool:
        """vLLM's All2AllManagerBase.internode."""
        return self.nodes > 1

    @property
    def nvl_peers_split(self) -> bool:
        """Whether a block of DeepEP's NVLink peers (8 group ranks) lies across nodes."""
        blocks = (self.ranks[i:i + NUM_MAX_NVL_PEERS] for i in range(0, len(self.ranks), NUM_MAX_NVL_PEERS))
        return any(len(self._nodes(block)) > 1 for block in blocks)

    def text(self) -> str:
        size = len(self.ranks)
        return (f"EP {size} on {self.nodes} node{'s' if self.nodes > 1 else ''} of {self.gpus_per_node} GPUs "
                "(--gpus-per-node; ranks fill nodes in order)")


def _worst(groups: list[EPNodes]) -> EPNodes:
    """The stage whose group spans nodes, if one does (its GPUs hold the larger buffers)."""
    return max(groups, key=lambda g: (g.spans_nodes, g.nvl_peers_split))


def vllm_ep_group(tp: int, pp: int, dp: int, gpus_per_node: int) -> EPNodes:
    """vLLM 0.34's EP group (module doc), the stage whose group spans the most."""
    return _worst([EPNodes(tuple(d * pp * tp + stage * tp + t for d in range(dp) for t in range(tp)), gpus_per_node)
                   for stage in range(pp)])


def sglang_ep_group(tp: int, pp: int, gpus_per_node: int) -> EPNodes:
    """SGLang 0.5.23's EP group: its --tp GPUs (tp here: attention DP x attention TP), contiguous a stage."""
    return _worst([EPNodes(tuple(range(stage * tp, (stage + 1) * tp)), gpus_per_node) for stage in range(pp)])


NVL_SPLIT_NOTE = ("DeepEP's NVLink peers (blocks of 8 EP ranks, deep_ep.cpp Buffer::Buffer) lie across nodes here; "
                  "the pinned DeepEP opens their buffers with cudaIpcOpenMemHandle (Buffer::sync), one host only: this "
                  "needs multi-node NVLink and a DeepEP build that uses it")
