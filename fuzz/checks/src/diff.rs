//! Field-by-field comparison of two values of any serializable type (the generated WIT types
//! derive `Serialize` and `PartialEq`), NaN-aware: two NaNs are equal, other floats compare with
//! `==` (so 0.0 equals -0.0). Equal values cost one `==`; only unequal ones are walked, through
//! `serde_value`, which keeps floats as floats where JSON would turn NaN into null.

use serde::Serialize;
use serde_value::Value;

/// Each differing field as `path: expected <a>, got <b>` (`a` is usually the native answer).
/// Equal values (`==`) return at once; otherwise the walk decides (NaN equals NaN there).
pub fn differences<T: Serialize + PartialEq>(expected: &T, got: &T) -> Vec<String> {
    if expected == got {
        return Vec::new();
    }
    let (a, b) = (to_value(expected), to_value(got));
    let mut out = Vec::new();
    walk("", &a, &b, &mut out);
    out
}

fn to_value<T: Serialize>(v: &T) -> Value {
    serde_value::to_value(v).unwrap_or_else(|e| panic!("a generated type always serializes: {e}"))
}

fn walk(path: &str, a: &Value, b: &Value, out: &mut Vec<String>) {
    let at = |p: &str| if p.is_empty() { "(value)".to_string() } else { p.to_string() };
    match (a, b) {
        (Value::F64(x), Value::F64(y)) => {
            if !(x == y || (x.is_nan() && y.is_nan())) {
                out.push(format!("{}: expected {x:?}, got {y:?}", at(path)));
            }
        }
        (Value::Map(x), Value::Map(y)) => {
            for (key, va) in x {
                let sub = format!("{}{}", if path.is_empty() { "" } else { "." }, key_name(key));
                match y.get(key) {
                    Some(vb) => walk(&format!("{path}{sub}"), va, vb, out),
                    None => out.push(format!("{path}{sub}: expected {va:?}, missing")),
                }
            }
            for (key, vb) in y.iter().filter(|(k, _)| !x.contains_key(*k)) {
                out.push(format!("{path}.{}: unexpected {vb:?}", key_name(key)));
            }
        }
        (Value::Seq(x), Value::Seq(y)) => {
            if x.len() != y.len() {
                out.push(format!("{}: expected {} items, got {}", at(path), x.len(), y.len()));
            }
            for (i, (va, vb)) in x.iter().zip(y).enumerate() {
                walk(&format!("{path}[{i}]"), va, vb, out);
            }
        }
        (Value::Option(Some(x)), Value::Option(Some(y))) | (Value::Newtype(x), Value::Newtype(y)) => walk(path, x, y, out),
        _ if a == b => {}
        _ => out.push(format!("{}: expected {a:?}, got {b:?}", at(path))),
    }
}

/// A struct field or an enum variant's name; anything else as it prints.
fn key_name(key: &Value) -> String {
    match key {
        Value::String(s) => s.clone(),
        other => format!("{other:?}"),
    }
}

/// Proves at start that this comparison can fail (a check that cannot fail is no check).
pub fn self_check() {
    use vocabulary::Factors;
    let factors = |bulk: f64| Factors { bulk, heavy: 1.0, write: 1.0, read: 1.0 };
    assert!(differences(&factors(f64::NAN), &factors(f64::NAN)).is_empty(), "NaN must equal NaN");
    assert_eq!(differences(&factors(0.5), &factors(f64::NAN)), ["bulk: expected 0.5, got NaN"]);
    assert!(differences(&factors(0.0), &factors(-0.0)).is_empty(), "0.0 equals -0.0");
    let nan_and_off = (factors(f64::NAN), Factors { read: 0.5, ..factors(f64::NAN) });
    assert_eq!(differences(&nan_and_off.0, &nan_and_off.1), ["read: expected 1.0, got 0.5"]);
    assert_eq!(differences(&vec![1u32, 2], &vec![1u32, 3]), ["[1]: expected U32(2), got U32(3)"]);
}
