//! Generated WIT values from fuzzer bytes. Everything is built straight into the types of
//! `vocabulary` (no copies of them): [`Gen`] holds the primitives (instants, numbers,
//! counts, strings, lengths), each mostly realistic and sometimes absurd (NaN, infinities,
//! negative and huge numbers, `i64::MIN`/`MAX` instants, empty and long strings, long lists);
//! the submodules build inputs from them, starting now and then from a conformance vector
//! (`tests/vectors/`) and editing it, so that deep states are reached from the first run.
//!
//! Running out of bytes is never an error: `arbitrary` then gives zeros, so every byte string is
//! an input, and zeros choose the typical case (libFuzzer starts with short inputs): every rare
//! case sits behind a nonzero byte.

pub mod admission;
pub mod decision;
pub mod vectors;

use arbitrary::{Arbitrary, Result, Unstructured};
use vocabulary::{Instant, ProtectionState};

/// 2026-10-20T14:30:00Z, the `now` of most conformance vectors.
pub const NOW: Instant = 1_792_506_600;

/// How much text one input may hold in all (a long string or many strings): enough to be long,
/// well under the policy's 16 MiB memory cap.
const TEXT_BUDGET: usize = 512 << 10;

/// Reads fuzzer bytes as values.
pub struct Gen<'a, 'b> {
    u: &'b mut Unstructured<'a>,
    text_left: usize,
}

impl<'a, 'b> Gen<'a, 'b> {
    pub fn new(u: &'b mut Unstructured<'a>) -> Self {
        Gen { u, text_left: TEXT_BUDGET }
    }

    pub fn byte(&mut self) -> Result<u8> {
        u8::arbitrary(self.u)
    }

    pub fn bool(&mut self) -> Result<bool> {
        Ok(self.byte()? & 1 == 1)
    }

    /// True about `n` times in 256 (never once the bytes have run out).
    pub fn chance(&mut self, n: u8) -> Result<bool> {
        Ok(self.byte()? > u8::MAX - n)
    }

    /// A number in `lo..=hi`.
    pub fn within(&mut self, lo: i64, hi: i64) -> Result<i64> {
        self.u.int_in_range(lo..=hi)
    }

    /// One of `items` (which is not empty).
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> Result<T> {
        Ok(*self.u.choose(items)?)
    }

    pub fn any<T: Arbitrary<'a>>(&mut self) -> Result<T> {
        T::arbitrary(self.u)
    }

    /// A list length: mostly up to `typical`, now and then up to `long`.
    pub fn len(&mut self, typical: usize, long: usize) -> Result<usize> {
        let max = if self.chance(12)? { long } else { typical };
        Ok(self.within(0, max as i64)? as usize)
    }

    /// An instant near `anchor` (within 20 minutes either side), sometimes anywhere, sometimes
    /// at the ends of the range.
    pub fn instant_near(&mut self, anchor: Instant) -> Result<Instant> {
        Ok(match self.byte()? % 16 {
            15 => self.absurd_instant()?,
            14 => anchor.saturating_add(i64::from(self.any::<i32>()?)),
            _ => anchor.saturating_add(self.within(-1200, 1200)?),
        })
    }

    /// An instant at most 20 minutes before `now`, sometimes after it, sometimes absurd: the
    /// `state_since` and `last_auto_change` a stored memory may hold.
    pub fn instant_before(&mut self, now: Instant) -> Result<Instant> {
        Ok(match self.byte()? % 16 {
            15 => self.absurd_instant()?,
            14 => now.saturating_add(self.within(1, 900)?),
            13 => now,
            _ => now.saturating_sub(self.within(0, 1200)?),
        })
    }

    pub fn absurd_instant(&mut self) -> Result<Instant> {
        let ends = [i64::MIN, i64::MIN + 1, -1, 0, 1, 253_402_300_799, i64::MAX - 59, i64::MAX];
        if self.bool()? { self.pick(&ends) } else { self.any() }
    }

    /// A float: mostly in `lo..hi`, often just at, above or below one of `pivots` (the
    /// thresholds), sometimes NaN, an infinity, a negative, a subnormal, huge, or any bits.
    pub fn number(&mut self, lo: f64, hi: f64, pivots: &[f64]) -> Result<f64> {
        Ok(match self.byte()? % 16 {
            15 => {
                let odd = [
                    f64::NAN,
                    -f64::NAN,
                    f64::INFINITY,
                    f64::NEG_INFINITY,
                    -0.0,
                    0.0,
                    f64::MIN_POSITIVE,
                    5e-324,
                    f64::MAX,
                    f64::MIN,
                    1e308,
                    -5.0,
                    -1.0,
                    1e-300,
                    100.000_000_000_001,
                    1.0,
                ];
                self.pick(&odd)?
            }
            14 => f64::from_bits(self.any()?),
            10..=13 if !pivots.is_empty() => {
                let pivot = self.pick(pivots)?;
                match self.byte()? % 3 {
                    0 => pivot,
                    1 => pivot.next_up(),
                    _ => pivot.next_down(),
                }
            }
            _ => lo + (hi - lo) * f64::from(self.any::<u16>()?) / f64::from(u16::MAX),
        })
    }

    /// An optional float (absent one time in eight).
    pub fn maybe_number(&mut self, lo: f64, hi: f64, pivots: &[f64]) -> Result<Option<f64>> {
        if self.chance(32)? { Ok(None) } else { self.number(lo, hi, pivots).map(Some) }
    }

    /// A count: 0, 1, small, or near `u32::MAX`.
    pub fn count(&mut self) -> Result<u32> {
        Ok(match self.byte()? % 8 {
            7 => 0,
            6 => 1,
            5 => u32::MAX,
            4 => u32::MAX - self.within(1, 64)? as u32,
            3 => self.any()?,
            _ => self.within(0, 64)? as u32,
        })
    }

    /// Text: empty, short (any UTF-8), non-ASCII, blank, or long (up to what is left of the
    /// input's text budget).
    pub fn text(&mut self) -> Result<String> {
        let s = match self.byte()? % 8 {
            7 => String::new(),
            6 => {
                let unit = self.pick(&["x", "é", "\u{1F6A8}", "\"", "\\", "\n", "\0", " "])?;
                let n = self.within(0, (self.text_left / 4) as i64)? as usize;
                unit.repeat(n)
            }
            5 => self.pick(&["  ", "\t", "ops@example.com", "incident 4411", "crm", "trap", "ünïcödé"])?.to_string(),
            _ => {
                let s: &str = self.any()?;
                s.chars().take(40).collect()
            }
        };
        let s = if s.len() > self.text_left { String::new() } else { s };
        self.text_left -= s.len();
        Ok(s)
    }

    pub fn state(&mut self) -> Result<ProtectionState> {
        self.pick(&vocabulary::ProtectionState::ALL)
    }
}

/// A fuzz target's input: a generated value that libFuzzer can build from bytes and print.
macro_rules! input {
    ($name:ident, $ty:ty, $build:path) => {
        #[derive(Debug)]
        pub struct $name(pub $ty);

        impl<'a> Arbitrary<'a> for $name {
            fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
                $build(&mut Gen::new(u)).map($name)
            }
        }
    };
}

input!(DecideInput, vocabulary::DecisionInput, decision::decision_input);
input!(AdmissionInput, vocabulary::AdmissionRequest, admission::admission_request);
input!(PlanInput, vocabulary::PlanRequest, admission::plan_request);
