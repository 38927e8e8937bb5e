/**
 * The clients as a merchant's project gets them: both packages packed by `npm pack` (their
 * `prepack` builds them), installed from the tarballs by `npm install --offline` into a fresh
 * project, then used without any TypeScript loader —
 * - @paysession/server from plain `node`, once as ESM (`import`) and once as CommonJS
 *   (`require`), against the real service: creates, a list walked page by page, a real webhook
 *   delivery (to a node:http receiver) verified, typed errors;
 * - its declarations checked by tsc in that project: node16 resolution (.mts and .cts) with
 *   Node's globals, the same with no globals at all (`lib: ["ES2022"]`, no @types/node), and
 *   bundler resolution with the DOM;
 * - @paysession/sdk bundled by a bundler (Bun.build) into a shop page (type-checked with
 *   bundler resolution) that opens the checkout of a real session in Chromium.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { Browser } from "playwright-core";
import { startTestService, type TestService } from "../testing/service.ts";
import { artifactsDir, launchChromium } from "../testing/browser.ts";
import { checkoutFrame } from "../testing/wallet.ts";

const ROOT = join(import.meta.dir, "..");
const TSC = join(ROOT, "node_modules", "typescript", "bin", "tsc");

let work: string;
let shop: string;
let svc: TestService;
let browser: Browser;
const tarballs: Record<string, string> = {};

/** Runs a command to its end; its stdout, or an error carrying its output. */
async function run(cmd: string[], cwd: string): Promise<string> {
  const proc = Bun.spawn(cmd, {
    cwd,
    stdout: "pipe",
    stderr: "pipe",
    env: {
      // bun on the PATH for the packages' prepack; npm's cache kept apart from the machine's.
      PATH: `${dirname(process.execPath)}:${process.env.PATH}`,
      HOME: process.env.HOME ?? work,
      npm_config_cache: join(work, "npm-cache"),
      npm_config_update_notifier: "false",
      npm_config_audit: "false",
      npm_config_fund: "false",
    },
  });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`${cmd.join(" ")} exited ${code}\n${out}\n${err}`);
  return out;
}

let packed: { name: string; filename: string; files: { path: string }[] }[];

async function packAndInstall(): Promise<void> {
  const out = await run(["npm", "pack", "./sdk/server", "./sdk", "--pack-destination", work, "--json"], ROOT);
  // The whole of stdout: a prepack that printed anything would make this throw.
  packed = JSON.parse(out);
  for (const p of packed) tarballs[p.name] = join(work, p.filename);
  writeFileSync(join(shop, "package.json"), JSON.stringify({ name: "shop", private: true }));
  await run(["npm", "install", "--offline", tarballs["@paysession/server"]!, tarballs["@paysession/sdk"]!], shop);
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "paysession-packages-"));
  shop = join(work, "shop");
  mkdirSync(shop);
  [, svc, browser] = await Promise.all([packAndInstall(), startTestService(), launchChromium()]);
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await svc?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

test("npm pack --json answers JSON only; each tarball holds its build, README, LICENSE and package.json, nothing else", () => {
  expect(packed.map((p) => [p.name, p.files.map((f) => f.path).sort()])).toEqual([
    [
      "@paysession/server",
      ["client", "errors", "index", "types", "webhooks"].flatMap((f) => [`dist/${f}.d.cts`, `dist/${f}.d.mts`]).concat(["dist/index.cjs", "dist/index.mjs", "LICENSE", "README.md", "package.json"]).sort(),
    ],
    ["@paysession/sdk", ["LICENSE", "README.md", "dist/index.d.ts", "dist/index.js", "dist/modal.d.ts", "dist/protocol.d.ts", "dist/result.d.ts", "package.json"]],
  ]);
  for (const name of ["@paysession/server", "@paysession/sdk"]) {
    const installed = join(shop, "node_modules", name);
    expect(readFileSync(join(installed, "README.md"), "utf8")).toStartWith(`# ${name}\n`);
    expect(readFileSync(join(installed, "LICENSE"), "utf8")).toStartWith("MIT License");
    expect(JSON.parse(readFileSync(join(installed, "package.json"), "utf8")).license).toBe("MIT");
  }
});

