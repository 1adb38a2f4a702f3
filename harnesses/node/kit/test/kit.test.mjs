// The kit's protocol loop, spoken to through in-memory streams: both framings, refusals,
// errors, bench and build.
import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { test } from "node:test";
import { Rejection, serve, specParse } from "../index.mjs";

const GRAY = { name: "jpeg", configuration: { quality: 90, encoded_color_space: "grayscale" } };

// Encodes to the samples reversed, decodes to the stream's bytes repeated.
const echo = {
  name: "echo", version: "1", kind: "library",
  ...specParse({
    accepts(config) {
      if (config.encoded === "rgb") throw new Rejection("JPEG-ECS-09", "no rgb here");
    },
    encode: (config, samples) => {
      if (config.quality === 13) throw new TypeError("unlucky quality");
      return Uint8Array.from(samples).reverse();
    },
    decode: (config, stream, shape) => {
      if (!stream.length) throw new Rejection("JPEG-DEC-01", "empty stream");
      return Uint8Array.from({ length: shape.reduce((a, b) => a * b, 1) }, (_, i) => stream[i % stream.length]);
    },
  }),
};

/** The replies to `input` (a string or Buffer): each a JSON header and the payload after it. */
async function exchange(codec, input) {
  const source = new PassThrough();
  const sink = new PassThrough();
  const chunks = [];
  sink.on("data", (c) => chunks.push(c));
  source.end(input);
  await serve(codec, { input: source, output: sink, exit: false });
  let rest = Buffer.concat(chunks);
  const replies = [];
  while (rest.length) {
    const end = rest.indexOf(0x0a);
    const header = JSON.parse(rest.subarray(0, end).toString());
    const n = header.payload ?? 0;
    replies.push([header, rest.subarray(end + 1, end + 1 + n)]);
    rest = rest.subarray(end + 1 + n);
  }
  return replies;
}

const lines = (...requests) => requests.map((r) => JSON.stringify(r) + "\n").join("");

test("JSON lines carry base64, and stop is answered", async () => {
  const replies = await exchange(echo, lines(
    { seq: 1, op: "start", protocol: 1 },
    { seq: 2, op: "parse", codec: GRAY },
    { seq: 3, op: "encode", handle: "1", chunk: { shape: [1, 3], dtype: "uint8", data: "AQID" } },
    { seq: 4, op: "decode", handle: "1", data: "CQg=", chunk_shape: [1, 3, 1] },
    { seq: 5, op: "stop" },
    { seq: 6, op: "stop" },
  ));
  const start = replies[0][0];
  assert.deepEqual([start.name, start.kind, start.language, start.framing], ["echo", "library", "JavaScript (Node.js)", undefined]);
  assert.deepEqual(replies[1][0], { seq: 2, status: "ok", handle: "1" });
  assert.deepEqual(replies[2][0], { seq: 3, status: "ok", data: "AwIB" });
  assert.deepEqual(replies[3][0], { seq: 4, status: "ok", chunk: { shape: [1, 3, 1], dtype: "uint8", data: "CQgJ" } });
  assert.deepEqual(replies.slice(4).map(([h]) => h), [{ seq: 5, status: "ok" }], "nothing is read after stop");
});

test("binary framing moves the bytes into payloads", async () => {
  const input = Buffer.concat([
    Buffer.from(lines({ seq: 1, op: "start", protocol: 1, framings: ["json", "binary"] }, { seq: 2, op: "parse", codec: GRAY })),
    Buffer.from(lines({ seq: 3, op: "encode", handle: "1", chunk: { shape: [2, 2], dtype: "uint8" }, payload: 4 })),
    Buffer.from([1, 2, 3, 0x0a]),
    Buffer.from(lines({ seq: 4, op: "decode", handle: "1", chunk_shape: [1, 5], payload: 2 })),
    Buffer.from([0xff, 0xd8]),
  ]);
  const replies = await exchange(echo, input);
  assert.equal(replies[0][0].framing, "binary");
  assert.deepEqual(replies[2][0], { seq: 3, status: "ok", payload: 4 });
  assert.deepEqual([...replies[2][1]], [0x0a, 3, 2, 1]);
  assert.deepEqual([...replies[3][1]], [0xff, 0xd8, 0xff, 0xd8, 0xff]);
});

test("refusals are rejected, failures are errors, the session goes on", async () => {
  const replies = await exchange(echo, "not json\n" + lines(
    { seq: 1, op: "parse", codec: GRAY },
    { seq: 2, op: "start", protocol: 1 },
    { seq: 3, op: "parse", codec: { ...GRAY, configuration: { quality: 90, encoded_color_space: "rgb" } } },
    { seq: 4, op: "parse", codec: { ...GRAY, configuration: { quality: 13, encoded_color_space: "grayscale" } } },
    { seq: 5, op: "encode", handle: "1", chunk: { shape: [1, 1], dtype: "uint8", data: "AA==" } },
    { seq: 6, op: "encode", handle: "1", chunk: { shape: [0, 1], dtype: "uint8", data: "" } },
    { seq: 7, op: "frobnicate" },
    { seq: 8, op: "build", options: {} },
  ));
  const statuses = replies.map(([h]) => [h.seq, h.status]);
  assert.deepEqual(statuses, [[null, "error"], [1, "error"], [2, "ok"], [3, "rejected"], [4, "ok"], [5, "error"], [6, "rejected"], [7, "error"], [8, "error"]]);
  assert.equal(replies[3][0].requirement, "JPEG-ECS-09");
  assert.equal(replies[5][0].exception, "TypeError");
  assert.match(replies[5][0].trace, /unlucky quality/);
  assert.equal(replies[6][0].requirement, "JPEG-DIM-02", "an empty chunk is refused, not an error");
});

test("bench times the codec; build answers for a codec with the role", async () => {
  const builder = {
    ...echo, name: "builder", roles: ["decode", "build"],
    build: (options) => {
      if (options.quality === 0) throw new Rejection("JPEG-Q-01", "quality 0");
      return { name: "jpeg", configuration: options };
    },
  };
  const replies = await exchange(builder, lines(
    { seq: 1, op: "start", protocol: 1 },
    { seq: 2, op: "parse", codec: GRAY },
    { seq: 3, op: "bench", handle: "1", of: "decode", repeat: 3, data: "CQg=", chunk_shape: [1, 3] },
    { seq: 4, op: "bench", handle: "1", of: "decode", repeat: 2, data: "", chunk_shape: [1, 3] },
    { seq: 5, op: "bench", handle: "1", of: "encode", repeat: 1, chunk: { shape: [1, 1], dtype: "uint8", data: "AA==" } },
    { seq: 6, op: "build", options: { encoded_color_space: "grayscale" } },
    { seq: 7, op: "build", options: { quality: 0, encoded_color_space: "grayscale" } },
  ));
  assert.deepEqual(replies[0][0].roles, ["decode", "build"]);
  assert.equal(replies[2][0].seconds.length, 3);
  assert.equal(replies[3][0].status, "rejected", "a refused run ends the bench with the refusal");
  assert.equal(replies[4][0].status, "error", "no encode role, no bench of encode");
  assert.deepEqual(replies[5][0], { seq: 6, status: "ok", codec: { name: "jpeg", configuration: { encoded_color_space: "grayscale" } } });
  assert.equal(replies[6][0].status, "rejected");
});
