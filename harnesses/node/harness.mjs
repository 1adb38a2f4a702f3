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
// The protocol and the spec's rules (parse rules, chunk-shape table, a frame header reader)
// are the harness kit's (kit/, the npm package zarr-jpeg-conformance-harness; the browser page
// loads its spec.mjs too): this file only opens the library and names its versions.

import { readFileSync } from "node:fs";
import { serve, specParse } from "./kit/index.mjs";

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

const readJson = (path) => JSON.parse(readFileSync(new URL(path, import.meta.url), "utf8"));
/** The version of an npm package installed here, from its package.json (which not every package exports). */
const packageVersion = (name) => readJson(`./node_modules/${name}/package.json`).version;

const options = parseArgs(process.argv.slice(2));
const { library: describe } = await import(`./libraries/${options.library}.mjs`);
const library = describe(options);
let opened = null;
await serve({
  name: library.name, version: readJson("./package.json").version, kind: "library", language: library.language, roles: library.roles,
  async open() {
    try {
      opened = await library.open();
    } catch (err) {
      throw new Error(`cannot load ${library.packages.join(", ")} (${err?.message ?? err}); install the harness's packages with ` +
        "`python -m zarr_jpeg_conformance.harnesses install`");
    }
  },
  versions: () => ({
    node: process.versions.node, ...Object.fromEntries(library.packages.map((name) => [name, packageVersion(name)])),
    ...(opened.versions ?? {}), parse: "harness shim",
  }),
  ...specParse({
    accepts: (config) => opened.accepts?.(config),
    encode: (config, samples, geometry) => opened.encode(config, samples, geometry),
    decode: (config, stream, chunkShape) => opened.decode(config, stream, chunkShape),
  }),
  close: () => opened?.close?.(),
});
