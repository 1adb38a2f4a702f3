// @cornerstonejs/codec-libjpeg-turbo-8bit: libjpeg-turbo compiled to WebAssembly, the JPEG
// codec of cornerstone.js and the medical web viewers (OHIF) built on it.
//
// Its classes wrap the TurboJPEG API: JPEGEncoder takes 1 or 3 components, a quality, a
// TJSAMP subsampling and whether to write progressive; JPEGDecoder reads the header
// (readHeader, getFrameInfo), then decodes to gray or RGB. Both throw a C string pointer
// when libjpeg-turbo refuses.

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { Rejection, fitFrame, noYcbcrOutput } from "../kit/spec.mjs";

const require = createRequire(import.meta.url);
const PACKAGE = "@cornerstonejs/codec-libjpeg-turbo-8bit";
// TurboJPEG's subsampling enum (turbojpeg.h), by luma factors; chroma is always [1, 1].
const TJSAMP = { "1,1": 0, "2,1": 1, "2,2": 2, "1,2": 4, "4,1": 5, "1,4": 6 };
// The version libjpeg-turbo reports on the command line, from the build.
const builtVersion = (path) => /libjpeg-turbo version ([0-9.]+)/.exec(readFileSync(path).toString("latin1"))?.[1] ?? "unknown";

export const library = () => ({
  name: "node-cornerstone",
  language: "JavaScript (Node.js)",
  roles: ["encode", "decode"],
  packages: [PACKAGE],
  async open() {
    const factory = require(`${PACKAGE}/wasmjs`);
    let lib = await factory();
    // A thrown `const char*` reaches JavaScript as the address of the exception object,
    // which holds the string's address.
    const thrown = (err) => {
      const at = lib.HEAPU32[err >> 2];
      const end = lib.HEAPU8.indexOf(0, at);
      return new TextDecoder().decode(lib.HEAPU8.subarray(at, end)).trim();
    };
    const call = async (what, object, run) => {
      if (!lib) lib = await factory();
      const instance = new lib[object]();
      try {
        return run(instance);
      } catch (err) {
        if (typeof err === "number") throw new Rejection(undefined, `${PACKAGE} refused to ${what}: ${thrown(err)}`, "TurboJPEG");
        // After a trap the instance's memory is undefined: the next call gets a new one.
        if (err instanceof WebAssembly.RuntimeError) lib = null;
        throw err;
      } finally {
        if (lib) instance.delete();
      }
    };
    return {
      versions: { "libjpeg-turbo": builtVersion(require.resolve(`${PACKAGE}/wasm`)), "frame check": "JPEGDecoder.readHeader()" },
      accepts: (config) => noYcbcrOutput(config, PACKAGE),
      encode(config, samples, [height, width, components]) {
        if (config.encoded === "rgb") {
          throw new Rejection("JPEG-ECS-09", `${PACKAGE}'s JPEGEncoder writes 3 components as YCbCr: it cannot store rgb without the transform`);
        }
        const subsampling = TJSAMP[config.subsampling[0].join()];
        if (subsampling === undefined) {
          throw new Rejection(undefined, `TurboJPEG has no subsampling for the factors ${JSON.stringify(config.subsampling)}`);
        }
        return call("encode the chunk", "JPEGEncoder", (encoder) => {
          encoder.getDecodedBuffer({ width, height, bitsPerSample: 8, componentCount: components, isSigned: false }).set(samples);
          encoder.setQuality(config.quality);
          encoder.setProgressive(0); // its default is progressive; the spec wants baseline
          encoder.setSubSampling(subsampling);
          encoder.encode();
          const stream = encoder.getEncodedBuffer().slice();
          // encode() sizes its output buffer to the raw samples and tells TurboJPEG not to grow
          // it, and TurboJPEG then assumes tjBufSize() bytes: a longer stream has overrun the
          // heap (a trap when it reaches past memory), so the next call gets a new instance.
          if (stream.length > samples.length) lib = null;
          return stream;
        });
      },
      decode(config, bytes, chunkShape) {
        return call("decode the stream", "JPEGDecoder", (decoder) => {
          decoder.getEncodedBuffer(bytes.length).set(bytes);
          decoder.readHeader();
          const info = decoder.getFrameInfo();
          fitFrame(config, { height: info.height, width: info.width, components: info.componentCount }, chunkShape, bytes.length);
          decoder.decode();
          return decoder.getDecodedBuffer().slice();
        });
      },
    };
  },
});
