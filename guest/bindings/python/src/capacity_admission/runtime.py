"""Loading a capacity component with wasmtime-py's component API, and calling its exports.

`ComponentInstance(path)` compiles a component (once per path and process), instantiates it
in its own `Store` and hands out `Export`s: one exported function with its handle and its
parameter and result types looked up once.

Why the types are cached: `wasmtime.component.Func.__call__` asks the C API for the function's
type on every call, and each record conversion asks again for the record's fields, list element
and option payload types: about 90 µs a call for `resolve-budget`. `Export` resolves the type
tree once and pins those lookups on the type objects (`_freeze`), and a record's conversion
reuses its field names' bytes: about 25 µs a call; what is left is ctypes work per field.
`Export.call_dynamic` is the uncached path, kept for the benchmark. The freezing relies on how
wasmtime-py 50 shapes its type classes and records; when they differ it is skipped
(`Export.cached` is then False) and calls take the ordinary path, slower but correct.

A component built from `guest/` imports nothing, so the linker is empty. A call that traps
leaves the instance poisoned: the instance is dropped and the next call instantiates afresh.
"""

from __future__ import annotations

import ctypes
import threading
from typing import Any, Dict, List, Optional, Tuple

import wasmtime
from wasmtime import component as wc

__all__ = ["ComponentError", "ComponentInstance", "Export", "engine", "read_component"]


class ComponentError(RuntimeError):
    """The component could not be loaded or a call failed (a trap: never a domain answer)."""


_ENGINE = wasmtime.Engine()
_COMPILED: Dict[str, wc.Component] = {}
_COMPILED_LOCK = threading.Lock()


def engine() -> wasmtime.Engine:
    """The one engine every component and module of this package is compiled for."""
    return _ENGINE


def read_component(path: str) -> bytes:
    """The bytes of the component file at `path`."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise ComponentError(f"loading component {path}: {e}") from e


def _compile(path: str) -> wc.Component:
    with _COMPILED_LOCK:
        found = _COMPILED.get(path)
        if found is None:
            try:
                found = wc.Component.from_file(_ENGINE, path)
            except (OSError, wasmtime.WasmtimeError) as e:
                raise ComponentError(f"loading component {path}: {e}") from e
            imports = list(found.type.imports(_ENGINE))
            if imports:
                raise ComponentError(f"component {path} imports {imports}: a capacity component imports nothing")
            _COMPILED[path] = found
        return found


# Subclasses whose computed properties become plain attributes set once (see `_freeze`).
class _FrozenRecord(wc.RecordType):
    """A record type with its fields, and each field name's bytes, resolved once. The two
    conversions are wasmtime-py 50's own, less the per-call type and name lookups."""

    fields = None  # type: ignore[assignment]

    def convert_to_c(self, store: Any, val: Any, ptr: Any) -> None:
        ffi = wasmtime._ffi
        fields = self.fields
        raw = ffi.wasmtime_component_valrecord_t()
        ffi.wasmtime_component_valrecord_new_uninit(raw, len(fields))
        i = 0
        try:
            for (name, ty), (size, encoded) in zip(fields, self.__dict__["names"]):
                entry = raw.data[i]
                ty.convert_to_c(store, getattr(val, name), ctypes.pointer(entry.val))
                ffi.wasm_byte_vec_new(ctypes.byref(entry.name), size, encoded)
                i += 1
        except BaseException:
            for j in range(i, len(fields)):  # make the unfilled entries safe to delete
                raw.data[j].val.kind = ffi.WASMTIME_COMPONENT_BOOL
                raw.data[j].val.of.boolean = False
                raw.data[j].name = ffi.str_to_capi("")
            ffi.wasmtime_component_valrecord_delete(ctypes.byref(raw))
            raise
        ptr.contents.kind = ffi.WASMTIME_COMPONENT_RECORD
        ptr.contents.of.record = raw

    def convert_from_c(self, c: Any) -> Any:
        ffi = wasmtime._ffi
        try:
            record = wc.Record()
            out = record.__dict__
            data = c.of.record.data
            for i, (name, ty) in enumerate(self.fields):  # the C API keeps the type's order
                entry = data[i]
                out[name] = ty.convert_from_c(entry.val)
                entry.val.kind = ffi.WASMTIME_COMPONENT_BOOL
                entry.val.of.boolean = False
            return record
        finally:
            ffi.wasmtime_component_valrecord_delete(c.of.record)


class _FrozenList(wc.ListType):
    element = None  # type: ignore[assignment]


class _FrozenOption(wc.OptionType):
    payload = None  # type: ignore[assignment]


class _FrozenVariant(wc.VariantType):
    cases = None  # type: ignore[assignment]


def _freeze(ty: Any) -> Any:
    """Resolves a type tree once: fields, elements, payloads and cases become attributes."""
    if isinstance(ty, wc.RecordType):
        fields = [(name, _freeze(t)) for name, t in ty.fields]
        ty.__class__ = _FrozenRecord
        ty.__dict__["fields"] = fields
        ty.__dict__["names"] = [
            (len(n.encode()), (ctypes.c_uint8 * len(n.encode())).from_buffer_copy(n.encode())) for n, _ in fields]
    elif isinstance(ty, wc.ListType):
        element = _freeze(ty.element)
        ty.__class__ = _FrozenList
        ty.__dict__["element"] = element
    elif isinstance(ty, wc.OptionType):
        payload = _freeze(ty.payload)
        ty.__class__ = _FrozenOption
        ty.__dict__["payload"] = payload
        _pin_cases(ty, [("none", None), ("some", payload)])
    elif isinstance(ty, wc.VariantType):
        cases = [(name, None if t is None else _freeze(t)) for name, t in ty.cases]
        ty.__class__ = _FrozenVariant
        ty.__dict__["cases"] = cases
        _pin_cases(ty, cases)
    return ty


