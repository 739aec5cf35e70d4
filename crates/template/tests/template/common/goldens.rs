//! The golden runners' harness: a row's rendering judged against the golden, the list of
//! rows known to differ, and the tally that fails on any other difference and on any
//! listed row that now matches, so the list cannot go stale.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Display;
use toolbridge_template::Clock;

/// The clock the goldens were rendered under: `currentDate` and `strftime_now` see
/// 2024-07-26.
pub fn clock() -> Clock {
    Clock::fixed_from_str("2024-07-26T10:30:00").unwrap()
}

/// Each distinct `context` of `rows`, loaded once.
pub fn contexts<T>(rows: &[serde_json::Value], load: impl Fn(&str) -> T) -> BTreeMap<String, T> {
    rows.iter()
        .map(|row| row["context"].as_str().unwrap())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .map(|name| (name.to_string(), load(name)))
        .collect()
}

/// `Ok` when `rendered` is `expected`, else where the two part, or what we raised.
pub fn compare(expected: &str, rendered: Result<String, impl Display>) -> Result<(), String> {
    match rendered {
        Ok(output) if output == expected => Ok(()),
        Ok(output) => Err(first_difference(expected, &output)),
        Err(err) => Err(format!("we raised where the golden rendered: {err}")),
    }
}

/// Where `actual` first departs from `expected`, with 40 bytes of lead-in on each side.
fn first_difference(expected: &str, actual: &str) -> String {
    let at = expected
        .char_indices()
        .zip(actual.chars())
        .find(|((_, e), a)| e != a)
        .map(|((i, _), _)| i)
        .unwrap_or(expected.len().min(actual.len()));
    let mut start = at.saturating_sub(40);
    while !expected.is_char_boundary(start) {
        start -= 1;
    }
    let snippet = |s: &str| -> String { s.get(start..).unwrap_or("").chars().take(120).collect() };
    format!(
        "output differs at byte {at}:\n      expected: {:?}\n      ours:     {:?}",
        snippet(expected),
        snippet(actual)
    )
}

/// The rows a runner knowingly differs on: `template<TAB>context<TAB>reason` lines (the
/// reason is for readers), `#` comments and blank lines skipped.
pub struct KnownDifferences(BTreeSet<(String, String)>);

impl KnownDifferences {
    pub fn parse(text: &str) -> Self {
        let rows = text
            .lines()
            .filter(|line| !line.trim().is_empty() && !line.starts_with('#'))
            .map(|line| {
                let mut fields = line.split('\t');
                let template = fields.next().unwrap_or_default().to_string();
                let context = fields.next().unwrap_or_default().to_string();
                (template, context)
            })
            .collect();
        KnownDifferences(rows)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    fn contains(&self, template: &str, context: &str) -> bool {
        self.0
            .contains(&(template.to_string(), context.to_string()))
    }
}

/// What rendering one row produced, judged against the golden.
pub enum Verdict {
    Identical,
    /// The golden's engine failed, and so did we.
    ErrorMatched,
    Differs(String),
}

impl From<Result<(), String>> for Verdict {
    fn from(compared: Result<(), String>) -> Self {
        match compared {
            Ok(()) => Verdict::Identical,
            Err(why) => Verdict::Differs(why),
        }
    }
}

/// How a golden file's rows came out.
#[derive(Default)]
pub struct Tally {
    pub identical: usize,
    pub errors_matched: usize,
    /// `template [context]: why` of each row that differs and is not listed.
    failures: Vec<String>,
    /// `template<TAB>context` of each listed row that now matches.
    now_passing: Vec<String>,
}

impl Tally {
    /// Judges every row (with its `template` and `context`) and checks it against `known`.
    pub fn of(
        rows: &[serde_json::Value],
        known: &KnownDifferences,
        mut judge: impl FnMut(&serde_json::Value) -> Verdict,
    ) -> Self {
        let mut tally = Tally::default();
        for row in rows {
            let template = row["template"].as_str().unwrap();
            let context = row["context"].as_str().unwrap();
            let listed = known.contains(template, context);
            match judge(row) {
                Verdict::Differs(why) if !listed => tally
                    .failures
                    .push(format!("{template} [{context}]: {why}")),
                Verdict::Differs(_) => continue,
                Verdict::Identical => tally.identical += 1,
                Verdict::ErrorMatched => tally.errors_matched += 1,
            }
            if listed {
                tally.now_passing.push(format!("{template}\t{context}"));
            }
        }
        tally
    }

    /// Fails on any row that differs from `reference` without being listed.
    #[track_caller]
    pub fn assert_no_unknown_differences(&self, reference: &str) {
        assert!(
            self.failures.is_empty(),
            "{} rows differ from {reference}:\n{}",
            self.failures.len(),
            self.failures.join("\n")
        );
    }

    /// [`Tally::assert_no_unknown_differences`], then fails on any listed row that now
    /// matches `reference`.
    #[track_caller]
    pub fn assert_conformance(&self, reference: &str) {
        self.assert_no_unknown_differences(reference);
        assert!(
            self.now_passing.is_empty(),
            "listed as known differences but now match {reference} (remove them):\n{}",
            self.now_passing.join("\n")
        );
    }
}
