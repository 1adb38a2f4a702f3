//! The libjpeg-turbo version (and whether its SIMD code was built) from the jconfig.h that
//! turbojpeg-sys installed, so `start` reports what was really linked.

use std::{env, fs, path::Path};

fn main() {
    let include = env::var("DEP_TURBOJPEG_INCLUDE").expect("turbojpeg-sys gives its include path");
    let jconfig = include.split(',').map(|dir| Path::new(dir).join("jconfig.h")).find(|p| p.exists());
    let text = jconfig.map(|p| fs::read_to_string(p).unwrap()).unwrap_or_default();
    let define = |name: &str| {
        text.lines()
            .find_map(|line| line.strip_prefix("#define ")?.strip_prefix(name)?.strip_prefix(' ').map(str::trim))
            .map(|value| value.trim_matches('"').to_string())
    };
    let version = define("LIBJPEG_TURBO_VERSION").unwrap_or_else(|| "unknown".into());
    let simd = if define("WITH_SIMD").is_some() { "SIMD" } else { "no SIMD: nasm was missing at build time" };
    println!("cargo:rustc-env=LIBJPEG_TURBO_VERSION={version} ({simd})");
}
