//! What the Rust harnesses of zarr-jpeg-conformance share, so that each library's file holds
//! only the calls into that library: the harness protocol (JSON lines, and the binary framing
//! a client may offer), the spec's parse rules for the codec object, the chunk-shape table
//! and the check that a stream's frame fits the chunk. Protocol: `docs/protocol.md` and
//! `schema/protocol/v1.schema.json` in the project.
//!
//! A harness implements [`Library`] and calls [`run`] from `main`.

mod chunk;
mod config;
mod protocol;

pub use chunk::{itemsize, Geometry, Image};
pub use config::{parse_codec, ColorSpace, Config};
pub use protocol::{run, run_codec, serve, serve_codec, Framing, SpecParse};

/// Versions of the packages this workspace was built from (its Cargo.lock) and of rustc.
pub mod locked {
    include!(concat!(env!("OUT_DIR"), "/locked.rs"));

    /// The locked version of `package`; a typo is a bug of the harness, found at its first start.
    pub fn version(package: &str) -> String {
        match LOCKED.iter().find(|(name, _)| *name == package) {
            Some((_, version)) => version.to_string(),
            None => panic!("{package} is not in the workspace's Cargo.lock"),
        }
    }
}

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
}

/// One JPEG library behind the protocol. The shared code has already applied the spec's parse
/// rules to the configuration and the chunk-shape table to the chunk; what is left is the
/// library's own work and its own refusals.
pub trait Library {
    /// The `--impl` name and the `name` of the `start` reply.
    const NAME: &'static str;

    /// The libraries and runtime it uses, for the `start` reply (versions from the build).
    fn versions(&self) -> Vec<(&'static str, String)>;

    /// Refuse, when parsing, a valid configuration this library cannot honor (an optional feature).
    fn supports(&self, config: &Config) -> Result<(), Refusal>;

    /// Encode one chunk; `image` already matches the configuration's component count.
    fn encode(&mut self, config: &Config, image: Image<'_>) -> Result<Vec<u8>, Refusal>;

    /// Decode one stream to the samples of `chunk` (H x W x C, C order). Read the frame header
    /// with the library and check it with [`Geometry::check_frame`] before decoding pixels.
    fn decode(&mut self, config: &Config, stream: &[u8], chunk: Geometry) -> Result<Vec<u8>, Refusal>;
}
