//! Reading the metadata of a GGUF model file.
//!
//! A GGUF file carries its chat template, its token list and the ids of its special tokens
//! as key/value metadata in front of the tensors. That is all toolbridge needs from the
//! file to render prompts, so this reader stops after the key/values: it never reads tensor
//! info or tensor data, and it needs no GGML library.
//!
//! Model files come from anywhere, so every length in the file is a claim to check, never a
//! size to allocate: strings, keys, arrays and the key count have caps; nothing is reserved
//! ahead of the bytes that back it; and the memory held for values has a budget. A file
//! that is truncated or lies fails with a [`GgufError`] that names the file, the key and
//! the byte offset. Nothing here panics.
//!
//! Big arrays that prompt rendering never needs (`tokenizer.ggml.merges`,
//! `tokenizer.ggml.scores`, …) can be read past without being held: see [`ReadOptions`].
//! They then appear as [`GgufValue::SkippedArray`], so their presence and length stay known.
//!
//! Format: <https://github.com/ggml-org/ggml/blob/master/docs/gguf.md>. Versions 2 and 3,
//! little-endian, are read. Version 1 (32-bit lengths, superseded in 2023) and big-endian
//! files are refused. Where the spec is silent this follows llama.cpp's `gguf.cpp`: a
//! duplicate key and an array of arrays are errors, and a bool is any non-zero byte.

use std::collections::HashMap;
use std::fmt;
use std::fs::File;
use std::io::{self, BufReader, Read};
use std::mem::size_of;
use std::path::{Path, PathBuf};

/// The longest string value accepted (64 MiB). The longest real chat templates are
/// tens of kilobytes.
pub const MAX_STRING_LEN: u64 = 64 << 20;
/// The longest key accepted, as the GGUF spec bounds keys (65,535 bytes).
pub const MAX_KEY_LEN: u64 = u16::MAX as u64;
/// The most key/value pairs accepted. Real models have tens.
pub const MAX_KV_COUNT: u64 = 1 << 20;
/// The most elements accepted in one array. The largest vocabularies have ~262k tokens.
pub const MAX_ARRAY_LEN: u64 = 1 << 32;
/// The most memory (256 MiB) that the keys and values held may take, counted as what
/// they occupy in memory. A 152k-token vocabulary takes about 7 MiB.
pub const MAX_HELD_BYTES: u64 = 256 << 20;

/// The key of the token list, indexed by token id.
pub const TOKENS_KEY: &str = "tokenizer.ggml.tokens";
/// The key of the default chat template.
pub const CHAT_TEMPLATE_KEY: &str = "tokenizer.chat_template";
const NAMED_CHAT_TEMPLATE_PREFIX: &str = "tokenizer.chat_template.";
const BOS_ID_KEY: &str = "tokenizer.ggml.bos_token_id";
const EOS_ID_KEY: &str = "tokenizer.ggml.eos_token_id";

/// Arrays that [`ReadOptions::default`] reads past: tokenizer tables that only a tokenizer
/// needs, each as long as the vocabulary or longer.
pub const SKIPPED_BY_DEFAULT: &[&str] = &[
    "tokenizer.ggml.merges",
    "tokenizer.ggml.scores",
    "tokenizer.ggml.token_type",
];

/// The first four bytes of every GGUF file.
pub const GGUF_MAGIC: [u8; 4] = *b"GGUF";

/// The type of a GGUF value, with its code in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GgufType {
    U8 = 0,
    I8 = 1,
    U16 = 2,
    I16 = 3,
    U32 = 4,
    I32 = 5,
    F32 = 6,
    Bool = 7,
    String = 8,
    Array = 9,
    U64 = 10,
    I64 = 11,
    F64 = 12,
}

impl GgufType {
    fn from_code(code: u32) -> Option<Self> {
        use GgufType::*;
        const ALL: [GgufType; 13] = [
            U8, I8, U16, I16, U32, I32, F32, Bool, String, Array, U64, I64, F64,
        ];
        ALL.get(usize::try_from(code).ok()?).copied()
    }

    /// The size in bytes of one value of this type, for types of fixed size.
    fn fixed_size(self) -> Option<u64> {
        use GgufType::*;
        match self {
            U8 | I8 | Bool => Some(1),
            U16 | I16 => Some(2),
            U32 | I32 | F32 => Some(4),
            U64 | I64 | F64 => Some(8),
            String | Array => None,
        }
    }
}

