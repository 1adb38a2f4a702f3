//! Writes locked.rs: (package, version) of every package in the workspace's Cargo.lock, and
//! the version of the rustc that builds.

use std::{env, fs, path::PathBuf, process::Command};

fn main() {
    let lock = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap()).join("../Cargo.lock");
    println!("cargo:rerun-if-changed={}", lock.display());
    let text = fs::read_to_string(&lock).expect("the workspace's Cargo.lock (build with --locked)");
    let mut packages = Vec::new();
    let mut name = None;
    for line in text.lines() {
        if line == "[[package]]" {
            name = None;
        } else if let Some(value) = line.strip_prefix("name = ") {
            name = Some(value.trim_matches('"').to_string());
        } else if let (Some(value), Some(n)) = (line.strip_prefix("version = "), name.take()) {
            packages.push(format!("    ({n:?}, {:?}),\n", value.trim_matches('"')));
        }
    }
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let out = Command::new(rustc).arg("--version").output().expect("rustc --version");
    // "rustc 1.95.0 (59807616e 2026-04-14)" -> "1.95.0"
    let rustc_version = String::from_utf8_lossy(&out.stdout).split_whitespace().nth(1).unwrap_or("unknown").to_string();
    let code = format!(
        "/// (package, version) of every package in Cargo.lock.\npub const LOCKED: &[(&str, &str)] = &[\n{}];\n/// The compiler that built this harness.\npub const RUSTC: &str = {rustc_version:?};\n",
        packages.concat()
    );
    fs::write(PathBuf::from(env::var("OUT_DIR").unwrap()).join("locked.rs"), code).unwrap();
}
