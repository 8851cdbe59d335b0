//! Where a bench run leaves its figures for the table: criterion's own estimates (under
//! `$CRITERION_HOME`, which `bench/run` points at `target/bench/criterion`), and one JSON note
//! per bench (`target/bench/<bench>.json`) with the load average at its start and end and any
//! figure criterion does not measure (resident memory, trace sizes).

use capacity_tests::paths::target_dir;
use serde_json::{Map, Value, json};
use std::path::PathBuf;

/// `target/bench`, or `$BENCH_RESULTS`.
pub fn dir() -> PathBuf {
    std::env::var_os("BENCH_RESULTS").map(PathBuf::from).unwrap_or_else(|| target_dir().join("bench"))
}

/// Where criterion writes (its own rule: `$CRITERION_HOME`, else `<target>/criterion`).
pub fn criterion_home() -> PathBuf {
    std::env::var_os("CRITERION_HOME").map(PathBuf::from).unwrap_or_else(|| target_dir().join("criterion"))
}

/// The 1, 5 and 15 minute load averages (`/proc/loadavg`).
pub fn loadavg() -> [f64; 3] {
    let text = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let mut fields = text.split_whitespace().map(|f| f.parse().unwrap_or(f64::NAN));
    [(); 3].map(|()| fields.next().unwrap_or(f64::NAN))
}

/// One bench's note: started when the bench starts, written when it is finished (only when
/// measuring: a smoke run under `cargo test` leaves nothing behind).
#[derive(Debug)]
pub struct Note {
    name: &'static str,
    fields: Map<String, Value>,
}

impl Note {
    pub fn start(name: &'static str) -> Note {
        let mut fields = Map::new();
        fields.insert("load_start".into(), json!(loadavg()));
        Note { name, fields }
    }

    pub fn set(&mut self, key: &str, value: Value) {
        self.fields.insert(key.into(), value);
    }

    pub fn finish(mut self) {
        self.fields.insert("load_end".into(), json!(loadavg()));
        if !crate::measuring() {
            return;
        }
        let dir = dir();
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("creating {}: {e}", dir.display()));
        let path = dir.join(format!("{}.json", self.name));
        let text = serde_json::to_string_pretty(&Value::Object(self.fields)).expect("a note serializes");
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
    }
}
