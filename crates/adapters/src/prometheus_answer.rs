//! The `result` of a Prometheus answer, read within bounds: its series are counted while they
//! are parsed, and an answer past [`MAX_SERIES`] series or [`MAX_POINTS`] points is refused as it
//! is read, before it is held whole. A 30 MiB answer of 700,000 series took `trace fetch` and
//! `tick` to 1.8 GB when it was first parsed into generic JSON values; the sentinel reads one
//! series per signal and per API, so an answer that large is a query to narrow, not data.

use serde::Deserialize;
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use std::collections::BTreeMap;
use std::fmt;

/// The most series one answer may hold.
pub(crate) const MAX_SERIES: usize = 10_000;
/// The most points (a range query's steps over all series, an instant vector's samples) one
/// answer may hold: a day at one a minute for about 700 series.
pub(crate) const MAX_POINTS: usize = 1_000_000;

/// What the refusal says, so the caller can tell it from a malformed answer.
pub(crate) const TOO_LARGE: &str = "the answer is larger than the sentinel reads";

/// One series as Prometheus writes it: an instant vector's `value`, or a matrix's `values`.
#[derive(Deserialize)]
pub struct Series {
    #[serde(default)]
    pub metric: BTreeMap<String, String>,
    #[serde(default)]
    pub value: Option<(f64, String)>,
    #[serde(default)]
    pub values: Option<Vec<(f64, String)>>,
}

/// A result: series (a vector or a matrix), or a scalar `[time, "value"]` (its value).
pub enum Answer {
    Series(Vec<Series>),
    Scalar(String),
}

/// One element of the result's list, as read.
#[derive(Deserialize)]
#[serde(untagged)]
enum Element {
    Series(Series),
    Time(f64),
    Text(String),
}

impl<'de> Deserialize<'de> for Answer {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Answer, D::Error> {
        deserializer.deserialize_seq(AnswerVisitor)
    }
}

struct AnswerVisitor;

impl<'de> Visitor<'de> for AnswerVisitor {
    type Value = Answer;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of series, or a scalar [time, \"value\"]")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Answer, A::Error> {
        let mut series = Vec::new();
        let (mut points, mut time, mut text): (usize, Option<f64>, Option<String>) = (0, None, None);
        while let Some(element) = seq.next_element::<Element>()? {
            match element {
                Element::Series(s) => {
                    points += s.values.as_ref().map_or(1, Vec::len);
                    series.push(s);
                    if series.len() > MAX_SERIES || points > MAX_POINTS {
                        return Err(de::Error::custom(format!(
                            "{TOO_LARGE}: more than {MAX_SERIES} series or {MAX_POINTS} points (it reads one series per signal and \
                             per API: narrow the query with a label filter, or aggregate it, such as `max by (api) (...)`)"
                        )));
                    }
                }
                Element::Time(t) if time.is_none() && series.is_empty() => time = Some(t),
                Element::Text(v) if time.is_some() && text.is_none() => text = Some(v),
                _ => return Err(de::Error::custom("a result that mixes series and values")),
            }
        }
        match (time, text) {
            (Some(_), Some(v)) => Ok(Answer::Scalar(v)),
            (None, None) => Ok(Answer::Series(series)),
            _ => Err(de::Error::custom("a scalar that is not [time, \"value\"]")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_scalars_and_an_answer_too_large_to_read() {
        let vector: Answer = serde_json::from_str(r#"[{"metric":{"api":"a"},"value":[1.0,"2"]},{"value":[1.0,"3"]}]"#).unwrap();
        assert!(
            matches!(vector, Answer::Series(ref s) if s.len() == 2 && s[0].metric["api"] == "a" && s[1].value.as_ref().unwrap().1 == "3")
        );
        let matrix: Answer = serde_json::from_str(r#"[{"metric":{},"values":[[60,"1"],[120,"2"]]}]"#).unwrap();
        assert!(matches!(matrix, Answer::Series(ref s) if s[0].values.as_ref().unwrap().len() == 2));
        assert!(matches!(serde_json::from_str::<Answer>(r#"[1.5,"7"]"#).unwrap(), Answer::Scalar(ref v) if v == "7"));
        assert!(matches!(serde_json::from_str::<Answer>("[]").unwrap(), Answer::Series(ref s) if s.is_empty()));
        for bad in [r#"[1.5]"#, r#"["7"]"#, r#"[{"value":[1,"2"]},1.5,"7"]"#, r#"{"a":1}"#] {
            assert!(serde_json::from_str::<Answer>(bad).is_err(), "{bad}");
        }
        let many = format!("[{}]", vec![r#"{"metric":{"api":"x"},"value":[1,"2"]}"#; MAX_SERIES + 1].join(","));
        let err = serde_json::from_str::<Answer>(&many).err().unwrap().to_string();
        assert!(err.contains(TOO_LARGE) && err.contains("narrow the query"), "{err}");
        let exactly = format!("[{}]", vec![r#"{"value":[1,"2"]}"#; MAX_SERIES].join(","));
        assert!(serde_json::from_str::<Answer>(&exactly).is_ok(), "the limit itself is read");
        let long = format!(r#"[{{"values":[{}]}}]"#, vec![r#"[60,"1"]"#; MAX_POINTS + 1].join(","));
        assert!(serde_json::from_str::<Answer>(&long).err().unwrap().to_string().contains(TOO_LARGE));
    }
}
