//! The harness protocol, version 1: requests on stdin, replies on stdout.
//!
//! Every message is a JSON line until the client's `start` offers `"framings": ["json",
//! "binary"]`; the harness then answers `"framing": "binary"` and from the next request on
//! each message is a frame: a JSON header line, followed by exactly N raw bytes when the header
//! has `"payload": N`. The payload is what JSON lines carry as base64: the samples of an encode
//! request or decode reply (C order), the stream of a decode request or encode reply.
//!
//! When `start` also offers `"shared"` with a `"region"` (a memory region of the client's, `{"path", "size"}`) that
//! this process can map, the harness answers `"framing": "shared"`: frames as in binary framing, except that a
//! request header with `"at"` has its payload in the region at that offset (nothing follows it on stdin), and a
//! request with `"reply_at"` and `"reply_room"` lets the reply's payload go there (`"at"` in the reply header) when
//! it fits, instead of on stdout.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;
use std::time::Instant;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use serde_json::{json, Map, Value};

use crate::chunk::{itemsize, show, wire_shape};
use crate::{parse_codec, Codec, Config, Failure, Geometry, Image, Library, Refusal, PROTOCOL};

/// Where this project's client puts a reply's room: this far past a multiple of `ROOM_ALIGN` (`protocol/shared.py`).
const ROOM_ALIGN: usize = 64;
const ROOM_SKEW: usize = 16;

/// Bound of a bench request: a client's slip must not hold the harness for hours.
const MAX_REPEAT: u64 = 100_000;
/// The most a request's payload may hold. The largest chunk the suites send is a few MB; a
/// header announcing more is a broken client, and its bytes are skipped, not allocated.
const MAX_PAYLOAD: u64 = 1 << 30;
/// Cap on the panic text sent back as `trace`, as the protocol asks.
const TRACE_CAP: usize = 4096;

/// Bytes of stdin read ahead. A payload at least this large, once the buffer holds none of it,
/// is read straight into its own vector; with a buffer larger than a payload (a 192 KiB chunk)
/// every payload would be copied twice, from the pipe into the buffer and from it into the vector.
const INPUT_BUFFER: usize = 64 << 10;
/// Bytes of replies gathered before a write: a header line and small replies. A payload this
/// large or larger goes to the pipe as it is, not copied into the buffer first.
const OUTPUT_BUFFER: usize = 64 << 10;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    Json,
    Binary,
    /// Binary frames whose payloads may lie in the client's memory region.
    Shared,
}

/// The client's memory region of shared framing, mapped for the rest of the process: it is never unmapped, so the
/// slices of it handed out live as long as the process does.
struct Region {
    start: *mut u8,
    len: u64,
}

impl Region {
    fn map(path: &str, len: u64) -> io::Result<Region> {
        let file = OpenOptions::new().read(true).write(true).open(path)?;
        if len == 0 || file.metadata()?.len() < len || usize::try_from(len).is_err() {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("the region at {path} has not {len} bytes")));
        }
        // SAFETY: a fresh shared mapping of an open file, of no more than its length; the file may be closed after.
        let start = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len as usize,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        if start == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Region { start: start.cast(), len })
    }

    /// The `n` bytes at `at`, if they lie inside the region.
    fn slice(&self, at: u64, n: u64) -> Option<&'static [u8]> {
        if at.checked_add(n)? > self.len {
            return None;
        }
        // SAFETY: inside the mapping, which is never unmapped; the client leaves a request's bytes alone until it is answered.
        Some(unsafe { std::slice::from_raw_parts(self.start.add(at as usize), n as usize) })
    }

    /// The `n` bytes at `at` to write into, if they lie inside the region and not over `request` (the span of the
    /// request's payload in the region, which is read while they are written).
    fn room_mut(&self, at: u64, n: u64, request: Option<(u64, u64)>) -> Option<&'static mut [u8]> {
        let end = at.checked_add(n)?;
        if end > self.len || request.is_some_and(|(start, len)| start < end && at < start.saturating_add(len)) {
            return None;
        }
        // SAFETY: inside the mapping, which is never unmapped, and apart from every other slice this request hands out;
        // the client leaves the room it offered alone until the reply.
        Some(unsafe { std::slice::from_raw_parts_mut(self.start.add(at as usize), n as usize) })
    }

    /// Write `bytes` at `at` if they fit in the `room` there, and the room lies inside the region.
    fn put(&self, at: u64, room: u64, bytes: &[u8]) -> bool {
        if bytes.len() as u64 > room || at.checked_add(room).map_or(true, |end| end > self.len) {
            return false;
        }
        // SAFETY: inside the mapping (checked above), which nothing else of this process writes.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.start.add(at as usize), bytes.len()) };
        true
    }
}

/// What an `ok` reply carries besides its JSON members.
enum Payload {
    None,
    /// A JPEG stream: `data` in JSON lines.
    Stream(Vec<u8>),
    /// Decoded samples: `chunk.data` in JSON lines.
    Chunk {
        shape: Vec<u64>,
        samples: Vec<u8>,
    },
    /// Decoded samples written straight into the room the request offered (shared framing): `n` bytes at `at`.
    Placed {
        shape: Vec<u64>,
        at: u64,
        n: u64,
    },
}

struct Reply {
    members: Vec<(&'static str, Value)>,
    payload: Payload,
}

impl Reply {
    fn ok(members: Vec<(&'static str, Value)>, payload: Payload) -> Result<Reply, Failure> {
        Ok(Reply { members, payload })
    }
}

thread_local! {
    /// What the panic hook saw of the last panic on this thread: the `trace` of its error reply.
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Keep each panic's text for the reply, and still print it to stderr as Rust does.
fn keep_panic_text() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default_hook = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            LAST_PANIC.with(|last| *last.borrow_mut() = Some(info.to_string()));
            default_hook(info);
        }));
    });
}

/// Serve the protocol on stdin and stdout until `stop` or end of input; the exit status.
///
/// Whatever else writes to stdout (a library, a stray `println!`) goes to stderr instead: the
/// protocol keeps a private copy of the real stdout.
pub fn run<L: Library>(library: L) -> i32 {
    run_codec(SpecParse(library))
}