/**
 * One merchant server's work, the same as ESM and as CommonJS (only the first lines differ):
 * register a webhook endpoint served by node:http, create five sessions, walk the list two at a
 * time, verify the delivery of the last session's `payment_session.pending` from its raw body
 * and Node's headers object, and catch an API error. Prints what it saw as JSON.
 */
const MERCHANT_SERVER = `
async function main() {
  const { host, apiKey } = JSON.parse(process.argv[2]);
  const paysession = new Paysession({ apiKey, host, retryBaseMs: 20 });
  const deliveries = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      deliveries.push({ body, headers: req.headers });
      res.end("ok");
    });
  });
  await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
  const endpoint = await paysession.webhookEndpoints.create({ url: "http://127.0.0.1:" + server.address().port + "/webhooks" });

  const created = [];
  for (let i = 0; i < 5; i++) {
    created.push((await paysession.paymentSessions.create({ amount: "1.0" + i, currency: "USD", referenceId: "order-" + i })).paymentSessionId);
  }
  const firstPage = await paysession.paymentSessions.list({ limit: 2 });
  const listed = [];
  for await (const s of paysession.paymentSessions.list({ limit: 2 })) listed.push(s.paymentSessionId);

  const last = created[4];
  const deadline = Date.now() + 20000;
  let delivery;
  while (!(delivery = deliveries.find((d) => JSON.parse(d.body).data.paymentSessionId === last))) {
    if (Date.now() > deadline) throw new Error("no delivery for " + last);
    await new Promise((ok) => setTimeout(ok, 50));
  }
  const event = await verifyWebhook(delivery.body, delivery.headers, endpoint.secret);
  let tampered;
  try {
    await verifyWebhook(delivery.body.replace('"1.04"', '"9.04"'), delivery.headers, endpoint.secret);
  } catch (e) {
    tampered = e instanceof WebhookVerificationError ? e.message : "not a WebhookVerificationError: " + e;
  }
  let apiError;
  try {
    await paysession.paymentSessions.create({ amount: "3", currency: "USD" });
  } catch (e) {
    apiError = e instanceof PaysessionError ? { code: e.code, status: e.status } : "not a PaysessionError: " + e;
  }
  server.close();
  console.log(JSON.stringify({ resolved, created, firstPage: { size: firstPage.data.length, hasMore: firstPage.hasMore }, listed, event: { type: event.type, session: event.data.paymentSessionId, amount: event.data.amount }, tampered, apiError }));
}
main().catch((e) => {
  console.error(e);
  process.exit(1);
});
`;

const HEADERS = {
  esm: `import http from "node:http";
import { Paysession, PaysessionError, verifyWebhook, WebhookVerificationError } from "@paysession/server";
const resolved = import.meta.resolve("@paysession/server");
`,
  cjs: `"use strict";
const http = require("node:http");
const { Paysession, PaysessionError, verifyWebhook, WebhookVerificationError } = require("@paysession/server");
const resolved = require.resolve("@paysession/server");
`,
};

describe("@paysession/server from plain node", () => {
  for (const [system, file, built] of [
    ["esm", "server.mjs", "dist/index.mjs"],
    ["cjs", "server.cjs", "dist/index.cjs"],
  ] as const) {
    test(`${system}: create, list every page, verify a real delivery, typed errors`, async () => {
      writeFileSync(join(shop, file), HEADERS[system] + MERCHANT_SERVER);
      const { sandboxKey } = await svc.merchant(`Node ${system}`);
      const out = JSON.parse(await run(["node", file, JSON.stringify({ host: svc.url, apiKey: sandboxKey })], shop));
      expect(out.resolved).toEndWith(`node_modules/@paysession/server/${built}`);
      expect(out.created).toHaveLength(5);
      expect(out.firstPage).toEqual({ size: 2, hasMore: true });
      // Three pages of this merchant's sessions, newest first, each once.
      expect(out.listed).toEqual([...out.created].reverse());
      expect(out.event).toEqual({ type: "payment_session.pending", session: out.created[4], amount: "1.04" });
      expect(out.tampered).toBe("no signature matches");
      expect(out.apiError).toEqual({ code: "amount_invalid", status: 400 });
    }, 60_000);
  }
});

