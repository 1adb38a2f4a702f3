// jpeg-js: a pure-JavaScript decoder of the family neuroglancer's vendored jpgjs belongs to.
// It ignores APP14 and converts every 3-component image from YCbCr, as jpgjs does.

import { createRequire } from "node:module";
import { Rejection, fitFrame, noYcbcrOutput, readFrame } from "../kit/spec.mjs";

const require = createRequire(import.meta.url);

export const library = () => ({
  name: "node-jpeg-js",
  language: "JavaScript (Node.js)",
  roles: ["decode"],
  packages: ["jpeg-js"],
  async open() {
    const jpeg = require("jpeg-js");
    return {
      versions: { "frame check": "harness shim" },
      accepts: (config) => noYcbcrOutput(config, "jpeg-js"),
      decode(config, bytes, chunkShape) {
        // jpeg-js allocates from the frame header before any check of its own.
        const [, , components] = fitFrame(config, readFrame(bytes), chunkShape, bytes.length);
        let image;
        try {
          image = jpeg.decode(bytes, { useTArray: true, formatAsRGBA: false });
        } catch (err) {
          // Throwing is how jpeg-js refuses a stream.
          throw new Rejection(undefined, `jpeg-js refused the stream: ${err?.message ?? err}`, err?.name ?? "Error");
        }
        // It always hands back three channels; a grayscale image is repeated in each.
        if (components === 3) return image.data;
        const gray = new Uint8Array(image.width * image.height);
        for (let i = 0; i < gray.length; i++) gray[i] = image.data[3 * i];
        return gray;
      },
    };
  },
});
