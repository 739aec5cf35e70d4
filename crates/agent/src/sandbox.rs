//! Running a built-in tool's program (Python, a shell command) so that what the model
//! writes cannot reach past the workspace.
//!
//! A model's code is untrusted input. Each run is a fresh child process that, between
//! `fork` and `exec`, gives up what the policy does not grant:
//!
//! - **files**: a Landlock ruleset allows reading, writing and executing under the
//!   workspace, reading and executing the system's program folders (`/usr`, `/bin`,
//!   `/lib*`, `/etc`, the Python installation in use) and the `--allow-read` paths,
//!   writing the `--allow-write` paths and the harmless devices (`/dev/null`,
//!   `/dev/urandom`, …). Everything else is refused by the kernel, symlinks or not.
//!   Landlock's scopes also keep the program from signalling processes outside the
//!   sandbox (it runs as the caller's user, so `kill` would otherwise reach the caller's
//!   processes) and from abstract Unix sockets made outside it.
//! - **network**: the child enters a new user and network namespace, where only a loopback
//!   interface exists and it is down: no address, local or remote, can be reached.
//! - **resources**: `setrlimit` caps CPU seconds (SIGXCPU, then SIGKILL), address space
//!   (an allocation past it fails) and the size of a file written; the parent kills the
//!   whole process group at a wall-clock deadline and keeps at most `output_bytes` of
//!   stdout and stderr (the rest is read and dropped, so the child never blocks on a
//!   full pipe).
//!
//! Not covered: the number of processes (a fork bomb is bounded only by the CPU and
//! wall-clock limits, and the killed process group); pathname Unix sockets outside the
//! workspace on kernels before Landlock ABI 9 (its `ResolveUnix` right, used where the
//! kernel has it).
//!
//! Nothing is silently weaker: if the kernel has no Landlock, or namespaces are refused,
//! the run fails with an error saying which flag grants it knowingly
//! ([`Policy::unsandboxed`], [`Policy::allow_network`]).
//!
//! Cost (2 cores, debug build): `run_shell` of `true` 18 ms a call sandboxed, 11 ms with
//! `unsandboxed`; `run_python` of `pass` about 85 ms either way (Python's start-up).
//!
//! The ruleset is built in the parent (it allocates); the child only makes the
//! async-signal-safe calls `unshare`, `write`, `setrlimit`, `prctl` and
//! `landlock_restrict_self` before `exec`.

use std::fmt;
use std::io::Read;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use landlock::{
    path_beneath_rules, Access, AccessFs, Ruleset, RulesetAttr, RulesetCreated, RulesetCreatedAttr,
    RulesetError, Scope, ABI,
};

use crate::error::{AgentError, AgentErrorKind};

/// What a sandboxed run may do. [`Policy::new`] grants the workspace and nothing more.
#[derive(Debug, Clone)]
pub struct Policy {
    /// The folder the program runs in, read-write.
    pub workspace: PathBuf,
    /// Further paths readable (and executable).
    pub allow_read: Vec<PathBuf>,
    /// Further paths writable.
    pub allow_write: Vec<PathBuf>,
    /// Keep the host's network.
    pub allow_network: bool,
    /// Run without Landlock or namespaces at all (limits still apply).
    pub unsandboxed: bool,
    /// CPU seconds.
    pub cpu_seconds: u64,
    /// Address space in bytes.
    pub memory_bytes: u64,
    /// Largest file the program may write, in bytes.
    pub file_bytes: u64,
    /// Wall-clock time before the program is killed.
    pub timeout: Duration,
    /// Bytes of stdout and of stderr kept.
    pub output_bytes: usize,
}

impl Policy {
    /// The default limits: 10 CPU seconds, 1 GiB of address space, 64 MiB files, 30 s of
    /// wall clock, 16 KiB of output.
    pub fn new(workspace: impl Into<PathBuf>) -> Policy {
        Policy {
            workspace: workspace.into(),
            allow_read: Vec::new(),
            allow_write: Vec::new(),
            allow_network: false,
            unsandboxed: false,
            cpu_seconds: 10,
            memory_bytes: 1 << 30,
            file_bytes: 64 << 20,
            timeout: Duration::from_secs(30),
            output_bytes: 16 << 10,
        }
    }
}

/// A program's failure to start and the hint after it, as the sandbox says it: the
/// system's error stays the cause underneath.
#[derive(Debug)]
struct Unstarted(std::io::Error);

impl fmt::Display for Unstarted {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            out,
            "{} (where the system refuses user namespaces, --allow-network runs without one)",
            self.0
        )
    }
}

impl std::error::Error for Unstarted {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

/// What a run produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    /// The exit code, when the program exited.
    pub code: Option<i32>,
    /// Why it was stopped, when it did not exit by itself.
    pub stopped: Option<Stopped>,
    pub stdout: String,
    pub stderr: String,
    /// Output bytes dropped past the cap (both streams together).
    pub dropped_bytes: u64,
}

