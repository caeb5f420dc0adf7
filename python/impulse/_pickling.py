"""Pickling of the compiled types, the same for every pickle protocol (0 to 5).

pybind11 objects pickle through ``__getstate__``/``__setstate__`` only with protocol 2 and later;
with protocols 0 and 1, Python's generic ``copyreg`` path builds an instance without running its
C++ constructor, and using it aborts the interpreter. Every class of ``impulse._impulse`` gets a
``__reduce_ex__`` here instead:

- types with a binary state (``WorldState``): rebuilt from their ``__getstate__``;
- plain settings structures (every property writable, constructible without arguments:
  ``ContactSettings``, the solver settings, ``Range``, ...): rebuilt from their
  properties;
- enumerations: rebuilt from their value;
- everything else (``World``, step reports and statistics, systems, sensors): ``TypeError`` with
  every protocol, naming what to use instead where there is something.
"""
from __future__ import annotations


def _rebuild_from_state(cls, state):
    obj = cls.__new__(cls)
    obj.__setstate__(state)
    return obj


def _rebuild_settings(cls, fields):
    obj = cls()
    for name, value in fields.items():
        setattr(obj, name, value)
    return obj


def _rebuild_enum(cls, value):
    return cls(value)


_HINTS = {
    "World": "save its state with World.save_state() (a WorldState pickles) or copy it with World.clone()",
    "LocomotionSettings": "pickle the config (a dict or a JSON file) it was parsed from",
}


def _settings_fields(cls):
    """The writable properties of a plain settings structure, or None if `cls` is not one."""
    props = {n: p for n, p in vars(cls).items() if isinstance(p, property)}
    if not props or any(p.fset is None for p in props.values()):
        return None
    try:
        cls()
    except TypeError:
        return None
    return sorted(props)


def _refuse(name):
    hint = _HINTS.get(name)

    def __reduce_ex__(self, protocol):
        raise TypeError(f"cannot pickle 'impulse.{name}' object" + (f": {hint}" if hint else ""))

    return __reduce_ex__


def install(module) -> None:
    for name in dir(module):
        cls = getattr(module, name)
        if not isinstance(cls, type) or issubclass(cls, BaseException) or name.startswith("_"):
            continue
        if hasattr(cls, "__members__") and hasattr(cls, "value"):  # a pybind11 enum
            cls.__reduce_ex__ = lambda self, protocol, _cls=cls: (_rebuild_enum, (_cls, int(self)))
        elif "__setstate__" in vars(cls) and "__getstate__" in vars(cls):
            cls.__reduce_ex__ = lambda self, protocol: (_rebuild_from_state, (type(self), self.__getstate__()))
        elif (fields := _settings_fields(cls)) is not None:
            cls.__reduce_ex__ = lambda self, protocol, _f=tuple(fields): (
                _rebuild_settings,
                (type(self), {f: getattr(self, f) for f in _f}),
            )
        else:
            cls.__reduce_ex__ = _refuse(name)
