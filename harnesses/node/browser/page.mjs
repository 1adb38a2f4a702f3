// A JPEG chunk decoded the way a web viewer gets pixels from the browser: createImageBitmap
// on the stream, drawn into a 2D canvas, read back with getImageData. The driver
// (libraries/chromium.mjs) calls window.decodeChunk and relays the result.

import { Rejection, fitFrame, fromRGBA, readFrame } from "../kit/spec.mjs";

// Colour management off where the API allows it: no ICC conversion of the image, an sRGB
// canvas (the driver's Chromium runs with an sRGB display profile), no premultiplication.
export const DECODE_CALL = "createImageBitmap(blob, {colorSpaceConversion: 'none', premultiplyAlpha: 'none'}), " +
  "OffscreenCanvas 2d (srgb) drawImage, getImageData";

const fromBase64 = (text) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));

function toBase64(bytes) {
  let text = "";
  for (let at = 0; at < bytes.length; at += 0x8000) text += String.fromCharCode(...bytes.subarray(at, at + 0x8000));
  return btoa(text);
}

async function decode(config, bytes, chunkShape) {
  // The browser reports no frame header: the shim reads it before anything is decoded.
  const [height, width, components] = fitFrame(config, readFrame(bytes), chunkShape, bytes.length);
  let bitmap;
  try {
    bitmap = await createImageBitmap(new Blob([bytes], { type: "image/jpeg" }), { colorSpaceConversion: "none", premultiplyAlpha: "none" });
  } catch (err) {
    // The browser's one answer to a stream it cannot decode.
    throw new Rejection(undefined, `Chromium refused the stream: ${err?.name}: ${err?.message}`, err?.name ?? "Error");
  }
  if (bitmap.width !== width || bitmap.height !== height) {
    throw new Rejection("JPEG-DIM-03", `Chromium decoded a ${bitmap.height}x${bitmap.width} (HxW) image for a chunk of ${height}x${width}`);
  }
  const canvas = new OffscreenCanvas(width, height);
  const context = canvas.getContext("2d", { colorSpace: "srgb", willReadFrequently: true });
  context.drawImage(bitmap, 0, 0);
  bitmap.close();
  return fromRGBA(context.getImageData(0, 0, width, height, { colorSpace: "srgb" }).data, components);
}

/** {samples: base64} or {rejected: {message, requirement, exception}}; anything else throws. */
window.decodeChunk = async (config, data, chunkShape) => {
  try {
    return { samples: toBase64(await decode(config, fromBase64(data), chunkShape)) };
  } catch (err) {
    if (!(err instanceof Rejection)) throw err;
    return { rejected: { message: err.message, requirement: err.requirement, exception: err.exception } };
  }
};
window.decodeCall = DECODE_CALL;
window.pageReady = true;
