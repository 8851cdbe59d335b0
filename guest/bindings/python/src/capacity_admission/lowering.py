"""The hot calls (`resolve-budget`, `plan`) with the canonical ABI done here, in Python.

A component built from `guest/` imports nothing and holds exactly one core module: the rules'
code, whose exports the component lifts with the canonical ABI (strings in UTF-8, lists and
records laid out in linear memory). wasmtime-py's component calls convert every value through
its C API field by field: about 25 µs for `resolve-budget` and 400 µs for a `plan` of ten
batches, where the rules take about a microsecond. `CoreAdmission` instantiates that same core
module, taken from the same component file, and lowers and lifts the two functions' values
itself, as the component model specifies them for these types, through
`wasmtime_func_call_unchecked` with argument arrays built once: a few microseconds a call.

What the component model would check is checked here: a result's enum case must exist (else
`CoreCallError`, as a trap), a string must be UTF-8, every allocation the callee owns is made
with the module's own `cabi_realloc` one value at a time (the Rust guest frees each string and
list it receives), and a result is released with the function's `cabi_post_*` export. A call
that traps poisons the instance: it is dropped and the next call instantiates afresh.

A `plan` hands over one allocation per string and per list (25 for ten batches), and each call
from Python into WebAssembly costs about a microsecond of ctypes. So the values are written
into a scratch area the package owns (allocated once, with `cabi_realloc`, and never given to
the callee), and a small module of our own (`PLACER_WAT`), linked to the core module's memory
and `cabi_realloc`, copies each into its own fresh allocation in one call: two calls from
Python before `plan` instead of 25.

It relies on wasmtime-py's private `_bindings` (the unchecked call and the memory's address);
`available()` says whether this wasmtime-py has them, and the package falls back to the
component path when it does not.
"""

from __future__ import annotations

import ctypes
import struct
from typing import Any, List, Optional, Sequence, Tuple

import wasmtime

__all__ = ["CoreAdmission", "CoreCallError", "available", "core_module"]

ADMISSION = "capacity:sentinel/admission@3.2.0"


class CoreCallError(RuntimeError):
    """A call into the core module trapped, or its answer breaks the canonical ABI."""


def available() -> bool:
    """True when this wasmtime-py exposes what the direct calls use."""
    try:
        from wasmtime import _bindings as b
        return all(hasattr(b, name) for name in (
            "dll", "wasmtime_memory_data", "wasmtime_memory_data_size", "wasmtime_val_raw_t", "wasm_trap_t"))
    except ImportError:
        return False


def _leb128(data: bytes, at: int) -> Tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, at


_COMPONENT_HEADER = b"\x00asm\x0d\x00\x01\x00"
_CORE_MODULE_SECTION = 1


def core_module(component: bytes) -> Optional[bytes]:
    """The one core module of a component binary, or None when it holds none or several
    (then the component's own calls must be used)."""
    if not component.startswith(_COMPONENT_HEADER):
        return None
    found: List[bytes] = []
    at = len(_COMPONENT_HEADER)
    try:
        while at < len(component):
            section = component[at]
            size, at = _leb128(component, at + 1)
            if section == _CORE_MODULE_SECTION:
                found.append(component[at:at + size])
            at += size
    except IndexError:
        return None
    return found[0] if len(found) == 1 else None


# admission-result: admit u32 @0, outcome enum (u8) @4, factor-used f64 @8,
# factor-read-failed bool @16, cluster-budget @20, service-budget @24, workspace-ceiling @28.
_RESULT = struct.Struct("<IB3xdB3xIII")
# admission-plan: admitted list<string> @0, waiting list<waiting-batch> @8, factor-used @16,
# factor-read-failed @24, cluster-budget @28, service-budget @32; 40 bytes.
_PLAN = struct.Struct("<IIIIdB3xII")
_STRING = struct.Struct("<II")
# waiting-batch: id string @0, outcome @8; 12 bytes, align 4.
_WAITING = struct.Struct("<IIB3x")
# workspace-load: workspace string @0, share @8, in-flight @12; 16 bytes, align 4.
_WORKSPACE = struct.Struct("<IIII")
# queued-batch: id string @0, workspace string @8, enqueued-at s64 @16; 24 bytes, align 8.
_QUEUED = struct.Struct("<IIIIq")
#: The number of admission-outcome cases (an index at or past it is a broken answer).
OUTCOMES = 5


