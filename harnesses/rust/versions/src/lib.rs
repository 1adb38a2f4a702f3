//! Versions come from the build, not typed strings: every package of the workspace's
//! Cargo.lock and the compiler's version, for the `start` reply of the shipped harnesses.
//! Kept apart from the kit because it reads this workspace's lock file, which a published
//! crate cannot see.

include!(concat!(env!("OUT_DIR"), "/locked.rs"));

/// The locked version of `package`; a typo is a bug of the harness, found at its first start.
pub fn version(package: &str) -> String {
    match LOCKED.iter().find(|(name, _)| *name == package) {
        Some((_, version)) => version.to_string(),
        None => panic!("{package} is not in the workspace's Cargo.lock"),
    }
}
