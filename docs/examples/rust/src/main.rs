//! The conformance harness of a Zarr `jpeg` codec in Rust, on the harness kit: the kit speaks the
//! protocol, this file calls the codec. The codec here is the `jpeg-decoder` crate (it decodes,
//! it does not encode); it has no parser of its own, so `parse` borrows the kit's. A codec that
//! parses its configuration itself calls its own parser there: its verdicts are then its own.

use jpeg_decoder::{Decoder, PixelFormat};
use zarr_jpeg_conformance_harness::serde_json::Value;
use zarr_jpeg_conformance_harness::{parse_codec, run_codec, Codec, ColorSpace, Config, Geometry, Refusal};

struct Harness;

impl Codec for Harness {
    const NAME: &'static str = "example-jpeg-decoder";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    type Handle = Config;

    fn versions(&self) -> Vec<(&'static str, String)> {
        vec![("jpeg-decoder", "0.3".into())]
    }

    fn kind(&self) -> &'static str {
        "codec"
    }

    fn roles(&self) -> &'static [&'static str] {
        &["decode"]
    }

    fn parse(&mut self, codec: &Value) -> Result<Config, Refusal> {
        let config = parse_codec(codec)?;
        // An optional feature the codec does not have is refused when parsing, as the spec asks.
        if config.decoded == ColorSpace::Ycbcr {
            return Err(Refusal::new(Some("JPEG-DCS-05"), "jpeg-decoder returns RGB, never the stored YCbCr"));
        }
        Ok(config)
    }

    fn encode(&mut self, _config: &Config, _shape: &[u64], _dtype: &str, _samples: &[u8]) -> Result<Vec<u8>, Refusal> {
        Err(Refusal::new(None, "jpeg-decoder does not encode")) // not asked: the roles say decode only
    }

    fn decode(&mut self, config: &Config, stream: &[u8], shape: &[u64]) -> Result<Vec<u8>, Refusal> {
        let chunk = Geometry::of_chunk(shape)?; // the spec's chunk-shape table
        chunk.check_decoded(config, shape)?;
        let mut decoder = Decoder::new(stream);
        // Before any pixel is decoded: a frame that is not the chunk's is refused, never cropped or reshaped.
        chunk.check_frame(frame(&mut decoder)?)?;
        let samples = decoder.decode().map_err(|err| Refusal::library("jpeg-decoder", err))?;
        Ok(samples)
    }
}

/// The frame a stream's header describes. Every error of the library is a refusal of the stream.
fn frame(decoder: &mut Decoder<&[u8]>) -> Result<Geometry, Refusal> {
    decoder.read_info().map_err(|err| Refusal::library("jpeg-decoder", err))?;
    let info = decoder.info().ok_or_else(|| Refusal::new(Some("JPEG-DEC-01"), "no frame header"))?;
    let components = match info.pixel_format {
        PixelFormat::L8 => 1,
        PixelFormat::RGB24 => 3,
        other => return Err(Refusal::new(Some("JPEG-DEC-01"), format!("{other:?} is not 8-bit gray or colour"))),
    };
    Ok(Geometry { height: info.height.into(), width: info.width.into(), components })
}

fn main() {
    std::process::exit(run_codec(Harness));
}
