/** The example shop's payment-link variant against the real service: one link, made once, its page reached; the thanks page escapes what it shows. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestService, type TestService } from "../../testing/service.ts";
import { startMerchantExample, type MerchantExample } from "./server.ts";

let svc: TestService;
let shop: MerchantExample;
let key: string;
beforeAll(async () => {
  svc = await startTestService({ SERVICE_WEBHOOK_WORKER: "false" });
  const m = await svc.merchant("Mug shop");
  key = m.sandboxKey;
  shop = await startMerchantExample({ apiHost: svc.url, apiKey: key, merchantId: m.merchant.sandboxPublicId, dataDir: mkdtempSync(join(tmpdir(), "shop-link-")) });
});
afterAll(async () => {
  await shop?.stop();
  await svc?.close();
});

test("GET /pay-by-link sends the payer to one payment link of the product's price, which comes back to /thanks", async () => {
  const first = await fetch(`${shop.url}/pay-by-link`, { redirect: "manual" });
  expect(first.status).toBe(303);
  const second = await fetch(`${shop.url}/pay-by-link`, { redirect: "manual" });
  expect(second.headers.get("location")).toBe(first.headers.get("location"));
  const links = (await svc.call("GET", "/payment-links", { auth: key })).body.data;
  expect(links).toHaveLength(1);
  expect(links[0]).toMatchObject({ amount: "12.34", description: "A very good mug", redirectUrl: `${shop.url}/thanks`, url: first.headers.get("location") });
  const page = await fetch(`${svc.url}${new URL(first.headers.get("location")!).pathname}`);
  expect(await page.text()).toContain("A very good mug");
  const thanks = await (await fetch(`${shop.url}/thanks?paymentSessionId=ps_abc<script>`)).text();
  expect(thanks).toContain("<code>ps_abcscript</code>");
});
