//! The thin export layer: the one `generate!` of the guest side, conversions, and the
//! `Guest` implementations that call the pure modules.

#[cfg(all(feature = "world-policy", feature = "world-admission"))]
compile_error!("build one world at a time: feature world-policy or world-admission");
#[cfg(not(any(feature = "world-policy", feature = "world-admission")))]
compile_error!("a component build needs feature world-policy or world-admission");

#[cfg(feature = "world-policy")]
wit_bindgen::generate!({ path: "../wit", world: "policy" });
#[cfg(all(feature = "world-admission", not(feature = "world-policy")))]
wit_bindgen::generate!({ path: "../wit", world: "admission-only" });

mod admission;
#[cfg(all(feature = "world-policy", feature = "bench-echo"))]
mod bench;
#[cfg(feature = "world-policy")]
mod damping;
#[cfg(all(feature = "world-admission", not(feature = "world-policy")))]
mod factor_choice;
#[cfg(feature = "world-policy")]
mod faults;
#[cfg(feature = "world-policy")]
mod numbers;
#[cfg(feature = "world-policy")]
mod policy;
#[cfg(feature = "world-policy")]
mod replay;

/// The component's one export type.
struct Component;

export!(Component);