#: Copies values into allocations the callee will own. The n entries at `table` are each
#: (source address, length, alignment), 12 bytes: `place` allocates `length` bytes at that
#: alignment with the core module's own `cabi_realloc`, copies the source there and writes the
#: new address over the source's. An allocation that fails traps (cabi_realloc's own trap).
PLACER_WAT = """
(module
  (import "core" "memory" (memory 0))
  (import "core" "cabi_realloc" (func $realloc (param i32 i32 i32 i32) (result i32)))
  (func (export "place") (param $entry i32) (param $n i32)
    (local $end i32) (local $to i32)
    (local.set $end (i32.add (local.get $entry) (i32.mul (local.get $n) (i32.const 12))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $entry) (local.get $end)))
        (local.set $to (call $realloc (i32.const 0) (i32.const 0)
          (i32.load offset=8 (local.get $entry)) (i32.load offset=4 (local.get $entry))))
        (memory.copy (local.get $to) (i32.load (local.get $entry)) (i32.load offset=4 (local.get $entry)))
        (i32.store (local.get $entry) (local.get $to))
        (local.set $entry (i32.add (local.get $entry) (i32.const 12)))
        (br $next)))))
"""
_ENTRY = struct.Struct("<III")
#: The scratch area's first size; it grows (cabi_realloc) when a call's values need more.
SCRATCH_BYTES = 4096


# wasmtime_func_call_unchecked(context, func, args_and_results, len, trap) with every pointer
# passed as an address: ctypes then converts plain ints, about 0.5 µs a call less than through
# wasmtime-py's binding with its pointer types (a plan of ten batches makes 25 allocations).
_CALL_PROTOTYPE = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t,
                                   ctypes.c_void_p)


# wasmtime_memory_data_size(context, memory), both as addresses.
_SIZE_PROTOTYPE = ctypes.CFUNCTYPE(ctypes.c_size_t, ctypes.c_void_p, ctypes.c_void_p)


