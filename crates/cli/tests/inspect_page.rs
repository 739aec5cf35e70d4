//! The `/inspect` page of `toolbridge serve` on the real default model, in headless
//! Chromium (`inspect_page.py` beside this file drives it over the DevTools protocol):
//! it loads without the key and asks for it, prepares a request (its prompt with special
//! tokens marked, its grammar), runs it, and shows the parsed call.
//!
//! Needs Debian's `chromium` (`scripts/system-packages.sh` installs it) and
//! `websocket-client`, installed from PyPI into the tests' virtual environment. The
//! screenshot lands in the target directory (`inspect.png`); `docs/inspect.png` is one of
//! these. Built only with the `llama` feature, like the other tests on the real model.

#![cfg(feature = "llama")]

use std::ffi::OsStr;
use std::path::Path;

use crate::common::serve::{assert_script_passes, ServeProcess};
use crate::common::{one_at_a_time, test_python};

#[test]
fn the_inspector_page_prepares_runs_and_shows_the_call() {
    let _turn = one_at_a_time();
    let key = "sk-inspect-test";
    let server = ServeProcess::start(&["--api-key", key], &[]);
    let python = test_python(&[("websocket-client", "websocket")]);
    let screenshot = Path::new(env!("CARGO_TARGET_TMPDIR")).join("inspect.png");
    let args = [
        OsStr::new(&server.base_url),
        OsStr::new(key),
        screenshot.as_os_str(),
    ];
    assert_script_passes(&python, "inspect_page.py", &args);
}
