//! PATCH (toolbridge): bounds on the values one render builds.
//!
//! Fuel bounds the instructions a template runs, but not what one instruction builds:
//! `{% set s = s ~ s %}` doubles a string in three instructions, so forty of them ask
//! for a terabyte, and `{% set ns.x = [ns.x] %}` in a loop nests a list so deep that
//! dropping it overflows the stack.  A render with a [`ValueBudget`] charges every
//! string, list and map the engine builds for the template (operators, literals,
//! captured output, macro output, and the results of filters, functions and methods)
//! against a byte budget, checked before the allocation where the size is known up
//! front, and refuses values nested deeper than a bound.  A namespace, the one mutable
//! container, may not hold another namespace: otherwise a chain could be linked back to
//! front, each link shallow when it is made.  So a namespace is never put in a
//! list, a map or another namespace: then every value but a namespace is built
//! whole, checked once when it is made, and a namespace is one level above values
//! that were.  See `PATCH.md` at the crate root.

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use crate::environment::Environment;
use crate::error::{Error, ErrorKind};
use crate::value::merge_object::MergeSeq;
use crate::value::namespace_object::Namespace;
use crate::value::{ops, ObjectRepr, Value, ValueKind};
use crate::vm::State;

/// What one item of a list (or half a map entry) costs: the size of a value.
const ITEM_BYTES: usize = std::mem::size_of::<Value>();

/// The bounds of one render, shared by its state and its outputs.
pub(crate) struct ValueBudget {
    limit: Option<u64>,
    left: AtomicU64,
    overdrawn: AtomicBool,
    max_depth: Option<usize>,
}

impl ValueBudget {
    /// The bounds the environment asks for, or `None` when it sets none.
    pub(crate) fn for_env(env: &Environment) -> Option<Arc<ValueBudget>> {
        if env.byte_budget().is_none() && env.max_value_depth().is_none() {
            return None;
        }
        let limit = env.byte_budget();
        Some(Arc::new(ValueBudget {
            limit,
            left: AtomicU64::new(limit.unwrap_or(u64::MAX)),
            overdrawn: AtomicBool::new(false),
            max_depth: env.max_value_depth(),
        }))
    }

    /// Spends `bytes`, or fails when fewer are left.
    pub(crate) fn charge(&self, bytes: usize) -> Result<(), Error> {
        if self.limit.is_none() {
            return Ok(());
        }
        let bytes = bytes as u64;
        self.left
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
                left.checked_sub(bytes)
            })
            .map(drop)
            .map_err(|_| self.exhausted())
    }

    /// The error of a budget spent; later failed writes are explained by it.
    fn exhausted(&self) -> Error {
        self.overdrawn.store(true, Ordering::Relaxed);
        let limit = self.limit.unwrap_or_default();
        Error::new(
            ErrorKind::ValueLimit,
            format!("the template built more than {limit} bytes of values"),
        )
    }

    /// Bytes left to spend; `None` when unbounded.
    pub(crate) fn left(&self) -> Option<u64> {
        self.limit.map(|_| self.left.load(Ordering::Relaxed))
    }

    /// A failed write, explained as the budget running out when it did.
    pub(crate) fn explain(&self, err: Error) -> Error {
        if self.overdrawn.load(Ordering::Relaxed) && err.kind() == ErrorKind::WriteFailure {
            self.exhausted()
        } else {
            err
        }
    }

    /// Walks `value`: checks that it nests no deeper than the bound, that it holds no
    /// namespace (it may be one), and that printed
    /// in full (shared parts as often as they appear) it stays within the byte budget
    /// (within what is left of it, when `charged`, for a value about to be charged).
    /// Visits at most `max_nodes` values.
    pub(crate) fn measure(
        &self,
        value: &Value,
        charged: bool,
        max_nodes: u64,
    ) -> Result<Measure, Error> {
        let max_depth = self.max_depth.unwrap_or(usize::MAX);
        let max_bytes = if charged {
            self.left().unwrap_or(u64::MAX)
        } else {
            self.limit.unwrap_or(u64::MAX)
        };
        let mut measure = Measure::default();
        let mut pending = vec![(value.clone(), 0)];
        while let Some((value, depth)) = pending.pop() {
            measure.nodes += 1;
            measure.bytes = measure
                .bytes
                .saturating_add(NODE_BYTES)
                .saturating_add(value.as_str().map_or(0, |s| s.len() as u64));
            if measure.nodes > max_nodes {
                return Err(Error::from(ErrorKind::OutOfFuel));
            }
            if measure.bytes > max_bytes {
                if charged {
                    return Err(self.exhausted());
                }
                return Err(Error::new(
                    ErrorKind::ValueLimit,
                    format!("the template built a value of more than {max_bytes} bytes"),
                ));
            }
            let Some(obj) = value.as_object() else {
                continue;
            };
            if depth >= max_depth {
                return Err(Error::new(
                    ErrorKind::ValueLimit,
                    format!("the template nested values more than {max_depth} deep"),
                ));
            }
            if depth > 0 && obj.downcast_ref::<Namespace>().is_some() {
                return Err(namespace_held());
            }
            match obj.repr() {
                ObjectRepr::Map => {
                    if let Some(pairs) = obj.try_iter_pairs() {
                        for (key, item) in pairs {
                            pending.push((key, depth + 1));
                            pending.push((item, depth + 1));
                        }
                    }
                }
                ObjectRepr::Seq | ObjectRepr::Iterable => {
                    if let Some(items) = obj.try_iter() {
                        pending.extend(items.map(|item| (item, depth + 1)));
                    }
                }
                _ => {}
            }
        }
        Ok(measure)
    }
}

