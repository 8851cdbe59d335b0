//! The `factor-choice` export (admission-only world): the generated records converted to the
//! vocabulary's and back.

use super::Component;
use super::exports::capacity::sentinel::factor_choice::{self as wit, Guest};
use crate::factor_choice as core;
use vocabulary::{self as v, Channel, ChannelRead, ChannelVerdict};

impl Guest for Component {
    fn choose_factor(r: wit::FactorChoiceRequest) -> wit::FactorChoice {
        let c = core::choose_factor(&v::FactorChoiceRequest {
            cache: read_in(r.cache),
            parameter: read_in(r.parameter),
            now: r.now,
            max_age_s: r.max_age_s,
            max_skew_s: r.max_skew_s,
        });
        wit::FactorChoice {
            factor: c.factor,
            source: c.source.map(channel_out),
            state: c.state,
            sequence: c.sequence,
            decided_at: c.decided_at,
            age_s: c.age_s,
            cache: verdict_out(c.cache),
            parameter: verdict_out(c.parameter),
            reason: c.reason,
        }
    }
}

fn read_in(r: wit::ChannelRead) -> ChannelRead {
    match r {
        wit::ChannelRead::NotRead => ChannelRead::NotRead,
        wit::ChannelRead::Document(text) => ChannelRead::Document(text),
        wit::ChannelRead::Failed(why) => ChannelRead::Failed(why),
    }
}

fn channel_out(c: Channel) -> wit::Channel {
    match c {
        Channel::Cache => wit::Channel::Cache,
        Channel::Parameter => wit::Channel::Parameter,
    }
}

fn verdict_out(v: ChannelVerdict) -> wit::ChannelVerdict {
    match v {
        ChannelVerdict::NotRead => wit::ChannelVerdict::NotRead,
        ChannelVerdict::Usable => wit::ChannelVerdict::Usable,
        ChannelVerdict::ReadFailed => wit::ChannelVerdict::ReadFailed,
        ChannelVerdict::Unreadable => wit::ChannelVerdict::Unreadable,
        ChannelVerdict::OutOfRange => wit::ChannelVerdict::OutOfRange,
        ChannelVerdict::Stale => wit::ChannelVerdict::Stale,
        ChannelVerdict::FromTheFuture => wit::ChannelVerdict::FromTheFuture,
    }
}
