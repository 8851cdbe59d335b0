//! What Prometheus alerts on: the rules as data and their rules file.

pub mod render;
pub mod rules;