/// The error of a namespace put in a list, a map or a namespace.
pub(crate) fn namespace_held() -> Error {
    Error::new(
        ErrorKind::ValueLimit,
        "a namespace cannot be put in a list, a map or another namespace",
    )
}

/// What [`ValueBudget::measure`] found.
#[derive(Default)]
pub(crate) struct Measure {
    /// Values visited.
    pub(crate) nodes: u64,
    /// Bytes the value prints to, about: its strings, and a few per value.
    pub(crate) bytes: u64,
}

/// What one value costs besides its text: its slot in a list (and, printed, more
/// than its quotes and separator).
const NODE_BYTES: u64 = ITEM_BYTES as u64;

/// Whether a call's `result` is one of its `args`: passed on, not built.
pub(crate) fn passed_through(result: &Value, args: &[Value]) -> bool {
    let Some(obj) = result.as_object() else {
        return false;
    };
    args.iter()
        .any(|arg| arg.as_object().is_some_and(|arg| arg.is_same_object(obj)))
}

/// The bytes a built value holds at its top level: a string's length, a sized
/// container's items.
pub(crate) fn top_level_bytes(value: &Value) -> usize {
    match value.kind() {
        ValueKind::String | ValueKind::Bytes => value.as_bytes().map_or(0, <[u8]>::len),
        ValueKind::Seq => value.len().unwrap_or(0).saturating_mul(ITEM_BYTES),
        ValueKind::Map => value.len().unwrap_or(0).saturating_mul(2 * ITEM_BYTES),
        _ => 0,
    }
}

/// Whether `lhs + rhs` joins two sequences (else it adds numbers or strings).
pub(crate) fn joins_sequences(lhs: &Value, rhs: &Value) -> bool {
    lhs.as_str().is_none() && lhs.len().is_some() && rhs.len().is_some()
}

