//! Harness for the pure-Rust pair that clbarnes' zarrs_jpeg codec builds on: `zune-jpeg` to
//! decode, `jpeg-encoder` to encode, each called through its own API the way a codec would.
//!
//!     cargo build --locked --release && target/release/rust-zune-jpeg   # speaks docs/protocol.md
//!
//! What the libraries cannot do is refused, not worked around: jpeg-encoder has no way to
//! store RGB without the YCbCr transform (an APP14 transform 0 stream), so `rgb` is refused
//! at encode; zune-jpeg honors APP14 when decoding, so `rgb` configurations parse.

use harness_versions as locked;
use jpeg_encoder::{ColorType, Encoder, SamplingFactor};
use zarr_jpeg_conformance_harness::{ColorSpace, Config, Geometry, Image, Library, Refusal};
use zune_jpeg::zune_core::{bytestream::ZCursor, colorspace::ColorSpace as Zune, options::DecoderOptions};
use zune_jpeg::JpegDecoder;

struct ZuneJpeg;

impl Library for ZuneJpeg {
    const NAME: &'static str = "rust-zune-jpeg";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");

    fn versions(&self) -> Vec<(&'static str, String)> {
        vec![
            ("zune-jpeg", locked::version("zune-jpeg")),
            ("jpeg-encoder", locked::version("jpeg-encoder")),
            ("rustc", locked::RUSTC.into()),
        ]
    }

    fn supports(&self, config: &Config) -> Result<(), Refusal> {
        let (h, v) = config.luma_factors();
        if SamplingFactor::from_factors(h, v).is_none() {
            return Err(Refusal::new(
                Some("JPEG-X-04"),
                format!(
                    "jpeg-encoder cannot write luma sampling factors [{h}, {v}] (it has 1x1, 1x2, 1x4, 2x1, 2x2, 2x4, 4x1, 4x2)"
                ),
            ));
        }
        Ok(())
    }

    fn encode(&mut self, config: &Config, image: Image<'_>) -> Result<Vec<u8>, Refusal> {
        let color = match (config.decoded, config.encoded) {
            (ColorSpace::Grayscale, _) => ColorType::Luma,
            (ColorSpace::Rgb, ColorSpace::Ycbcr) => ColorType::Rgb,
            (ColorSpace::Ycbcr, _) => ColorType::Ycbcr,
            _ => {
                return Err(Refusal::new(
                    Some("JPEG-ECS-09"),
                    "jpeg-encoder always stores 3-component images as YCbCr: it cannot write rgb (no color transform, APP14 transform 0)",
                ))
            }
        };
        let mut stream = Vec::new();
        let mut encoder = Encoder::new(&mut stream, config.quality);
        let (h, v) = config.luma_factors();
        // Set always: the encoder's default depends on quality (4:2:0 below 90).
        encoder.set_sampling_factor(SamplingFactor::from_factors(h, v).expect("checked by supports"));
        encoder.encode(image.samples, image.width, image.height, color).map_err(|err| Refusal::library("jpeg-encoder", err))?;
        Ok(stream)
    }

    fn decode(&mut self, config: &Config, stream: &[u8], chunk: Geometry) -> Result<Vec<u8>, Refusal> {
        let out = match config.decoded {
            ColorSpace::Grayscale => Zune::Luma,
            ColorSpace::Rgb => Zune::RGB,
            ColorSpace::Ycbcr => Zune::YCbCr,
        };
        // zune-jpeg's default cap is 16384 per side; a JPEG frame records up to 65535.
        let options = DecoderOptions::default().jpeg_set_out_colorspace(out).set_max_width(65535).set_max_height(65535);
        let mut decoder = JpegDecoder::new_with_options(ZCursor::new(stream), options);
        decoder.decode_headers().map_err(|err| Refusal::library("zune-jpeg", err))?;
        let info = decoder.info().expect("headers were decoded");
        let frame = Geometry { height: info.height.into(), width: info.width.into(), components: info.components.into() };
        chunk.check_frame(frame)?;
        decoder.decode().map_err(|err| Refusal::library("zune-jpeg", err))
    }
}

fn main() {
    std::process::exit(zarr_jpeg_conformance_harness::run(ZuneJpeg));
}
