//! The two no-op component calls the decision is compared with.
//!
//! - **empty**: a hand-written component exporting `nothing: func()`, whose core function is
//!   empty. It measures what any call into a component costs on this engine and store
//!   configuration (epoch deadline, memory limiter): entering and leaving the instance, no
//!   argument, no result, no guest code.
//! - **echo**: the fixture policy `tests/policies/9.9.0`, built from the same guest with the
//!   bench-only `bench-echo` feature: its `decide` lifts the same `decision-input`, runs no rule
//!   and lowers a `decision` of the same shape (see `guest/src/export/bench.rs`). Called
//!   through the host's own `ComponentPolicy`, it is everything a decision costs except the
//!   rules themselves.

use capacity_tests::paths::target_dir;
use sentinel_core::policy::{self, Policy, Runtime};
use std::path::PathBuf;
use std::sync::Arc;
use wasmtime::component::{Component, Linker, TypedFunc};
use wasmtime::{Store, StoreLimits, StoreLimitsBuilder};

/// The empty component, in the WebAssembly text format.
pub const EMPTY_WAT: &str = r#"(component
  (core module $m (func (export "nothing")))
  (core instance $i (instantiate $m))
  (func (export "nothing") (canon lift (core func $i "nothing"))))"#;

/// A long-lived instance of the empty component, in a store set up as the host's policies are.
pub struct EmptyCall {
    store: Store<StoreLimits>,
    func: TypedFunc<(), ()>,
    ticks: u64,
}

impl EmptyCall {
    pub fn new(runtime: &Runtime) -> wasmtime::Result<EmptyCall> {
        let engine = runtime.engine();
        let wasm = wat::parse_str(EMPTY_WAT).map_err(wasmtime::Error::msg)?;
        let component = Component::new(engine, wasm)?;
        let limits = StoreLimitsBuilder::new().memory_size(runtime.limits().memory_bytes).trap_on_grow_failure(true).build();
        let mut store = Store::new(engine, limits);
        store.limiter(|s| s);
        let ticks = runtime.deadline_ticks();
        store.set_epoch_deadline(ticks);
        let instance = Linker::new(engine).instantiate(&mut store, &component)?;
        let func = instance.get_typed_func::<(), ()>(&mut store, "nothing")?;
        Ok(EmptyCall { store, func, ticks })
    }

    /// One call, with the same per-call epoch deadline the host's policy calls set.
    pub fn call(&mut self) -> wasmtime::Result<()> {
        self.store.set_epoch_deadline(self.ticks);
        self.func.call(&mut self.store, ())?;
        Ok(())
    }
}

/// Where `cargo policies` builds the echo fixture.
pub fn echo_path() -> PathBuf {
    target_dir().join("test-policies/capacity-policy-bench-echo-9.9.0.wasm")
}

/// The echo fixture as a host policy (a `ComponentPolicy`, like any shipped version).
pub fn echo(runtime: &Arc<Runtime>) -> Box<dyn Policy> {
    let path = echo_path();
    assert!(path.is_file(), "{} is missing: run `cargo policies` first", path.display());
    policy::open(&format!("echo={}", path.display()), runtime).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}