/// [`run`] for a codec that parses its configuration and checks its chunks itself.
pub fn run_codec<C: Codec>(codec: C) -> i32 {
    // SAFETY: fds 1 and 2 are open for the process's whole life; the dup is owned by `output` only.
    let output = unsafe {
        let protocol_fd = libc::dup(1);
        if protocol_fd < 0 || libc::dup2(2, 1) < 0 {
            eprintln!("cannot set stdout aside for the protocol: {}", io::Error::last_os_error());
            return 1;
        }
        File::from_raw_fd(protocol_fd)
    };
    let input = BufReader::with_capacity(INPUT_BUFFER, io::stdin().lock());
    match serve_codec(codec, input, BufWriter::with_capacity(OUTPUT_BUFFER, output)) {
        Ok(()) => 0,
        Err(err) => {
            eprintln!("{}: {err}", C::NAME);
            1
        }
    }
}

/// Serve the protocol on any reader and writer until `stop` or end of input.
pub fn serve<L: Library, R: BufRead, W: Write>(library: L, input: R, output: W) -> io::Result<()> {
    serve_codec(SpecParse(library), input, output)
}

/// [`serve`] for a [`Codec`].
pub fn serve_codec<C: Codec, R: BufRead, W: Write>(codec: C, mut input: R, mut output: W) -> io::Result<()> {
    keep_panic_text();
    let mut session =
        Session { codec, started: false, stopped: false, framing: Framing::Json, handles: HashMap::new(), region: None };
    let mut line = Vec::new();
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            return Ok(());
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let request = serde_json::from_slice::<Value>(&line);
        // The framing in force when the request was read decides whether bytes follow its header.
        let framing = session.framing;
        let payload = match (&request, framing) {
            (Ok(Value::Object(header)), Framing::Shared) if header.contains_key("at") => session.in_region(header),
            (Ok(Value::Object(header)), Framing::Binary | Framing::Shared) => {
                read_payload(&mut input, header.get("payload"))?.map(|bytes| bytes.map(Cow::Owned))
            }
            _ => Ok(None),
        };
        // Where the reply's payload may go instead of stdout (shared framing).
        let room = match (&request, framing) {
            (Ok(Value::Object(header)), Framing::Shared) => {
                match (header.get("reply_at").and_then(Value::as_u64), header.get("reply_room").and_then(Value::as_u64)) {
                    (Some(at), Some(room)) => Some((at, room)),
                    _ => None,
                }
            }
            _ => None,
        };
        let (seq, result) = match (request, payload) {
            (Ok(Value::Object(request)), Ok(payload)) => session.handle(&request, payload, room),
            (Ok(Value::Object(request)), Err(failure)) => (request_seq(&request), Err(failure)),
            (Ok(other), _) => (None, Err(Failure::bad_request(format!("the request is not a JSON object: {other}")))),
            (Err(err), _) => (None, Err(Failure::bad_request(format!("the request is not JSON: {err}")))),
        };
        let room = room.and_then(|(at, room)| session.region.as_ref().map(|region| (region, at, room)));
        write_reply(&mut output, seq, result, framing, room)?;
        output.flush()?;
        if session.stopped {
            return Ok(());
        }
    }
}

/// The payload a frame header announces; the client's mistake (a bad or huge length) is an
/// `error` reply, after the announced bytes are skipped so that the next header is found.
fn read_payload<R: BufRead>(input: &mut R, length: Option<&Value>) -> io::Result<Result<Option<Vec<u8>>, Failure>> {
    let Some(length) = length else { return Ok(Ok(None)) };
    let Some(n) = length.as_u64() else {
        return Ok(Err(Failure::bad_request(format!("\"payload\" must be a byte count (an integer >= 0), got {length}"))));
    };
    if n > MAX_PAYLOAD {
        io::copy(&mut input.take(n), &mut io::sink())?;
        return Ok(Err(Failure::bad_request(format!("a payload of {n} bytes is over this harness's limit of {MAX_PAYLOAD}"))));
    }
    let mut bytes = vec![0; n as usize];
    input.read_exact(&mut bytes)?;
    Ok(Ok(Some(bytes)))
}

/// The uint8 samples (bytes) of a chunk of `shape`, if they can be counted.
fn sample_count(shape: &[u64]) -> Option<u64> {
    shape.iter().try_fold(1u64, |n, &axis| n.checked_mul(axis))
}

fn request_seq(request: &Map<String, Value>) -> Option<u64> {
    request.get("seq").and_then(Value::as_u64)
}

/// A [`Library`] behind the spec's parse rules (this crate's `config`) and chunk-shape table:
/// what every library harness shares.
pub struct SpecParse<L>(pub L);

impl<L: Library> Codec for SpecParse<L> {
    const NAME: &'static str = L::NAME;
    const VERSION: &'static str = L::VERSION;
    type Handle = Config;

    fn versions(&self) -> Vec<(&'static str, String)> {
        let mut versions = self.0.versions();
        // The parse verdicts are the kit's, not the library's: said, so that a report
        // can show them once for every harness built on it.
        versions.push((
            "parse",
            concat!(env!("CARGO_PKG_NAME"), " ", env!("CARGO_PKG_VERSION"), " (the spec's rules in Rust)").into(),
        ));
        versions
    }

    fn kind(&self) -> &'static str {
        "library"
    }

    fn roles(&self) -> &'static [&'static str] {
        self.0.roles()
    }

    fn parse(&mut self, codec: &Value) -> Result<Config, Refusal> {
        let config = parse_codec(codec)?;
        self.0.supports(&config)?;
        Ok(config)
    }

    fn encode(&mut self, config: &Config, shape: &[u64], dtype: &str, samples: &[u8]) -> Result<Vec<u8>, Refusal> {
        let image = Image::of_chunk(config, shape, dtype, samples)?;
        self.0.encode(config, image)
    }

    fn decode(&mut self, config: &Config, stream: &[u8], shape: &[u64]) -> Result<Vec<u8>, Refusal> {
        let chunk = Geometry::of_chunk(shape)?;
        chunk.check_decoded(config, shape)?;
        self.0.decode(config, stream, chunk)
    }

    fn decode_into(&mut self, config: &Config, stream: &[u8], shape: &[u64], out: &mut [u8]) -> Option<Result<(), Refusal>> {
        let chunk = match Geometry::of_chunk(shape).and_then(|chunk| chunk.check_decoded(config, shape).map(|()| chunk)) {
            Ok(chunk) if chunk.samples() == out.len() => chunk,
            Ok(_) => return None, // a shape the table maps to another sample count: `decode` says what is wrong
            Err(refusal) => return Some(Err(refusal)),
        };
        self.0.decode_into(config, stream, chunk, out)
    }
}

