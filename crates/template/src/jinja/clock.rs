//! `strftime_now`: the one way a chat template may learn the time.
//!
//! Llama 3.x templates print today's date into the system prompt. Rendering must be
//! reproducible in tests and goldens, so the clock is a value the caller chooses: the
//! local wall clock when serving, a fixed instant in tests and in `render --now`.

use chrono::format::{Item, StrftimeItems};
use chrono::NaiveDateTime;
use minijinja::{Error, ErrorKind};
use std::fmt::Write;

/// Where `strftime_now` reads the time.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Clock {
    /// The machine's local time at each render, as `datetime.now()` in `transformers`.
    #[default]
    Local,
    /// Always this instant.
    Fixed(NaiveDateTime),
}

impl Clock {
    /// A fixed clock from `2024-07-26T10:30:00` (seconds optional, `T` or space).
    pub fn fixed_from_str(text: &str) -> Result<Clock, chrono::ParseError> {
        const FORMATS: [&str; 4] = [
            "%Y-%m-%dT%H:%M:%S",
            "%Y-%m-%d %H:%M:%S",
            "%Y-%m-%dT%H:%M",
            "%Y-%m-%d %H:%M",
        ];
        let text = text.trim();
        let mut parsed = NaiveDateTime::parse_from_str(text, FORMATS[0]);
        for format in &FORMATS[1..] {
            if parsed.is_ok() {
                break;
            }
            parsed = NaiveDateTime::parse_from_str(text, format);
        }
        parsed.map(Clock::Fixed)
    }

    fn now(&self) -> NaiveDateTime {
        match self {
            Clock::Local => chrono::Local::now().naive_local(),
            Clock::Fixed(instant) => *instant,
        }
    }

    /// `strftime_now(format)`: the current time formatted with C `strftime` codes.
    pub fn strftime_now(&self, format: &str) -> Result<String, Error> {
        let items: Vec<Item> = StrftimeItems::new(format).collect();
        if items.iter().any(|item| matches!(item, Item::Error)) {
            return Err(Error::new(
                ErrorKind::InvalidOperation,
                format!("ValueError: invalid strftime format {format:?}"),
            ));
        }
        let mut out = String::new();
        write!(out, "{}", self.now().format_with_items(items.into_iter())).map_err(|_| {
            Error::new(
                ErrorKind::InvalidOperation,
                format!("ValueError: cannot format the time with {format:?}"),
            )
        })?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_clock_formats_like_python() {
        let clock = Clock::fixed_from_str("2024-07-26T10:30:00").unwrap();
        assert_eq!(clock.strftime_now("%d %b %Y").unwrap(), "26 Jul 2024");
        assert_eq!(
            clock.strftime_now("%Y-%m-%d %H:%M").unwrap(),
            "2024-07-26 10:30"
        );
        assert_eq!(clock.strftime_now("%B %-d, %Y").unwrap(), "July 26, 2024");
    }

    #[test]
    fn bad_format_is_an_error_not_a_panic() {
        assert!(Clock::Local.strftime_now("%Q %").is_err());
    }
}
