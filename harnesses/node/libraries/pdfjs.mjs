// pdf.js's JpegImage: the upstream of neuroglancer's jpgjs, which honours APP14.

import { Rejection, fitFrame, noYcbcrOutput, readFrame } from "../kit/spec.mjs";

export const library = () => ({
  name: "node-pdfjs",
  language: "JavaScript (Node.js)",
  roles: ["decode"],
  packages: ["pdfjs-dist"],
  async open() {
    const { JpegImage } = await import("pdfjs-dist/image_decoders/pdf.image_decoders.mjs");
    return {
      versions: { "frame check": "harness shim" },
      accepts: (config) => noYcbcrOutput(config, "pdf.js"),
      decode(config, bytes, chunkShape) {
        // JpegImage reports the frame only after allocating for it.
        fitFrame(config, readFrame(bytes), chunkShape, bytes.length);
        try {
          const image = new JpegImage();
          image.parse(bytes);
          return image.getData({ width: image.width, height: image.height, forceRGB: false, forceRGBA: false });
        } catch (err) {
          // Throwing is how pdf.js refuses a stream.
          throw new Rejection(undefined, `pdfjs-dist refused the stream: ${err?.message ?? err}`, err?.name ?? "Error");
        }
      },
    };
  },
});
