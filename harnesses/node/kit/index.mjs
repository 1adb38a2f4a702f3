// zarr-jpeg-conformance-harness: the harness protocol, version 1 (docs/protocol.md and
// schema/protocol/v1.schema.json of zarr-jpeg-conformance), for a codec written in JavaScript.
// JSON lines by default, binary framing when the client offers it, `bench` timed here.
//
// A harness hands `serve` its codec: parse, encode and decode callbacks (optionally build,
// open, close). Throwing a Rejection is a clean refusal (`rejected`); anything else thrown is
// a failure of the implementation (`error`). `specParse` gives a JPEG library without a parser
// of its own the spec's parse rules and chunk-shape table (./spec.mjs).

import { format } from "node:util";
import { Rejection, encodeGeometry, isInteger, isObject, parseCodec, show } from "./spec.mjs";

export { Rejection } from "./spec.mjs";

/** The protocol version this package speaks; its major version is the same. */
export const PROTOCOL = 1;
// The most runs one bench request may ask for: a client's slip must not hold the harness for hours.
const MAX_REPEAT = 100000;
// The largest payload one request may declare, as the Rust, Go and Java kits allow: the suites send a few MiB at most,
// and a header that declares more is answered with an error, not a RangeError out of Buffer.allocUnsafe.
const MAX_PAYLOAD = 2 ** 30;
// Bytes per sample of the dtypes the protocol can carry (the suites send them to be rejected).
const ITEMSIZE = {
  bool: 1, int8: 1, uint8: 1, int16: 2, uint16: 2, int32: 4, uint32: 4, int64: 8, uint64: 8,
  float16: 2, float32: 4, float64: 8, complex64: 8, complex128: 16,
};

class BadRequest extends Error {}

// Reads newline-ended lines and exact byte counts from stdin, whatever its chunking.
class Input {
  constructor(stream) {
    this.chunks = stream[Symbol.asyncIterator]();
    this.buffer = Buffer.alloc(0);
    this.ended = false;
  }

  async fill() {
    const next = await this.chunks.next();
    if (next.done) {
      this.ended = true;
      return false;
    }
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, next.value]) : next.value;
    return true;
  }

  /** The next line without its "\n" (a last line without one counts), or null at the end. */
  async line() {
    let searched = 0;
    for (;;) {
      const end = this.buffer.indexOf(0x0a, searched);
      if (end >= 0) {
        const line = this.buffer.subarray(0, end);
        this.buffer = this.buffer.subarray(end + 1);
        return line;
      }
      searched = this.buffer.length;
      if (!(await this.fill())) {
        if (!this.buffer.length) return null;
        const line = this.buffer;
        this.buffer = Buffer.alloc(0);
        return line;
      }
    }
  }

  /** Exactly n bytes, or null if the input ends first. */
  async bytes(n) {
    if (this.buffer.length >= n) {
      const out = this.buffer.subarray(0, n);
      this.buffer = this.buffer.subarray(n);
      return out;
    }
    // A payload arrives in chunks of 64 KiB: gathered, then copied once into its own buffer
    // (fill's concat for each chunk copied a 192 KiB payload about twice over).
    const out = Buffer.allocUnsafe(n);
    let have = this.buffer.copy(out);
    while (have < n) {
      const next = await this.chunks.next();
      if (next.done) {
        this.ended = true;
        this.buffer = Buffer.alloc(0);
        return null;
      }
      const take = Math.min(n - have, next.value.length);
      have += next.value.copy(out, have, 0, take);
      this.buffer = next.value.subarray(take);
    }
    return out;
  }
}

function send(output, header, payload) {
  const line = Buffer.from(JSON.stringify(header) + "\n");
  return new Promise((resolve) => {
    if (!payload) {
      output.write(line, resolve);
      return;
    }
    // One writev of the header and the payload as they are: no copy of the payload into a
    // buffer with the header in front. The loop awaits the write before the codec runs again,
    // so a payload that is a view of the codec's memory stays as it was until it is written.
    output.cork();
    output.write(line);
    output.write(payload, resolve);
    output.uncork();
  });
}

const asBuffer = (view) => Buffer.from(view.buffer, view.byteOffset, view.byteLength);

/**
 * Serve a codec until `stop` or the end of the input, then close it (and, by default, exit).
 * @param {object} codec  name, version, roles (default ["encode", "decode"]), kind (default
 *   "codec"), language (default "JavaScript (Node.js)"), versions (an object, or a function
 *   called after open), and the callbacks: parse(codecObject) -> handle,
 *   encode(handle, {shape, dtype, data: Uint8Array}) -> Uint8Array,
 *   decode(handle, stream: Uint8Array, chunkShape) -> Uint8Array (uint8 samples, C order);
 *   optional build(options) -> codec object (role "build"), open() (at the first start: a
 *   failure is the start's error reply) and close().
 */
