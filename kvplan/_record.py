"""`record`: a frozen dataclass whose creation compiles no source.

`@dataclass(frozen=True)` compiles __init__, __repr__, __eq__, __hash__,
__setattr__ and __delattr__ from generated source (Python 3.11: about half a
millisecond per class on a loaded 2-core machine, nearly all of it in the
compiler). The planning path defines a few dozen such classes, so creating them
was a large part of `kvplan estimate`'s cold start. `record` lets dataclasses
collect the fields (so `dataclasses.fields`, `replace`, `asdict` and a subclass
declared with `@dataclass(frozen=True)` behave as before) and installs methods
built from closures over the field names instead: nothing is compiled at import.
A class constructed many times (an estimate per call in a loop) compiles the
__init__ a dataclass would have after its 200th instance. Instances
are immutable like a frozen dataclass's (assigning or deleting an attribute
raises dataclasses.FrozenInstanceError) and equal, hashed and shown the same way.

Supported: plain fields, defaults, `field(default_factory=...)`,
`field(compare=False)`, `field(repr=False)`, __post_init__, inheritance between
records, and `@record(frozen=False)` for a mutable one. Not supported (use
`@dataclass` for those): InitVar, kw_only, init=False fields, slots.
"""

from __future__ import annotations

import dataclasses
from operator import attrgetter

_FROZEN_PARAMS = None


def _frozen_params():
    """dataclasses' own parameter record of a frozen dataclass (so a subclass
    declared with @dataclass(frozen=True) accepts a record as its base)."""
    global _FROZEN_PARAMS
    if _FROZEN_PARAMS is None:
        _FROZEN_PARAMS = dataclasses.dataclass(frozen=True)(type("_Frozen", (), {"__doc__": "-"})).__dataclass_params__
    return _FROZEN_PARAMS


def _frozen_setattr(self, name, value):
    raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self, name):
    raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")


def _getter(names):
    """A function returning the tuple of these attributes (operator.attrgetter, in C)."""
    if not names:
        return lambda obj: ()
    get = attrgetter(*names)
    return get if len(names) > 1 else (lambda obj: (get(obj),))


_COMPILE_AFTER = 200  # constructions of one class before its __init__ is compiled


def _compiled_init(names, defaults, factories, post_init):
    """The __init__ a dataclass would compile, storing into the instance dict."""
    ns: dict = {"__MISSING": dataclasses.MISSING}
    params, body = [], []
    for i, name in enumerate(names):
        if name in defaults:
            ns[f"__d{i}"] = defaults[name]
            params.append(f"{name}=__d{i}")
        elif name in factories:
            ns[f"__f{i}"] = factories[name]
            params.append(f"{name}=__MISSING")
            body.append(f"    if {name} is __MISSING: {name} = __f{i}()")
        else:
            params.append(name)
    body.append("    __d = self.__dict__")
    body.extend(f"    __d[{name!r}] = {name}" for name in names)
    if post_init:
        body.append("    self.__post_init__()")
    exec(f"def __init__(self, {', '.join(params)}):\n" + "\n".join(body), ns)  # noqa: S102 - field names only
    return ns["__init__"]


def _init(cls, names, defaults, factories, post_init):
    """A generic __init__ (nothing compiled at import); a class constructed often
    (an estimate per call in a loop) swaps in a compiled one after a while."""
    cls_name = cls.__name__
    count = len(names)
    known = frozenset(names)
    made = [0]

    def __init__(self, *args, **kwargs):
        made[0] += 1
        if made[0] == _COMPILE_AFTER and cls.__dict__.get("__init__") is __init__:
            fast = _compiled_init(names, defaults, factories, post_init)
            fast.__qualname__ = f"{cls.__qualname__}.__init__"
            type.__setattr__(cls, "__init__", fast)
        d = self.__dict__
        if not kwargs and len(args) == count:  # the common case: every field, in order
            d.update(zip(names, args))
            if post_init:
                self.__post_init__()
            return
        if len(args) > count:
            raise TypeError(f"{cls_name}() takes {count} positional arguments but {len(args)} were given")
        given = dict(zip(names, args))
        for key, value in kwargs.items():
            if key not in known:
                raise TypeError(f"{cls_name}() got an unexpected keyword argument {key!r}")
            if key in given:
                raise TypeError(f"{cls_name}() got multiple values for argument {key!r}")
            given[key] = value
        for name in names:  # field order, so vars() lists them as dataclasses would
            if name in given:
                d[name] = given[name]
            elif name in defaults:
                d[name] = defaults[name]
            elif name in factories:
                d[name] = factories[name]()
            else:
                raise TypeError(f"{cls_name}() missing required argument {name!r}")
        if post_init:
            self.__post_init__()

    return __init__


def _repr(names):
    def __repr__(self):
        return f"{type(self).__qualname__}({', '.join(f'{n}={getattr(self, n)!r}' for n in names)})"

    return __repr__


def _eq(get):
    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return get(self) == get(other)
        return NotImplemented

    return __eq__


def _hash(get):
    def __hash__(self):
        return hash(get(self))

    return __hash__


def record(cls=None, /, *, frozen: bool = True):
    """Class decorator: `cls` becomes a frozen dataclass (see the module docstring);
    `@record(frozen=False)`: a plain mutable dataclass (eq, no hash), equally cheap."""
    if cls is None:
        return lambda c: _record(c, frozen)
    return _record(cls, frozen)


def _record(cls, frozen: bool):
    if not cls.__dict__.get("__doc__"):
        cls.__doc__ = cls.__name__  # dataclasses would call inspect.signature for one
    # a base that is already a frozen dataclass makes dataclasses insist on frozen=True
    # (which compiles __setattr__/__delattr__; only subclasses of records pay it)
    frozen_base = any(getattr(getattr(b, "__dataclass_params__", None), "frozen", False) for b in cls.__mro__[1:])
    if frozen_base and not frozen:
        raise TypeError(f"{cls.__name__}: a mutable record cannot extend a frozen one")
    cls = dataclasses.dataclass(cls, init=False, repr=False, eq=False, frozen=frozen_base)
    fields = dataclasses.fields(cls)
    for f in fields:
        if not f.init or f.kw_only is True:
            raise TypeError(f"{cls.__name__}.{f.name}: record supports plain init fields only")
    names = tuple(f.name for f in fields)
    defaults = {f.name: f.default for f in fields if f.default is not dataclasses.MISSING}
    factories = {f.name: f.default_factory for f in fields if f.default_factory is not dataclasses.MISSING}
    cls.__init__ = _init(cls, names, defaults, factories, "__post_init__" in dir(cls))
    shown = tuple(f.name for f in fields if f.repr)
    compared = tuple(f.name for f in fields if f.compare)
    hashed = tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash))
    cls.__repr__ = _repr(shown)
    cls.__eq__ = _eq(_getter(compared))
    if not frozen:  # as @dataclass(eq=True): mutable, so unhashable
        cls.__hash__ = None
        return cls
    cls.__hash__ = _hash(_getter(hashed))
    if not frozen_base:
        cls.__setattr__ = _frozen_setattr
        cls.__delattr__ = _frozen_delattr
    cls.__dataclass_params__ = _frozen_params()
    return cls
