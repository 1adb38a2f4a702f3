//! The harness kit of zarr-jpeg-conformance for Rust: everything a harness needs except the
//! calls into your codec. It speaks the harness protocol, version 1 (JSON lines, and the binary
//! framing a client may offer; `bench` timed for you), and carries the spec's parse rules for
//! the codec object, the chunk-shape table and the check that a stream's frame fits the chunk.
//!
//! A Zarr codec that parses its configuration itself implements [`Codec`] (parse, encode,
//! decode; optionally build) and calls [`run_codec`] from `main`. A JPEG library without a
//! parser of its own implements [`Library`] (encode, decode, the optional features it refuses)
//! and calls [`run`]: the kit parses by the spec's rules. The crate's major version is the
//! protocol's.

mod chunk;
mod config;
mod protocol;

pub use chunk::{itemsize, Geometry, Image};
pub use config::{parse_codec, ColorSpace, Config};
pub use protocol::{run, run_codec, serve, serve_codec, Framing, SpecParse};

/// The JSON crate of the callbacks' `Value`s, so that a harness needs no version of its own.
pub use serde_json;

/// The protocol version this kit speaks; also its major version.
pub const PROTOCOL: u64 = 1;

/// A clean refusal of an input (the protocol's `rejected`): an invalid configuration, chunk or
/// stream, or an optional feature the library does not have.
#[derive(Debug, Clone)]
pub struct Refusal {
    pub message: String,
    /// The requirement ID the refusal rests on, where it is known (`JPEG-Q-01`).
    pub requirement: Option<&'static str>,
    /// The type of the error that refused (the library's, or the harness's own for parse rules).
    pub exception: Option<String>,
}

impl Refusal {
    pub fn new(requirement: Option<&'static str>, message: impl Into<String>) -> Refusal {
        Refusal { message: message.into(), requirement, exception: None }
    }

    pub fn exception(mut self, name: impl Into<String>) -> Refusal {
        self.exception = Some(name.into());
        self
    }

    /// The library said no: its error, by its type name and its own words.
    pub fn library<E: std::fmt::Display>(what: &str, error: E) -> Refusal {
        Refusal::new(None, format!("{what}: {error}")).exception(std::any::type_name::<E>())
    }
}

/// Why a request did not succeed: refused (`rejected`), or the harness could not act on it (`error`).
#[derive(Debug)]
pub enum Failure {
    Rejected(Refusal),
    Error {
        message: String,
        exception: &'static str,
    },
    /// The harness or the library panicked; `trace` is what the panic hook saw.
    Panic {
        message: String,
        trace: String,
    },
}

impl Failure {
    pub(crate) fn bad_request(message: impl Into<String>) -> Failure {
        Failure::Error { message: message.into(), exception: "BadRequest" }
    }
}

impl From<Refusal> for Failure {
    fn from(refusal: Refusal) -> Failure {
        Failure::Rejected(refusal)
    }
}

/// A codec behind the protocol that judges everything itself: its configuration (parsed the
/// way its Zarr implementation parses it), its chunks and its streams. The shared code only
/// moves bytes; a [`Library`] gets the spec's rules through [`SpecParse`].
pub trait Codec {
    /// The `--impl` name and the `name` of the `start` reply.
    const NAME: &'static str;
    /// The implementation's version, the `version` of the `start` reply.
    const VERSION: &'static str;
    /// What a parsed configuration is to it.
    type Handle;

    /// The libraries and runtime it uses, and under `parse` whose parse verdicts it gives.
    fn versions(&self) -> Vec<(&'static str, String)>;

    /// The `kind` of the `start` reply: `codec` or `library`.
    fn kind(&self) -> &'static str;

    /// Build the codec from a codec object, any JSON value.
    fn parse(&mut self, codec: &serde_json::Value) -> Result<Self::Handle, Refusal>;

    /// Encode one chunk of any shape and dtype the request names.
    fn encode(&mut self, handle: &Self::Handle, shape: &[u64], dtype: &str, samples: &[u8]) -> Result<Vec<u8>, Refusal>;

    /// Decode one stream to `shape` uint8 samples, C order.
    fn decode(&mut self, handle: &Self::Handle, stream: &[u8], shape: &[u64]) -> Result<Vec<u8>, Refusal>;

    /// Optional: [`Codec::decode`] straight into `out`, which holds exactly the chunk's samples. In shared framing
    /// the kit then hands out the room the client offered for the reply, so the samples are written once, where the
    /// client reads them, instead of into a vector that is then copied there. `None` (the default): not offered,
    /// and `decode` is called.
    fn decode_into(
        &mut self,
        handle: &Self::Handle,
        stream: &[u8],
        shape: &[u64],
        out: &mut [u8],
    ) -> Option<Result<(), Refusal>> {
        let _ = (handle, stream, shape, out);
        None
    }

    /// The `roles` of the `start` reply; add `"build"` with [`Codec::build`].
    fn roles(&self) -> &'static [&'static str] {
        &["encode", "decode"]
    }

    /// The codec object a builder writes for constructor `options` (role `build` only).
    fn build(&mut self, options: &serde_json::Value) -> Result<serde_json::Value, Refusal> {
        let _ = options;
        Err(Refusal::new(None, "this implementation does not build codec objects"))
    }
}

/// One JPEG library behind the protocol. The shared code has already applied the spec's parse
/// rules to the configuration and the chunk-shape table to the chunk; what is left is the
/// library's own work and its own refusals.
pub trait Library {
    /// The `--impl` name and the `name` of the `start` reply.
    const NAME: &'static str;
    /// The harness's version, the `version` of the `start` reply.
    const VERSION: &'static str;

    /// The libraries and runtime it uses, for the `start` reply (versions from the build).
    fn versions(&self) -> Vec<(&'static str, String)>;

    /// Refuse, when parsing, a valid configuration this library cannot honor (an optional feature).
    fn supports(&self, config: &Config) -> Result<(), Refusal>;

    /// The `roles` of the `start` reply: a decoder alone says `&["decode"]` and leaves out `encode`.
    fn roles(&self) -> &'static [&'static str] {
        &["encode", "decode"]
    }

    /// Encode one chunk; `image` already matches the configuration's component count.
    fn encode(&mut self, config: &Config, image: Image<'_>) -> Result<Vec<u8>, Refusal> {
        let _ = (config, image);
        Err(Refusal::new(None, "this library does not encode"))
    }

    /// Decode one stream to the samples of `chunk` (H x W x C, C order). Read the frame header
    /// with the library and check it with [`Geometry::check_frame`] before decoding pixels.
    fn decode(&mut self, config: &Config, stream: &[u8], chunk: Geometry) -> Result<Vec<u8>, Refusal>;

    /// Optional: [`Library::decode`] into `out` (exactly `chunk.samples()` bytes), the room of the reply in shared
    /// framing (see [`Codec::decode_into`]); `None` (the default) says it is not offered.
    fn decode_into(&mut self, config: &Config, stream: &[u8], chunk: Geometry, out: &mut [u8]) -> Option<Result<(), Refusal>> {
        let _ = (config, stream, chunk, out);
        None
    }
}
