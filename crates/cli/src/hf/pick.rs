//! Which GGUF file of a Hugging Face repository `-hf owner/repo[:QUANT]` means, chosen as
//! llama.cpp's `llama-server -hf` chooses it (`common/download.cpp`, `find_best_model`), so
//! a command line moves between the two and serves the same file:
//!
//! - the quant tag matches a file whose path holds the tag followed by `.` or `-`, case
//!   ignored (`:q4_k_m` finds `Model-Q4_K_M.gguf`); the first such file in path order wins;
//! - with no tag, `Q4_K_M`, else `Q8_0`, else the first GGUF of the repository;
//! - projector (`mmproj`) and importance-matrix (`imatrix`) files are never the model;
//! - a model split as `NAME-00001-of-00003.gguf` is all of its parts, and the first part
//!   is the one loaded (llama.cpp finds the others beside it).
//!
//! `--hf-file` names the file instead; a part of a split still brings the whole split.

use std::fmt;

/// The quant tags tried, in order, when `-hf` names none (llama.cpp's defaults).
const DEFAULT_TAGS: [&str; 2] = ["Q4_K_M", "Q8_0"];

/// The files to fetch for one model: every part of it, the one to load first.
#[derive(Debug, PartialEq, Eq)]
pub struct Choice {
    pub parts: Vec<String>,
}

impl Choice {
    /// The file the engine loads (the first part of a split model).
    pub fn first(&self) -> &str {
        &self.parts[0]
    }
}

/// Why no file was chosen, with the repository's GGUF files to choose from instead.
#[derive(Debug, PartialEq, Eq)]
pub enum PickError {
    /// The repository holds no GGUF model file at all.
    NoGguf { files: Vec<String> },
    /// No GGUF model file carries the quant tag asked for.
    NoTag { tag: String, ggufs: Vec<String> },
    /// `--hf-file` names a file the repository does not hold.
    NoFile { file: String, ggufs: Vec<String> },
    /// A split model lacks some of its parts.
    MissingParts { first: String, missing: Vec<String> },
}

impl fmt::Display for PickError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PickError::NoGguf { files } if files.is_empty() => {
                write!(f, "it holds no files (is the name right?)")
            }
            PickError::NoGguf { files } => write!(
                f,
                "it holds no GGUF model file, so it cannot be served (its files: {})",
                files.join(", ")
            ),
            PickError::NoTag { tag, ggufs } => write!(
                f,
                "none of its GGUF files is quantized as {tag}; give one of these with \
                 :TAG or --hf-file: {}",
                ggufs.join(", ")
            ),
            PickError::NoFile { file, ggufs } => write!(
                f,
                "it holds no file {file}; its GGUF files: {}",
                ggufs.join(", ")
            ),
            PickError::MissingParts { first, missing } => write!(
                f,
                "{first} is split, and these parts are missing: {}",
                missing.join(", ")
            ),
        }
    }
}

impl std::error::Error for PickError {}

/// The model `tag` names among `files` (paths in the repository), or the default quant.
pub fn by_tag(files: &[String], tag: Option<&str>) -> Result<Choice, PickError> {
    let models: Vec<&String> = files.iter().filter(|path| is_model(path)).collect();
    if models.is_empty() {
        return Err(PickError::NoGguf {
            files: files.to_vec(),
        });
    }
    let tags: Vec<&str> = tag.map_or(DEFAULT_TAGS.to_vec(), |tag| vec![tag]);
    let tagged = tags.iter().find_map(|tag| {
        models
            .iter()
            .find(|path| first_part(path) && has_tag(path, tag))
    });
    let first = match (tagged, tag) {
        (Some(found), _) => found,
        (None, None) => models
            .iter()
            .find(|path| first_part(path))
            .unwrap_or(&models[0]),
        (None, Some(tag)) => {
            return Err(PickError::NoTag {
                tag: tag.to_owned(),
                ggufs: ggufs(files),
            })
        }
    };
    split_of(files, first)
}

