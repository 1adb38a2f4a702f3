//! A complete harness on the kit: the `jpeg-decoder` crate (decode only), a library none of
//! the shipped harnesses use. The kit parses the codec object by the spec's rules, checks the
//! chunk shape and speaks the protocol; this file only calls the library.
//!
//!     cargo build --release --example jpeg_decoder
//!     pytest --pyargs zarr_jpeg_conformance.suites --impl 'exec:target/release/examples/jpeg_decoder'

use jpeg_decoder::{Decoder, PixelFormat};
use zarr_jpeg_conformance_harness::{run, ColorSpace, Config, Geometry, Library, Refusal};

struct JpegDecoder;

impl Library for JpegDecoder {
    const NAME: &'static str = "rust-jpeg-decoder";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");

    fn versions(&self) -> Vec<(&'static str, String)> {
        vec![("jpeg-decoder", "0.3".into())]
    }

    fn roles(&self) -> &'static [&'static str] {
        &["decode"]
    }

    // What the library cannot do is refused when parsing, as the spec asks (an optional feature).
    fn supports(&self, config: &Config) -> Result<(), Refusal> {
        if config.decoded == ColorSpace::Ycbcr {
            return Err(Refusal::new(Some("JPEG-DCS-05"), "jpeg-decoder returns RGB, never the stored YCbCr"));
        }
        Ok(())
    }

    fn decode(&mut self, _config: &Config, stream: &[u8], chunk: Geometry) -> Result<Vec<u8>, Refusal> {
        // The library has one error type: every failure is a refusal of this stream.
        let mut decoder = Decoder::new(stream);
        decoder.read_info().map_err(|err| Refusal::library("jpeg-decoder", err))?;
        let info = decoder.info().ok_or_else(|| Refusal::new(Some("JPEG-DEC-01"), "no frame header"))?;
        let components = match info.pixel_format {
            PixelFormat::L8 => 1,
            PixelFormat::RGB24 => 3,
            other => return Err(Refusal::new(Some("JPEG-DEC-01"), format!("{other:?} is not an 8-bit gray or colour image"))),
        };
        // Before decoding pixels: a frame that does not fit the chunk is refused, not cropped.
        chunk.check_frame(Geometry { height: info.height.into(), width: info.width.into(), components })?;
        decoder.decode().map_err(|err| Refusal::library("jpeg-decoder", err))
    }
}

fn main() {
    std::process::exit(run(JpegDecoder));
}