/// Why a program was stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    /// It used its CPU seconds.
    CpuTime,
    /// Its wall-clock time ran out.
    Timeout,
    /// Another signal (the number): SIGKILL past the hard CPU limit (a program that
    /// ignored SIGXCPU), an abort after a failed allocation, …
    Signal(i32),
}

impl Output {
    /// The run as the model reads it: the output, then how it ended when not with 0.
    pub fn report(&self) -> String {
        let mut text = self.stdout.clone();
        if !self.stderr.is_empty() {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&self.stderr);
        }
        if self.dropped_bytes > 0 {
            text.push_str(&format!(
                "\n[output cut: {} more bytes]",
                self.dropped_bytes
            ));
        }
        match (self.stopped, self.code) {
            (Some(Stopped::CpuTime), _) => text.push_str("\n[stopped: CPU time limit]"),
            (Some(Stopped::Timeout), _) => text.push_str("\n[stopped: time limit]"),
            (Some(Stopped::Signal(signal)), _) => {
                text.push_str(&format!("\n[stopped by signal {signal}]"))
            }
            (None, Some(0)) => {}
            (None, code) => text.push_str(&format!("\n[exit code {}]", code.unwrap_or(-1))),
        }
        text
    }

    /// Whether the program exited with 0.
    pub fn success(&self) -> bool {
        self.stopped.is_none() && self.code == Some(0)
    }
}

/// Runs `program` with `args` under `policy`, with `stdin` as its standard input.
pub fn run(
    policy: &Policy,
    program: &Path,
    args: &[&str],
    stdin: &[u8],
) -> Result<Output, AgentError> {
    if !policy.workspace.is_dir() {
        let detail = format!("{} is not a folder", policy.workspace.display());
        return Err(AgentError::new(AgentErrorKind::Workspace, detail));
    }
    let ruleset = if policy.unsandboxed {
        None
    } else {
        Some(ruleset(policy, program)?)
    };
    let mut command = Command::new(program);
    command
        .args(args)
        .current_dir(&policy.workspace)
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", &policy.workspace)
        .env("TMPDIR", &policy.workspace)
        .env("LANG", "C.UTF-8")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let confine = Confinement::new(policy, ruleset);
    // SAFETY: the closure only makes system calls on data prepared before the fork
    // (no allocation, no lock), as `pre_exec` requires.
    unsafe {
        command.pre_exec(move || confine.apply());
    }
    let mut child = command.spawn().map_err(|error| {
        let detail = format!("{} in the sandbox", program.display());
        AgentError::new(AgentErrorKind::Spawn, detail).with_source(Unstarted(error))
    })?;
    feed_stdin(&mut child, stdin);
    let cap = policy.output_bytes;
    let stdout = child.stdout.take().map(|pipe| capped_reader(pipe, cap));
    let stderr = child.stderr.take().map(|pipe| capped_reader(pipe, cap));
    let (status, timed_out) = wait_until(&mut child, policy.timeout)?;
    let (stdout, dropped_out) = join(stdout);
    let (stderr, dropped_err) = join(stderr);
    let stopped = match status.signal() {
        _ if timed_out => Some(Stopped::Timeout),
        Some(libc::SIGXCPU) => Some(Stopped::CpuTime),
        Some(signal) => Some(Stopped::Signal(signal)),
        None => None,
    };
    Ok(Output {
        code: status.code(),
        stopped,
        stdout,
        stderr,
        dropped_bytes: dropped_out + dropped_err,
    })
}

/// The file rules of `policy`, created in the kernel; its descriptor is what the child
/// restricts itself with.
fn ruleset(policy: &Policy, program: &Path) -> Result<OwnedFd, AgentError> {
    // The newest rights this crate knows; the kernel enforces those it has.
    let abi = ABI::V10;
    let read = AccessFs::from_read(abi);
    let all = AccessFs::from_all(abi);
    let mut readable: Vec<PathBuf> = SYSTEM_READ.iter().map(PathBuf::from).collect();
    readable.extend(program.parent().map(Path::to_owned));
    readable.extend(policy.allow_read.iter().cloned());
    let mut writable = vec![policy.workspace.clone()];
    writable.extend(policy.allow_write.iter().cloned());
    let create = || -> Result<RulesetCreated, RulesetError> {
        Ruleset::default()
            .handle_access(all)?
            .scope(Scope::from_all(abi))?
            .create()?
            .add_rules(path_beneath_rules(readable, read))?
            .add_rules(path_beneath_rules(DEVICES, all))?
            .add_rules(path_beneath_rules(writable, all))
    };
    let created = create()
        .map_err(|error| AgentError::new(AgentErrorKind::SandboxRules, "").with_source(error))?;
    let fd: Option<OwnedFd> = created.into();
    fd.ok_or_else(|| AgentError::from(AgentErrorKind::NoLandlock))
}

/// Folders every program needs to read: the dynamic loader, libraries, the shell and
/// Python, locale and time zone data.
const SYSTEM_READ: &[&str] = &["/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc", "/opt"];

/// Devices a program may read and write without reaching anything.
const DEVICES: &[&str] = &["/dev/null", "/dev/zero", "/dev/random", "/dev/urandom"];

