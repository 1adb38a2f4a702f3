//! Harness: the zarrs_jpeg codec with its pure-Rust backend (feature `backend-rust`: zune-jpeg
//! decodes, mozjpeg-rs encodes), built through zarrs' codec registry (see zarrs-jpeg-harness).
//!
//!     cargo build --locked --release -p zarrs-jpeg-rust && target/release/zarrs-jpeg-rust
//!
//! Built by its own cargo invocation: in one build with zarrs-jpeg-turbo the features would
//! unify and both binaries would run the turbojpeg backend.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(code) = zarrs_jpeg_harness::store_command(&args) {
        std::process::exit(code);
    }
    let libraries = ["zune-jpeg", "mozjpeg-rs"].map(|name| (name, harness_versions::version(name))).to_vec();
    std::process::exit(zarr_jpeg_conformance_harness::run_codec(zarrs_jpeg_harness::ZarrsJpeg::<false> { libraries }));
}