/// Charges what `lhs + rhs` builds, before it is built.  When it joins sequences,
/// `rhs_bytes` is what the right side prints to: it is charged, so that a list
/// doubled with `l + l` pays for what it would print as, and no chain of joins
/// prints to more than the budget allows.
pub(crate) fn charge_add(
    budget: &ValueBudget,
    lhs: &Value,
    rhs: &Value,
    rhs_bytes: u64,
) -> Result<(), Error> {
    if let (Some(a), Some(b)) = (lhs.as_str(), rhs.as_str()) {
        return budget.charge(a.len().saturating_add(b.len()));
    }
    let (Some(a), Some(b)) = (lhs.len(), rhs.len()) else {
        return Ok(());
    };
    let total = a.saturating_add(b).saturating_mul(ITEM_BYTES);
    // Lists join lazily, so only the new items are built, unless the chain of joins
    // is deep enough that the engine copies it (or they are tuples, always copied).
    // The whole is charged then, and may never exceed the budget.
    if budget.limit.is_some_and(|limit| total as u64 > limit) {
        return budget.charge(total);
    }
    let copied = lhs.is_tuple()
        || MergeSeq::depth_for_values(&[lhs.clone(), rhs.clone()]) > MergeSeq::MAX_DEPTH;
    let built = if copied {
        total
    } else {
        b.saturating_mul(ITEM_BYTES)
    };
    budget.charge(built.saturating_add(usize::try_from(rhs_bytes).unwrap_or(usize::MAX)))
}

/// Charges what `lhs * rhs` builds when it repeats a string or a list.
pub(crate) fn charge_mul(budget: &ValueBudget, lhs: &Value, rhs: &Value) -> Result<(), Error> {
    budget.charge(repeated_bytes(lhs, rhs))
}

/// The bytes `lhs * rhs` builds when it repeats a string or a list (else 0).
fn repeated_bytes(lhs: &Value, rhs: &Value) -> usize {
    let (item, count) = if lhs.as_usize().is_some() && rhs.as_usize().is_none() {
        (rhs, lhs)
    } else {
        (lhs, rhs)
    };
    let Some(count) = count.as_usize() else {
        return 0;
    };
    let unit = match item.as_str() {
        Some(s) => s.len(),
        None => item.len().unwrap_or(0).saturating_mul(ITEM_BYTES),
    };
    unit.saturating_mul(count)
}

/// The most the compiler may build when it folds constants: more is left to the
/// render, where the budget charges it (`'x' * 10**8` folded would cost 100 MB per
/// occurrence in the source, before any render).
const MAX_FOLDED_BYTES: usize = 1 << 16;

/// Whether folding `lhs OP rhs` at compile time could build more than
/// [`MAX_FOLDED_BYTES`]; `repeats` for `*`, else `+` or `~`.
pub(crate) fn too_large_to_fold(repeats: bool, lhs: &Value, rhs: &Value) -> bool {
    let bytes = if repeats {
        repeated_bytes(lhs, rhs)
    } else {
        top_level_bytes(lhs).saturating_add(top_level_bytes(rhs))
    };
    bytes > MAX_FOLDED_BYTES
}

/// `left ~ right`, refused before it outgrows the budget.
pub(crate) fn concat(budget: &ValueBudget, left: Value, right: &Value) -> Result<Value, Error> {
    if let (Some(a), Some(b)) = (left.as_str(), right.as_str()) {
        if left.kind() == ValueKind::String && right.kind() == ValueKind::String {
            budget.charge(a.len().saturating_add(b.len()))?;
            return Ok(ops::string_concat(left, right));
        }
    }
    let text = capped(budget, format_args!("{left}{right}"))?;
    budget.charge(text.len())?;
    Ok(Value::from(text))
}

/// `args` formatted, refused once longer than the bytes left (not charged).
fn capped(budget: &ValueBudget, args: fmt::Arguments<'_>) -> Result<String, Error> {
    let mut out = CappedString {
        text: String::new(),
        cap: budget.left().map_or(usize::MAX, |left| left as usize),
    };
    if fmt::write(&mut out, args).is_err() {
        return Err(budget.exhausted());
    }
    Ok(out.text)
}

/// `args` formatted for a filter, refused once longer than the bytes left to the
/// render (not charged).
pub(crate) fn format_capped(state: &State, args: fmt::Arguments<'_>) -> Result<String, Error> {
    match &state.value_budget {
        Some(budget) => capped(budget, args),
        None => Ok(fmt::format(args)),
    }
}

/// A string that refuses to grow past its cap.
struct CappedString {
    text: String,
    cap: usize,
}

impl fmt::Write for CappedString {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        if self.text.len().saturating_add(s.len()) > self.cap {
            return Err(fmt::Error);
        }
        self.text.push_str(s);
        Ok(())
    }
}