/// One metadata value.
///
/// Strings are UTF-8 by the spec; a value that is not (some vocabularies hold raw bytes)
/// is kept with U+FFFD in place of the bad bytes rather than failing the whole file.
#[derive(Debug, Clone, PartialEq)]
pub enum GgufValue {
    U8(u8),
    I8(i8),
    U16(u16),
    I16(i16),
    U32(u32),
    I32(i32),
    F32(f32),
    Bool(bool),
    String(String),
    Array(Vec<GgufValue>),
    /// An array that was read past without being held (see [`ReadOptions`]).
    SkippedArray {
        element: GgufType,
        len: u64,
    },
    U64(u64),
    I64(i64),
    F64(f64),
}

impl GgufValue {
    /// The string, for a string value.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            GgufValue::String(s) => Some(s),
            _ => None,
        }
    }

    /// The value as a `u64`, for any integer value that is not negative.
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            GgufValue::U8(v) => Some(v.into()),
            GgufValue::U16(v) => Some(v.into()),
            GgufValue::U32(v) => Some(v.into()),
            GgufValue::U64(v) => Some(v),
            GgufValue::I8(v) => u64::try_from(v).ok(),
            GgufValue::I16(v) => u64::try_from(v).ok(),
            GgufValue::I32(v) => u64::try_from(v).ok(),
            GgufValue::I64(v) => u64::try_from(v).ok(),
            _ => None,
        }
    }

    /// The elements, for an array that was held.
    pub fn as_array(&self) -> Option<&[GgufValue]> {
        match self {
            GgufValue::Array(items) => Some(items),
            _ => None,
        }
    }
}

/// Which arrays to hold in memory and which to read past.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadOptions {
    arrays: ArrayFilter,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum ArrayFilter {
    AllBut(Vec<String>),
    Only(Vec<String>),
}

impl ReadOptions {
    /// Holds every array except those under `keys`.
    pub fn skip_arrays<I, S>(keys: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        ReadOptions {
            arrays: ArrayFilter::AllBut(keys.into_iter().map(Into::into).collect()),
        }
    }

    /// Holds only the arrays under `keys` and reads past all others.
    pub fn keep_only_arrays<I, S>(keys: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        ReadOptions {
            arrays: ArrayFilter::Only(keys.into_iter().map(Into::into).collect()),
        }
    }

    fn keeps_array(&self, key: &str) -> bool {
        match &self.arrays {
            ArrayFilter::AllBut(skipped) => !skipped.iter().any(|k| k == key),
            ArrayFilter::Only(kept) => kept.iter().any(|k| k == key),
        }
    }
}

impl Default for ReadOptions {
    /// Holds every array except [`SKIPPED_BY_DEFAULT`].
    fn default() -> Self {
        ReadOptions::skip_arrays(SKIPPED_BY_DEFAULT.iter().copied())
    }
}

/// The chat templates a GGUF file holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatTemplates<'a> {
    /// `tokenizer.chat_template`.
    pub default: Option<&'a str>,
    /// `(name, template)` for each `tokenizer.chat_template.<name>`, in file order.
    pub named: Vec<(&'a str, &'a str)>,
}

/// The key/value metadata of a GGUF file, in file order.
#[derive(Debug, Clone)]
pub struct GgufMetadata {
    version: u32,
    tensor_count: u64,
    entries: Vec<(String, GgufValue)>,
    index: HashMap<String, usize>,
}

impl GgufMetadata {
    /// Reads the metadata of the GGUF file at `path` with [`ReadOptions::default`].
    pub fn read(path: impl AsRef<Path>) -> Result<Self, GgufError> {
        Self::read_with(path, &ReadOptions::default())
    }

    /// Reads the metadata of the GGUF file at `path`.
    pub fn read_with(path: impl AsRef<Path>, options: &ReadOptions) -> Result<Self, GgufError> {
        let path = path.as_ref();
        let file = File::open(path).map_err(|e| GgufError::open(path, e))?;
        Self::from_reader(BufReader::new(file), options).map_err(|e| e.in_file(path))
    }

    /// Reads GGUF metadata from the start of `reader`, which is left just after the last
    /// key/value. Give it a buffered reader: values are read a few bytes at a time.
    pub fn from_reader(reader: impl Read, options: &ReadOptions) -> Result<Self, GgufError> {
        Parser::new(reader, options).metadata()
    }

    /// The GGUF version of the file: 2 or 3.
    pub fn version(&self) -> u32 {
        self.version
    }

    /// How many tensors the file says it holds (they are not read).
    pub fn tensor_count(&self) -> u64 {
        self.tensor_count
    }

