// sharp: libvips (with mozjpeg) on Node.js, the image library most Node servers use.
//
// Its JPEG writer offers two chroma schemes, "4:4:4" and "4:2:0", and always stores
// three bands as YCbCr; its reader returns RGB or one gray band. metadata() reads the
// header without decoding, which is where the frame is checked against the chunk.

import sharp from "sharp";
import { Rejection, fitFrame, noYcbcrOutput } from "../kit/spec.mjs";

const SCHEMES = { "1,1": "4:4:4", "2,2": "4:2:0" }; // luma factors -> sharp's chromaSubsampling

// sharp rejects what it cannot read or write by throwing an Error whose message says why.
async function refusals(what, call) {
  try {
    return await call();
  } catch (err) {
    throw new Rejection(undefined, `sharp refused to ${what}: ${err?.message ?? err}`, err?.name ?? "Error");
  }
}

export const library = () => ({
  name: "node-sharp",
  language: "JavaScript (Node.js)",
  roles: ["encode", "decode"],
  packages: ["sharp"],
  async open() {
    return {
      // sharp.versions is what its native build reports (libvips and the JPEG library in it).
      versions: { libvips: sharp.versions.vips, mozjpeg: sharp.versions.mozjpeg, "frame check": "sharp metadata()" },
      accepts: (config) => noYcbcrOutput(config, "sharp"),
      async encode(config, samples, [height, width, components]) {
        if (config.encoded === "rgb") {
          throw new Rejection("JPEG-ECS-09", "sharp's JPEG writer converts three bands to YCbCr: it cannot store rgb without the transform");
        }
        const options = { quality: config.quality, progressive: false };
        if (config.encoded === "ycbcr") {
          options.chromaSubsampling = SCHEMES[config.subsampling[0].join()];
          if (!options.chromaSubsampling) {
            throw new Rejection(undefined, `sharp's JPEG writer offers chromaSubsampling 4:4:4 and 4:2:0 only, not the factors ${JSON.stringify(config.subsampling)}`);
          }
        }
        const image = sharp(samples, { raw: { width, height, channels: components } });
        // Without it sharp turns one band into three (sRGB) before writing.
        if (components === 1) image.toColourspace("b-w");
        return refusals("encode the chunk", () => image.jpeg(options).toBuffer());
      },
      async decode(config, bytes, chunkShape) {
        const meta = await refusals("read the stream's header", () => sharp(bytes).metadata());
        const [, , components] = fitFrame(config, { height: meta.height, width: meta.width, components: meta.channels }, chunkShape, bytes.length);
        const image = sharp(bytes);
        if (components === 1) image.toColourspace("b-w");
        return refusals("decode the stream", () => image.raw().toBuffer());
      },
    };
  },
});
