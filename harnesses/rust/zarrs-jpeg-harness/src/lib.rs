//! The zarrs_jpeg codec as zarrs builds it: the codec object goes into zarrs' metadata type
//! and through `CodecChain::from_metadata`, so zarrs' codec registry finds the codec by its
//! name and every parse verdict is zarrs_jpeg's (or zarrs'), not this project's. Chunks go
//! through that codec chain, as zarrs' array API sends every chunk it stores or retrieves,
//! with the request's dtype and shape as zarrs data types and chunk shapes: the codec's own
//! checks decide about them, and so do zarrs' (a decoded chunk whose byte count is not the
//! chunk's is refused by the chain, `ArrayBytes::validate`, as a zarrs user sees it).
//!
//! Which backend the codec runs on is the feature the binary enables on zarrs_jpeg
//! (`zarrs-jpeg-turbo`: the default, libjpeg-turbo; `zarrs-jpeg-rust`: `backend-rust`); this
//! crate enables none, so that each binary's build decides.

use std::num::NonZeroU64;
use std::sync::Arc;

use harness_versions as locked;
use serde_json::Value;
use zarr_jpeg_conformance_harness::{Codec, Refusal};
use zarrs::array::{ArrayBytes, ArrayToBytesCodecTraits, CodecChain, CodecOptions, DataType, FillValue};
use zarrs::metadata::v3::MetadataV3;

/// One binary's zarrs_jpeg build: TURBO names it, `libraries` are the backend's versions.
pub struct ZarrsJpeg<const TURBO: bool> {
    pub libraries: Vec<(&'static str, String)>,
}

/// The codec a parse built: the chain zarrs' array API runs each chunk through (here its one codec).
pub type Handle = Arc<CodecChain>;

fn refusal(what: &str, error: impl std::fmt::Display, exception: &str) -> Refusal {
    Refusal::new(None, format!("{what}: {error}")).exception(exception)
}

/// A chunk shape as zarrs takes it: every axis at least 1 (`NonZeroU64`).
fn chunk_shape(shape: &[u64]) -> Result<Vec<NonZeroU64>, Refusal> {
    shape.iter().map(|&n| NonZeroU64::new(n)).collect::<Option<Vec<_>>>().ok_or_else(|| {
        Refusal::new(
            None,
            format!(
                "zarrs cannot represent chunk shape {shape:?}: its chunk shapes are NonZeroU64, a 0-length axis has no value"
            ),
        )
        .exception("NonZeroU64")
    })
}

/// The request's dtype as zarrs' data type registry makes it from its v3 name.
fn data_type(dtype: &str) -> Result<(DataType, FillValue), Refusal> {
    let data_type = DataType::from_metadata(&MetadataV3::new(dtype))
        .map_err(|err| refusal(&format!("zarrs has no data type {dtype:?}"), err, "PluginCreateError"))?;
    let size = zarr_jpeg_conformance_harness::itemsize(dtype).unwrap_or(1);
    Ok((data_type, FillValue::new(vec![0; size])))
}

impl<const TURBO: bool> Codec for ZarrsJpeg<TURBO> {
    const NAME: &'static str = if TURBO { "zarrs-jpeg-turbo" } else { "zarrs-jpeg-rust" };
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    type Handle = Handle;

    fn versions(&self) -> Vec<(&'static str, String)> {
        let mut versions = vec![
            ("zarrs_jpeg", locked::version("zarrs_jpeg")),
            ("zarrs", locked::version("zarrs")),
            // The codec type zarrs_jpeg's features chose: TurboCodec, or SplitCodec<encoder, decoder>.
            ("backend", std::any::type_name::<zarrs_jpeg::JpegCodec>().replace("zarrs_jpeg::codec::", "")),
            ("rustc", locked::RUSTC.into()),
            (
                "parse",
                format!(
                    "zarrs_jpeg {} through zarrs {}'s codec registry",
                    locked::version("zarrs_jpeg"),
                    locked::version("zarrs")
                ),
            ),
        ];
        versions.extend(self.libraries.iter().cloned());
        versions
    }

    fn kind(&self) -> &'static str {
        "codec"
    }

    fn parse(&mut self, codec: &Value) -> Result<Handle, Refusal> {
        let metadata: MetadataV3 = serde_json::from_value(codec.clone())
            .map_err(|err| refusal("not a zarrs codec metadata object", err, "serde_json::Error"))?;
        let chain = CodecChain::from_metadata(&[metadata]).map_err(|err| refusal("zarrs", err, "PluginCreateError"))?;
        Ok(Arc::new(chain))
    }