    /// Every key/value, in file order.
    pub fn entries(&self) -> impl Iterator<Item = (&str, &GgufValue)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// The value under `key`.
    pub fn get(&self, key: &str) -> Option<&GgufValue> {
        self.index.get(key).map(|&i| &self.entries[i].1)
    }

    /// The string under `key`, if it is a string.
    pub fn get_str(&self, key: &str) -> Option<&str> {
        self.get(key)?.as_str()
    }

    /// The integer under `key`, if it is a non-negative integer.
    pub fn get_u64(&self, key: &str) -> Option<u64> {
        self.get(key)?.as_u64()
    }

    /// The text of token `id` in `tokenizer.ggml.tokens`, when that array was held.
    pub fn token(&self, id: u64) -> Option<&str> {
        let tokens = self.get(TOKENS_KEY)?.as_array()?;
        tokens.get(usize::try_from(id).ok()?)?.as_str()
    }

    /// The text of the token `tokenizer.ggml.bos_token_id` names.
    pub fn bos_token(&self) -> Option<&str> {
        self.token(self.get_u64(BOS_ID_KEY)?)
    }

    /// The text of the token `tokenizer.ggml.eos_token_id` names.
    pub fn eos_token(&self) -> Option<&str> {
        self.token(self.get_u64(EOS_ID_KEY)?)
    }

    /// The default and named chat templates.
    ///
    /// Named templates are the `tokenizer.chat_template.<name>` keys. The
    /// `tokenizer.chat_templates` array that gguf-py writes beside them only repeats their
    /// names (in no particular order, from a Python set), so it is not consulted: a name
    /// it lists without a template has nothing to render.
    pub fn chat_templates(&self) -> ChatTemplates<'_> {
        let named = self
            .entries()
            .filter_map(|(key, value)| {
                let name = key.strip_prefix(NAMED_CHAT_TEMPLATE_PREFIX)?;
                Some((name, value.as_str()?))
            })
            .collect();
        ChatTemplates {
            default: self.get_str(CHAT_TEMPLATE_KEY),
            named,
        }
    }
}

/// Why GGUF metadata could not be read, and where.
#[derive(Debug)]
pub struct GgufError {
    path: Option<PathBuf>,
    key: Option<String>,
    offset: Option<u64>,
    kind: GgufErrorKind,
}

impl GgufError {
    fn open(path: &Path, error: io::Error) -> Self {
        GgufError {
            path: Some(path.to_owned()),
            key: None,
            offset: None,
            kind: GgufErrorKind::Io(error),
        }
    }

    fn in_file(mut self, path: &Path) -> Self {
        self.path = Some(path.to_owned());
        self
    }

    /// What was wrong.
    pub fn kind(&self) -> &GgufErrorKind {
        &self.kind
    }

    /// The file, when the metadata was read from a path.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The key whose value was being read, if any.
    pub fn key(&self) -> Option<&str> {
        self.key.as_deref()
    }

    /// The byte offset at which the problem was found.
    pub fn offset(&self) -> Option<u64> {
        self.offset
    }
}

impl fmt::Display for GgufError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(path) = &self.path {
            write!(f, "{}: ", path.display())?;
        }
        if let Some(key) = &self.key {
            write!(f, "key {key:?}: ")?;
        }
        write!(f, "{}", self.kind)?;
        if let Some(offset) = self.offset {
            write!(f, " (at byte {offset})")?;
        }
        Ok(())
    }
}

impl std::error::Error for GgufError {}

/// What was wrong with a GGUF file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GgufErrorKind {
    #[error("I/O error: {0}")]
    Io(io::Error),
    #[error("not a GGUF file: it starts with {found:?}, not \"GGUF\"")]
    NotGguf { found: String },
    #[error("GGUF version {0} is not supported; versions 2 and 3 are")]
    UnsupportedVersion(u32),
    #[error("this is a big-endian GGUF file; only little-endian files are supported")]
    BigEndian,
    #[error("the file ends in the middle of {0}")]
    Truncated(&'static str),
    #[error("{what} claims {len} bytes, more than the limit of {max}")]
    TooLong {
        what: &'static str,
        len: u64,
        max: u64,
    },
    #[error("{what} claims {count}, more than the limit of {max}")]
    TooMany {
        what: &'static str,
        count: u64,
        max: u64,
    },
    #[error("unknown value type {0}")]
    UnknownType(u32),
    #[error("arrays of arrays are not supported")]
    NestedArray,
    #[error("the key appears twice")]
    DuplicateKey,
    #[error("a key is not UTF-8")]
    KeyNotUtf8,
    #[error("holding the metadata would take more than {max} bytes of memory")]
    OverBudget { max: u64 },
}

