/**
 * The browser bundles, built with Bun.build from the sources in this repository when first
 * asked for and kept for the life of the process (they are derived from the code, not data):
 * the SDK's script-tag build (IIFE) and ESM build, and the checkout page's script. Each has
 * a content hash, used as its ETag and in the checkout page's asset URLs.
 */
import { join } from "node:path";
import { readFileSync } from "node:fs";

const ROOT = join(import.meta.dir, "..", "..", "..");

export interface Asset {
  body: string;
  hash: string;
  contentType: string;
}

export type BundleName = "sdk.js" | "sdk.mjs" | "checkout.js";

const ENTRIES: Record<BundleName, { entry: string; format: "iife" | "esm" }> = {
  "sdk.js": { entry: join(ROOT, "sdk", "src", "browser.ts"), format: "iife" },
  "sdk.mjs": { entry: join(ROOT, "sdk", "src", "module.ts"), format: "esm" },
  "checkout.js": { entry: join(import.meta.dir, "client", "main.ts"), format: "esm" },
};

const built = new Map<BundleName, Promise<Asset>>();

function hashOf(text: string): string {
  const h = new Bun.CryptoHasher("sha256");
  h.update(text);
  return h.digest("base64url").slice(0, 16);
}

async function build(name: BundleName): Promise<Asset> {
  const { entry, format } = ENTRIES[name];
  const out = await Bun.build({ entrypoints: [entry], target: "browser", format, minify: true, sourcemap: "none" });
  if (!out.success || !out.outputs[0]) throw new Error(`building ${name} failed: ${out.logs.map(String).join("; ")}`);
  const body = await out.outputs[0].text();
  return { body, hash: hashOf(body), contentType: "text/javascript; charset=utf-8" };
}

export function bundle(name: BundleName): Promise<Asset> {
  let p = built.get(name);
  if (!p) {
    p = build(name);
    // A failed build is tried again on the next request rather than remembered.
    p.catch(() => built.delete(name));
    built.set(name, p);
  }
  return p;
}

let css: Asset | undefined;
export function stylesheet(): Asset {
  if (!css) {
    const body = readFileSync(join(import.meta.dir, "checkout.css"), "utf8");
    css = { body, hash: hashOf(body), contentType: "text/css; charset=utf-8" };
  }
  return css;
}

/** The checkout page, with its assets' hashes in their URLs (so they may be cached for good). */
export async function checkoutPage(): Promise<Asset> {
  const js = await bundle("checkout.js");
  const body = readFileSync(join(import.meta.dir, "page.html"), "utf8").replace("__CSS_VERSION__", stylesheet().hash).replace("__JS_VERSION__", js.hash);
  return { body, hash: hashOf(body), contentType: "text/html; charset=utf-8" };
}
