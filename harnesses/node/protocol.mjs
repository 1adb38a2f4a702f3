// The harness protocol, version 1 (docs/protocol.md, schema/protocol/v1.schema.json), for
// every Node harness: JSON lines by default, binary framing when the client offers it.
//
// A library module hands `serve` a description and an `open()` that loads the library; this
// module reads requests, applies the shim's parse and chunk rules, calls the library and
// writes replies. Throwing a Rejection is a clean refusal (`rejected`); anything else thrown
// is a failure of the implementation (`error`).

import { readFileSync } from "node:fs";
import { format } from "node:util";
import { Rejection, encodeGeometry, isInteger, isObject, parseCodec, show } from "./shim.mjs";

const PROTOCOL = 1;
const readJson = (path) => JSON.parse(readFileSync(new URL(path, import.meta.url), "utf8"));
const HARNESS_VERSION = readJson("./package.json").version;
// Bytes per sample of the dtypes the protocol can carry (the suites send them to be rejected).
const ITEMSIZE = {
  bool: 1, int8: 1, uint8: 1, int16: 2, uint16: 2, int32: 4, uint32: 4, int64: 8, uint64: 8,
  float16: 2, float32: 4, float64: 8, complex64: 8, complex128: 16,
};

/** The version of an npm package installed here, from its package.json (which not every package exports). */
export const packageVersion = (name) => readJson(`./node_modules/${name}/package.json`).version;

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
    while (this.buffer.length < n) if (!(await this.fill())) return null;
    const out = this.buffer.subarray(0, n);
    this.buffer = this.buffer.subarray(n);
    return out;
  }
}

function send(header, payload) {
  const parts = [JSON.stringify(header) + "\n"];
  if (payload) parts.push(payload);
  return new Promise((resolve) => process.stdout.write(Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p) : p))), resolve));
}

const asBuffer = (view) => Buffer.from(view.buffer, view.byteOffset, view.byteLength);

/**
 * Serve one library until `stop` or the end of stdin.
 * @param {object} library  name, language, roles, packages (npm names whose versions are shown),
 *   open() -> {versions?, accepts?(config), encode?(config, samples, [H, W, C]), decode?(config, bytes, chunkShape), close?()}
 */
export async function serve(library) {
  // stdout carries protocol messages only; whatever a library logs goes to stderr, which the
  // client keeps for its error messages. Set before any library loads: Emscripten modules
  // bind console.log when they are created.
  for (const level of ["log", "info", "warn", "debug"]) {
    console[level] = (...args) => process.stderr.write(format(...args) + "\n");
  }
  const state = { codec: null, parsed: new Map(), binary: false, stopped: false };
  const input = new Input(process.stdin);
  for (;;) {
    const line = await input.line();
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
        await send({ seq: null, status: "error", message: `payload must be a non-negative integer, got ${show(request.payload)}` });
        continue;
      }
      payload = await input.bytes(request.payload);
      if (payload === null) break; // the client is gone mid-message
    }
    const [reply, out] = await handle(library, state, request, payload);
    await send(reply, out);
    if (state.stopped) break;
  }
  await state.codec?.close?.();
  process.exit(0);
}

async function handle(library, state, request, payload) {
  const seq = isObject(request) && isInteger(request.seq) && request.seq >= 0 ? request.seq : null;
  try {
    if (seq === null) throw new BadRequest("the request is not a JSON object with an integer seq");
    const [reply, out] = await dispatch(library, state, request, payload);
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

async function dispatch(library, state, request, payload) {
  const op = request.op;
  if (op === "start") return [await start(library, state, request), null];
  if (op === "stop") {
    state.stopped = true;
    return [{ status: "ok" }, null];
  }
  if (!state.codec) throw new BadRequest(`${show(op)} before "start"`);
  const codec = state.codec;
  if (op === "parse") {
    if (!Object.hasOwn(request, "codec")) throw new BadRequest("a parse request needs a codec");
    const config = parseCodec(request.codec);
    codec.accepts?.(config);
    const handle = String(state.parsed.size + 1);
    state.parsed.set(handle, config);
    return [{ status: "ok", handle }, null];
  }
  if (op !== "encode" && op !== "decode") throw new BadRequest(`unknown op ${show(op)}`);
  if (!library.roles.includes(op)) throw new BadRequest(`this harness only ${library.roles.join("s and ")}s (its roles are ${show(library.roles)})`);
  const config = state.parsed.get(request.handle);
  if (!config) throw new BadRequest(`unknown handle ${show(request.handle)}`);
  if (op === "encode") {
    const chunk = request.chunk;
    if (!isObject(chunk)) throw new BadRequest(`chunk must be an array object, got ${show(chunk)}`);
    checkShape(chunk.shape, "chunk.shape");
    if (!Object.hasOwn(ITEMSIZE, chunk.dtype)) throw new BadRequest(`unknown dtype ${show(chunk.dtype)}`);
    const samples = requestBytes(state, payload, chunk, "the chunk's");
    const expected = chunk.shape.reduce((a, b) => a * b, 1) * ITEMSIZE[chunk.dtype];
    if (samples.length !== expected) throw new BadRequest(`the chunk's data has ${samples.length} bytes, its shape and dtype need ${expected}`);
    const geometry = encodeGeometry(config, chunk.dtype, chunk.shape);
    const stream = await codec.encode(config, samples, geometry);
    return state.binary ? [{ status: "ok" }, asBuffer(stream)] : [{ status: "ok", data: asBuffer(stream).toString("base64") }, null];
  }
  const shape = request.chunk_shape;
  checkShape(shape, "chunk_shape");
  const bytes = requestBytes(state, payload, request, "the stream's");
  const samples = await codec.decode(config, bytes, shape);
  const expected = shape.reduce((a, b) => a * b, 1);
  if (samples.length !== expected) throw new Error(`${library.name} returned ${samples.length} samples for a chunk of shape [${shape}]`);
  const chunk = { shape, dtype: "uint8" };
  return state.binary ? [{ status: "ok", chunk }, asBuffer(samples)] : [{ status: "ok", chunk: { ...chunk, data: asBuffer(samples).toString("base64") } }, null];
}

async function start(library, state, request) {
  if (request.protocol !== PROTOCOL) throw new BadRequest(`this harness speaks protocol ${PROTOCOL}, not ${show(request.protocol)}`);
  if (!state.codec) {
    try {
      state.codec = await library.open();
    } catch (err) {
      throw new BadRequest(
        `cannot load ${library.packages.join(", ")} (${err?.message ?? err}); install the harness's packages with ` +
          "`python -m zarr_jpeg_conformance.harnesses install`",
      );
    }
  }
  const versions = { node: process.versions.node };
  for (const name of library.packages) versions[name] = packageVersion(name);
  Object.assign(versions, state.codec.versions ?? {}, { parse: "harness shim" });
  const reply = {
    status: "ok", protocol: PROTOCOL, name: library.name, version: HARNESS_VERSION, roles: library.roles, versions,
    kind: "library", language: library.language,
  };
  // The reply to start is a JSON line either way; binary framing begins with the next request.
  if (Array.isArray(request.framings) && request.framings.includes("binary")) {
    reply.framing = "binary";
    state.binary = true;
  }
  return reply;
}