type Result<T, E = GgufErrorKind> = std::result::Result<T, E>;

/// A reader that counts the bytes it has read, for error offsets.
struct Counting<R> {
    inner: R,
    pos: u64,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.pos += n as u64;
        Ok(n)
    }
}

struct Parser<'o, R> {
    input: Counting<R>,
    options: &'o ReadOptions,
    held: u64,
}

impl<'o, R: Read> Parser<'o, R> {
    fn new(reader: R, options: &'o ReadOptions) -> Self {
        Parser {
            input: Counting {
                inner: reader,
                pos: 0,
            },
            options,
            held: 0,
        }
    }

    fn fail(&self, key: Option<&str>, kind: GgufErrorKind) -> GgufError {
        GgufError {
            path: None,
            key: key.map(str::to_owned),
            offset: Some(self.input.pos),
            kind,
        }
    }

    fn metadata(mut self) -> Result<GgufMetadata, GgufError> {
        let (version, tensor_count, kv_count) =
            self.header().map_err(|kind| self.fail(None, kind))?;
        let mut entries = Vec::new();
        let mut index = HashMap::new();
        for _ in 0..kv_count {
            let key = self.key().map_err(|kind| self.fail(None, kind))?;
            if index.contains_key(&key) {
                return Err(self.fail(Some(&key), GgufErrorKind::DuplicateKey));
            }
            let value = self
                .entry_value(&key)
                .map_err(|kind| self.fail(Some(&key), kind))?;
            index.insert(key.clone(), entries.len());
            entries.push((key, value));
        }
        Ok(GgufMetadata {
            version,
            tensor_count,
            entries,
            index,
        })
    }

    /// Reads magic, version, tensor count and key/value count.
    fn header(&mut self) -> Result<(u32, u64, u64)> {
        let magic: [u8; 4] = self.bytes("the GGUF magic")?;
        if magic != GGUF_MAGIC {
            let found = String::from_utf8_lossy(&magic).into_owned();
            return Err(GgufErrorKind::NotGguf { found });
        }
        let version = self.u32("the version")?;
        check_version(version)?;
        let tensor_count = self.u64("the tensor count")?;
        let kv_count = self.u64("the key/value count")?;
        if kv_count > MAX_KV_COUNT {
            return Err(GgufErrorKind::TooMany {
                what: "the key/value count",
                count: kv_count,
                max: MAX_KV_COUNT,
            });
        }
        Ok((version, tensor_count, kv_count))
    }

    fn key(&mut self) -> Result<String> {
        let bytes = self.string_bytes(MAX_KEY_LEN, "a key")?;
        let key = String::from_utf8(bytes).map_err(|_| GgufErrorKind::KeyNotUtf8)?;
        // Held twice: in the entry list and in the index.
        self.charge(2 * key.len() as u64 + size_of::<(String, GgufValue)>() as u64)?;
        Ok(key)
    }

    fn entry_value(&mut self, key: &str) -> Result<GgufValue> {
        match self.ty()? {
            GgufType::Array => self.array(self.options.keeps_array(key)),
            ty => self.scalar(ty),
        }
    }

    fn ty(&mut self) -> Result<GgufType> {
        let code = self.u32("a value type")?;
        GgufType::from_code(code).ok_or(GgufErrorKind::UnknownType(code))
    }

    /// Reads a value of any type but array.
    fn scalar(&mut self, ty: GgufType) -> Result<GgufValue> {
        const WHAT: &str = "a value";
        Ok(match ty {
            GgufType::U8 => GgufValue::U8(u8::from_le_bytes(self.bytes(WHAT)?)),
            GgufType::I8 => GgufValue::I8(i8::from_le_bytes(self.bytes(WHAT)?)),
            GgufType::U16 => GgufValue::U16(u16::from_le_bytes(self.bytes(WHAT)?)),
            GgufType::I16 => GgufValue::I16(i16::from_le_bytes(self.bytes(WHAT)?)),
            GgufType::U32 => GgufValue::U32(u32::from_le_bytes(self.bytes(WHAT)?)),
            GgufType::I32 => GgufValue::I32(i32::from_le_bytes(self.bytes(WHAT)?)),
            GgufType::F32 => GgufValue::F32(f32::from_le_bytes(self.bytes(WHAT)?)),
            GgufType::Bool => GgufValue::Bool(self.bytes::<1>(WHAT)? != [0]),
            GgufType::U64 => GgufValue::U64(u64::from_le_bytes(self.bytes(WHAT)?)),
            GgufType::I64 => GgufValue::I64(i64::from_le_bytes(self.bytes(WHAT)?)),
            GgufType::F64 => GgufValue::F64(f64::from_le_bytes(self.bytes(WHAT)?)),
            GgufType::String => GgufValue::String(self.string()?),
            GgufType::Array => return Err(GgufErrorKind::NestedArray),
        })
    }