struct Session<C: Codec> {
    codec: C,
    started: bool,
    stopped: bool,
    framing: Framing,
    handles: HashMap<String, C::Handle>,
    region: Option<Region>,
}

impl<C: Codec> Session<C> {
    fn handle(
        &mut self,
        request: &Map<String, Value>,
        payload: Option<Cow<'static, [u8]>>,
        room: Option<(u64, u64)>,
    ) -> (Option<u64>, Result<Reply, Failure>) {
        let Some(seq) = request_seq(request) else {
            return (None, Err(Failure::bad_request(format!("the request has no integer seq: {}", show(request.get("seq"))))));
        };
        let op = request.get("op").and_then(Value::as_str).unwrap_or("");
        LAST_PANIC.with(|last| last.borrow_mut().take());
        let result = panic::catch_unwind(AssertUnwindSafe(|| self.dispatch(op, request, payload, room)));
        let result = result.unwrap_or_else(|panic| {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".into());
            let trace = LAST_PANIC.with(|last| last.borrow_mut().take()).unwrap_or_default();
            Err(Failure::Panic { message: format!("{} panicked during {op}: {what}", C::NAME), trace })
        });
        (Some(seq), result)
    }

    fn dispatch(
        &mut self,
        op: &str,
        request: &Map<String, Value>,
        payload: Option<Cow<'static, [u8]>>,
        room: Option<(u64, u64)>,
    ) -> Result<Reply, Failure> {
        match op {
            "start" => return self.start(request),
            "stop" => {
                self.stopped = true;
                return Reply::ok(vec![], Payload::None);
            }
            _ if !self.started && matches!(op, "parse" | "encode" | "decode" | "bench" | "build") => {
                return Err(Failure::bad_request(format!("{op:?} before \"start\"")))
            }
            _ => {}
        }
        match op {
            "parse" => {
                let codec = request.get("codec").ok_or_else(|| Failure::bad_request("a parse request needs a codec"))?;
                let config = self.codec.parse(codec)?;
                let handle = (self.handles.len() + 1).to_string();
                self.handles.insert(handle.clone(), config);
                Reply::ok(vec![("handle", json!(handle))], Payload::None)
            }
            "encode" => {
                let (handle, shape, dtype, samples) = self.encode_input(request, payload)?;
                let stream = self.codec.encode(&self.handles[&handle], &shape, &dtype, &samples)?;
                Reply::ok(vec![], Payload::Stream(stream))
            }
            "decode" => {
                // A room is offered only in shared framing; the request's own payload may lie in the region too.
                let within = request.get("at").and_then(Value::as_u64).zip(request.get("payload").and_then(Value::as_u64));
                let (handle, shape, stream) = self.decode_input(request, payload)?;
                let fits = room.zip(sample_count(&shape)).filter(|&((_, room), n)| n > 0 && n <= room);
                if let Some(((at, _), n)) = fits {
                    let out = self.region.as_ref().and_then(|region| region.room_mut(at, n, within));
                    if let Some(done) = out.and_then(|out| self.codec.decode_into(&self.handles[&handle], &stream, &shape, out)) {
                        done?;
                        return Reply::ok(vec![], Payload::Placed { shape, at, n });
                    }
                }
                let samples = self.decode(&handle, &stream, &shape)?;
                Reply::ok(vec![], Payload::Chunk { shape, samples })
            }
            "bench" => self.bench(request, payload),
            "build" if self.codec.roles().contains(&"build") => {
                let options = request.get("options").ok_or_else(|| Failure::bad_request("a build request needs options"))?;
                Reply::ok(vec![("codec", self.codec.build(options)?)], Payload::None)
            }
            _ => Err(Failure::bad_request(format!("unknown op {}", show(request.get("op"))))),
        }
    }

    /// The handle, shape, dtype and samples of an encode request (or a bench of one).
    fn encode_input(
        &self,
        request: &Map<String, Value>,
        payload: Option<Cow<'static, [u8]>>,
    ) -> Result<(String, Vec<u64>, String, Cow<'static, [u8]>), Failure> {
        let handle = self.handle_of(request)?;
        let chunk = request.get("chunk").and_then(Value::as_object);
        let chunk = chunk.ok_or_else(|| Failure::bad_request("an encode request needs a chunk object"))?;
        let shape = wire_shape(chunk.get("shape"), "chunk.shape")?;
        let dtype = chunk.get("dtype").and_then(Value::as_str).unwrap_or("");
        let size = itemsize(dtype).ok_or_else(|| Failure::bad_request(format!("unknown dtype {}", show(chunk.get("dtype")))))?;
        let samples = self.bytes(payload, chunk.get("data"), "chunk.data")?;
        let expected = shape.iter().try_fold(size as u64, |n, &axis| n.checked_mul(axis));
        if expected != Some(samples.len() as u64) {
            return Err(Failure::bad_request(format!(
                "the chunk holds {} bytes, shape {shape:?} of {dtype} needs {}",
                samples.len(),
                expected.map_or("more than 2^64".into(), |n| n.to_string())
            )));
        }
        Ok((handle, shape, dtype.to_string(), samples))
    }

    /// The handle, chunk shape and stream of a decode request (or a bench of one).
    fn decode_input(
        &self,
        request: &Map<String, Value>,
        payload: Option<Cow<'static, [u8]>>,
    ) -> Result<(String, Vec<u64>, Cow<'static, [u8]>), Failure> {
        let handle = self.handle_of(request)?;
        let shape = wire_shape(request.get("chunk_shape"), "chunk_shape")?;
        let stream = self.bytes(payload, request.get("data"), "data")?;
        Ok((handle, shape, stream))
    }

    fn decode(&mut self, handle: &str, stream: &[u8], shape: &[u64]) -> Result<Vec<u8>, Failure> {
        let samples = self.codec.decode(&self.handles[handle], stream, shape)?;
        // uint8 samples: one byte each.
        if Some(samples.len() as u64) != sample_count(shape) {
            return Err(Failure::Error {
                message: format!("the library returned {} samples for a {shape:?} chunk", samples.len()),
                exception: "WrongSize",
            });
        }
        Ok(samples)
    }