/// The file `--hf-file` names among `files`, with the rest of its split.
pub fn by_name(files: &[String], file: &str) -> Result<Choice, PickError> {
    match files.iter().find(|path| *path == file) {
        Some(found) => split_of(files, found),
        None => Err(PickError::NoFile {
            file: file.to_owned(),
            ggufs: ggufs(files),
        }),
    }
}

/// Every part of the model `file` belongs to, in order.
fn split_of(files: &[String], file: &str) -> Result<Choice, PickError> {
    let Some(name) = GgufName::parse(file).filter(|name| name.count > 1) else {
        return Ok(Choice {
            parts: vec![file.to_owned()],
        });
    };
    let parts: Vec<String> = (1..=name.count).map(|index| name.part(index)).collect();
    let missing: Vec<String> = parts
        .iter()
        .filter(|part| !files.contains(part))
        .cloned()
        .collect();
    if !missing.is_empty() {
        return Err(PickError::MissingParts {
            first: parts[0].clone(),
            missing,
        });
    }
    Ok(Choice { parts })
}

/// The GGUF files among `files`, for an error to list.
fn ggufs(files: &[String]) -> Vec<String> {
    files
        .iter()
        .filter(|path| path.ends_with(".gguf"))
        .cloned()
        .collect()
}

/// Whether `path` is a GGUF model (not a projector or an importance matrix).
fn is_model(path: &str) -> bool {
    let file = path.rsplit('/').next().unwrap_or(path);
    path.ends_with(".gguf") && !file.contains("mmproj") && !file.contains("imatrix")
}

/// Whether `path` is a whole model or the first part of a split one.
fn first_part(path: &str) -> bool {
    GgufName::parse(path).is_some_and(|name| name.index == 1)
}

/// Whether `path` holds `tag` followed by `.` or `-`, case ignored (llama.cpp's
/// `std::regex(tag + "[.-]", icase)`).
fn has_tag(path: &str, tag: &str) -> bool {
    let path = path.to_ascii_lowercase();
    let tag = tag.to_ascii_lowercase();
    path.match_indices(&tag)
        .any(|(at, _)| matches!(path.as_bytes().get(at + tag.len()), Some(b'.' | b'-')))
}

/// A GGUF file name read as llama.cpp reads it: `PREFIX[-NNNNN-of-MMMMM].gguf`.
struct GgufName<'a> {
    prefix: &'a str,
    index: u32,
    count: u32,
}

