//! The search space of `sentinel policy tune` (docs/behaviour.md §10.8): a TOML file naming, for
//! each threshold to vary, its values (`[a, b, c]`) or a range (`{ from, to, step }`), and the
//! rule that chooses among the candidates. Keys are the `[thresholds]` keys of a `policy.toml`,
//! dotted or nested:
//!
//! ```toml
//! [thresholds]
//! cpu_pct.resolve_band = [0, 5, 10]
//! recover_readings = { from = 5, to = 8, step = 1 }
//!
//! [choose]
//! max_bulk_capacity_loss_pct = 0.5     # against the base, on the training traces
//! max_protection_delay_minutes = 2     # any entry into critical, against the base
//! ```
//!
//! Every candidate (the product of the values, keys in alphabetical order, the last varying
//! fastest) is checked before a sweep starts: against the policy file's own rules and the
//! invariant floors.

use super::TuneError;
use super::space_keys::{KEYS, Kind, set};
use sentinel_core::policy::invariants::Floors;
use serde::Serialize;
use vocabulary::Thresholds;

pub use super::space_keys::settings_of;

/// The most candidates one sweep replays.
pub const MAX_CANDIDATES: usize = 100_000;

/// The floors every candidate keeps whatever the space says (INV-01: 3 readings to escalate,
/// 5 to recover, 5 minutes between automatic changes).
pub const SEED_FLOORS: Floors = Floors { min_spacing_s: Some(300), min_escalate_readings: Some(3), min_recover_readings: Some(5) };

/// One threshold and the values it takes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Dimension {
    /// The threshold's `[thresholds]` key in `policy.toml`, dotted (`cpu_pct.resolve_band`).
    pub key: String,
    /// The values it takes, in the order listed (a range: from `from` to `to`, `step` apart).
    pub values: Vec<f64>,
}

/// How the sweep chooses: the least flaps per day among candidates that break no invariant, miss
/// no protection the base gave, and stay within these limits on the training traces.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChoiceRule {
    /// Bulk capacity-minutes lost against the base, in percent.
    #[serde(default = "default_loss")]
    pub max_bulk_capacity_loss_pct: f64,
    /// Minutes any entry of the base into critical may come later with the candidate.
    #[serde(default = "default_delay")]
    pub max_protection_delay_minutes: i64,
}

fn default_loss() -> f64 {
    0.5
}

fn default_delay() -> i64 {
    2
}

impl Default for ChoiceRule {
    fn default() -> ChoiceRule {
        ChoiceRule { max_bulk_capacity_loss_pct: default_loss(), max_protection_delay_minutes: default_delay() }
    }
}

/// A parsed space.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchSpace {
    /// The thresholds to vary, keys in alphabetical order (at least one).
    pub dimensions: Vec<Dimension>,
    /// The rule that chooses among the candidates (`[choose]`, its defaults when absent).
    pub choose: ChoiceRule,
}

/// One point of the space: its settings and the thresholds they give.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// Its position among the space's candidates, from 0: the number the reports give it.
    pub index: usize,
    /// Each varied key with its value here, keys in the space's order; with damping off, of the
    /// damping keys only `damping.enabled`.
    pub settings: Vec<(String, f64)>,
    /// The base's thresholds with these settings applied (no damping when it is off): the
    /// numbers replayed, and written when it is chosen.
    pub thresholds: Thresholds,
}

impl Candidate {
    /// `key=value, ...`, as the reports name a candidate.
    pub fn label(&self) -> String {
        if self.settings.is_empty() {
            return "the base".into();
        }
        self.settings.iter().map(|(k, v)| format!("{k}={}", number(*v))).collect::<Vec<_>>().join(", ")
    }
}

impl Candidate {
    /// What differs from `base`: `key from -> to, ...` (`no change` when nothing does).
    pub fn changes(&self, base: &Thresholds) -> String {
        let before = settings_of(base);
        let changed: Vec<String> = self
            .settings
            .iter()
            .filter_map(|(k, v)| {
                let old = before.iter().find(|(key, _)| key == k).map_or(f64::NAN, |(_, old)| *old);
                (old != *v).then(|| format!("{k} {} -> {}", number(old), number(*v)))
            })
            .collect();
        if changed.is_empty() { "no change".into() } else { changed.join(", ") }
    }
}

