// The spec's rules that a JavaScript codec needs and no JPEG library brings: the codec
// object's parse rules, the chunk-shape table, and the check that a decoded frame fits the
// chunk it is read into (the spec's decoding step 3 reshapes by the chunk shape). Part of the
// harness kit, and loaded by the shipped browser page too, so it imports nothing of Node:
// plain ES, runnable in any JavaScript engine. Harnesses that use it say
// `"parse": "harness shim"` in their `versions`: a verdict on these rules is this module's.

export class Rejection extends Error {
  constructor(requirement, message, exception = "Rejection") {
    super(message);
    this.requirement = requirement;
    this.exception = exception;
  }
}

const COLOR_SPACES = ["grayscale", "ycbcr", "rgb"];
const COMBINATIONS = new Set(["grayscale/grayscale", "rgb/ycbcr", "rgb/rgb", "ycbcr/ycbcr"]); // decoded/encoded
const CONFIG_MEMBERS = new Set(["quality", "encoded_color_space", "decoded_color_space", "subsampling"]);
export const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
// JSON has no integer type: 90.0 arrives as 90 and is accepted (JPEG-X-02 allows either).
export const isInteger = (v) => typeof v === "number" && Number.isInteger(v);
export const show = (v) => (v === undefined ? "nothing" : JSON.stringify(v));

function parseColorSpace(cfg, key, requirement) {
  const value = cfg[key];
  if (!COLOR_SPACES.includes(value)) {
    throw new Rejection(requirement, `${key} must be one of ${COLOR_SPACES.join(", ")}, got ${show(value)}`);
  }
  return value;
}

/**
 * The spec's configuration, or a Rejection naming the rule it breaks.
 * @returns {{quality: number, encoded: string, decoded: string, subsampling: number[][], components: number}}
 */
export function parseCodec(codec) {
  if (!isObject(codec)) throw new Rejection("JPEG-CFG-01", `the codec object must be a JSON object, got ${show(codec)}`);
  if (codec.name !== "jpeg") throw new Rejection("JPEG-NAME-01", `the codec name must be "jpeg", got ${show(codec.name)}`);
  // must_understand: Zarr v3 core allows it on every extension object, a codec too (JPEG-X-19).
  const unknown = Object.keys(codec).filter((k) => k !== "name" && k !== "configuration" && k !== "must_understand");
  if (unknown.length) throw new Rejection("JPEG-X-01", `unknown member(s) of the codec object: ${unknown.join(", ")}`);
  if ("must_understand" in codec && typeof codec.must_understand !== "boolean") {
    throw new Rejection("JPEG-X-19", `"must_understand" must be true or false, got ${show(codec.must_understand)}`);
  }
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
  return { quality: cfg.quality, encoded, decoded, subsampling, components };
}

/** A Rejection for a decoded_color_space of ycbcr: no library here returns the stored YCbCr samples. */
export function noYcbcrOutput(config, library) {
  if (config.decoded === "ycbcr") {
    throw new Rejection("JPEG-DCS-05", `${library} returns RGB and cannot return the stream's YCbCr samples (decoded_color_space ycbcr)`);
  }
}

// ------------------------------------------------------------------ chunks

/** [H, W, components] of a chunk shape, or a Rejection citing the shape table's row. */
export function chunkGeometry(shape) {
  if (shape.length < 2) throw new Rejection("JPEG-SHP-01", `chunk shape [${shape}] is ${shape.length}D: a JPEG image needs 2D`);
  if (shape.length > 3) throw new Rejection("JPEG-SHP-06", `chunk shape [${shape}] is ${shape.length}D: at most 3D`);
  const components = shape.length === 2 ? 1 : shape[2];
  if (components !== 1 && components !== 3) {
    throw new Rejection("JPEG-SHP-05", `chunk shape [${shape}] has ${components} channels: 1 or 3 fit a JPEG image`);
  }
  return [shape[0], shape[1], components];
}

