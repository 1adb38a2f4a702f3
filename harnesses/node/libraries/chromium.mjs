// Chromium's own JPEG decoder, as a web page gets it, driven headless through playwright-core.
//
// This driver is the side that speaks the protocol; the page (browser/page.mjs, with the
// same shim) decodes. Chromium is the system's (the harness is given its path), started
// with a fresh profile and nothing that reaches a network; the page and its modules are
// served from this folder by request interception, and every other request is refused.

import { readFileSync } from "node:fs";
import { Rejection, noYcbcrOutput } from "../kit/spec.mjs";

const ORIGIN = "http://zarr-jpeg-conformance.invalid";
// The files the page may load, by URL path; relative to this folder's parent.
const FILES = { "/browser/page.html": "text/html", "/browser/page.mjs": "text/javascript", "/kit/spec.mjs": "text/javascript" };
const ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
  "--disable-sync", "--no-first-run"];

export const library = (options) => ({
  name: "browser-chromium",
  language: "JavaScript (browser)",
  roles: ["decode"],
  packages: ["playwright-core"],
  async open() {
    if (!options.chromium) throw new Error("no Chromium: pass --chromium PATH");
    const { chromium } = await import("playwright-core");
    // headless: playwright adds --headless; launch() gives Chromium a new temporary
    // --user-data-dir and removes it on close.
    const browser = await chromium.launch({ executablePath: options.chromium, headless: true, args: ARGS });
    let page = null;
    const openPage = async () => {
      page = await browser.newPage();
      page.on("console", (message) => process.stderr.write(`page console: ${message.text()}\n`));
      page.on("pageerror", (err) => process.stderr.write(`page error: ${err.message}\n`));
      await page.route("**/*", (route) => {
        const url = new URL(route.request().url());
        const type = url.origin === ORIGIN ? FILES[url.pathname] : undefined;
        if (!type) return route.abort("blockedbyclient");
        return route.fulfill({ status: 200, contentType: type, body: readFileSync(new URL(`..${url.pathname}`, import.meta.url)) });
      });
      await page.goto(`${ORIGIN}/browser/page.html`);
      await page.waitForFunction(() => window.pageReady === true);
    };
    await openPage();
    const decodeCall = await page.evaluate(() => window.decodeCall);
    return {
      versions: { chromium: browser.version(), decode: decodeCall, "frame check": "harness shim" },
      accepts: (config) => noYcbcrOutput(config, "Chromium's canvas"),
      async decode(config, bytes, chunkShape) {
        // A renderer that crashed is replaced; the request that crashed it got its error.
        if (page.isClosed()) await openPage();
        let result;
        try {
          result = await page.evaluate(([c, data, shape]) => window.decodeChunk(c, data, shape),
            [config, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64"), chunkShape]);
        } catch (err) {
          if (/crash|closed/i.test(String(err?.message))) await page.close().catch(() => {});
          throw err;
        }
        if (result.rejected) {
          const { requirement, message, exception } = result.rejected;
          throw new Rejection(requirement ?? undefined, message, exception);
        }
        return new Uint8Array(Buffer.from(result.samples, "base64"));
      },
      close: () => browser.close(),
    };
  },
});