/// A number as the reports write it: whole numbers without a fraction.
pub fn number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 { format!("{v:.0}") } else { format!("{v}") }
}

impl SearchSpace {
    /// Parses a space file; errors name the file and the key.
    pub fn parse(file: &str, text: &str) -> Result<SearchSpace, TuneError> {
        let bad = |message: String| TuneError::Space { file: file.to_string(), message };
        let table: toml::Table = toml::from_str(text).map_err(|e| bad(e.to_string()))?;
        let mut dimensions = Vec::new();
        let mut choose = ChoiceRule::default();
        for (section, value) in table {
            match (section.as_str(), value) {
                ("thresholds", toml::Value::Table(t)) => flatten("", &t, &mut dimensions).map_err(bad)?,
                ("choose", toml::Value::Table(t)) => {
                    choose = toml::Value::Table(t).try_into().map_err(|e: toml::de::Error| bad(format!("choose: {}", e.message())))?;
                }
                (other, _) => return Err(bad(format!("{other}: unknown section (expected [thresholds] and [choose])"))),
            }
        }
        if dimensions.is_empty() {
            return Err(bad("thresholds: names no threshold to vary".into()));
        }
        if !(choose.max_bulk_capacity_loss_pct.is_finite() && choose.max_bulk_capacity_loss_pct >= 0.0) {
            return Err(bad("choose.max_bulk_capacity_loss_pct: must be a number of at least 0".into()));
        }
        if choose.max_protection_delay_minutes < 0 {
            return Err(bad("choose.max_protection_delay_minutes: must be at least 0".into()));
        }
        let space = SearchSpace { dimensions, choose };
        let size = space.size();
        if size > MAX_CANDIDATES {
            return Err(bad(format!("thresholds: {size} candidates, more than {MAX_CANDIDATES}: narrow a range or take fewer values")));
        }
        Ok(space)
    }

    /// How many candidates (saturating).
    pub fn size(&self) -> usize {
        self.dimensions.iter().fold(1usize, |n, d| n.saturating_mul(d.values.len()))
    }

    /// Every candidate over `base`, the first key (alphabetically) varying slowest; refused (naming the key and
    /// the candidate) when one breaks the policy file's rules or `floors`.
    pub fn candidates(&self, base: &Thresholds, floors: &Floors) -> Result<Vec<Candidate>, TuneError> {
        let mut out = Vec::with_capacity(self.size());
        let mut digits = vec![0usize; self.dimensions.len()];
        loop {
            let settings: Vec<(String, f64)> = self.dimensions.iter().zip(&digits).map(|(d, &i)| (d.key.clone(), d.values[i])).collect();
            let mut thresholds = *base;
            for (key, value) in &settings {
                set(&mut thresholds, key, *value);
            }
            let damping_off = settings.iter().any(|(k, v)| k == "damping.enabled" && *v == 0.0);
            if damping_off {
                thresholds.damping = None;
            }
            // With damping off, its other numbers change nothing: one candidate, not one per value.
            let redundant = damping_off
                && self.dimensions.iter().zip(&digits).any(|(d, &i)| i > 0 && d.key.starts_with("damping.") && d.key != "damping.enabled");
            if !redundant {
                let mut settings = settings;
                if damping_off {
                    settings.retain(|(k, _)| k == "damping.enabled" || !k.starts_with("damping."));
                }
                let candidate = Candidate { index: out.len(), settings, thresholds };
                admissible(&candidate, floors)?;
                out.push(candidate);
            }
            // The next combination, the last key fastest.
            let mut k = digits.len();
            loop {
                if k == 0 {
                    return Ok(out);
                }
                k -= 1;
                digits[k] += 1;
                if digits[k] < self.dimensions[k].values.len() {
                    break;
                }
                digits[k] = 0;
            }
        }
    }
}

