#!/usr/bin/env node
// Harnesses of zarr-jpeg-conformance for JavaScript JPEG libraries, speaking the harness
// protocol (docs/protocol.md): each puts one library, called the way a Zarr codec written in
// JavaScript would call it, under test.
//
//   node --disable-wasm-trap-handler --wasm-max-mem-pages=2048 harness.mjs \
//        --library jpeg-js|pdfjs|sharp|jsquash|cornerstone|chromium [--chromium PATH]
//
// `npm ci` in this folder installs the pinned packages. The flags bound what V8 reserves
// for each WebAssembly memory, so that the WASM libraries start under the client's
// address-space limit (--harness-memory; see NODE_WASM_FLAGS in harnesses/__init__.py).
// What is the harness's own and not the
// library's (the spec's parse rules, the chunk-shape table, a frame header reader) is in
// shim.mjs, which the browser page shares; protocol.mjs speaks the protocol.

import { serve } from "./protocol.mjs";

const LIBRARIES = ["jpeg-js", "pdfjs", "sharp", "jsquash", "cornerstone", "chromium"];

function parseArgs(argv) {
  const usage = `usage: node harness.mjs --library ${LIBRARIES.join("|")} [--chromium PATH]`;
  const options = {};
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split(/=(.*)/s, 2);
    if (flag === "--help" || flag === "-h") {
      process.stderr.write(usage + "\n");
      process.exit(0);
    }
    if (flag !== "--library" && flag !== "--chromium") {
      process.stderr.write(`unknown argument ${argv[i]}\n${usage}\n`);
      process.exit(2);
    }
    options[flag.slice(2)] = inline ?? argv[++i];
  }
  if (!LIBRARIES.includes(options.library ?? "")) {
    process.stderr.write(`--library must be one of ${LIBRARIES.join(", ")}\n${usage}\n`);
    process.exit(2);
  }
  return options;
}

const options = parseArgs(process.argv.slice(2));
const { library } = await import(`./libraries/${options.library}.mjs`);
await serve(library(options));