/** [H, W, components] of a chunk to encode, or a Rejection: dtype, shape, component count, size. */
export function encodeGeometry(config, dtype, shape) {
  if (dtype !== "uint8") throw new Rejection("JPEG-DT-01", `chunk dtype is ${dtype}: only uint8 is supported`);
  const [height, width, components] = chunkGeometry(shape);
  if (components !== config.components) {
    throw new Rejection("JPEG-CFG-02", `chunk shape [${shape}] has ${components} component(s), encoded_color_space ${config.encoded} needs ${config.components}`);
  }
  for (const [axis, n] of [["height", height], ["width", width]]) {
    if (n < 1) throw new Rejection("JPEG-DIM-02", `image ${axis} is ${n}: a JPEG image needs at least one sample per axis`);
    if (n > 65535) throw new Rejection("JPEG-DIM-02", `image ${axis} ${n} exceeds 65535, the most a JPEG frame header records`);
  }
  return [height, width, components];
}

// ------------------------------------------------------------------ frames

/**
 * The frame header (SOFn) of a JPEG stream, found by walking the marker segments before the
 * first scan; null if there is none. For libraries that keep it to themselves (jpeg-js, the
 * browser) or only report it after allocating for it (pdf.js, mozjpeg's decoder).
 */
export function readFrame(bytes) {
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
        height: (bytes[at + 5] << 8) | bytes[at + 6],
        width: (bytes[at + 7] << 8) | bytes[at + 8],
        components: bytes[at + 9],
      };
    }
    at += 2 + length;
  }
  return null;
}

/**
 * [H, W, components] of the chunk a frame is decoded into, or a Rejection if it does not fit.
 * `frame` is {height, width, components}, from the library's own header reader where it has
 * one, else from readFrame; null means the library found no frame.
 */
export function fitFrame(config, frame, chunkShape, byteLength) {
  const [height, width, components] = chunkGeometry(chunkShape);
  const wanted = config.decoded === "grayscale" ? 1 : 3;
  if (components !== wanted) {
    throw new Rejection("JPEG-DIM-03", `chunk shape [${chunkShape}] has ${components} component(s), decoded_color_space ${config.decoded} has ${wanted}`);
  }
  if (!frame) throw new Rejection("JPEG-DEC-01", `no frame header before the first scan: not a JPEG image (${byteLength} bytes)`);
  if (frame.components !== components) {
    throw new Rejection("JPEG-DIM-03", `the stream has ${frame.components} component(s), the chunk shape [${chunkShape}] ${components}`);
  }
  if (frame.height * frame.width !== height * width) {
    throw new Rejection("JPEG-DIM-03", `the stream is ${frame.height}x${frame.width} (HxW), the chunk shape [${chunkShape}] needs ${height}x${width}`);
  }
  if (frame.height !== height || frame.width !== width) {
    throw new Rejection("JPEG-X-08", `the stream is ${frame.height}x${frame.width} (HxW), a different factorization of the chunk's ${height}x${width}`);
  }
  return [height, width, components];
}

// ------------------------------------------------------------------ pixel layouts

/** Interleaved samples of `components` (1 or 3) per pixel, from RGBA (grayscale: the red channel). */
export function fromRGBA(rgba, components) {
  const pixels = rgba.length >> 2;
  const out = new Uint8Array(pixels * components);
  for (let p = 0; p < pixels; p++) {
    for (let c = 0; c < components; c++) out[p * components + c] = rgba[4 * p + c];
  }
  return out;
}

/** RGBA (opaque) from interleaved samples of 1 or 3 components per pixel. */
export function toRGBA(samples, components) {
  const pixels = samples.length / components;
  const out = new Uint8ClampedArray(pixels * 4);
  for (let p = 0; p < pixels; p++) {
    for (let c = 0; c < 3; c++) out[4 * p + c] = samples[p * components + (components === 1 ? 0 : c)];
    out[4 * p + 3] = 255;
  }
  return out;
}
