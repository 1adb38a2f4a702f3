#!/usr/bin/env node
// Decode-only harness of zarr-jpeg-conformance for JavaScript JPEG decoders, speaking the
// JSON-lines harness protocol, version 1 (docs/protocol.md, schema/protocol/v1.schema.json).
//
//   node harness.mjs --decoder pdfjs|jpeg-js
//
// It puts the decoder family that neuroglancer's vendored jpgjs belongs to under test. The
// harness adds as little as it can: it parses the codec object by the spec's rules (a
// decoder needs a valid configuration too), checks that the stream's frame fits the chunk
// (component count and H x W: any caller needs them to reshape), and returns what the
// decoder returns. Color transforms, truncated data, odd precisions: all the decoder's own,
// because that is what the suites measure.

import { createRequire } from "node:module";
import { createInterface } from "node:readline";
import { format } from "node:util";

const PROTOCOL = 1;
const require = createRequire(import.meta.url);
const HARNESS_VERSION = require("./package.json").version;

// stdout carries protocol lines only; whatever a library logs (pdf.js warns on bad data)
// goes to stderr, which the client keeps for its error messages.
for (const level of ["log", "info", "warn", "debug"]) {
  console[level] = (...args) => process.stderr.write(format(...args) + "\n");
}

// ------------------------------------------------------------------ decoders

// Each returns the decoded samples, interleaved, `components` per pixel, in raster order.
const DECODERS = {
  "jpeg-js": {
    package: "jpeg-js",
    async load() {
      const jpeg = require("jpeg-js");
      return (bytes, frame) => {
        // jpeg-js always hands back three channels; a grayscale image is repeated in each.
        const image = jpeg.decode(bytes, { useTArray: true, formatAsRGBA: false });
        if (frame.components === 3) return image.data;
        const gray = new Uint8Array(image.width * image.height);
        for (let i = 0; i < gray.length; i++) gray[i] = image.data[3 * i];
        return gray;
      };
    },
  },
  pdfjs: {
    package: "pdfjs-dist",
    async load() {
      const { JpegImage } = await import("pdfjs-dist/image_decoders/pdf.image_decoders.mjs");
      return (bytes) => {
        const image = new JpegImage();
        image.parse(bytes);
        return image.getData({ width: image.width, height: image.height, forceRGB: false, forceRGBA: false });
      };
    },
  },
};

// ------------------------------------------------------------------ the spec's parse rules

class Rejection extends Error {
  constructor(requirement, message, exception = "Rejection") {
    super(message);
    this.requirement = requirement;
    this.exception = exception;
  }
}

const COLOR_SPACES = ["grayscale", "ycbcr", "rgb"];
const COMBINATIONS = new Set(["grayscale/grayscale", "rgb/ycbcr", "rgb/rgb", "ycbcr/ycbcr"]); // decoded/encoded
const CONFIG_MEMBERS = new Set(["quality", "encoded_color_space", "decoded_color_space", "subsampling"]);
const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
// JSON has no integer type: 90.0 arrives as 90 and is accepted (JPEG-X-02 allows either).
const isInteger = (v) => typeof v === "number" && Number.isInteger(v);
const show = (v) => (v === undefined ? "nothing" : JSON.stringify(v));

function parseColorSpace(cfg, key, requirement) {
  const value = cfg[key];
  if (!COLOR_SPACES.includes(value)) {
    throw new Rejection(requirement, `${key} must be one of ${COLOR_SPACES.join(", ")}, got ${show(value)}`);
  }
  return value;
}

