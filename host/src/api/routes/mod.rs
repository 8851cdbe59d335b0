//! The handlers, one concern per file; each carries its OpenAPI description.

pub mod audit;
pub mod ops;
pub mod overview;
pub mod pin;
pub mod scorecard;
pub mod state;
pub mod timeline;
pub mod versions;
