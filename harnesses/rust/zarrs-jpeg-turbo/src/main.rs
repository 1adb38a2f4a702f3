//! Harness: the zarrs_jpeg codec with its default backend (libjpeg-turbo through the turbojpeg
//! crate), built through zarrs' codec registry (see the zarrs-jpeg-harness crate).
//!
//!     cargo build --locked --release -p zarrs-jpeg-turbo && target/release/zarrs-jpeg-turbo

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(code) = zarrs_jpeg_harness::store_command(&args) {
        std::process::exit(code);
    }
    let libraries =
        vec![("turbojpeg", harness_versions::version("turbojpeg")), ("libjpeg-turbo", env!("LIBJPEG_TURBO_VERSION").into())];
    std::process::exit(zarr_jpeg_conformance_harness::run_codec(zarrs_jpeg_harness::ZarrsJpeg::<true> { libraries }));
}
