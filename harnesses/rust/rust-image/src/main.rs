//! Harness for the `image` crate's JPEG path, the way most Rust code reads and writes JPEG:
//! `image::codecs::jpeg::JpegDecoder` (zune-jpeg inside) and its own `JpegEncoder`.
//!
//!     cargo build --locked --release && target/release/rust-image   # speaks docs/protocol.md
//!
//! What the crate cannot do is refused, not worked around. Its encoder writes every component
//! at full resolution (4:4:4) from L8 or Rgb8 pixels, converting RGB to YCbCr: so no chroma
//! subsampling and no `rgb` (untransformed) streams. Its decoder returns L8 or Rgb8 (honoring
//! APP14), never YCbCr samples, so `decoded_color_space: ycbcr` is refused when parsing.

use std::io::Cursor;

use harness_versions as locked;
use image::codecs::jpeg::{JpegDecoder, JpegEncoder};
use image::{ExtendedColorType, ImageDecoder};
use zarr_jpeg_conformance_harness::{ColorSpace, Config, Geometry, Image, Library, Refusal};

struct ImageCrate;

impl Library for ImageCrate {
    const NAME: &'static str = "rust-image";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");

    fn versions(&self) -> Vec<(&'static str, String)> {
        vec![("image", locked::version("image")), ("zune-jpeg", locked::version("zune-jpeg")), ("rustc", locked::RUSTC.into())]
    }

    fn supports(&self, config: &Config) -> Result<(), Refusal> {
        if config.decoded == ColorSpace::Ycbcr {
            return Err(Refusal::new(
                Some("JPEG-DCS-05"),
                "the image crate takes and returns L8 or Rgb8 pixels, never YCbCr samples",
            ));
        }
        if !config.is_required_scheme() {
            let (h, v) = config.luma_factors();
            return Err(Refusal::new(
                Some("JPEG-X-04"),
                format!("image's JpegEncoder cannot write luma sampling factors [{h}, {v}]"),
            ));
        }
        Ok(())
    }

    fn encode(&mut self, config: &Config, image: Image<'_>) -> Result<Vec<u8>, Refusal> {
        if config.encoded == ColorSpace::Rgb {
            return Err(Refusal::new(
                Some("JPEG-ECS-09"),
                "image's JpegEncoder always converts RGB to YCbCr: it cannot write rgb (no color transform, APP14 transform 0)",
            ));
        }
        if config.luma_factors() != (1, 1) {
            let (h, v) = config.luma_factors();
            return Err(Refusal::new(
                Some("JPEG-SUB-08"),
                format!("image's JpegEncoder writes every component at full resolution (4:4:4), it has no option for luma factors [{h}, {v}]"),
            ));
        }
        let color = if image.components == 1 { ExtendedColorType::L8 } else { ExtendedColorType::Rgb8 };
        let mut stream = Vec::new();
        JpegEncoder::new_with_quality(&mut stream, config.quality)
            .encode(image.samples, image.width.into(), image.height.into(), color)
            .map_err(|err| Refusal::library("image JpegEncoder", err))?;
        Ok(stream)
    }

    fn decode(&mut self, _config: &Config, stream: &[u8], chunk: Geometry) -> Result<Vec<u8>, Refusal> {
        let decoder = JpegDecoder::new(Cursor::new(stream)).map_err(|err| Refusal::library("image JpegDecoder", err))?;
        let (width, height) = decoder.dimensions();
        let components = decoder.color_type().channel_count().into();
        chunk.check_frame(Geometry { height: height as usize, width: width as usize, components })?;
        let mut samples = vec![0; decoder.total_bytes() as usize];
        decoder.read_image(&mut samples).map_err(|err| Refusal::library("image JpegDecoder", err))?;
        Ok(samples)
    }
}

fn main() {
    std::process::exit(zarr_jpeg_conformance_harness::run(ImageCrate));
}
