//! What `sentinel check --connect` prints: one line per dependency (`ok` or `FAIL`, where it is
//! configured, what it is, how long it took, what was done or what to fix), then a summary.

use crate::config::Config;
use crate::connectivity::Reached;
use sentinel_core::policy::PolicyIdentity;
use std::process::ExitCode;
use std::time::Duration;

pub fn print(config: &Config, policy: &PolicyIdentity, reached: &[Reached]) -> anyhow::Result<ExitCode> {
    let width = reached.iter().map(|r| r.dependency.len()).max().unwrap_or(0);
    super::emit(&format!("{}: policy {} {} loaded and checked", config.source, policy.name, policy.version))?;
    for r in reached {
        super::emit(&line(r, width))?;
    }
    let failed: Vec<&str> = reached.iter().filter(|r| r.failed()).map(|r| r.dependency.as_str()).collect();
    if failed.is_empty() {
        super::emit(&format!("all {} reached", reached.len()))?;
        return Ok(ExitCode::SUCCESS);
    }
    super::emit(&format!(
        "{} of {} failed ({}): mend what each FAIL line says, then run `sentinel check --connect` again",
        failed.len(),
        reached.len(),
        failed.join(", ")
    ))?;
    Ok(ExitCode::from(super::exit::UNREACHABLE))
}

fn line(r: &Reached, width: usize) -> String {
    let (mark, text) = match &r.outcome {
        Ok(done) => ("ok  ", done),
        Err(fix) => ("FAIL", fix),
    };
    format!("{mark} {:width$}  {} ({}): {text}", r.dependency, r.target, took(r.took))
}

/// A duration for a person: `850 µs`, `12 ms`, `3.0 s`.
fn took(d: Duration) -> String {
    if d < Duration::from_millis(1) {
        format!("{} µs", d.as_micros())
    } else if d < Duration::from_secs(1) {
        format!("{} ms", d.as_millis())
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_says_where_what_how_long_and_what_to_fix() {
        let r = Reached {
            dependency: "publish.cache".into(),
            target: "redis redis://127.0.0.1:1 key k".into(),
            outcome: Err("connecting: refused (check that Redis is running)".into()),
            took: Duration::from_millis(1500),
        };
        assert_eq!(
            line(&r, 15),
            "FAIL publish.cache    redis redis://127.0.0.1:1 key k (1.5 s): connecting: refused (check that Redis is running)"
        );
        assert_eq!(took(Duration::from_micros(850)), "850 µs");
        assert_eq!(took(Duration::from_millis(12)), "12 ms");
    }
}