    fn encode(&mut self, codec: &Handle, shape: &[u64], dtype: &str, samples: &[u8]) -> Result<Vec<u8>, Refusal> {
        let shape = chunk_shape(shape)?;
        let (data_type, fill_value) = data_type(dtype)?;
        let bytes = ArrayBytes::new_flen(samples.to_vec());
        let encoded = codec
            .encode(bytes, &shape, &data_type, &fill_value, &CodecOptions::default())
            .map_err(|err| refusal("zarrs_jpeg", err, "CodecError"))?;
        Ok(encoded.into_owned())
    }

    fn decode(&mut self, codec: &Handle, stream: &[u8], shape: &[u64]) -> Result<Vec<u8>, Refusal> {
        let shape = chunk_shape(shape)?;
        let (data_type, fill_value) = data_type("uint8")?;
        let decoded = codec
            .decode(stream.to_vec().into(), &shape, &data_type, &fill_value, &CodecOptions::default())
            .map_err(|err| refusal("zarrs_jpeg", err, "CodecError"))?;
        let fixed =
            decoded.into_fixed().map_err(|err| refusal("zarrs_jpeg decoded to variable-length bytes", err, "CodecError"))?;
        Ok(fixed.into_owned())
    }
}

/// The store commands of a zarrs_jpeg binary, for the store interop table (report/stores_table.py):
///
///     zarrs-jpeg-turbo write-store DIR DATA SPEC   # build the array as a zarrs user does (ArrayBuilder with the
///                                                  # codec zarrs' registry makes from SPEC's codec object), store
///                                                  # its zarr.json as zarrs writes it and DATA (uint8, C order)
///     zarrs-jpeg-turbo read-store DIR OUT          # read the whole array of DIR into OUT
///
/// SPEC is JSON: `{"shape": [...], "chunks": [...], "shards": [...] or null, "codec": {...}}`.
/// `None` when the arguments are not a store command (the binary then speaks the protocol);
/// otherwise the exit status: 0, or 1 with zarrs' error on stderr.
pub fn store_command(args: &[String]) -> Option<i32> {
    let outcome = match args {
        [verb, dir, data, spec] if verb == "write-store" => write_store(dir, data, spec),
        [verb, dir, out] if verb == "read-store" => read_store(dir, out),
        _ => return None,
    };
    Some(match outcome {
        Ok(()) => 0,
        Err(message) => {
            eprintln!("{message}");
            1
        }
    })
}

fn store(dir: &str) -> Result<Arc<zarrs::filesystem::FilesystemStore>, String> {
    let store =
        zarrs::filesystem::FilesystemStore::new(dir).map_err(|err| format!("zarrs cannot open the store {dir}: {err}"))?;
    Ok(Arc::new(store))
}

fn shape_of(spec: &Value, key: &str) -> Result<Option<Vec<u64>>, String> {
    match spec.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => serde_json::from_value(value.clone()).map(Some).map_err(|err| format!("spec {key}: {err}")),
    }
}

fn write_store(dir: &str, data: &str, spec: &str) -> Result<(), String> {
    let spec: Value = serde_json::from_str(spec).map_err(|err| format!("the spec is not JSON: {err}"))?;
    let shape = shape_of(&spec, "shape")?.ok_or("the spec has no shape")?;
    let chunks = shape_of(&spec, "chunks")?.ok_or("the spec has no chunks")?;
    let shards = shape_of(&spec, "shards")?;
    let codec =
        ZarrsJpeg::<true> { libraries: vec![] }.parse(spec.get("codec").unwrap_or(&Value::Null)).map_err(|r| r.message)?;
    let mut builder = zarrs::array::ArrayBuilder::new(
        shape.clone(),
        shards.clone().unwrap_or(chunks.clone()),
        zarrs::array::data_type::uint8(),
        0u8,
    );
    builder.array_to_bytes_codec(codec.array_to_bytes_codec().clone());
    if shards.is_some() {
        builder.subchunk_shape(chunks);
    }
    let array = builder.build(store(dir)?, "/").map_err(|err| format!("zarrs cannot create the array: {err}"))?;
    array.store_metadata().map_err(|err| format!("zarrs cannot write zarr.json: {err}"))?;
    let samples = std::fs::read(data).map_err(|err| format!("cannot read {data}: {err}"))?;
    let subset = zarrs::array::ArraySubset::new_with_shape(shape);
    array.store_array_subset(&subset, samples).map_err(|err| format!("zarrs cannot write the array: {err}"))
}

fn read_store(dir: &str, out: &str) -> Result<(), String> {
    let array = zarrs::array::Array::open(store(dir)?, "/").map_err(|err| format!("zarrs cannot open the array: {err}"))?;
    let subset = zarrs::array::ArraySubset::new_with_shape(array.shape().to_vec());
    let samples: Vec<u8> = array.retrieve_array_subset(&subset).map_err(|err| format!("zarrs cannot read the array: {err}"))?;
    std::fs::write(out, samples).map_err(|err| format!("cannot write {out}: {err}"))
}