function parseCodec(codec) {
  if (!isObject(codec)) throw new Rejection("JPEG-CFG-01", `the codec object must be a JSON object, got ${show(codec)}`);
  if (codec.name !== "jpeg") throw new Rejection("JPEG-NAME-01", `the codec name must be "jpeg", got ${show(codec.name)}`);
  const unknown = Object.keys(codec).filter((k) => k !== "name" && k !== "configuration");
  if (unknown.length) throw new Rejection("JPEG-X-01", `unknown member(s) of the codec object: ${unknown.join(", ")}`);
  const cfg = codec.configuration;
  if (!isObject(cfg)) throw new Rejection("JPEG-CFG-01", `"configuration" must be a JSON object, got ${show(cfg)}`);
  const extra = Object.keys(cfg).filter((k) => !CONFIG_MEMBERS.has(k));
  if (extra.length) throw new Rejection("JPEG-X-01", `unknown configuration member(s): ${extra.join(", ")}`);

  if (!Object.hasOwn(cfg, "quality")) throw new Rejection("JPEG-Q-05", "quality is required and has no default");
  if (!isInteger(cfg.quality) || cfg.quality < 1 || cfg.quality > 100) {
    throw new Rejection("JPEG-Q-01", `quality must be an integer from 1 to 100, got ${show(cfg.quality)}`);
  }
  if (!Object.hasOwn(cfg, "encoded_color_space")) throw new Rejection("JPEG-ECS-07", "encoded_color_space is required");
  const encoded = parseColorSpace(cfg, "encoded_color_space", "JPEG-ECS-01");
  const decoded = Object.hasOwn(cfg, "decoded_color_space")
    ? parseColorSpace(cfg, "decoded_color_space", "JPEG-DCS-01")
    : encoded === "grayscale" ? "grayscale" : "rgb";
  if (!COMBINATIONS.has(`${decoded}/${encoded}`)) {
    throw new Rejection("JPEG-DCS-04", `decoded_color_space ${decoded} with encoded_color_space ${encoded} is not allowed`);
  }

  const components = encoded === "grayscale" ? 1 : 3;
  const standard = Array.from({ length: components }, () => [1, 1]);
  let subsampling = standard;
  if (!Object.hasOwn(cfg, "subsampling")) {
    if (encoded === "ycbcr") throw new Rejection("JPEG-SUB-04", "subsampling is required with encoded_color_space ycbcr");
  } else {
    subsampling = cfg.subsampling;
    if (!Array.isArray(subsampling)) throw new Rejection("JPEG-SUB-01", `subsampling must be an array of [h, v] pairs, got ${show(subsampling)}`);
    if (subsampling.length !== components) {
      throw new Rejection("JPEG-CFG-01", `subsampling has ${subsampling.length} entries for ${components} component(s)`);
    }
    for (const pair of subsampling) {
      if (!Array.isArray(pair) || pair.length !== 2 || !pair.every((f) => isInteger(f) && f >= 1 && f <= 4)) {
        throw new Rejection("JPEG-SUB-01", `each subsampling entry must be [h, v] with integers from 1 to 4, got ${show(pair)}`);
      }
    }
    const same = (a, b) => a[0] === b[0] && a[1] === b[1];
    if (encoded === "ycbcr" && !subsampling.slice(1).every((pair) => same(pair, [1, 1]))) {
      throw new Rejection("JPEG-SUB-03", `the chroma factors must be [1, 1], got ${show(subsampling.slice(1))}`);
    }
    if (encoded !== "ycbcr" && !subsampling.every((pair, i) => same(pair, standard[i]))) {
      throw new Rejection("JPEG-SUB-07", `subsampling with ${encoded} must be its default ${show(standard)}, got ${show(subsampling)}`);
    }
  }
  // What this harness can do: the decoders convert 3-component streams to RGB (or not) on
  // their own terms and cannot be asked for the stored YCbCr, an optional feature.
  if (decoded === "ycbcr") {
    throw new Rejection("JPEG-DCS-05", "this harness returns the decoder's RGB output and cannot return YCbCr samples");
  }
  return { quality: cfg.quality, encoded, decoded, subsampling };
}

// ------------------------------------------------------------------ chunk and stream geometry

function chunkGeometry(shape) {
  if (shape.length < 2) throw new Rejection("JPEG-SHP-01", `chunk shape [${shape}] is ${shape.length}D: a JPEG image needs 2D`);
  if (shape.length > 3) throw new Rejection("JPEG-SHP-06", `chunk shape [${shape}] is ${shape.length}D: at most 3D`);
  const components = shape.length === 2 ? 1 : shape[2];
  if (components !== 1 && components !== 3) {
    throw new Rejection("JPEG-SHP-05", `chunk shape [${shape}] has ${components} channels: 1 or 3 fit a JPEG image`);
  }
  return [shape[0], shape[1], components];
}