def _pin_cases(ty: Any, cases: List[Tuple[str, Any]]) -> None:
    tagged = ty._tagged()
    ty._cases = lambda: cases
    ty._tagged = lambda: tagged


def _can_freeze() -> bool:
    """True when wasmtime-py's type classes have the shape `_freeze` expects."""
    try:
        return (
            isinstance(wc.RecordType.__dict__["fields"], property)
            and isinstance(wc.ListType.__dict__["element"], property)
            and isinstance(wc.OptionType.__dict__["payload"], property)
            and isinstance(wc.VariantType.__dict__["cases"], property)
            and callable(getattr(wc.OptionType, "_tagged"))
            and all(hasattr(wasmtime._ffi, f) for f in (
                "wasmtime_component_func_call", "wasmtime_component_valrecord_new_uninit",
                "wasmtime_component_valrecord_delete", "wasm_byte_vec_new"))
            and [n for n, _ in wasmtime._ffi.wasmtime_component_valrecord_entry_t._fields_] == ["name", "val"]
        )
    except (KeyError, AttributeError):
        return False


class Export:
    """One exported function of one instance, with its handle and types looked up once."""

    def __init__(self, owner: "ComponentInstance", interface: str, name: str) -> None:
        self.interface = interface
        self.name = name
        self._owner = owner
        self._bind()

    def _bind(self) -> None:
        owner = self._owner
        store, instance = owner._live()
        iface = instance.get_export_index(store, self.interface)
        index = instance.get_export_index(store, self.name, iface) if iface is not None else None
        func = instance.get_func(store, index) if index is not None else None
        if func is None:
            raise ComponentError(f"{owner.path} exports no function {self.interface}#{self.name}")
        self._func = func
        self._generation = owner._generation
        self.cached = _can_freeze()
        fty = func.type(store)
        resolve = _freeze if self.cached else (lambda t: t)
        #: The parameter types and the result type (None for no result), resolved once.
        self.param_types = [resolve(t) for _, t in fty.params]
        self.result_type = None if fty.result is None else resolve(fty.result)

    def __call__(self, *args: Any) -> Any:
        """Calls the function with wasmtime-py values (`Record`s with kebab-case attributes)."""
        self._owner._live()
        if self._generation != self._owner._generation:
            self._bind()
        if not self.cached:
            return self._owner._guard(self.name, lambda store: self._func(store, *args))
        return self._owner._guard(self.name, lambda store: self._call_cached(store, args))

    def _call_cached(self, store: wasmtime.Store, args: Tuple[Any, ...]) -> Any:
        # Func.__call__ with the types resolved once (wasmtime-py 50's own conversions).
        ffi = wasmtime._ffi
        params = self.param_types
        if len(args) != len(params):
            raise TypeError(f"{self.name} takes {len(params)} arguments, got {len(args)}")
        raw = (ffi.wasmtime_component_val_t * len(args))()
        lowered = 0
        try:
            for ty, value in zip(params, args):
                ty.convert_to_c(store, value, ctypes.pointer(raw[lowered]))
                lowered += 1
            result = ffi.wasmtime_component_val_t()
            want = 0 if self.result_type is None else 1
            error = ffi.wasmtime_component_func_call(
                ctypes.byref(self._func._func), store._context(), raw, lowered,
                ctypes.byref(result) if want else None, want)
            if error:
                raise wasmtime.WasmtimeError._from_ptr(error)
            return None if self.result_type is None else self.result_type.convert_from_c(result)
        finally:
            for i in range(lowered):
                ffi.wasmtime_component_val_delete(ctypes.byref(raw[i]))

    def call_dynamic(self, *args: Any) -> Any:
        """The uncached path: looks the function up by name and lets wasmtime-py resolve its
        types on this call (what a naive embedding does; for comparison only)."""
        def run(store: wasmtime.Store) -> Any:
            _, instance = self._owner._live()
            iface = instance.get_export_index(store, self.interface)
            func = instance.get_func(store, instance.get_export_index(store, self.name, iface))
            return func(store, *args)
        return self._owner._guard(self.name, run)


class ComponentInstance:
    """One component file, instantiated in its own store. Not thread-safe: use one per thread."""

    def __init__(self, path: str) -> None:
        self.path = str(path)
        self._component = _compile(self.path)
        self._state: Optional[Tuple[wasmtime.Store, wc.Instance]] = None
        self._generation = 0

    def export(self, interface: str, name: str) -> Export:
        """The function `name` of the exported `interface` (e.g.
        `capacity:sentinel/admission@3.2.0`, `resolve-budget`)."""
        return Export(self, interface, name)

    def exports(self) -> List[str]:
        """The names of the component's exported interfaces."""
        return list(self._component.type.exports(_ENGINE))

    def _live(self) -> Tuple[wasmtime.Store, wc.Instance]:
        if self._state is None:
            store = wasmtime.Store(_ENGINE)
            try:
                instance = wc.Linker(_ENGINE).instantiate(store, self._component)
            except wasmtime.WasmtimeError as e:
                raise ComponentError(f"instantiating {self.path}: {e}") from e
            self._state = (store, instance)
            self._generation += 1
        return self._state

    def _guard(self, name: str, run: Any) -> Any:
        store, _ = self._live()
        try:
            return run(store)
        except wasmtime.WasmtimeError as e:
            # A trapped instance is poisoned: start a fresh one on the next call.
            self._state = None
            raise ComponentError(f"{self.path}: {name} failed: {e}") from e