export async function serve(codec, { input = process.stdin, output = process.stdout, exit = true } = {}) {
  if (output === process.stdout) {
    // stdout carries protocol messages only; whatever a library logs goes to stderr, which
    // the client keeps for its error messages. Set before any library loads: Emscripten
    // modules bind console.log when they are created.
    for (const level of ["log", "info", "warn", "debug"]) {
      console[level] = (...args) => process.stderr.write(format(...args) + "\n");
    }
  }
  const spec = { roles: ["encode", "decode"], kind: "codec", language: "JavaScript (Node.js)", ...codec };
  const state = { started: false, parsed: new Map(), binary: false, stopped: false, output };
  const reader = new Input(input);
  for (;;) {
    const line = await reader.line();
    if (line === null) break;
    if (!line.toString("utf8").trim()) continue;
    let request;
    try {
      request = JSON.parse(line.toString("utf8"));
    } catch {
      request = undefined;
    }
    let payload = null;
    if (state.binary && isObject(request) && Object.hasOwn(request, "payload")) {
      if (!isInteger(request.payload) || request.payload < 0) {
        await send(output, { seq: null, status: "error", message: `payload must be a non-negative integer, got ${show(request.payload)}` });
        continue;
      }
      if (request.payload > MAX_PAYLOAD) {
        // Its bytes are not read, so the next frame cannot be found: the session ends after this reply.
        await send(output, { seq: null, status: "error", exception: "BadRequest",
                             message: `a payload of ${request.payload} bytes is over this harness's limit of ${MAX_PAYLOAD}; the session ends` });
        break;
      }
      payload = await reader.bytes(request.payload);
      if (payload === null) break; // the client is gone mid-message
    }
    const [reply, out] = await handle(spec, state, request, payload);
    await send(output, reply, out);
    if (state.stopped) break;
  }
  if (state.started) await spec.close?.();
  if (exit) process.exit(0);
}

/**
 * A JPEG library behind the spec's parse rules and chunk-shape table: the parse, encode and
 * decode callbacks of `serve` for a library that brings none of those rules.
 * @param {object} library  accepts?(config) (throw a Rejection for a valid configuration the
 *   library cannot honor), encode?(config, samples, [height, width, components]),
 *   decode(config, stream, chunkShape)
 */
export function specParse(library) {
  return {
    parse(codecObject) {
      const config = parseCodec(codecObject);
      library.accepts?.(config);
      return config;
    },
    encode: (config, chunk) => library.encode(config, chunk.data, encodeGeometry(config, chunk.dtype, chunk.shape)),
    decode: (config, stream, chunkShape) => library.decode(config, stream, chunkShape),
  };
}

async function handle(codec, state, request, payload) {
  const seq = isObject(request) && isInteger(request.seq) && request.seq >= 0 ? request.seq : null;
  try {
    if (seq === null) throw new BadRequest("the request is not a JSON object with an integer seq");
    const [reply, out] = await dispatch(codec, state, request, payload);
    if (out) reply.payload = out.byteLength;
    return [{ seq, ...reply }, out];
  } catch (err) {
    if (err instanceof Rejection) {
      const reply = { seq, status: "rejected", message: err.message, exception: err.exception };
      if (err.requirement) reply.requirement = err.requirement;
      return [reply, null];
    }
    const reply = { seq, status: "error", message: String(err?.message ?? err), exception: err?.constructor?.name ?? typeof err };
    if (err?.stack && !(err instanceof BadRequest)) reply.trace = String(err.stack).slice(-4096);
    return [reply, null];
  }
}