    /// What the encode or decode request named by `of` does, `repeat` times, each run timed:
    /// the codec's speed in this process, without the protocol's costs.
    fn bench(&mut self, request: &Map<String, Value>, payload: Option<Cow<'static, [u8]>>) -> Result<Reply, Failure> {
        let repeat = match request.get("repeat").and_then(Value::as_u64) {
            Some(n @ 1..=MAX_REPEAT) => n,
            _ => {
                return Err(Failure::bad_request(format!(
                    "repeat must be 1 to {MAX_REPEAT}, got {}",
                    show(request.get("repeat"))
                )))
            }
        };
        let mut seconds = Vec::with_capacity(repeat as usize);
        match request.get("of").and_then(Value::as_str) {
            Some("encode") => {
                let (handle, shape, dtype, samples) = self.encode_input(request, payload)?;
                for _ in 0..repeat {
                    let started = Instant::now();
                    self.codec.encode(&self.handles[&handle], &shape, &dtype, &samples)?;
                    seconds.push(started.elapsed().as_secs_f64());
                }
            }
            Some("decode") => {
                let (handle, shape, stream) = self.decode_input(request, payload)?;
                // A codec that decodes into a room is timed doing that, after a first decode (its size what the
                // stream holds, not what the request says), into memory that lies as this project's client lays out a
                // room (16 bytes past a multiple of 64): libjpeg-turbo's speed depends on where its rows start (it
                // writes rows at multiples of 32 with non-temporal stores).
                let mut spare: Option<Vec<u8>> = None;
                let mut into = true;
                for _ in 0..repeat {
                    let started = Instant::now();
                    let mut decoded = None;
                    match spare.as_mut().filter(|_| into) {
                        Some(memory) => {
                            let n = memory.len() - 2 * ROOM_ALIGN;
                            let skip = (ROOM_SKEW + ROOM_ALIGN - memory.as_ptr() as usize % ROOM_ALIGN) % ROOM_ALIGN;
                            let out = &mut memory[skip..skip + n];
                            match self.codec.decode_into(&self.handles[&handle], &stream, &shape, out) {
                                Some(done) => done?,
                                None => {
                                    into = false; // not offered: decode, as the protocol path then does
                                    self.decode(&handle, &stream, &shape)?;
                                }
                            }
                        }
                        None => decoded = Some(self.decode(&handle, &stream, &shape)?.len()),
                    }
                    seconds.push(started.elapsed().as_secs_f64());
                    if let (Some(n), true, None) = (decoded, into, &spare) {
                        spare = Some(vec![0u8; n + 2 * ROOM_ALIGN]);
                    }
                }
            }
            _ => return Err(Failure::bad_request(format!("bench of must be encode or decode, got {}", show(request.get("of"))))),
        }
        Reply::ok(vec![("seconds", json!(seconds))], Payload::None)
    }

    fn start(&mut self, request: &Map<String, Value>) -> Result<Reply, Failure> {
        if request.get("protocol").and_then(Value::as_u64) != Some(PROTOCOL) {
            return Err(Failure::bad_request(format!("this harness speaks protocol 1, not {}", show(request.get("protocol")))));
        }
        let offered = request.get("framings").and_then(Value::as_array);
        let binary = offered.is_some_and(|framings| framings.iter().any(|f| f == "binary"));
        if offered.is_some_and(|framings| framings.iter().any(|f| f == "shared")) && self.region.is_none() {
            let region = request.get("region");
            let (path, size) = (region.and_then(|r| r.get("path")).and_then(Value::as_str), region.and_then(|r| r.get("size")));
            if let (Some(path), Some(size)) = (path, size.and_then(Value::as_u64)) {
                // A region this process cannot map leaves binary framing, which needs none.
                self.region = Region::map(path, size).map_err(|err| eprintln!("shared framing not chosen: {err}")).ok();
            }
        }
        let shared = self.region.is_some() && offered.is_some_and(|framings| framings.iter().any(|f| f == "shared"));
        let versions: Map<String, Value> =
            self.codec.versions().into_iter().map(|(name, version)| (name.to_string(), Value::String(version))).collect();
        let mut members = vec![
            ("protocol", json!(PROTOCOL)),
            ("name", json!(C::NAME)),
            ("version", json!(C::VERSION)),
            ("roles", json!(self.codec.roles())),
            ("versions", Value::Object(versions)),
            ("kind", json!(self.codec.kind())),
            ("language", json!("Rust")),
        ];
        if shared {
            members.push(("framing", json!("shared")));
        } else if binary {
            members.push(("framing", json!("binary")));
        }
        self.started = true;
        // The reply to start is still a JSON line; the switch applies from the next request.
        self.framing = if shared {
            Framing::Shared
        } else if binary {
            Framing::Binary
        } else {
            Framing::Json
        };
        Reply::ok(members, Payload::None)
    }

    /// A shared-framing request's payload where its header says it lies in the region.
    fn in_region(&self, header: &Map<String, Value>) -> Result<Option<Cow<'static, [u8]>>, Failure> {
        let (at, n) = (header.get("at").and_then(Value::as_u64), header.get("payload").and_then(Value::as_u64));
        match (at, n, &self.region) {
            (Some(at), Some(n), Some(region)) => region.slice(at, n).map(|bytes| Some(Cow::Borrowed(bytes))).ok_or_else(|| {
                Failure::bad_request(format!("a payload of {n} bytes at {at} is outside the region of {} bytes", region.len))
            }),
            _ => Err(Failure::bad_request(format!(
                "\"at\" and \"payload\" must be byte counts, got {} and {}",
                show(header.get("at")),
                show(header.get("payload"))
            ))),
        }
    }

    /// The request's handle, known to this session.
    fn handle_of(&self, request: &Map<String, Value>) -> Result<String, Failure> {
        match request.get("handle").and_then(Value::as_str) {
            Some(handle) if self.handles.contains_key(handle) => Ok(handle.to_string()),
            _ => Err(Failure::bad_request(format!("unknown handle {}", show(request.get("handle"))))),
        }
    }

    /// The request's bytes: its frame's payload, or the base64 member of a JSON line.
    fn bytes(
        &self,
        payload: Option<Cow<'static, [u8]>>,
        base64: Option<&Value>,
        what: &str,
    ) -> Result<Cow<'static, [u8]>, Failure> {
        match self.framing {
            Framing::Binary | Framing::Shared => {
                payload.ok_or_else(|| Failure::bad_request(format!("the frame has no payload (the {what} bytes)")))
            }
            Framing::Json => {
                let text =
                    base64.and_then(Value::as_str).ok_or_else(|| Failure::bad_request(format!("{what} must be base64 text")))?;
                BASE64.decode(text).map(Cow::Owned).map_err(|err| Failure::bad_request(format!("{what} is not base64: {err}")))
            }
        }
    }
}

