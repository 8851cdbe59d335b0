//! The capacity sentinel host: loads versioned policy components on wasmtime, feeds them
//! readings, memory and pins, and replays recorded traces.

pub mod bindings;
pub mod policy;
pub mod names;
pub mod replay;
pub mod cli;
pub mod instants;
pub mod trace;