    fn string(&mut self) -> Result<String> {
        let bytes = self.string_bytes(MAX_STRING_LEN, "a string")?;
        self.charge(bytes.len() as u64)?;
        Ok(match String::from_utf8(bytes) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        })
    }

    fn array(&mut self, keep: bool) -> Result<GgufValue> {
        let element = self.ty()?;
        if element == GgufType::Array {
            return Err(GgufErrorKind::NestedArray);
        }
        let len = self.u64("an array length")?;
        if len > MAX_ARRAY_LEN {
            return Err(GgufErrorKind::TooMany {
                what: "an array length",
                count: len,
                max: MAX_ARRAY_LEN,
            });
        }
        if !keep {
            self.skip_array(element, len)?;
            return Ok(GgufValue::SkippedArray { element, len });
        }
        // Grown element by element, never reserved from `len`: a lying length runs into
        // the end of the file or the memory budget before it can allocate much.
        let mut items = Vec::new();
        for _ in 0..len {
            self.charge(size_of::<GgufValue>() as u64)?;
            items.push(self.scalar(element)?);
        }
        Ok(GgufValue::Array(items))
    }

    fn skip_array(&mut self, element: GgufType, len: u64) -> Result<()> {
        match element.fixed_size() {
            // Cannot saturate: `len` is at most MAX_ARRAY_LEN (2^32) and `size` at most 8.
            Some(size) => self.skip(len.saturating_mul(size), "an array"),
            None => (0..len).try_for_each(|_| {
                let n = self.string_len(MAX_STRING_LEN, "a string")?;
                self.skip(n, "a string")
            }),
        }
    }

    fn string_len(&mut self, max: u64, what: &'static str) -> Result<u64> {
        let len = self.u64(what)?;
        if len > max {
            return Err(GgufErrorKind::TooLong { what, len, max });
        }
        Ok(len)
    }

    fn string_bytes(&mut self, max: u64, what: &'static str) -> Result<Vec<u8>> {
        let len = self.string_len(max, what)?;
        let mut bytes = Vec::new();
        // `take` + `read_to_end` grows the buffer with the bytes that really arrive.
        (&mut self.input)
            .take(len)
            .read_to_end(&mut bytes)
            .map_err(GgufErrorKind::Io)?;
        if (bytes.len() as u64) < len {
            return Err(GgufErrorKind::Truncated(what));
        }
        Ok(bytes)
    }

    fn skip(&mut self, len: u64, what: &'static str) -> Result<()> {
        let skipped = io::copy(&mut (&mut self.input).take(len), &mut io::sink())
            .map_err(GgufErrorKind::Io)?;
        if skipped < len {
            return Err(GgufErrorKind::Truncated(what));
        }
        Ok(())
    }

    fn charge(&mut self, bytes: u64) -> Result<()> {
        self.held = self.held.saturating_add(bytes);
        if self.held > MAX_HELD_BYTES {
            return Err(GgufErrorKind::OverBudget {
                max: MAX_HELD_BYTES,
            });
        }
        Ok(())
    }

    fn u32(&mut self, what: &'static str) -> Result<u32> {
        Ok(u32::from_le_bytes(self.bytes(what)?))
    }

    fn u64(&mut self, what: &'static str) -> Result<u64> {
        Ok(u64::from_le_bytes(self.bytes(what)?))
    }

    fn bytes<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N]> {
        let mut buf = [0; N];
        self.input
            .read_exact(&mut buf)
            .map_err(|e| match e.kind() {
                io::ErrorKind::UnexpectedEof => GgufErrorKind::Truncated(what),
                _ => GgufErrorKind::Io(e),
            })?;
        Ok(buf)
    }
}

fn check_version(version: u32) -> Result<()> {
    match version {
        2 | 3 => Ok(()),
        // A big-endian file's version 2 or 3 reads as 0x0200_0000 or 0x0300_0000 here.
        v if matches!(v.swap_bytes(), 2 | 3) => Err(GgufErrorKind::BigEndian),
        v => Err(GgufErrorKind::UnsupportedVersion(v)),
    }
}
