//! docs/behaviour.md §9.1: which published document a service acts on. The cache's document
//! when it is usable, else the parameter's, else none (admission then runs at full capacity).
//! A document is usable when it is a JSON object with a numeric `factors.bulk` in [0, 1] and an
//! RFC 3339 `decided_at` that is at most `max_age_s` old and at most `max_skew_s` ahead of `now`.

use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use vocabulary::{Channel, ChannelRead, ChannelVerdict, FactorChoice, FactorChoiceRequest, Instant};

/// A usable document's fields.
#[derive(Debug, Clone, PartialEq)]
struct Usable {
    bulk: f64,
    state: Option<String>,
    sequence: Option<u64>,
    decided_at: Instant,
    age_s: i64,
}

/// One channel judged: usable, or its verdict and what went wrong.
type Judged = Result<Usable, (ChannelVerdict, String)>;

pub fn choose_factor(request: &FactorChoiceRequest) -> FactorChoice {
    let cache = judge(&request.cache, request);
    let parameter = judge(&request.parameter, request);
    let verdict = |j: &Judged| match j {
        Ok(_) => ChannelVerdict::Usable,
        Err((v, _)) => *v,
    };
    let (cache_verdict, parameter_verdict) = (verdict(&cache), verdict(&parameter));
    let chosen = match (cache, parameter) {
        (Ok(doc), _) => Ok((Channel::Cache, doc, None)),
        (Err((ChannelVerdict::NotRead, _)), Ok(doc)) => Ok((Channel::Parameter, doc, None)),
        (Err((_, why)), Ok(doc)) => Ok((Channel::Parameter, doc, Some(format!("cache: {why}")))),
        (Err((_, c)), Err((_, p))) => Err(format!("cache: {c}; parameter: {p}")),
    };
    match chosen {
        Ok((source, doc, reason)) => FactorChoice {
            factor: Some(doc.bulk),
            source: Some(source),
            state: doc.state,
            sequence: doc.sequence,
            decided_at: Some(doc.decided_at),
            age_s: Some(doc.age_s),
            cache: cache_verdict,
            parameter: parameter_verdict,
            reason,
        },
        Err(reason) => FactorChoice {
            factor: None,
            source: None,
            state: None,
            sequence: None,
            decided_at: None,
            age_s: None,
            cache: cache_verdict,
            parameter: parameter_verdict,
            reason: Some(reason),
        },
    }
}

fn judge(read: &ChannelRead, request: &FactorChoiceRequest) -> Judged {
    let text = match read {
        ChannelRead::NotRead => return Err((ChannelVerdict::NotRead, "not read".into())),
        ChannelRead::Failed(why) => return Err((ChannelVerdict::ReadFailed, why.clone())),
        ChannelRead::Document(text) => text,
    };
    let unreadable = |why: String| (ChannelVerdict::Unreadable, why);
    let doc: serde_json::Value = serde_json::from_str(text).map_err(|e| unreadable(format!("not a JSON document ({e})")))?;
    let doc = doc.as_object().ok_or_else(|| unreadable("the document is not a JSON object".into()))?;
    let bulk = doc
        .get("factors")
        .and_then(|f| f.get("bulk"))
        .and_then(serde_json::Value::as_f64)
        .ok_or_else(|| unreadable("the document has no numeric factors.bulk".into()))?;
    let stamp =
        doc.get("decided_at").and_then(serde_json::Value::as_str).ok_or_else(|| unreadable("the document has no decided_at".into()))?;
    let decided_at = OffsetDateTime::parse(stamp, &Rfc3339)
        .map_err(|e| unreadable(format!("decided_at {stamp:?} is not an RFC 3339 time ({e})")))?
        .unix_timestamp();
    if !(0.0..=1.0).contains(&bulk) {
        return Err((ChannelVerdict::OutOfRange, format!("factors.bulk {bulk} is outside [0, 1]")));
    }
    let age_s = request.now.saturating_sub(decided_at);
    if age_s < 0 && age_s.unsigned_abs() > u64::from(request.max_skew_s) {
        let ahead = age_s.unsigned_abs();
        let allowance = request.max_skew_s;
        return Err((
            ChannelVerdict::FromTheFuture,
            format!("from the future: decided_at {stamp} is {ahead} s ahead of this clock (allowance {allowance} s)"),
        ));
    }
    if age_s > i64::from(request.max_age_s) {
        let max = request.max_age_s;
        return Err((ChannelVerdict::Stale, format!("stale: decided_at {stamp} is {age_s} s old (maximum {max} s)")));
    }
    Ok(Usable {
        bulk,
        state: doc.get("state").and_then(serde_json::Value::as_str).map(str::to_string),
        sequence: doc.get("sequence").and_then(serde_json::Value::as_u64),
        decided_at,
        age_s,
    })
}

#[cfg(test)]
mod tests;