fn write_reply<W: Write>(
    output: &mut W,
    seq: Option<u64>,
    result: Result<Reply, Failure>,
    framing: Framing,
    room: Option<(&Region, u64, u64)>,
) -> io::Result<()> {
    let mut members = vec![("seq", json!(seq))];
    let mut bytes = None;
    match result {
        Ok(reply) => {
            members.push(("status", json!("ok")));
            members.extend(reply.members);
            match (reply.payload, framing) {
                (Payload::None, _) => {}
                (Payload::Stream(stream), Framing::Json) => members.push(("data", json!(BASE64.encode(stream)))),
                (Payload::Stream(stream), Framing::Binary | Framing::Shared) => bytes = Some(stream),
                (Payload::Chunk { shape, samples }, Framing::Json) => {
                    members.push(("chunk", json!({"shape": shape, "dtype": "uint8", "data": BASE64.encode(samples)})))
                }
                (Payload::Chunk { shape, samples }, Framing::Binary | Framing::Shared) => {
                    members.push(("chunk", json!({"shape": shape, "dtype": "uint8"})));
                    bytes = Some(samples);
                }
                (Payload::Placed { shape, at, n }, _) => {
                    members.push(("chunk", json!({"shape": shape, "dtype": "uint8"})));
                    members.push(("payload", json!(n)));
                    members.push(("at", json!(at)));
                }
            }
        }
        Err(Failure::Rejected(Refusal { message, requirement, exception })) => {
            members.push(("status", json!("rejected")));
            let message = match requirement {
                Some(id) => format!("{message} [{id}]"),
                None => message,
            };
            members.push(("message", json!(message)));
            if let Some(id) = requirement {
                members.push(("requirement", json!(id)));
            }
            if let Some(name) = exception {
                members.push(("exception", json!(name)));
            }
        }
        Err(Failure::Error { message, exception }) => {
            members.push(("status", json!("error")));
            members.push(("message", json!(message)));
            members.push(("exception", json!(exception)));
        }
        Err(Failure::Panic { message, trace }) => {
            members.push(("status", json!("error")));
            members.push(("message", json!(message)));
            members.push(("exception", json!("panic")));
            let start = trace.len().saturating_sub(TRACE_CAP);
            let start = (start..trace.len()).find(|&i| trace.is_char_boundary(i)).unwrap_or(trace.len());
            members.push(("trace", json!(&trace[start..])));
        }
    }
    if let Some(bytes) = &bytes {
        members.push(("payload", json!(bytes.len())));
    }
    // In shared framing the payload goes into the room the request offered, if it fits; else on stdout.
    if let (Some(data), Some((region, at, room))) = (&bytes, room) {
        if region.put(at, room, data) {
            members.push(("at", json!(at)));
            bytes = None;
        }
    }
    output.write_all(b"{")?;
    for (i, (key, value)) in members.iter().enumerate() {
        if i > 0 {
            output.write_all(b",")?;
        }
        serde_json::to_writer(&mut *output, key)?;
        output.write_all(b":")?;
        serde_json::to_writer(&mut *output, value)?;
    }
    output.write_all(b"}\n")?;
    if let Some(bytes) = bytes {
        output.write_all(&bytes)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Encodes to the samples reversed, decodes to the stream's bytes repeated: enough to see
    /// which bytes went where in either framing.
    struct Echo;

    impl Library for Echo {
        const NAME: &'static str = "echo";
        const VERSION: &'static str = "0.0.1";

        fn versions(&self) -> Vec<(&'static str, String)> {
            vec![("echo", "1".into())]
        }

        fn supports(&self, config: &Config) -> Result<(), Refusal> {
            match config.encoded {
                crate::ColorSpace::Rgb => Err(Refusal::new(Some("JPEG-ECS-09"), "no rgb here")),
                _ => Ok(()),
            }
        }

        fn encode(&mut self, config: &Config, image: Image<'_>) -> Result<Vec<u8>, Refusal> {
            if config.quality == 13 {
                panic!("unlucky quality");
            }
            Ok(image.samples.iter().rev().copied().collect())
        }

        fn decode(&mut self, _config: &Config, stream: &[u8], chunk: Geometry) -> Result<Vec<u8>, Refusal> {
            if stream.is_empty() {
                return Err(Refusal::new(Some("JPEG-DEC-01"), "empty stream"));
            }
            Ok(stream.iter().copied().cycle().take(chunk.samples()).collect())
        }
    }

    const GRAY: &str = r#"{"name":"jpeg","configuration":{"quality":90,"encoded_color_space":"grayscale"}}"#;

    /// Replies to `input`: each a JSON header and the payload bytes that followed it on the output.
    fn exchange(input: &[u8]) -> Vec<(Value, Vec<u8>)> {
        exchange_with(Echo, input)
    }

    /// [`exchange`] with another library.
    fn exchange_with<L: Library>(library: L, input: &[u8]) -> Vec<(Value, Vec<u8>)> {
        let mut output = Vec::new();
        serve(library, input, &mut output).unwrap();
        let mut replies = Vec::new();
        let mut rest = &output[..];
        while !rest.is_empty() {
            let end = rest.iter().position(|&b| b == b'\n').expect("a header line");
            let header: Value = serde_json::from_slice(&rest[..end]).unwrap();
            // A payload in the region (shared framing) does not follow its header.
            let n =
                if header.get("at").is_some() { 0 } else { header.get("payload").and_then(Value::as_u64).unwrap_or(0) as usize };
            replies.push((header, rest[end + 1..end + 1 + n].to_vec()));
            rest = &rest[end + 1 + n..];
        }
        replies
    }

    fn lines(requests: &[String]) -> Vec<u8> {
        requests.iter().flat_map(|r| format!("{r}\n").into_bytes()).collect()
    }

    #[test]
    fn json_lines_carry_base64() {
        let replies = exchange(&lines(&[
            r#"{"seq":1,"op":"start","protocol":1}"#.into(),
            format!(r#"{{"seq":2,"op":"parse","codec":{GRAY}}}"#),
            r#"{"seq":3,"op":"encode","handle":"1","chunk":{"shape":[1,3],"dtype":"uint8","data":"AQID"}}"#.into(),
            r#"{"seq":4,"op":"decode","handle":"1","data":"CQg=","chunk_shape":[1,3,1]}"#.into(),
            r#"{"seq":5,"op":"stop"}"#.into(),
            r#"{"seq":6,"op":"stop"}"#.into(),
        ]));
        let start = &replies[0].0;
        assert_eq!(
            (start["name"].as_str(), start["kind"].as_str(), start["language"].as_str()),
            (Some("echo"), Some("library"), Some("Rust"))
        );
        assert!(start.get("framing").is_none(), "no binary framing unless offered: {start}");
        assert_eq!(start["versions"]["echo"], "1");
        assert!(start["versions"]["parse"].as_str().unwrap().starts_with("zarr-jpeg-conformance-harness "), "{start}");
        assert_eq!(replies[1].0, json!({"seq": 2, "status": "ok", "handle": "1"}));
        assert_eq!(replies[2].0, json!({"seq": 3, "status": "ok", "data": "AwIB"}));
        assert_eq!(
            replies[3].0,
            json!({"seq": 4, "status": "ok", "chunk": {"shape": [1, 3, 1], "dtype": "uint8", "data": "CQgJ"}})
        );
        assert_eq!(replies.len(), 5, "nothing is read after stop");
    }

    #[test]
    fn binary_framing_moves_the_bytes_into_payloads() {
        let mut input = lines(&[
            r#"{"seq":1,"op":"start","protocol":1,"framings":["json","binary"]}"#.into(),
            format!(r#"{{"seq":2,"op":"parse","codec":{GRAY}}}"#),
            r#"{"seq":3,"op":"encode","handle":"1","chunk":{"shape":[2,2],"dtype":"uint8"},"payload":4}"#.into(),
        ]);
        input.extend_from_slice(&[1, 2, 3, b'\n']); // payload bytes are raw: a newline among them is data
        input.extend_from_slice(b"{\"seq\":4,\"op\":\"decode\",\"handle\":\"1\",\"chunk_shape\":[1,5],\"payload\":2}\n\xff\xd8");
        input.extend_from_slice(b"{\"seq\":5,\"op\":\"decode\",\"handle\":\"1\",\"chunk_shape\":[1,5],\"payload\":0}\n");
        input.extend_from_slice(b"{\"seq\":6,\"op\":\"decode\",\"handle\":\"1\",\"chunk_shape\":[1,5]}\n");
        input.extend_from_slice(
            b"{\"seq\":7,\"op\":\"encode\",\"handle\":\"1\",\"chunk\":{\"shape\":[1],\"dtype\":\"uint8\"},\"payload\":\"x\"}\n",
        );
        input.extend_from_slice(b"{\"seq\":8,\"op\":\"stop\"}\n");
        let replies = exchange(&input);
        assert_eq!(replies[0].0["framing"], "binary");
        assert_eq!(replies[1].0, json!({"seq": 2, "status": "ok", "handle": "1"}), "replies without bytes are plain JSON");
        assert_eq!(replies[2], (json!({"seq": 3, "status": "ok", "payload": 4}), vec![b'\n', 3, 2, 1]));
        assert_eq!(
            replies[3],
            (
                json!({"seq": 4, "status": "ok", "chunk": {"shape": [1, 5], "dtype": "uint8"}, "payload": 5}),
                vec![0xff, 0xd8, 0xff, 0xd8, 0xff]
            )
        );
        assert_eq!(replies[4].0["status"], "rejected", "an empty payload is the library's to judge");
        assert_eq!(
            (replies[5].0["seq"].as_u64(), replies[5].0["status"].as_str()),
            (Some(6), Some("error")),
            "a decode frame needs its payload"
        );
        assert_eq!(
            (replies[6].0["seq"].as_u64(), replies[6].0["status"].as_str()),
            (Some(7), Some("error")),
            "a payload length must be a number"
        );
        assert_eq!(replies[7].0, json!({"seq": 8, "status": "ok"}));
    }

    #[test]
    fn shared_framing_reads_and_writes_payloads_in_the_region() {
        let path = std::env::temp_dir().join(format!("zarr-jpeg-conformance-region-{}", std::process::id()));
        let mut region = vec![0u8; 64];
        region[8..12].copy_from_slice(&[1, 2, 3, 4]);
        std::fs::write(&path, &region).unwrap();
        let start = format!(
            r#"{{"seq":1,"op":"start","protocol":1,"framings":["json","binary","shared"],"region":{{"path":{},"size":64}}}}"#,
            json!(path.to_str().unwrap())
        );
        let mut input = lines(&[
            start,
            format!(r#"{{"seq":2,"op":"parse","codec":{GRAY}}}"#),
            // in the region, the reply into its room
            r#"{"seq":3,"op":"encode","handle":"1","chunk":{"shape":[2,2],"dtype":"uint8"},"payload":4,"at":8,"reply_at":16,"reply_room":8}"#.into(),
            // the reply does not fit its room: on stdout
            r#"{"seq":4,"op":"decode","handle":"1","chunk_shape":[1,5],"payload":2,"at":8,"reply_at":16,"reply_room":4}"#.into(),
            // outside the region: an error, and the session goes on
            r#"{"seq":5,"op":"encode","handle":"1","chunk":{"shape":[2,2],"dtype":"uint8"},"payload":4,"at":62}"#.into(),
            r#"{"seq":6,"op":"encode","handle":"1","chunk":{"shape":[1,2],"dtype":"uint8"},"payload":2}"#.into(),
        ]);
        input.extend_from_slice(&[7, 9]); // without "at": on stdin, as in binary framing
        let replies = exchange(&input);
        let written = std::fs::read(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(replies[0].0["framing"], "shared");
        assert_eq!(replies[2], (json!({"seq": 3, "status": "ok", "payload": 4, "at": 16}), vec![]));
        assert_eq!(&written[16..20], &[4, 3, 2, 1], "the stream is in the room the request offered");
        assert_eq!(replies[3].0["payload"], 5);
        assert_eq!(replies[3].1, vec![1, 2, 1, 2, 1], "a reply larger than its room goes on stdout");
        assert_eq!((replies[4].0["seq"].as_u64(), replies[4].0["status"].as_str()), (Some(5), Some("error")));
        assert_eq!(replies[5], (json!({"seq": 6, "status": "ok", "payload": 2}), vec![9, 7]));

        // a region it cannot map: binary framing
        let replies = exchange(&lines(&[
            r#"{"seq":1,"op":"start","protocol":1,"framings":["json","binary","shared"],"region":{"path":"/nonexistent","size":64}}"#
                .into(),
        ]));
        assert_eq!(replies[0].0["framing"], "binary");
    }

    /// Echo, with `decode_into`: the stream's bytes plus 100, so that a reply shows which of the two decoded it.
    struct EchoInto;

    impl Library for EchoInto {
        const NAME: &'static str = "echo-into";
        const VERSION: &'static str = "0.0.1";

        fn versions(&self) -> Vec<(&'static str, String)> {
            Echo.versions()
        }

        fn supports(&self, config: &Config) -> Result<(), Refusal> {
            Echo.supports(config)
        }

        fn decode(&mut self, config: &Config, stream: &[u8], chunk: Geometry) -> Result<Vec<u8>, Refusal> {
            Echo.decode(config, stream, chunk)
        }

        fn decode_into(
            &mut self,
            _config: &Config,
            stream: &[u8],
            _chunk: Geometry,
            out: &mut [u8],
        ) -> Option<Result<(), Refusal>> {
            if stream == [0] {
                return Some(Err(Refusal::new(Some("JPEG-DEC-01"), "a zero stream")));
            }
            out.iter_mut().zip(stream.iter().cycle()).for_each(|(sample, byte)| *sample = byte + 100);
            Some(Ok(()))
        }
    }

    #[test]
    fn shared_framing_decodes_into_the_room_where_the_library_offers_it() {
        let path = std::env::temp_dir().join(format!("zarr-jpeg-conformance-room-{}", std::process::id()));
        let mut region = vec![0u8; 64];
        region[8..10].copy_from_slice(&[1, 2]);
        region[40] = 0;
        std::fs::write(&path, &region).unwrap();
        let start = format!(
            r#"{{"seq":1,"op":"start","protocol":1,"framings":["json","binary","shared"],"region":{{"path":{},"size":64}}}}"#,
            json!(path.to_str().unwrap())
        );
        let input = lines(&[
            start,
            format!(r#"{{"seq":2,"op":"parse","codec":{GRAY}}}"#),
            // the samples go straight into the room
            r#"{"seq":3,"op":"decode","handle":"1","chunk_shape":[1,5],"payload":2,"at":8,"reply_at":16,"reply_room":8}"#.into(),
            // a room over the request's own payload is not handed out: decoded into a vector, then put in the room
            r#"{"seq":4,"op":"decode","handle":"1","chunk_shape":[1,3],"payload":2,"at":8,"reply_at":6,"reply_room":3}"#.into(),
            // a room too small: decode, on stdout
            r#"{"seq":5,"op":"decode","handle":"1","chunk_shape":[1,5],"payload":2,"at":8,"reply_at":32,"reply_room":4}"#.into(),
            // a refusal from decode_into is the reply
            r#"{"seq":6,"op":"decode","handle":"1","chunk_shape":[1,2],"payload":1,"at":40,"reply_at":48,"reply_room":8}"#.into(),
        ]);
        let replies = exchange_with(EchoInto, &input);
        let written = std::fs::read(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(
            replies[2],
            (json!({"seq": 3, "status": "ok", "chunk": {"shape": [1, 5], "dtype": "uint8"}, "payload": 5, "at": 16}), vec![])
        );
        assert_eq!(&written[16..21], &[101, 102, 101, 102, 101], "decode_into wrote the samples in the room");
        assert_eq!(replies[3].0["at"], 6);
        assert_eq!(&written[6..9], &[1, 2, 1], "an overlapping room is not handed out: decode ran, then the copy");
        assert_eq!(replies[4].1, vec![1, 2, 1, 2, 1], "too small a room: decode ran, the samples on stdout");
        assert_eq!(replies[5].0["status"], "rejected");
        assert_eq!(replies[5].0["requirement"], "JPEG-DEC-01");
    }

    #[test]
    fn bench_times_decode_into_where_the_library_offers_it() {
        // "AA==" is the stream [0]: EchoInto's decode_into refuses it, its decode (Echo's) does not.
        let input = lines(&[
            r#"{"seq":1,"op":"start","protocol":1}"#.into(),
            format!(r#"{{"seq":2,"op":"parse","codec":{GRAY}}}"#),
            r#"{"seq":3,"op":"bench","handle":"1","of":"decode","repeat":2,"data":"AA==","chunk_shape":[1,3]}"#.into(),
            r#"{"seq":4,"op":"bench","handle":"1","of":"decode","repeat":2,"data":"AQI=","chunk_shape":[1,3]}"#.into(),
        ]);
        let into = exchange_with(EchoInto, &input);
        assert_eq!(into[2].0["status"], "rejected", "decode_into was timed: its refusal ends the bench");
        assert_eq!(into[3].0["seconds"].as_array().map(Vec::len), Some(2));
        let plain = exchange_with(Echo, &input);
        assert_eq!(plain[2].0["seconds"].as_array().map(Vec::len), Some(2), "no decode_into: decode was timed");
    }

    #[test]
    fn a_huge_payload_is_skipped_not_allocated() {
        let mut input = lines(&[r#"{"seq":1,"op":"start","protocol":1,"framings":["binary"]}"#.into()]);
        input.extend_from_slice(format!("{{\"seq\":2,\"op\":\"decode\",\"payload\":{}}}\n", MAX_PAYLOAD + 1).as_bytes());
        // The skip stops at end of input, which ends the session cleanly.
        let replies = exchange(&input);
        assert_eq!(replies.len(), 2);
        assert!(replies[1].0["message"].as_str().unwrap().contains("over this harness's limit"));
    }

    #[test]
    fn bad_requests_get_error_and_the_session_goes_on() {
        let replies = exchange(&lines(&[
            format!(r#"{{"seq":1,"op":"parse","codec":{GRAY}}}"#),
            "not json".into(),
            "[1, 2]".into(),
            r#"{"op":"start","protocol":1}"#.into(),
            r#"{"seq":2,"op":"start","protocol":2}"#.into(),
            r#"{"seq":3,"op":"start","protocol":1}"#.into(),
            r#"{"seq":4,"op":"frobnicate"}"#.into(),
            r#"{"seq":5,"op":"encode","handle":"9","chunk":{"shape":[1],"dtype":"uint8","data":"AA=="}}"#.into(),
            r#"{"seq":6,"op":"parse","codec":{"name":"jpeg","configuration":{"quality":90,"encoded_color_space":"rgb"}}}"#.into(),
            r#"{"seq":7,"op":"parse","codec":{"name":"jpeg","configuration":{"quality":13,"encoded_color_space":"grayscale"}}}"#
                .into(),
            r#"{"seq":8,"op":"encode","handle":"1","chunk":{"shape":[1,1],"dtype":"uint8","data":"AA=="}}"#.into(),
            r#"{"seq":9,"op":"encode","handle":"1","chunk":{"shape":[1,2],"dtype":"uint8","data":"AA=="}}"#.into(),
            r#"{"seq":10,"op":"encode","handle":"1","chunk":{"shape":[1,1],"dtype":"float32","data":"AAAAAA=="}}"#.into(),
            r#"{"seq":11,"op":"encode","handle":"1","chunk":{"shape":[1,1],"dtype":"uint8","data":"!!"}}"#.into(),
        ]));
        let status = |i: usize| (replies[i].0["seq"].as_u64(), replies[i].0["status"].as_str().unwrap().to_string());
        assert_eq!(status(0), (Some(1), "error".into()), "parse before start");
        assert_eq!(status(1), (None, "error".into()), "not JSON: seq null");
        assert_eq!(status(2), (None, "error".into()), "not an object");
        assert_eq!(status(3), (None, "error".into()), "no seq");
        assert_eq!(status(4), (Some(2), "error".into()), "unknown protocol version");
        assert_eq!(status(5), (Some(3), "ok".into()));
        assert_eq!(status(6), (Some(4), "error".into()), "unknown op");
        assert_eq!(status(7), (Some(5), "error".into()), "unknown handle");
        assert_eq!(replies[8].0["requirement"], "JPEG-ECS-09", "the library's own refusal at parse");
        assert_eq!(status(9), (Some(7), "ok".into()));
        let panic = &replies[10].0;
        assert_eq!((panic["status"].as_str(), panic["exception"].as_str()), (Some("error"), Some("panic")));
        assert!(panic["message"].as_str().unwrap().contains("unlucky quality"), "{panic}");
        assert!(panic["trace"].as_str().unwrap().contains("protocol.rs"), "{panic}");
        assert_eq!(status(11), (Some(9), "error".into()), "data does not match the shape");
        assert_eq!(replies[12].0["requirement"], "JPEG-DT-01");
        assert_eq!(status(13), (Some(11), "error".into()), "not base64");
        assert_eq!(replies.len(), 14, "end of input ends the session");
    }

    #[test]
    fn bench_times_the_library_and_refusals_end_it() {
        let replies = exchange(&lines(&[
            r#"{"seq":1,"op":"start","protocol":1}"#.into(),
            format!(r#"{{"seq":2,"op":"parse","codec":{GRAY}}}"#),
            r#"{"seq":3,"op":"bench","handle":"1","of":"encode","repeat":3,"chunk":{"shape":[1,3],"dtype":"uint8","data":"AQID"}}"#.into(),
            r#"{"seq":4,"op":"bench","handle":"1","of":"decode","repeat":2,"data":"CQg=","chunk_shape":[1,3]}"#.into(),
            r#"{"seq":5,"op":"bench","handle":"1","of":"decode","repeat":2,"data":"","chunk_shape":[1,3]}"#.into(),
            r#"{"seq":6,"op":"bench","handle":"1","of":"decode","repeat":0,"data":"CQg=","chunk_shape":[1,3]}"#.into(),
            r#"{"seq":7,"op":"build","options":{"encoded_color_space":"grayscale"}}"#.into(),
        ]));
        let seconds = |i: usize| replies[i].0["seconds"].as_array().map(|s| s.iter().filter(|x| x.as_f64().is_some()).count());
        assert_eq!(seconds(2), Some(3), "{:?}", replies[2].0);
        assert_eq!(seconds(3), Some(2), "{:?}", replies[3].0);
        assert_eq!(replies[4].0["requirement"], "JPEG-DEC-01", "a refused run ends the bench with the refusal");
        assert_eq!(replies[5].0["status"], "error", "repeat must be at least 1");
        assert_eq!(replies[6].0["status"], "error", "build without the role is an unknown op");
    }

    /// A codec with the build role: writes the options back under the name `jpeg`.
    struct Builder;

    impl Codec for Builder {
        const NAME: &'static str = "builder";
        const VERSION: &'static str = "2.0.0";
        type Handle = ();

        fn versions(&self) -> Vec<(&'static str, String)> {
            vec![]
        }

        fn kind(&self) -> &'static str {
            "codec"
        }

        fn parse(&mut self, _codec: &Value) -> Result<(), Refusal> {
            Ok(())
        }

        fn encode(&mut self, _: &(), _: &[u64], _: &str, _: &[u8]) -> Result<Vec<u8>, Refusal> {
            Ok(vec![])
        }

        fn decode(&mut self, _: &(), _: &[u8], _: &[u64]) -> Result<Vec<u8>, Refusal> {
            Ok(vec![])
        }

        fn roles(&self) -> &'static [&'static str] {
            &["decode", "build"]
        }

        fn build(&mut self, options: &Value) -> Result<Value, Refusal> {
            match options.get("quality").and_then(Value::as_u64) {
                Some(0) => Err(Refusal::new(Some("JPEG-Q-01"), "quality 0")),
                _ => Ok(json!({"name": "jpeg", "configuration": options})),
            }
        }
    }

    #[test]
    fn a_codec_declares_its_roles_version_and_builds() {
        let mut output = Vec::new();
        let input = lines(&[
            r#"{"seq":1,"op":"start","protocol":1}"#.into(),
            r#"{"seq":2,"op":"build","options":{"encoded_color_space":"grayscale"}}"#.into(),
            r#"{"seq":3,"op":"build","options":{"quality":0,"encoded_color_space":"grayscale"}}"#.into(),
        ]);
        serve_codec(Builder, &input[..], &mut output).unwrap();
        let replies: Vec<Value> =
            output.split(|&b| b == b'\n').filter(|l| !l.is_empty()).map(|l| serde_json::from_slice(l).unwrap()).collect();
        assert_eq!(
            (&replies[0]["version"], &replies[0]["roles"], &replies[0]["kind"]),
            (&json!("2.0.0"), &json!(["decode", "build"]), &json!("codec"))
        );
        assert_eq!(
            replies[1],
            json!({"seq": 2, "status": "ok", "codec": {"name": "jpeg", "configuration": {"encoded_color_space": "grayscale"}}})
        );
        assert_eq!(replies[2]["status"], "rejected");
    }
}