impl<'a> GgufName<'a> {
    fn parse(path: &'a str) -> Option<GgufName<'a>> {
        let stem = path.strip_suffix(".gguf")?;
        let split = stem.len().checked_sub(15).and_then(|at| {
            let (prefix, tail) = stem.split_at_checked(at)?;
            let index = tail.strip_prefix('-')?.get(..5)?;
            let count = tail.get(6..)?.strip_prefix("-of-")?;
            let digits = |s: &str| s.len() == 5 && s.bytes().all(|b| b.is_ascii_digit());
            (digits(index) && digits(count) && !prefix.is_empty())
                .then(|| (prefix, index.parse().ok(), count.parse().ok()))
        });
        Some(match split {
            Some((prefix, Some(index), Some(count))) => GgufName {
                prefix,
                index,
                count,
            },
            _ => GgufName {
                prefix: stem,
                index: 1,
                count: 1,
            },
        })
    }

    /// The path of part `index` of this model.
    fn part(&self, index: u32) -> String {
        format!("{}-{index:05}-of-{:05}.gguf", self.prefix, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(paths: &[&str]) -> Vec<String> {
        paths.iter().map(|path| path.to_string()).collect()
    }

    const QUANTS: &[&str] = &[
        "README.md",
        "mmproj-model-f16.gguf",
        "model-Q2_K.gguf",
        "model-Q4_K_M.gguf",
        "model-Q4_K_S.gguf",
        "model-Q8_0.gguf",
        "model.imatrix-Q4_K_M.gguf",
    ];

    #[test]
    fn the_tag_picks_its_file_whatever_its_case() {
        let files = files(QUANTS);
        for (tag, expected) in [
            ("Q8_0", "model-Q8_0.gguf"),
            ("q4_k_s", "model-Q4_K_S.gguf"),
            ("Q4_K_M", "model-Q4_K_M.gguf"),
        ] {
            assert_eq!(
                by_tag(&files, Some(tag)).unwrap().first(),
                expected,
                "{tag}"
            );
        }
    }

    #[test]
    fn a_tag_is_not_a_prefix_of_a_longer_one() {
        let files = files(&["model-Q4_K_M.gguf", "model-Q4_K_S.gguf"]);
        let error = by_tag(&files, Some("Q4_K")).unwrap_err();
        assert_eq!(
            error.to_string(),
            "none of its GGUF files is quantized as Q4_K; give one of these with :TAG or \
             --hf-file: model-Q4_K_M.gguf, model-Q4_K_S.gguf"
        );
    }

    #[test]
    fn without_a_tag_q4_k_m_then_q8_0_then_the_first_model() {
        assert_eq!(
            by_tag(&files(QUANTS), None).unwrap().first(),
            "model-Q4_K_M.gguf"
        );
        let no_q4 = files(&["a-F16.gguf", "a-Q8_0.gguf"]);
        assert_eq!(by_tag(&no_q4, None).unwrap().first(), "a-Q8_0.gguf");
        let neither = files(&["mmproj-F16.gguf", "b-F16.gguf", "b-Q5_K_M.gguf"]);
        assert_eq!(by_tag(&neither, None).unwrap().first(), "b-F16.gguf");
    }

    #[test]
    fn a_split_model_is_all_its_parts_first_part_first() {
        let files = files(&[
            "Q4_K_M/big-Q4_K_M-00002-of-00003.gguf",
            "Q4_K_M/big-Q4_K_M-00001-of-00003.gguf",
            "Q4_K_M/big-Q4_K_M-00003-of-00003.gguf",
            "big-Q8_0.gguf",
        ]);
        let expected = [
            "Q4_K_M/big-Q4_K_M-00001-of-00003.gguf",
            "Q4_K_M/big-Q4_K_M-00002-of-00003.gguf",
            "Q4_K_M/big-Q4_K_M-00003-of-00003.gguf",
        ];
        assert_eq!(by_tag(&files, Some("q4_k_m")).unwrap().parts, expected);
        let named = by_name(&files, "Q4_K_M/big-Q4_K_M-00002-of-00003.gguf").unwrap();
        assert_eq!(named.parts, expected, "a part named brings its whole split");
    }

    #[test]
    fn a_split_missing_a_part_is_refused() {
        let files = files(&["m-Q8_0-00001-of-00002.gguf"]);
        assert_eq!(
            by_tag(&files, Some("Q8_0")).unwrap_err(),
            PickError::MissingParts {
                first: "m-Q8_0-00001-of-00002.gguf".into(),
                missing: vec!["m-Q8_0-00002-of-00002.gguf".into()],
            }
        );
    }

    #[test]
    fn a_repository_without_gguf_is_refused_with_its_files() {
        let files = files(&["config.json", "model.safetensors"]);
        assert_eq!(
            by_tag(&files, None).unwrap_err().to_string(),
            "it holds no GGUF model file, so it cannot be served (its files: config.json, \
             model.safetensors)"
        );
    }

    #[test]
    fn hf_file_names_the_file_exactly() {
        let files = files(QUANTS);
        assert_eq!(
            by_name(&files, "model-Q2_K.gguf").unwrap().parts,
            ["model-Q2_K.gguf"]
        );
        assert!(matches!(
            by_name(&files, "model-q2_k.gguf"),
            Err(PickError::NoFile { .. })
        ));
    }
}
