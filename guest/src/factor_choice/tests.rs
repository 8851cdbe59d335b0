//! The choice between the two channels, rule by rule; the shared vectors
//! (tests/vectors/factor-choice/) hold the exact answers every language must give.

use super::*;
use proptest::prelude::*;

const NOW: Instant = 1_792_506_600; // 2026-10-20T14:30:00Z

fn doc(bulk: &str, decided_at: &str) -> ChannelRead {
    ChannelRead::Document(format!(
        r#"{{"state":"critical","factors":{{"bulk":{bulk},"heavy":0.25,"write":1.0,"read":1.0}},"decided_at":"{decided_at}","sequence":7}}"#
    ))
}

fn ask(cache: ChannelRead, parameter: ChannelRead) -> FactorChoice {
    choose_factor(&FactorChoiceRequest { cache, parameter, now: NOW, max_age_s: 180, max_skew_s: 30 })
}

#[test]
fn a_fresh_cache_document_is_chosen_and_the_parameter_is_not_needed() {
    let c = ask(doc("0.5", "2026-10-20T14:29:00Z"), ChannelRead::NotRead);
    assert_eq!((c.factor, c.source, c.age_s, c.sequence), (Some(0.5), Some(Channel::Cache), Some(60), Some(7)));
    assert_eq!((c.cache, c.parameter, c.reason), (ChannelVerdict::Usable, ChannelVerdict::NotRead, None));
    assert_eq!(c.state.as_deref(), Some("critical"));
}

#[test]
fn the_parameter_stands_in_for_a_failed_cache_and_the_reason_says_why() {
    let c = ask(ChannelRead::Failed("no key capacity:state".into()), doc("0", "2026-10-20T14:30:00Z"));
    assert_eq!((c.factor, c.source), (Some(0.0), Some(Channel::Parameter)));
    assert_eq!(c.reason.as_deref(), Some("cache: no key capacity:state"));
}

#[test]
fn the_age_limit_and_the_skew_allowance_are_inclusive() {
    assert_eq!(ask(doc("1", "2026-10-20T14:27:00Z"), ChannelRead::NotRead).cache, ChannelVerdict::Usable);
    assert_eq!(ask(doc("1", "2026-10-20T14:26:59Z"), ChannelRead::NotRead).cache, ChannelVerdict::Stale);
    assert_eq!(ask(doc("1", "2026-10-20T14:30:30Z"), ChannelRead::NotRead).cache, ChannelVerdict::Usable);
    assert_eq!(ask(doc("1", "2026-10-20T14:30:31Z"), ChannelRead::NotRead).cache, ChannelVerdict::FromTheFuture);
}

#[test]
fn nothing_usable_gives_no_factor_and_a_reason_naming_both_channels() {
    let c = ask(ChannelRead::Failed("connection refused".into()), doc("0", "2026-10-20T14:00:00Z"));
    assert_eq!((c.factor, c.source, c.parameter), (None, None, ChannelVerdict::Stale));
    assert_eq!(
        c.reason.as_deref(),
        Some("cache: connection refused; parameter: stale: decided_at 2026-10-20T14:00:00Z is 1800 s old (maximum 180 s)")
    );
}

/// A channel read of any kind: a well-formed document of any bulk and age (the usable kind
/// included), a failure, nothing, or arbitrary text.
fn any_read() -> impl Strategy<Value = ChannelRead> {
    prop_oneof![
        (-0.5f64..1.5, -400i64..400).prop_map(|(bulk, age)| {
            let at = time::OffsetDateTime::from_unix_timestamp(NOW - age).unwrap().format(&Rfc3339).unwrap();
            ChannelRead::Document(format!(r#"{{"factors":{{"bulk":{bulk}}},"decided_at":"{at}","sequence":1}}"#))
        }),
        ".{0,40}".prop_map(ChannelRead::Failed),
        Just(ChannelRead::NotRead),
        ".{0,80}".prop_map(ChannelRead::Document),
    ]
}

proptest! {
    /// The cache wins whenever it is usable; otherwise the parameter when usable; a chosen
    /// document is fresh and in range; no choice always says why.
    #[test]
    fn the_cache_is_preferred_and_a_choice_is_fresh_and_in_range(cache in any_read(), parameter in any_read()) {
        let c = choose_factor(&FactorChoiceRequest { cache, parameter, now: NOW, max_age_s: 180, max_skew_s: 30 });
        match c.source {
            Some(Channel::Cache) => prop_assert_eq!(c.cache, ChannelVerdict::Usable),
            Some(Channel::Parameter) => prop_assert!(c.parameter == ChannelVerdict::Usable && c.cache != ChannelVerdict::Usable),
            None => prop_assert!(c.cache != ChannelVerdict::Usable && c.parameter != ChannelVerdict::Usable && c.reason.is_some()),
        }
        if let Some(f) = c.factor {
            let age = c.age_s.unwrap();
            prop_assert!((0.0..=1.0).contains(&f) && (-30..=180).contains(&age));
        }
    }

    /// Any text on either channel gives an answer, never a panic, and a chosen factor is in [0, 1]
    /// from a channel judged usable.
    #[test]
    fn any_text_is_judged_and_a_chosen_factor_is_in_range(
        cache in ".{0,80}", parameter in "\\{.{0,80}\\}", now in any::<i64>(), age in any::<u32>(), skew in any::<u32>()
    ) {
        let c = choose_factor(&FactorChoiceRequest {
            cache: ChannelRead::Document(cache),
            parameter: ChannelRead::Document(parameter),
            now,
            max_age_s: age,
            max_skew_s: skew,
        });
        match c.source {
            Some(Channel::Cache) => prop_assert_eq!(c.cache, ChannelVerdict::Usable),
            Some(Channel::Parameter) => prop_assert_eq!(c.parameter, ChannelVerdict::Usable),
            None => prop_assert!(c.factor.is_none() && c.reason.is_some()),
        }
        if let Some(f) = c.factor {
            prop_assert!((0.0..=1.0).contains(&f));
        }
    }
}