describe("declarations", () => {
  test("tsc types the server client for an ESM import and a require() (node16, with Node's types and with no globals at all) and for a bundler, and the browser SDK for a bundler", async () => {
    // Each file also holds a mistake the types must catch: were the package untyped (any),
    // the unused @ts-expect-error would fail the check.
    writeFileSync(
      join(shop, "check.mts"),
      `import { Paysession, verifyWebhook, type PaymentSession } from "@paysession/server";
const paysession = new Paysession({ apiKey: "sk_test_x", host: "http://localhost" });
export async function all(): Promise<PaymentSession[]> {
  const out: PaymentSession[] = [];
  for await (const s of paysession.paymentSessions.list({ limit: 10 })) out.push(s);
  const page = await paysession.paymentSessions.list();
  out.push(...page.data);
  const event = await verifyWebhook("{}", {}, "whsec_x");
  if (event.type === "settlement_address.updated") out.length = 0;
  // @ts-expect-error amounts are decimal strings
  await paysession.paymentSessions.create({ amount: 12, currency: "USD" });
  return out;
}
`,
    );
    writeFileSync(
      join(shop, "check.cts"),
      `import { Paysession, PaysessionError } from "@paysession/server";
const paysession = new Paysession({ apiKey: "sk_test_x", host: "http://localhost" });
export async function create(): Promise<string> {
  try {
    return (await paysession.paymentSessions.create({ amount: "12.34", currency: "USD" })).paymentSessionToken;
  } catch (e) {
    if (e instanceof PaysessionError) return e.code;
    throw e;
  }
}
// @ts-expect-error no such resource
paysession.payouts;
`,
    );
    const common = { strict: true, noEmit: true, target: "ES2022", skipLibCheck: false };
    // A Node project: Node's globals (@types/node, this repository's copy), no DOM.
    const node = { ...common, lib: ["ES2022"], typeRoots: [join(ROOT, "node_modules", "@types")], types: ["node"], module: "node16", moduleResolution: "node16" };
    writeFileSync(join(shop, "tsconfig.node.json"), JSON.stringify({ compilerOptions: node, files: ["check.mts", "check.cts"] }));
    // A Node project with no declared globals at all: neither @types/node nor the DOM. The
    // declarations must not name fetch, Headers or anything else only those declare.
    const bare = { ...common, lib: ["ES2022"], types: [], module: "node16", moduleResolution: "node16" };
    writeFileSync(join(shop, "check-bare.mts"), CHECK_BARE);
    writeFileSync(join(shop, "tsconfig.bare.json"), JSON.stringify({ compilerOptions: bare, files: ["check-bare.mts", "check.cts"] }));
    // A bundled app: the DOM, no Node.
    const bundler = { ...common, lib: ["ES2022", "DOM"], types: [], module: "ESNext", moduleResolution: "bundler" };
    writeFileSync(join(shop, "page.ts"), SHOP_PAGE);
    writeFileSync(join(shop, "tsconfig.bundler.json"), JSON.stringify({ compilerOptions: bundler, files: ["page.ts", "check.mts"] }));
    await Promise.all(["node", "bare", "bundler"].map((c) => run(["node", TSC, "-p", `tsconfig.${c}.json`], shop)));
  }, 60_000);
});

/** check.mts without `process` (which only @types/node declares): the server client in a project with no globals. */
const CHECK_BARE = `import { Paysession, verifyWebhook, type FetchFunction, type PaymentSession } from "@paysession/server";
const paysession = new Paysession({ apiKey: "sk_test_x", host: "http://localhost", fetch: undefined });
export async function all(rawBody: string, headers: Record<string, string>, get: { get(name: string): string | null }): Promise<PaymentSession[]> {
  const out: PaymentSession[] = [];
  for await (const s of paysession.paymentSessions.list({ limit: 10 })) out.push(s);
  const event = await verifyWebhook(rawBody, headers, "whsec_x");
  await verifyWebhook(rawBody, get, "whsec_x");
  if (event.type === "settlement_address.updated") out.length = 0;
  // @ts-expect-error amounts are decimal strings
  await paysession.paymentSessions.create({ amount: 12, currency: "USD" });
  return out;
}
export const none: FetchFunction | undefined = undefined;
`;

