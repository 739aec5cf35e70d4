//! The harness of the end-to-end tests: `toolbridge serve` run as a user runs it.

#![allow(dead_code)] // Each test file uses its own part of the harness.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// How long the model may take to load before the test gives up.
const START_TIMEOUT: Duration = Duration::from_secs(300);

/// `toolbridge serve` on a free port, killed when dropped.
pub struct ServeProcess {
    child: Child,
    pub base_url: String,
    /// What the server printed on stdout up to its address, and after.
    pub banner: mpsc::Receiver<String>,
}

impl ServeProcess {
    /// Starts `toolbridge serve --port 0` with `args` (none: the default model) and the
    /// environment variables `env`, and waits for the address it prints; the banner's
    /// lines are kept.
    pub fn start(args: &[&str], env: &[(&str, &Path)]) -> ServeProcess {
        let mut child = Command::new(env!("CARGO_BIN_EXE_toolbridge"))
            .args(["serve", "--port", "0"])
            .args(args)
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("toolbridge starts");
        let stdout = child.stdout.take().expect("piped stdout");
        let (sender, receiver) = mpsc::channel();
        let (lines, banner) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                println!("serve: {line}");
                if let Some(url) = line.strip_prefix("listening on ") {
                    // The test may have given up waiting; then nobody listens.
                    let _ = sender.send(url.to_owned());
                }
                let _ = lines.send(line);
            }
        });
        let base_url = receiver
            .recv_timeout(START_TIMEOUT)
            .expect("toolbridge serve printed its address");
        ServeProcess {
            child,
            base_url,
            banner,
        }
    }
}

impl Drop for ServeProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