// The frame header (SOFn) of a JPEG stream, found by walking the marker segments before
// the first scan; null if there is none. The decoders keep it to themselves (jpeg-js) or
// only report it after allocating for it (pdf.js), so the harness reads it first.
function readFrame(bytes) {
  if (bytes.length < 4 || bytes[0] !== 0xff || bytes[1] !== 0xd8) return null;
  let at = 2;
  while (at + 4 <= bytes.length) {
    if (bytes[at] !== 0xff) return null;
    const marker = bytes[at + 1];
    if (marker === 0xff) {
      at += 1; // fill byte
      continue;
    }
    if (marker === 0xd9 || marker === 0xda) return null; // end of image or a scan, before any frame
    if ((marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) {
      at += 2; // markers without a segment
      continue;
    }
    const length = (bytes[at + 2] << 8) | bytes[at + 3];
    if (length < 2 || at + 2 + length > bytes.length) return null;
    const isFrame = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
    if (isFrame) {
      if (length < 8) return null;
      return {
        marker,
        precision: bytes[at + 4],
        height: (bytes[at + 5] << 8) | bytes[at + 6],
        width: (bytes[at + 7] << 8) | bytes[at + 8],
        components: bytes[at + 9],
      };
    }
    at += 2 + length;
  }
  return null;
}

// ------------------------------------------------------------------ protocol

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

class BadRequest extends Error {}

class Harness {
  constructor(decoderName) {
    this.decoderName = decoderName;
    this.spec = DECODERS[decoderName];
    this.decode = null;
    this.parsed = new Map();
    this.stopped = false;
  }

  async start(request) {
    if (request.protocol !== PROTOCOL) throw new BadRequest(`this harness speaks protocol ${PROTOCOL}, not ${show(request.protocol)}`);
    if (!this.decode) {
      try {
        this.decode = await this.spec.load();
      } catch (err) {
        throw new BadRequest(
          `cannot load the npm package ${this.spec.package} (${err.message}); install the harness's packages with ` +
            "`python -m zarr_jpeg_conformance.harnesses install`",
        );
      }
    }
    return {
      status: "ok",
      protocol: PROTOCOL,
      name: `node-${this.decoderName}`,
      version: HARNESS_VERSION,
      roles: ["decode"],
      versions: { node: process.versions.node, [this.spec.package]: require(`${this.spec.package}/package.json`).version },
    };
  }

  handleFor(request) {
    const config = this.parsed.get(request.handle);
    if (!config) throw new BadRequest(`unknown handle ${show(request.handle)}`);
    return config;
  }

  decodeChunk(config, bytes, chunkShape) {
    const [height, width, components] = chunkGeometry(chunkShape);
    const wanted = config.decoded === "grayscale" ? 1 : 3;
    if (components !== wanted) {
      throw new Rejection("JPEG-DIM-03", `chunk shape [${chunkShape}] has ${components} component(s), decoded_color_space ${config.decoded} has ${wanted}`);
    }
    const frame = readFrame(bytes);
    if (!frame) throw new Rejection("JPEG-DEC-01", `no frame header before the first scan: not a JPEG image (${bytes.length} bytes)`);
    if (frame.components !== components) {
      throw new Rejection("JPEG-DIM-03", `the stream has ${frame.components} component(s), the chunk shape [${chunkShape}] ${components}`);
    }
    if (frame.height * frame.width !== height * width) {
      throw new Rejection("JPEG-DIM-03", `the stream is ${frame.height}x${frame.width} (HxW), the chunk shape [${chunkShape}] needs ${height}x${width}`);
    }
    if (frame.height !== height || frame.width !== width) {
      throw new Rejection("JPEG-X-08", `the stream is ${frame.height}x${frame.width} (HxW), a different factorization of the chunk's ${height}x${width}`);
    }
    let samples;
    try {
      samples = this.decode(bytes, frame);
    } catch (err) {
      // Throwing is how these libraries refuse a stream: a clean rejection.
      throw new Rejection(undefined, `${this.spec.package} refused the stream: ${err?.message ?? err}`, err?.name ?? "Error");
    }
    const expected = height * width * components;
    if (samples.length !== expected) {
      throw new Error(`${this.spec.package} returned ${samples.length} samples for a ${height}x${width}x${components} image`);
    }
    return samples;
  }

  async handle(request) {
    const seq = isObject(request) && isInteger(request.seq) && request.seq >= 0 ? request.seq : null;
    try {
      if (seq === null) throw new BadRequest("the request is not a JSON object with an integer seq");
      return { seq, ...(await this.dispatch(request)) };
    } catch (err) {
      if (err instanceof Rejection) {
        const reply = { seq, status: "rejected", message: err.message, exception: err.exception };
        if (err.requirement) reply.requirement = err.requirement;
        return reply;
      }
      const reply = { seq, status: "error", message: String(err?.message ?? err), exception: err?.constructor?.name ?? "Error" };
      if (err?.stack && !(err instanceof BadRequest)) reply.trace = String(err.stack).slice(-4096);
      return reply;
    }
  }

  async dispatch(request) {
    const op = request.op;
    if (op === "start") return this.start(request);
    if (op === "stop") {
      this.stopped = true;
      return { status: "ok" };
    }
    if (!this.decode) throw new BadRequest(`${show(op)} before "start"`);
    if (op === "parse") {
      if (!Object.hasOwn(request, "codec")) throw new BadRequest("a parse request needs a codec");
      const config = parseCodec(request.codec);
      const handle = String(this.parsed.size + 1);
      this.parsed.set(handle, config);
      return { status: "ok", handle };
    }
    if (op === "encode") throw new BadRequest("this harness only decodes (its roles are [\"decode\"])");
    if (op === "decode") {
      const config = this.handleFor(request);
      const shape = request.chunk_shape;
      if (!Array.isArray(shape) || !shape.every((n) => isInteger(n) && n >= 0)) {
        throw new BadRequest(`chunk_shape must be an array of non-negative integers, got ${show(shape)}`);
      }
      if (typeof request.data !== "string" || !BASE64.test(request.data)) throw new BadRequest("data must be base64 text");
      const bytes = new Uint8Array(Buffer.from(request.data, "base64"));
      const samples = this.decodeChunk(config, bytes, shape);
      const data = Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength).toString("base64");
      return { status: "ok", chunk: { shape, dtype: "uint8", data } };
    }
    throw new BadRequest(`unknown op ${show(op)}`);
  }
}