// The bytes of a request: the payload in binary framing, else the base64 `data` member.
function requestBytes(state, payload, holder, what) {
  if (state.binary) {
    if (payload === null) throw new BadRequest(`${what} needs a payload in binary framing`);
    return new Uint8Array(payload.buffer, payload.byteOffset, payload.byteLength);
  }
  // Node's decoder skips what is not base64; padded standard base64 re-encodes to itself.
  // (A regular expression over a chunk of megabytes runs V8's regexp stack out of memory.)
  const bytes = typeof holder.data === "string" ? Buffer.from(holder.data, "base64") : null;
  if (!bytes || bytes.toString("base64") !== holder.data) throw new BadRequest(`${what} data must be base64 text`);
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function checkShape(shape, what) {
  if (!Array.isArray(shape) || !shape.every((n) => isInteger(n) && n >= 0)) {
    throw new BadRequest(`${what} must be an array of non-negative integers, got ${show(shape)}`);
  }
}

async function dispatch(codec, state, request, payload) {
  const op = request.op;
  if (op === "start") return [await start(codec, state, request), null];
  if (op === "stop") {
    state.stopped = true;
    return [{ status: "ok" }, null];
  }
  if (!state.started) throw new BadRequest(`${show(op)} before "start"`);
  if (op === "parse") {
    if (!Object.hasOwn(request, "codec")) throw new BadRequest("a parse request needs a codec");
    const parsed = await codec.parse(request.codec);
    const handle = String(state.parsed.size + 1);
    state.parsed.set(handle, parsed);
    return [{ status: "ok", handle }, null];
  }
  if (op === "build" && codec.roles.includes("build") && codec.build) {
    if (!isObject(request.options)) throw new BadRequest(`build options must be an object, got ${show(request.options)}`);
    return [{ status: "ok", codec: await codec.build(request.options) }, null];
  }
  if (op === "bench") return bench(codec, state, request, payload);
  if (op !== "encode" && op !== "decode") throw new BadRequest(`unknown op ${show(op)}`);
  const [run, reply] = operation(codec, state, op, request, payload);
  return reply(await run());
}

// An encode or decode request as a call to repeat (bench) and the reply to its result.
function operation(codec, state, op, request, payload) {
  if (!codec.roles.includes(op)) throw new BadRequest(`this harness only ${codec.roles.join("s and ")}s (its roles are ${show(codec.roles)})`);
  if (!state.parsed.has(request.handle)) throw new BadRequest(`unknown handle ${show(request.handle)}`);
  const parsed = state.parsed.get(request.handle);
  if (op === "encode") {
    const chunk = request.chunk;
    if (!isObject(chunk)) throw new BadRequest(`chunk must be an array object, got ${show(chunk)}`);
    checkShape(chunk.shape, "chunk.shape");
    if (!Object.hasOwn(ITEMSIZE, chunk.dtype)) throw new BadRequest(`unknown dtype ${show(chunk.dtype)}`);
    const data = requestBytes(state, payload, chunk, "the chunk's");
    const expected = chunk.shape.reduce((a, b) => a * b, 1) * ITEMSIZE[chunk.dtype];
    if (data.length !== expected) throw new BadRequest(`the chunk's data has ${data.length} bytes, its shape and dtype need ${expected}`);
    const run = () => codec.encode(parsed, { shape: chunk.shape, dtype: chunk.dtype, data });
    const reply = (stream) => (state.binary ? [{ status: "ok" }, asBuffer(stream)] : [{ status: "ok", data: asBuffer(stream).toString("base64") }, null]);
    return [run, reply];
  }
  const shape = request.chunk_shape;
  checkShape(shape, "chunk_shape");
  const bytes = requestBytes(state, payload, request, "the stream's");
  const run = async () => {
    const samples = await codec.decode(parsed, bytes, shape);
    const expected = shape.reduce((a, b) => a * b, 1);
    if (samples.length !== expected) throw new Error(`${codec.name} returned ${samples.length} samples for a chunk of shape [${shape}]`);
    return samples;
  };
  const chunk = { shape, dtype: "uint8" };
  const reply = (samples) => (state.binary ? [{ status: "ok", chunk }, asBuffer(samples)] : [{ status: "ok", chunk: { ...chunk, data: asBuffer(samples).toString("base64") } }, null]);
  return [run, reply];
}

// What the encode or decode request named by `of` does, `repeat` times, each run timed on a
// monotonic clock: the codec's own speed in this process, without the protocol's costs.
async function bench(codec, state, request, payload) {
  const { of, repeat } = request;
  if (of !== "encode" && of !== "decode") throw new BadRequest(`bench: of must be "encode" or "decode", got ${show(of)}`);
  if (!isInteger(repeat) || repeat < 1 || repeat > MAX_REPEAT) throw new BadRequest(`bench: repeat must be 1 to ${MAX_REPEAT}, got ${show(repeat)}`);
  const [run] = operation(codec, state, of, request, payload);
  const seconds = [];
  for (let i = 0; i < repeat; i++) {
    const started = process.hrtime.bigint();
    await run();
    seconds.push(Number(process.hrtime.bigint() - started) / 1e9);
  }
  return [{ status: "ok", seconds }, null];
}

async function start(codec, state, request) {
  if (request.protocol !== PROTOCOL) throw new BadRequest(`this harness speaks protocol ${PROTOCOL}, not ${show(request.protocol)}`);
  if (!state.started) {
    try {
      await codec.open?.();
    } catch (err) {
      throw new BadRequest(String(err?.message ?? err));
    }
    state.started = true;
  }
  const versions = typeof codec.versions === "function" ? codec.versions() : (codec.versions ?? {});
  const reply = {
    status: "ok", protocol: PROTOCOL, name: codec.name, version: codec.version, roles: codec.roles, versions,
    kind: codec.kind, language: codec.language,
  };
  // The reply to start is a JSON line either way; binary framing begins with the next request.
  if (Array.isArray(request.framings) && request.framings.includes("binary")) {
    reply.framing = "binary";
    state.binary = true;
  }
  return reply;
}
