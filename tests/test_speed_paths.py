"""The cheap paths behind cold start and throughput: `record` classes behave as
frozen dataclasses, the CLI builds only the command it runs, -h and shell
completion work, and JSON output never imports rich."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from dataclasses import field
from functools import cached_property

import pytest

from kvplan._record import record


@record
class Point:
    x: int
    y: int = 0
    tags: list = field(default_factory=list, compare=False, repr=False)

    @cached_property
    def norm1(self) -> int:
        return abs(self.x) + abs(self.y)


@dataclasses.dataclass(frozen=True)
class RefPoint:
    x: int
    y: int = 0
    tags: list = field(default_factory=list, compare=False, repr=False)


def test_record_matches_a_frozen_dataclass():
    for args, kwargs in [((1,), {}), ((1, 2), {}), ((), {"x": 3}), ((1,), {"y": 5}), ((1, 2, [7]), {})]:
        ours, ref = Point(*args, **kwargs), RefPoint(*args, **kwargs)
        assert repr(ours) == repr(ref).replace("RefPoint", "Point")
        assert vars(ours) == vars(ref) and list(vars(ours)) == list(vars(ref))  # same keys, same order
        assert dataclasses.asdict(ours) == dataclasses.asdict(ref)
    assert Point(1, 2) == Point(1, 2, ["ignored: compare=False"]) and Point(1, 2) != Point(2, 1)
    assert hash(Point(1, 2)) == hash(Point(1, 2, ["x"]))
    assert Point(1, 2) != (1, 2) and Point(1, 2) != RefPoint(1, 2)
    assert Point(3, -4).norm1 == 7  # cached_property writes to the instance dict
    assert dataclasses.replace(Point(1, 2), y=9) == Point(1, 9)
    assert [f.name for f in dataclasses.fields(Point)] == ["x", "y", "tags"]
    assert Point(1).tags == [] and Point(1).tags is not Point(1).tags  # a fresh default per instance


def test_record_is_immutable_and_checks_its_arguments():
    p = Point(1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.x = 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        del p.x
    for bad in (lambda: Point(), lambda: Point(1, 2, [], 4), lambda: Point(1, x=2), lambda: Point(1, z=2)):
        with pytest.raises(TypeError):
            bad()


def test_a_frozen_dataclass_may_extend_a_record():
    @dataclasses.dataclass(frozen=True)
    class Point3(Point):
        z: int = 0

    @record
    class Point4(Point):
        w: int = 0

    assert Point3(1, 2, z=3) == Point3(1, 2, [], 3) and Point3(1).z == 0
    assert Point4(1, w=4).w == 4 and Point4(1) != Point(1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        Point4(1).w = 1


def test_only_the_named_command_is_built():
    from kvplan.cli.app import COMMANDS, commands_needed

    assert commands_needed(["estimate", "llama-3.1-8b", "-c", "4k"]) == ["estimate"]
    assert commands_needed(["--version"]) == []
    assert commands_needed([]) is None and commands_needed(["-h"]) is None and commands_needed(["nope"]) is None
    assert list(COMMANDS)[:4] == ["estimate", "models", "techniques", "gpus"]


def _kvplan(*args, env=None):
    return subprocess.run([sys.executable, "-m", "kvplan", *args], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, **(env or {})))


def test_h_is_help_on_the_root_and_on_commands():
    for args in (["-h"], ["estimate", "-h"], ["sweep", "-h"]):
        short, long = _kvplan(*args), _kvplan(*args[:-1], "--help")
        assert short.returncode == 0 and short.stdout == long.stdout and "Usage: " in short.stdout


def test_shell_completion_lists_commands_and_options():
    env = {"_KVPLAN_COMPLETE": "complete_bash", "COMP_WORDS": "kvplan est", "COMP_CWORD": "1"}
    proc = subprocess.run([sys.executable, "-c", "import sys; sys.argv[0] = 'kvplan'; from kvplan.cli.app import main; main()"],
                          capture_output=True, text=True, timeout=120, env=dict(os.environ, **env))
    assert proc.stdout.split() == ["estimate"], proc.stderr
    env.update(COMP_WORDS="kvplan estimate --for", COMP_CWORD="2")
    proc = subprocess.run([sys.executable, "-c", "import sys; sys.argv[0] = 'kvplan'; from kvplan.cli.app import main; main()"],
                          capture_output=True, text=True, timeout=120, env=dict(os.environ, **env))
    assert proc.stdout.split() == ["--format"], proc.stderr
    # typer detects the shell from the parent processes; a runner whose parent is no shell (a
    # detached CI step) prints "Shell  not supported.". Its own switch makes the shell an argument.
    shown = _kvplan("--show-completion", "bash", env={"_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"})
    assert shown.returncode == 0 and "_KVPLAN_COMPLETE" in shown.stdout


def test_json_output_imports_no_rich_and_no_techniques():
    code = (
        "import sys; sys.argv = ['kvplan', 'estimate', 'llama-3.1-8b', '--format', 'json']\n"
        "from kvplan.cli.app import main\n"
        "try:\n    main()\nexcept SystemExit as e:\n    rc = e.code\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] == 'rich' or m.startswith(('kvplan.techniques.tokens', "
        "'kvplan.techniques.architecture', 'kvplan.engines', 'kvplan.workload')))\n"
        "sys.stderr.write(f'rc={rc} heavy={heavy}\\n')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "rc=0 heavy=[]" in proc.stderr, proc.stderr


def test_record_keeps_its_behaviour_after_compiling_init():
    @record
    class Hot:
        a: int
        b: int = 2
        c: list = field(default_factory=list)

    for _ in range(450):  # past the point where __init__ is compiled
        assert vars(Hot(1)) == {"a": 1, "b": 2, "c": []}
    assert vars(Hot(1, 5, [3])) == {"a": 1, "b": 5, "c": [3]} and vars(Hot(b=0, a=4)) == {"a": 4, "b": 0, "c": []}
    assert Hot(1).c is not Hot(1).c
    with pytest.raises(TypeError):
        Hot()
    with pytest.raises(dataclasses.FrozenInstanceError):
        Hot(1).a = 2


# --- the estimator's precomputed terms against the per-layer formula ---------------------------------


def _reference(model, tokens: int, block: int | None):
    """Layer by layer (no groups, no precomputed terms), straight from the cache
    methods every number comes from: (stored KV, paged KV, read, state, fixed)."""
    kv = paged = read = state = fixed = 0
    for layer in model.layers:
        own = layer.shares_cache_of is None
        for cache in layer.caches:
            read += cache.read_bytes(tokens)
            if own:
                kv += cache.stored_bytes(tokens)
                paged += cache.paged_bytes(tokens, block) if block else cache.stored_bytes(tokens)
                fixed += cache.fixed_bytes()
        if own and layer.state is not None:
            state += layer.state.bytes
    return kv, paged, read, state, fixed


COMBOS = [[], ["fp8"], ["window:1000"], ["window:512,pattern=3:1", "page:16"], ["evict:0.3,recent=64"],
          ["evict:700,recent=32", "page:16"], ["pyramid:0.2"], ["kivi"], ["int4", "page:32"], ["quest:page=16,topk=8"],
          ["csa:m=4,k=64,window=32"], ["cla:2", "fp8"], ["mla"], ["gqa:1", "prefix:tokens=3000,requests=4"]]


@pytest.mark.parametrize("alias", ["llama-3.1-8b", "gemma-3-27b", "deepseek-v3", "qwen3-next-80b-a3b", "gemma-3n-e4b"])
def test_estimate_terms_equal_the_per_layer_formula(alias):
    import random

    from kvplan.capacity.pool import batch_bytes
    from kvplan.core.estimate import estimate
    from kvplan.errors import KvplanError
    from kvplan.planner import compose
    from kvplan.sources import load_model
    from kvplan.techniques.registry import build_all

    rng = random.Random(alias)
    model = load_model(alias)
    checked = 0
    for combo in COMBOS:
        try:
            plan = compose(model, build_all(combo))[-1]
        except KvplanError:
            continue  # does not apply to this model
        for tokens in sorted({1, 2, 15, 16, 17, 511, 512, 513, 1000, 4096, *(rng.randint(1, 3_000_000) for _ in range(6))}):
            kv, paged, read, state, fixed = _reference(plan.model, tokens, plan.block_size)
            est = estimate(plan.model, tokens, 3)
            assert (est.kv_bytes_per_sequence, est.read_bytes_per_step, est.state_bytes_per_sequence, est.shared_bytes) == (
                kv, read, state, fixed), (combo, tokens)
            assert sum(k.kv_bytes_per_sequence for k in est.kinds) == kv and sum(k.read_bytes_per_step for k in est.kinds) == read
            b = batch_bytes(plan, tokens, 3)
            assert (b.ideal_kv_bytes_per_sequence, b.kv_bytes_per_sequence) == (kv, paged), (combo, tokens)
            checked += 1
    assert checked > 50


def test_a_chain_is_applied_once_and_reused():
    from kvplan.planner import compose, evaluate
    from kvplan.sources import load_model
    from kvplan.techniques.registry import build_all

    model = load_model("llama-3.1-8b")
    chain = build_all(["fp8", "evict:0.5"])
    first = compose(model, chain)[-1]
    assert compose(model, chain)[-1] is first  # the same objects: no re-application
    assert compose(model, build_all(["fp8", "evict:0.5"]))[-1] is first  # equal techniques, new objects
    assert evaluate(model, chain, 4096).plan is first
    assert compose(model, build_all(["fp8"]))[-1] is not first


def test_cla_keeps_identical_layers_in_few_groups():
    from kvplan.planner import compose
    from kvplan.sources import load_model
    from kvplan.techniques.registry import build_all

    model = load_model("llama-3.1-70b")  # 80 identical layers
    shared = compose(model, build_all(["cla:2"]))[-1].model
    # one group of owners, and the sharing layers (each pointing at its own owner) grouped by kind
    assert len(model.groups) == 1
    assert len(shared.groups) == 2 and sum(count for _, count in shared.groups) == 80
    owners = [layer for layer, _ in shared.groups if layer.shares_cache_of is None]
    assert len(owners) == 1 and dict((l.kind, c) for l, c in shared.groups)[owners[0].kind] == 40


def test_estimate_many_equals_estimate_at_every_context():
    import random

    import kvplan
    from kvplan.planner import compose
    from kvplan.techniques.registry import build_all

    rng = random.Random(7)
    for alias, chain in (("llama-3.1-70b", []), ("gemma-3-27b", ["kivi"]), ("deepseek-v3", ["evict:0.3"]),
                         ("qwen3-next-80b-a3b", ["quest:page=16,topk=8"])):
        model = compose(kvplan.load_model(alias), build_all(chain))[-1].model
        contexts = [1, 17, 4096, *(rng.randint(1, 5_000_000) for _ in range(20))]
        many = kvplan.estimate_many(model, contexts, batch=3)
        for i, n in enumerate(contexts):
            one = kvplan.estimate(model, n, 3)
            assert int(many["kv_bytes_per_sequence"][i]) == one.kv_bytes_per_sequence
            assert int(many["state_bytes_per_sequence"][i]) == one.state_bytes_per_sequence
            assert int(many["total_bytes"][i]) == one.total_bytes
            assert int(many["read_bytes_per_step"][i]) == one.read_bytes_per_step


def test_mutable_record_and_post_init():
    seen = []

    @record(frozen=False)
    class Box:
        items: list = field(default_factory=list)
        title: str = ""

        def __post_init__(self):
            seen.append(self.title)

    b = Box(title="a")
    b.title = "b"  # mutable
    assert b == Box([], "b") and seen == ["a", "b"]
    with pytest.raises(TypeError):
        hash(b)
    for _ in range(250):  # the compiled __init__ runs __post_init__ too
        Box(title="x")
    assert seen[-1] == "x" and len(seen) == 252
