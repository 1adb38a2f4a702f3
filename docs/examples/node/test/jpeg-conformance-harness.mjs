// The conformance harness of a Zarr jpeg codec in JavaScript, on the harness kit: the kit speaks
// the protocol, this file calls the codec. The codec here is jpeg-js (it decodes; this harness does
// not encode), a JPEG library with no parser of its own, so specParse gives it the spec's parse
// rules. A codec that parses its configuration itself passes its own parse, encode and decode to
// serve instead: its verdicts are then its own.
import jpeg from "jpeg-js";
import { Rejection, serve, specParse } from "zarr-jpeg-conformance-harness";
import { fitFrame, fromRGBA, readFrame } from "zarr-jpeg-conformance-harness/spec";

const codec = specParse({
  // An optional feature the codec does not have is refused when parsing, as the spec asks.
  accepts(config) {
    if (config.decoded === "ycbcr") throw new Rejection("JPEG-DCS-05", "jpeg-js returns RGB, never the stored YCbCr");
  },
  decode(config, stream, chunkShape) {
    // Before any pixel is decoded: a frame that does not fit the chunk is refused, not cropped.
    const [, , components] = fitFrame(config, readFrame(stream), chunkShape, stream.length);
    let image;
    try {
      image = jpeg.decode(stream, { useTArray: true, formatAsRGBA: true });
    } catch (err) {
      // Every error of the library is a refusal of this stream.
      throw new Rejection(undefined, `jpeg-js refused the stream: ${err?.message ?? err}`, err?.name ?? "Error");
    }
    return fromRGBA(image.data, components);
  },
});

await serve({ name: "example-jpeg-js", version: "0.1.0", roles: ["decode"], versions: { "jpeg-js": "0.4.4" }, ...codec });
