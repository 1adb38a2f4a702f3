//! Harness for the `turbojpeg` crate: libjpeg-turbo's TurboJPEG 3 API, built from the source
//! bundled in turbojpeg-sys (the C library most JPEG codecs wrap, as zarrs_jpeg now does).
//!
//!     cargo build --locked --release && target/release/rust-turbojpeg   # speaks docs/protocol.md
//!
//! What the API cannot do is refused, not worked around. TurboJPEG takes and returns packed
//! RGB or gray pixels, or planar YUV whose chroma the caller subsamples itself, so
//! `decoded_color_space: ycbcr` is refused when parsing; its subsampling is one of the TJSAMP
//! levels, so other luma factors are refused when parsing too.

use harness_versions as locked;
use turbojpeg::{Colorspace, Compressor, Decompressor, PixelFormat, Subsamp};
use zarr_jpeg_conformance_harness::{ColorSpace, Config, Geometry, Image, Library, Refusal};

struct TurboJpeg;

/// The TJSAMP level of a configuration's luma factors (the chroma factors are [1, 1]).
fn subsamp(config: &Config) -> Option<Subsamp> {
    Some(match (config.encoded, config.luma_factors()) {
        (ColorSpace::Grayscale, _) => Subsamp::Gray,
        (_, (1, 1)) => Subsamp::None,
        (_, (2, 1)) => Subsamp::Sub2x1,
        (_, (2, 2)) => Subsamp::Sub2x2,
        (_, (1, 2)) => Subsamp::Sub1x2,
        (_, (4, 1)) => Subsamp::Sub4x1,
        (_, (1, 4)) => Subsamp::Sub1x4,
        _ => return None,
    })
}

fn turbojpeg_error(err: turbojpeg::Error) -> Refusal {
    Refusal::library("TurboJPEG", err)
}

impl Library for TurboJpeg {
    const NAME: &'static str = "rust-turbojpeg";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");

    fn versions(&self) -> Vec<(&'static str, String)> {
        vec![
            ("turbojpeg", locked::version("turbojpeg")),
            ("libjpeg-turbo", env!("LIBJPEG_TURBO_VERSION").into()),
            ("rustc", locked::RUSTC.into()),
        ]
    }

    fn supports(&self, config: &Config) -> Result<(), Refusal> {
        if config.decoded == ColorSpace::Ycbcr {
            return Err(Refusal::new(
                Some("JPEG-DCS-05"),
                "TurboJPEG takes and returns packed RGB or gray pixels, or planar YUV with subsampled chroma; never packed YCbCr samples",
            ));
        }
        if subsamp(config).is_none() {
            let (h, v) = config.luma_factors();
            return Err(Refusal::new(
                Some("JPEG-X-04"),
                format!("TurboJPEG has no subsampling level for luma factors [{h}, {v}]"),
            ));
        }
        Ok(())
    }

    fn encode(&mut self, config: &Config, image: Image<'_>) -> Result<Vec<u8>, Refusal> {
        let (format, colorspace) = match config.encoded {
            ColorSpace::Grayscale => (PixelFormat::GRAY, Colorspace::Gray),
            ColorSpace::Ycbcr => (PixelFormat::RGB, Colorspace::YCbCr),
            ColorSpace::Rgb => (PixelFormat::RGB, Colorspace::RGB),
        };
        let mut compressor = Compressor::new().map_err(turbojpeg_error)?;
        compressor.set_quality(config.quality.into()).map_err(turbojpeg_error)?;
        compressor.set_subsamp(subsamp(config).expect("checked by supports")).map_err(turbojpeg_error)?;
        compressor.set_colorspace(colorspace).map_err(turbojpeg_error)?;
        let (width, height) = (image.width.into(), image.height.into());
        let pixels = turbojpeg::Image { pixels: image.samples, width, pitch: width * image.components, height, format };
        compressor.compress_to_vec(pixels).map_err(turbojpeg_error)
    }

    fn decode(&mut self, config: &Config, stream: &[u8], chunk: Geometry) -> Result<Vec<u8>, Refusal> {
        let (mut decompressor, header) = read_frame(stream, chunk)?;
        let mut pixels = vec![0; chunk.samples()];
        decompress(&mut decompressor, config, stream, header, chunk, &mut pixels)?;
        Ok(pixels)
    }

    fn decode_into(&mut self, config: &Config, stream: &[u8], chunk: Geometry, out: &mut [u8]) -> Option<Result<(), Refusal>> {
        Some(
            read_frame(stream, chunk)
                .and_then(|(mut decompressor, header)| decompress(&mut decompressor, config, stream, header, chunk, out)),
        )
    }
}

/// A decompressor that has read the stream's frame header, checked against the chunk before any pixel is decoded.
fn read_frame(stream: &[u8], chunk: Geometry) -> Result<(Decompressor, turbojpeg::DecompressHeader), Refusal> {
    let mut decompressor = Decompressor::new().map_err(turbojpeg_error)?;
    let header = decompressor.read_header(stream).map_err(turbojpeg_error)?;
    let components = match header.colorspace {
        Colorspace::Gray => 1,
        Colorspace::RGB | Colorspace::YCbCr => 3,
        Colorspace::CMYK | Colorspace::YCCK => 4,
    };
    chunk.check_frame(Geometry { height: header.height, width: header.width, components })?;
    Ok((decompressor, header))
}

/// The frame's pixels into `pixels` (the chunk's samples), packed RGB or gray as the configuration decodes.
fn decompress(
    decompressor: &mut Decompressor,
    config: &Config,
    stream: &[u8],
    header: turbojpeg::DecompressHeader,
    chunk: Geometry,
    pixels: &mut [u8],
) -> Result<(), Refusal> {
    let format = if config.decoded == ColorSpace::Grayscale { PixelFormat::GRAY } else { PixelFormat::RGB };
    let output =
        turbojpeg::Image { pixels, width: header.width, pitch: header.width * chunk.components, height: header.height, format };
    decompressor.decompress(stream, output).map_err(turbojpeg_error)
}

fn main() {
    std::process::exit(zarr_jpeg_conformance_harness::run(TurboJpeg));
}