/// The candidate's thresholds pass the policy file's checks and the floors.
fn admissible(c: &Candidate, floors: &Floors) -> Result<(), TuneError> {
    let refuse = |message: String| TuneError::Candidate { candidate: c.label(), message };
    c.thresholds.check().map_err(&refuse)?;
    let t = &c.thresholds;
    for (key, own, floor) in [
        ("spacing_s", t.spacing_s, floors.min_spacing_s),
        ("escalate_readings", t.escalate_readings, floors.min_escalate_readings),
        ("recover_readings", t.recover_readings, floors.min_recover_readings),
    ] {
        if let Some(floor) = floor
            && own < floor
        {
            return Err(refuse(format!("thresholds.{key}: {own} is below the invariant floor {floor} (INV-01)")));
        }
    }
    Ok(())
}

/// Nested tables become dotted keys; an array or a range is one dimension.
fn flatten(prefix: &str, table: &toml::Table, out: &mut Vec<Dimension>) -> Result<(), String> {
    for (name, value) in table {
        let key = if prefix.is_empty() { name.clone() } else { format!("{prefix}.{name}") };
        match value {
            toml::Value::Table(t) if t.contains_key("from") || t.contains_key("to") || t.contains_key("step") => {
                let values = range(&key, t)?;
                out.push(dimension(&key, values)?);
            }
            toml::Value::Table(t) => flatten(&key, t, out)?,
            toml::Value::Array(items) => {
                let values = items.iter().map(|v| as_number(&key, v)).collect::<Result<Vec<f64>, String>>()?;
                out.push(dimension(&key, values)?);
            }
            other => return Err(format!("thresholds.{key}: expected a list of values or {{ from, to, step }}, got {other}")),
        }
    }
    Ok(())
}

fn dimension(key: &str, values: Vec<f64>) -> Result<Dimension, String> {
    let Some(&(_, kind)) = KEYS.iter().find(|(k, _)| *k == key) else {
        let known: Vec<&str> = KEYS.iter().map(|(k, _)| *k).collect();
        return Err(format!("thresholds.{key}: not a threshold the tuner can vary (one of: {})", known.join(", ")));
    };
    if values.is_empty() {
        return Err(format!("thresholds.{key}: no values"));
    }
    for &v in &values {
        let whole = v.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&v);
        if kind == Kind::Count && !whole {
            return Err(format!("thresholds.{key}: {v} is not a whole number from 0 to {}", u32::MAX));
        }
        if kind == Kind::Switch && v != 0.0 && v != 1.0 {
            return Err(format!("thresholds.{key}: {v} is neither 0 (off) nor 1 (on)"));
        }
    }
    let mut seen = values.clone();
    seen.sort_by(f64::total_cmp);
    if seen.windows(2).any(|w| w[0] == w[1]) {
        return Err(format!("thresholds.{key}: a value is listed twice"));
    }
    Ok(Dimension { key: key.to_string(), values })
}

fn range(key: &str, t: &toml::Table) -> Result<Vec<f64>, String> {
    for k in t.keys() {
        if !matches!(k.as_str(), "from" | "to" | "step") {
            return Err(format!("thresholds.{key}.{k}: unknown (a range has from, to and step)"));
        }
    }
    let get = |name: &str| t.get(name).ok_or_else(|| format!("thresholds.{key}.{name}: missing")).and_then(|v| as_number(key, v));
    let (from, to, step) = (get("from")?, get("to")?, get("step")?);
    if step <= 0.0 || from > to {
        return Err(format!("thresholds.{key}: a range needs from <= to and a step above 0"));
    }
    let n = ((to - from) / step + 1e-9).floor();
    if n >= MAX_CANDIDATES as f64 {
        return Err(format!("thresholds.{key}: the range has more than {MAX_CANDIDATES} values"));
    }
    // Rounded to 9 decimals, so that 0.1 steps give 0.3 and not 0.30000000000000004.
    Ok((0..=n as usize).map(|i| ((from + i as f64 * step) * 1e9).round() / 1e9).collect())
}

fn as_number(key: &str, v: &toml::Value) -> Result<f64, String> {
    match v {
        toml::Value::Integer(i) => Ok(*i as f64),
        toml::Value::Float(f) if f.is_finite() => Ok(*f),
        other => Err(format!("thresholds.{key}: {other} is not a finite number")),
    }
}

#[cfg(test)]
mod tests;
