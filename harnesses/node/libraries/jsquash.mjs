// @jsquash/jpeg: mozjpeg compiled to WebAssembly (from Squoosh), an encoder of its own with
// trellis quantization, as browser and edge code bundles it.
//
// Its encoder takes RGBA and a single `chroma_subsample` factor that it gives luma in both
// directions; its decoder returns RGBA and nothing of the header, so the frame is checked
// with the shim's reader. libjpeg's errors end in exit(1), which the Emscripten runtime
// throws as ExitStatus after printing the message: that is the library refusing, and the
// end of that program instance.

import { readFileSync } from "node:fs";
import encode, { init as initEncode } from "@jsquash/jpeg/encode.js";
import decode, { init as initDecode } from "@jsquash/jpeg/decode.js";
import { Rejection, fitFrame, fromRGBA, noYcbcrOutput, readFrame, toRGBA } from "../kit/spec.mjs";

const COLOR_SPACE = { grayscale: 1, rgb: 2, ycbcr: 3 }; // mozjpeg's J_COLOR_SPACE numbers
const wasm = (path) => readFileSync(new URL(import.meta.resolve(`@jsquash/jpeg/${path}`)));
// The version the library prints on the command line, from the build (mozjpeg has no numeric API).
const builtVersion = (bytes) => /mozjpeg version ([0-9.]+)/.exec(bytes.toString("latin1"))?.[1] ?? "unknown";

export const library = () => ({
  name: "node-jsquash",
  language: "JavaScript (Node.js)",
  roles: ["encode", "decode"],
  packages: ["@jsquash/jpeg"],
  async open() {
    let message = ""; // the last line libjpeg printed: the reason of an exit(1)
    const printed = { print: (text) => (message = text), printErr: (text) => (message = text) };
    // In Node the modules cannot fetch their .wasm; init() takes it compiled (once each).
    const encoderWasm = wasm("codec/enc/mozjpeg_enc.wasm");
    const modules = {
      encode: { init: initEncode, wasm: await WebAssembly.compile(encoderWasm), run: encode, ready: false },
      decode: { init: initDecode, wasm: await WebAssembly.compile(wasm("codec/dec/mozjpeg_dec.wasm")), run: decode, ready: false },
    };
    const call = async (what, which, ...args) => {
      const module = modules[which];
      if (!module.ready) {
        await module.init(module.wasm, printed);
        module.ready = true;
      }
      message = "";
      try {
        return await module.run(...args);
      } catch (err) {
        // After exit() the C program has ended mid-call (its stack is not unwound, nothing is
        // freed), and after a trap its memory is undefined: the next call gets a new instance.
        // Calling on into an exited module corrupts it within a few refusals.
        if (err?.name === "ExitStatus" || err instanceof WebAssembly.RuntimeError) module.ready = false;
        if (err?.name === "ExitStatus") throw new Rejection(undefined, `@jsquash/jpeg refused to ${what}: ${message || err.message}`, "ExitStatus");
        throw err;
      }
    };
    return {
      versions: { mozjpeg: builtVersion(encoderWasm), "frame check": "harness shim" },
      accepts: (config) => noYcbcrOutput(config, "@jsquash/jpeg"),
      async encode(config, samples, [height, width, components]) {
        const [h, v] = config.subsampling[0];
        if (h !== v) {
          throw new Rejection(undefined, `@jsquash/jpeg sets one chroma_subsample factor for both directions and cannot write the factors ${JSON.stringify(config.subsampling)}`);
        }
        const options = {
          quality: config.quality,
          color_space: COLOR_SPACE[config.encoded],
          // The spec wants baseline: 8-bit quantization tables and one sequential scan.
          baseline: true,
          progressive: false,
          auto_subsample: false,
          chroma_subsample: h,
        };
        const image = { data: toRGBA(samples, components), width, height };
        return new Uint8Array(await call("encode the chunk", "encode", image, options));
      },
      async decode(config, bytes, chunkShape) {
        const [, , components] = fitFrame(config, readFrame(bytes), chunkShape, bytes.length);
        const image = await call("decode the stream", "decode", bytes.slice().buffer);
        return fromRGBA(image.data, components);
      },
    };
  },
});
