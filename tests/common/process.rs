//! The built binary as a child process: started on port 0, its JSON logs collected, signals sent.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_mcp-sandbox-proxy");

/// A `serve` process; killed if a test fails before stopping it.
pub struct Serving {
    child: Child,
    pub addr: String,
    logs: Arc<Mutex<Vec<serde_json::Value>>>,
    /// Says so when the reader has seen the end of standard error: every line is in `logs`.
    logs_complete: std::sync::mpsc::Receiver<()>,
}

impl Serving {
    /// Starts the bare binary with configuration from the environment only.
    pub fn start(config: &str) -> Serving {
        Self::start_with(config, None, &[])
    }

    /// Like [`Serving::start`]; `ulimit_files` runs it under `ulimit -n`, with `env` set too.
    pub fn start_with(config: &str, ulimit_files: Option<u32>, env: &[(&str, &str)]) -> Serving {
        let mut command = match ulimit_files {
            Some(n) => {
                let mut c = Command::new("sh");
                c.args(["-c", &format!("ulimit -n {n} && exec \"$0\""), BIN]);
                c
            }
            None => Command::new(BIN),
        };
        let mut child = command
            .env("MCP_SANDBOX_PROXY_CONFIG", config)
            .env("MCP_SANDBOX_PROXY_LISTEN", "127.0.0.1:0")
            .env("MCP_SANDBOX_PROXY_LOG_FORMAT", "json")
            .env("RUST_LOG", "info")
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let logs = Arc::new(Mutex::new(Vec::new()));
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let (complete_tx, logs_complete) = std::sync::mpsc::channel();
        let sink = logs.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                let event: serde_json::Value = serde_json::from_str(&line)
                    .unwrap_or_else(|_| serde_json::json!({ "message": line }));
                if event["message"] == "listening" {
                    let _ = addr_tx.send(event["listen"].as_str().unwrap_or_default().to_owned());
                }
                sink.lock().unwrap().push(event);
            }
            let _ = complete_tx.send(());
        });
        let addr = addr_rx
            .recv_timeout(Duration::from_secs(20))
            .expect("serve logs `listening`");
        Serving {
            child,
            addr,
            logs,
            logs_complete,
        }
    }

    /// The process's resident set, in KiB (`VmRSS` of /proc/<pid>/status).
    pub fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmRSS in /proc/<pid>/status")
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn signal(&self, name: &str) {
        let pid = self.child.id().to_string();
        assert!(
            Command::new("kill")
                .args([&format!("-{name}"), &pid])
                .status()
                .unwrap()
                .success()
        );
    }

    /// Waits (bounded) for a log event with this message; returns it.
    pub fn wait_for_log(&self, message: &str) -> serde_json::Value {
        self.wait_for_event(message, |e| e["message"] == message)
    }

    /// Waits (bounded) for a log event that `matches`; returns it. `what` names it on failure.
    pub fn wait_for_event(
        &self,
        what: &str,
        matches: impl Fn(&serde_json::Value) -> bool,
    ) -> serde_json::Value {
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(20) {
            if let Some(event) = self.logs.lock().unwrap().iter().find(|e| matches(e)) {
                return event.clone();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("no log line {what:?} in {:#?}", self.logs.lock().unwrap());
    }

    pub fn log_count(&self, message: &str) -> usize {
        self.logs
            .lock()
            .unwrap()
            .iter()
            .filter(|e| e["message"] == message)
            .count()
    }

    /// Waits (bounded) for the process to exit.
    pub fn wait(mut self) -> ExitStatus {
        self.wait_for_exit()
    }

    fn wait_for_exit(&mut self) -> ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "the process did not exit"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Like [`Serving::wait`], with every log event the process wrote.
    pub fn wait_with_logs(mut self) -> (ExitStatus, Vec<serde_json::Value>) {
        let status = self.wait_for_exit();
        // Only the child held the pipe's write end: its exit is the reader's end of file.
        self.logs_complete
            .recv_timeout(Duration::from_secs(10))
            .expect("standard error ends when the process exits");
        let events = self.logs.lock().unwrap().clone();
        (status, events)
    }

    pub fn stop(self) -> ExitStatus {
        self.signal("TERM");
        self.wait()
    }
}

impl Drop for Serving {
    /// A failed assertion must not leave a server running.
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One GET with `Connection: close`; the whole response as text.
pub fn raw_get(addr: &str, host: &str, path: &str) -> String {
    try_get(addr, host, path).unwrap_or_else(|e| panic!("GET {host}{path}: {e}"))
}

pub fn try_get(addr: &str, host: &str, path: &str) -> std::io::Result<String> {
    let mut stream = TcpStream::connect(addr)?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer)?;
    Ok(answer)
}
