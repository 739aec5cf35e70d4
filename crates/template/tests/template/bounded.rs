//! Hostile renders run in a child process with a capped address space.
//!
//! A test of a memory bound must not take the test run (or the machine) down when the
//! bound fails. [`in_child`] runs the test again as a child of this test binary, with
//! `ulimit -v` capping its address space: the child renders, then prints what the
//! render returned and its peak resident memory (`VmHWM` of `/proc/self/status`); a
//! child that dies (an allocation refused by the cap aborts it) fails the parent test
//! with what it printed. Children run one at a time.

use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use toolbridge_template::TemplateError;

/// The child's address space: the render's own bound (256 MiB built by default, a
/// few copies of it in flight) fits many times over.
const ADDRESS_SPACE_KB: u64 = 4 << 20;

/// How long a child may run before it is killed and the test fails.
const TIMEOUT: Duration = Duration::from_secs(120);

const CHILD_VAR: &str = "TOOLBRIDGE_BOUNDED_CHILD";
const RESULT_PREFIX: &str = "bounded-child-result ";

/// Peak resident memory a hostile render may reach: the default byte budget (256 MiB)
/// with room for a copy in flight and the test binary itself.
const PEAK_KB: u64 = 768 << 10;

/// Runs `render` in a bounded child ([`in_child`]) for the test at `path`
/// ([`test_path!`]): it must end in a limit error whose message holds `expected`, within
/// [`PEAK_KB`]. Prints what stopped it, how fast, and the child's peak memory.
pub fn assert_limited(
    path: &str,
    expected: &str,
    render: impl FnOnce() -> Result<String, TemplateError>,
) {
    // libtest names a test by its path without the crate: `hostile::list_repetition`.
    let test = path.split_once("::").map_or(path, |(_, test)| test);
    let report = in_child(test, || match render() {
        Err(err) => format!("{:?}: {err}", *err.kind()),
        Ok(output) => format!("ok: {} bytes", output.len()),
    });
    println!(
        "{test}: {:.2} s, peak RSS {} MiB: {}",
        report.elapsed.as_secs_f64(),
        report.peak_kb >> 10,
        report.message.lines().next().unwrap_or_default()
    );
    assert!(
        report.message.starts_with("Limit: ") && report.message.contains(expected),
        "{test}: {}",
        report.message
    );
    assert!(
        report.peak_kb < PEAK_KB,
        "{test}: peak RSS {} KiB",
        report.peak_kb
    );
}

/// The path of test `$name` in the calling module, as [`assert_limited`] takes it.
macro_rules! test_path {
    ($name:ident) => {
        concat!(module_path!(), "::", stringify!($name))
    };
}

/// Tests that call the module's `assert_bounded(test, source, expected)`, one per line.
macro_rules! bounded_tests {
    ($($name:ident: $source:expr => $expected:expr;)*) => {$(
        #[test]
        fn $name() {
            assert_bounded(test_path!($name), &$source, $expected);
        }
    )*};
}

/// What the render did in the child.
struct Report {
    /// The render's error (or `"ok: N bytes"`).
    message: String,
    /// The child's peak resident memory, in KiB.
    peak_kb: u64,
    elapsed: Duration,
}

/// Runs `render` in a child process when called from the test named `test`; returns
/// what it printed. In the child itself, runs `render`, prints, and exits.
fn in_child(test: &str, render: impl FnOnce() -> String) -> Report {
    if std::env::var(CHILD_VAR).as_deref() == Ok(test) {
        let message = render();
        let line = serde_json::json!({"message": message, "peak_kb": peak_kb()});
        println!("{RESULT_PREFIX}{line}");
        std::process::exit(0);
    }
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    let _turn = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    run_child(test)
}

fn run_child(test: &str) -> Report {
    let exe = std::env::current_exe().expect("the test binary's path");
    let started = Instant::now();
    let mut child = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v \"$1\" && shift && exec \"$@\"")
        .arg("sh")
        .arg(ADDRESS_SPACE_KB.to_string())
        .arg(&exe)
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_VAR, test)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the child test");
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the child") {
            break status;
        }
        if started.elapsed() > TIMEOUT {
            child.kill().ok();
            child.wait().ok();
            panic!("{test}: the child ran past {TIMEOUT:?} and was killed");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let elapsed = started.elapsed();
    let mut stdout = String::new();
    let mut stderr = String::new();
    child
        .stdout
        .take()
        .map(|mut s| s.read_to_string(&mut stdout));
    child
        .stderr
        .take()
        .map(|mut s| s.read_to_string(&mut stderr));
    let line = stdout
        .lines()
        .find_map(|line| line.split_once(RESULT_PREFIX).map(|(_, result)| result))
        .unwrap_or_else(|| {
            panic!(
                "{test}: the child ended ({status}) without a result; the bound did not \
                 hold under a {ADDRESS_SPACE_KB} KiB address space\nstdout:\n{stdout}\nstderr:\n{stderr}"
            )
        });
    let result: serde_json::Value = serde_json::from_str(line).expect("the child's JSON line");
    Report {
        message: result["message"].as_str().unwrap_or_default().to_string(),
        peak_kb: result["peak_kb"].as_u64().unwrap_or(0),
        elapsed,
    }
}

/// This process's peak resident memory, in KiB.
fn peak_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}