function parseArgs(argv) {
  const usage = `usage: node harness.mjs --decoder ${Object.keys(DECODERS).join("|")}`;
  let decoder = null;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--decoder") decoder = argv[++i];
    else if (argv[i].startsWith("--decoder=")) decoder = argv[i].slice("--decoder=".length);
    else if (argv[i] === "--help" || argv[i] === "-h") {
      process.stderr.write(usage + "\n");
      process.exit(0);
    } else {
      process.stderr.write(`unknown argument ${argv[i]}\n${usage}\n`);
      process.exit(2);
    }
  }
  if (!Object.hasOwn(DECODERS, decoder ?? "")) {
    process.stderr.write(`--decoder must be one of ${Object.keys(DECODERS).join(", ")}\n${usage}\n`);
    process.exit(2);
  }
  return decoder;
}

async function main() {
  const harness = new Harness(parseArgs(process.argv.slice(2)));
  const send = (reply) => new Promise((resolve) => process.stdout.write(JSON.stringify(reply) + "\n", resolve));
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity, terminal: false });
  for await (const line of lines) {
    if (!line.trim()) continue;
    let request;
    try {
      request = JSON.parse(line);
    } catch {
      request = undefined;
    }
    await send(await harness.handle(request));
    if (harness.stopped) break;
  }
  process.exit(0);
}

main();