class CoreAdmission:
    """The admission component's core module in its own store, called directly. Not
    thread-safe: one per thread."""

    def __init__(self, engine: wasmtime.Engine, module: wasmtime.Module) -> None:
        from wasmtime import _bindings
        self._b = _bindings
        self._engine = engine
        self._module = module
        self._placer = wasmtime.Module(engine, PLACER_WAT)
        self._store: Optional[wasmtime.Store] = None

    def _live(self) -> Any:
        if self._store is None:
            b = self._b
            store = wasmtime.Store(self._engine)
            instance = wasmtime.Instance(store, self._module, [])
            exports = instance.exports(store)
            # The handles stay referenced by this object (and the store by `_store`), so the
            # addresses below stay valid for the instance's life.
            self._handles = {name: exports[name]._func for name in (
                f"{ADMISSION}#resolve-budget", f"{ADMISSION}#plan", f"cabi_post_{ADMISSION}#plan", "cabi_realloc")}
            placer = wasmtime.Instance(store, self._placer, [exports["memory"], exports["cabi_realloc"]])
            self._handles["place"] = placer.exports(store)["place"]._func
            address = {name: ctypes.addressof(handle) for name, handle in self._handles.items()}
            self._placer_func = address["place"]
            self._resolve = address[f"{ADMISSION}#resolve-budget"]
            self._plan = address[f"{ADMISSION}#plan"]
            self._plan_post = address[f"cabi_post_{ADMISSION}#plan"]
            self._realloc = address["cabi_realloc"]
            self._context = store._context()
            self._ctx = ctypes.cast(self._context, ctypes.c_void_p).value
            self._memory = ctypes.byref(exports["memory"]._memory)
            self._memory_at = ctypes.addressof(exports["memory"]._memory)
            self._memory_size = _SIZE_PROTOTYPE(("wasmtime_memory_data_size", b.dll))
            self._view_size = -1
            self._raw = (b.wasmtime_val_raw_t * 16)()
            self._raw_at = ctypes.addressof(self._raw)
            self._trap = ctypes.POINTER(b.wasm_trap_t)()
            self._trap_at = ctypes.addressof(self._trap)
            self._call_unchecked = _CALL_PROTOTYPE(("wasmtime_func_call_unchecked", b.dll))
            self._store = store
            self._scratch_at = self._scratch_size = 0
            self._scratch(SCRATCH_BYTES)
        return self._ctx

    def _call(self, func: int, nargs: int, what: str) -> int:
        error = self._call_unchecked(self._ctx, func, self._raw_at, nargs, self._trap_at)
        if error or self._trap:
            self._failed(error, what)
        return self._raw[0].i32 & 0xFFFFFFFF

    def _failed(self, error: Any, what: str) -> None:
        """Raises for a call that returned `error` (an address) or trapped; the instance is
        poisoned, so the next call starts a fresh one."""
        self._store = None
        b = self._b
        if error:
            raise CoreCallError(f"{what} failed: {wasmtime.WasmtimeError._from_ptr(ctypes.cast(error, ctypes.POINTER(b.wasmtime_error_t)))}")
        trap, self._trap = self._trap, ctypes.POINTER(b.wasm_trap_t)()
        raise CoreCallError(f"{what} trapped: {wasmtime.Trap._from_ptr(trap)}")

    def _read(self, at: int, size: int, what: str) -> memoryview:
        memory = self._view()
        if at + size > len(memory):
            raise CoreCallError(f"{what}: the answer points past linear memory ({at}+{size} > {len(memory)})")
        return memory[at:at + size]

    def _scratch(self, size: int) -> int:
        """The scratch area's address, at least `size` bytes (grown with cabi_realloc)."""
        if size > self._scratch_size:
            grown = max(size, 2 * self._scratch_size)
            raw = self._raw
            raw[0].i32, raw[1].i32, raw[2].i32, raw[3].i32 = self._scratch_at, self._scratch_size, 8, grown
            self._scratch_at, self._scratch_size = self._call(self._realloc, 4, "cabi_realloc"), grown
        return self._scratch_at

    def _place(self, values: Sequence[bytes], aligns: Sequence[int]) -> List[int]:
        """Each value copied into an allocation of its own, which the callee will own: the
        values and a table of them go to the scratch area, then one call of `place`."""
        n = len(values)
        table = _ENTRY.size * n
        at = self._scratch(table + sum(len(v) for v in values))
        memory = self._view()
        if at + self._scratch_size > len(memory):
            raise CoreCallError(f"the scratch area at {at} is past linear memory ({len(memory)} bytes)")
        source = at + table
        for i, (value, align) in enumerate(zip(values, aligns)):
            _ENTRY.pack_into(memory, at + i * _ENTRY.size, source, len(value), align)
            memory[source:source + len(value)] = value
            source += len(value)
        raw = self._raw
        raw[0].i32, raw[1].i32 = at, n
        self._call(self._placer_func, 2, "placing the call's values")
        return list(struct.unpack_from(f"<{3 * n}I", self._view(), at)[0::3])

    def _view(self) -> memoryview:
        """Linear memory as it is now, as writable bytes. Memory only moves when it grows, so
        the view is kept while its size is unchanged (one call asks for the size; the address
        and a new view, two calls and a cast more, only after a growth) and must be asked for
        again after every call into the instance."""
        size = self._memory_size(self._ctx, self._memory_at)
        if size != self._view_size:
            b = self._b
            base = ctypes.addressof(b.wasmtime_memory_data(self._context, self._memory).contents)
            self._memory_view = memoryview((ctypes.c_ubyte * size).from_address(base)).cast("B")
            self._view_size = size
        return self._memory_view

    def resolve_budget(self, factor: Optional[float], counts: Sequence[int]) -> Tuple[int, int, float, bool, int, int, int]:
        """`resolve-budget` of validated values: the factor (None: absent) and the six u32
        counts in the record's order. Returns the result's fields in order, the outcome as its
        case index."""
        self._live()
        raw = self._raw
        raw[0].i32 = 0 if factor is None else 1
        raw[1].f64 = 0.0 if factor is None else factor
        raw[2].i32, raw[3].i32, raw[4].i32, raw[5].i32, raw[6].i32, raw[7].i32 = counts
        at = self._call(self._resolve, 8, "resolve-budget")
        admit, outcome, used, failed, cluster, service, ceiling = _RESULT.unpack(self._read(at, _RESULT.size, "resolve-budget"))
        if outcome >= OUTCOMES:
            raise CoreCallError(f"resolve-budget answered outcome case {outcome}, which admission-outcome does not have")
        return admit, outcome, used, failed != 0, cluster, service, ceiling

    def plan(self, factor: Optional[float], counts: Sequence[int], workspaces: Sequence[Tuple[str, int, int]],
             queue: Sequence[Tuple[str, str, int]]) -> Tuple[List[str], List[Tuple[str, int]], float, bool, int, int]:
        """`plan` of validated values: the factor, the four u32 counts in the record's order,
        (workspace, share, in-flight) and (id, workspace, enqueued-at). Returns the plan's
        fields in order, each waiting batch as (id, outcome case index)."""
        self._live()
        texts = [w[0].encode("utf-8") for w in workspaces]
        for batch_id, workspace, _ in queue:
            texts.append(batch_id.encode("utf-8"))
            texts.append(workspace.encode("utf-8"))
        text_at = self._place(texts, [1] * len(texts))
        loads = bytearray()
        for i, (_, share, in_flight) in enumerate(workspaces):
            loads += _WORKSPACE.pack(text_at[i], len(texts[i]), share, in_flight)
        batches = bytearray()
        n = len(workspaces)
        for j, (_, _, enqueued_at) in enumerate(queue):
            k = n + 2 * j
            batches += _QUEUED.pack(text_at[k], len(texts[k]), text_at[k + 1], len(texts[k + 1]), enqueued_at)
        loads_at, queue_at = self._place([bytes(loads), bytes(batches)], [4, 8])
        raw = self._raw
        raw[0].i32 = 0 if factor is None else 1
        raw[1].f64 = 0.0 if factor is None else factor
        raw[2].i32, raw[3].i32, raw[4].i32, raw[5].i32 = counts
        raw[6].i32, raw[7].i32, raw[8].i32, raw[9].i32 = loads_at, len(workspaces), queue_at, len(queue)
        at = self._call(self._plan, 10, "plan")
        memory = self._view()
        try:
            end = len(memory)

            def text(where: int, size: int) -> str:
                if where + size > end:
                    raise CoreCallError(f"plan: the answer points past linear memory ({where}+{size} > {end})")
                try:
                    return str(memory[where:where + size], "utf-8")
                except UnicodeDecodeError as e:
                    raise CoreCallError(f"plan: a string of the answer is not UTF-8: {e}") from e

            def fits(where: int, size: int) -> int:
                if where + size > end:
                    raise CoreCallError(f"plan: the answer points past linear memory ({where}+{size} > {end})")
                return where

            admitted_at, admitted_n, waiting_at, waiting_n, used, failed, cluster, service = _PLAN.unpack_from(
                memory, fits(at, _PLAN.size))
            fits(admitted_at, admitted_n * _STRING.size)
            admitted = [text(*_STRING.unpack_from(memory, admitted_at + i * _STRING.size)) for i in range(admitted_n)]
            fits(waiting_at, waiting_n * _WAITING.size)
            waiting = []
            for i in range(waiting_n):
                id_at, id_len, outcome = _WAITING.unpack_from(memory, waiting_at + i * _WAITING.size)
                if outcome >= OUTCOMES:
                    raise CoreCallError(f"plan answered outcome case {outcome}, which admission-outcome does not have")
                waiting.append((text(id_at, id_len), outcome))
        finally:
            if self._store is not None:
                raw[0].i32 = at
                self._call(self._plan_post, 1, "cabi_post plan")
        return admitted, waiting, used, failed != 0, cluster, service