/** The shop's page script: imports the installed browser package; the session comes in the page's data attributes. */
const SHOP_PAGE = `import { init, PaysessionError, type PaymentResult } from "@paysession/sdk";

const data = document.body.dataset;
const paysession = init({ merchantId: data.merchantId!, baseUrl: data.baseUrl });
document.querySelector("#pay")!.addEventListener("click", async () => {
  let shown: string;
  try {
    const result: PaymentResult = await paysession.open({ paymentSessionId: data.sessionId!, paymentSessionToken: data.token! });
    shown = JSON.stringify(result);
  } catch (e) {
    shown = e instanceof PaysessionError ? e.code : String(e);
  }
  document.querySelector("#result")!.textContent = shown;
});
// @ts-expect-error the outcome is one of five words
export const wrong: PaymentResult["outcome"] = "paid";
`;

describe("@paysession/sdk in a bundled page", () => {
  test("a bundler builds the shop's page from the installed package; the page opens a real session's checkout in Chromium", async () => {
    writeFileSync(join(shop, "page.ts"), SHOP_PAGE);
    const built = await Bun.build({ entrypoints: [join(shop, "page.ts")], target: "browser", format: "esm", minify: true });
    expect(built.success).toBe(true);
    const script = await built.outputs[0]!.text();
    // From the package's build, not from this repository's sources.
    expect(readFileSync(join(shop, "node_modules/@paysession/sdk/dist/index.js"), "utf8")).toContain('SDK_VERSION = "1.0.0"');

    const { sandboxKey } = await svc.merchant("Bundled shop");
    const session = await svc.call("POST", "/payment-sessions", { auth: sandboxKey, body: { amount: "12.34", currency: "USD" } });
    expect(session.status).toBe(201);
    const attrs = { "merchant-id": session.body.merchantId, "base-url": svc.url, "session-id": session.body.paymentSessionId, token: session.body.paymentSessionToken };
    const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Shop</title><script type="module" src="/page.js"></script></head>
<body ${Object.entries(attrs).map(([k, v]) => `data-${k}="${v}"`).join(" ")}><main><h1>Shop</h1><button id="pay">Pay 12.34 USD</button><pre id="result"></pre></main></body></html>`;
    // The shop's own origin (localhost, the service is 127.0.0.1), under a strict CSP: its own script, the checkout framed.
    const page_ = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: (req) => {
        const csp = `default-src 'self'; script-src 'self'; style-src 'self'; frame-src ${svc.url}`;
        if (new URL(req.url).pathname === "/page.js") return new Response(script, { headers: { "content-type": "text/javascript" } });
        return new Response(html, { headers: { "content-type": "text/html; charset=utf-8", "content-security-policy": csp } });
      },
    });
    const context = await browser.newContext({ viewport: { width: 1000, height: 760 } });
    try {
      const page = await context.newPage();
      const problems: string[] = [];
      page.on("pageerror", (e) => problems.push(e.message));
      page.on("console", (m) => m.type() === "error" && problems.push(m.text()));
      await page.goto(`http://localhost:${page_.port}/`);
      await page.click("#pay");
      const frame = await checkoutFrame(page);
      await frame.waitForSelector("#screen-pay:not([hidden])");
      expect(await frame.textContent("#amount")).toBe("12.34 USD");
      expect(await page.getAttribute('[role="dialog"]', "aria-label")).toBe("Payment checkout");
      await page.screenshot({ path: join(artifactsDir("packages"), "bundled-shop-checkout.png") });
      // The keydown closes the modal (both the SDK and the checkout act on keydown) and removes the
      // focused frame; a whole press would then wait for a keyup into a frame that is gone (seen
      // once: the test's 60 s ran out there).
      await page.keyboard.down("Escape");
      await page.waitForFunction(() => document.querySelector("#result")?.textContent !== "");
      expect(JSON.parse((await page.textContent("#result"))!)).toEqual({ outcome: "closed", status: "PENDING", reason: "created", paymentSessionId: session.body.paymentSessionId });
      expect(problems).toEqual([]);
    } finally {
      await context.close();
      page_.stop(true);
    }
  }, 60_000);
});