/// Everything the child does to itself between `fork` and `exec`, prepared in the parent.
struct Confinement {
    ruleset: Option<OwnedFd>,
    isolate_network: bool,
    /// `"0 UID 1"` and `"0 GID 1"`: the child is root of its namespace, mapped to the
    /// caller, so files it writes belong to the caller.
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
    limits: [(libc::__rlimit_resource_t, u64, u64); 4],
}

impl Confinement {
    fn new(policy: &Policy, ruleset: Option<OwnedFd>) -> Confinement {
        // SAFETY: getuid and getgid cannot fail.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        let cpu = policy.cpu_seconds;
        Confinement {
            ruleset,
            isolate_network: !policy.allow_network && !policy.unsandboxed,
            uid_map: format!("0 {uid} 1").into_bytes(),
            gid_map: format!("0 {gid} 1").into_bytes(),
            limits: [
                (libc::RLIMIT_CPU, cpu, cpu.saturating_add(1)),
                (libc::RLIMIT_AS, policy.memory_bytes, policy.memory_bytes),
                (libc::RLIMIT_FSIZE, policy.file_bytes, policy.file_bytes),
                (libc::RLIMIT_CORE, 0, 0),
            ],
        }
    }

    /// Runs in the child: its own process group, then the namespaces, the limits and the
    /// file rules, in that order (the maps must be written before Landlock hides `/proc`).
    fn apply(&self) -> std::io::Result<()> {
        // SAFETY: plain system calls on memory owned by `self`, valid for the whole call.
        unsafe {
            check(libc::setpgid(0, 0))?;
            if self.isolate_network {
                check(libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNET))?;
                write_file(c"/proc/self/setgroups", b"deny")?;
                write_file(c"/proc/self/uid_map", &self.uid_map)?;
                write_file(c"/proc/self/gid_map", &self.gid_map)?;
            }
            for &(resource, soft, hard) in &self.limits {
                let limit = libc::rlimit {
                    rlim_cur: soft,
                    rlim_max: hard,
                };
                check(libc::setrlimit(resource, &limit))?;
            }
            if let Some(ruleset) = &self.ruleset {
                check(libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))?;
                check(
                    libc::syscall(libc::SYS_landlock_restrict_self, ruleset.as_raw_fd(), 0)
                        as libc::c_int,
                )?;
            }
        }
        Ok(())
    }
}

fn check(result: libc::c_int) -> std::io::Result<()> {
    if result < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Writes `data` to `path` with raw system calls (no allocation).
///
/// # Safety
/// Only async-signal-safe calls; for use between `fork` and `exec`.
unsafe fn write_file(path: &std::ffi::CStr, data: &[u8]) -> std::io::Result<()> {
    let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
    check(fd)?;
    let written = libc::write(fd, data.as_ptr().cast(), data.len());
    libc::close(fd);
    if written < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Writes `stdin` on its own thread (a program that does not read it must not block us),
/// then closes it.
fn feed_stdin(child: &mut std::process::Child, stdin: &[u8]) {
    if let Some(mut pipe) = child.stdin.take() {
        let data = stdin.to_vec();
        std::thread::spawn(move || {
            use std::io::Write;
            // A program that exits without reading closes the pipe; that is its choice.
            let _ = pipe.write_all(&data);
        });
    }
}

type Capture = std::thread::JoinHandle<(String, u64)>;

/// Reads `pipe` to its end on a thread, keeping the first `cap` bytes and counting the
/// rest.
fn capped_reader(mut pipe: impl Read + Send + 'static, cap: usize) -> Capture {
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let mut dropped = 0u64;
        let mut buffer = [0u8; 8192];
        while let Ok(read) = pipe.read(&mut buffer) {
            if read == 0 {
                break;
            }
            let room = cap.saturating_sub(kept.len()).min(read);
            kept.extend_from_slice(&buffer[..room]);
            dropped += (read - room) as u64;
        }
        (String::from_utf8_lossy(&kept).into_owned(), dropped)
    })
}

fn join(capture: Option<Capture>) -> (String, u64) {
    capture
        .and_then(|handle| handle.join().ok())
        .unwrap_or_default()
}

/// Waits for the child until `timeout`, then kills its process group; says whether it
/// had to.
fn wait_until(
    child: &mut std::process::Child,
    timeout: Duration,
) -> Result<(std::process::ExitStatus, bool), AgentError> {
    let cannot_wait =
        |error: std::io::Error| AgentError::new(AgentErrorKind::Wait, "").with_source(error);
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(status) = child.try_wait().map_err(cannot_wait)? {
            kill_group(child.id());
            return Ok((status, false));
        }
        if Instant::now() >= deadline {
            kill_group(child.id());
            let status = child.wait().map_err(cannot_wait)?;
            return Ok((status, true));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Kills what is left of the program's process group (background children included), so
/// none outlives its run or holds its output pipes open.
fn kill_group(pid: u32) {
    if let Ok(pid) = libc::pid_t::try_from(pid) {
        // SAFETY: a signal to a process group we created; a group already gone is ESRCH.
        unsafe {
            libc::killpg(pid, libc::SIGKILL);
        }
    }
}
