/**
 * The dashboard's Payment links (docs/payment-links.md): the create form (the API's checks and
 * messages), the list, a link's page with the payments it started, Deactivate.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestService, type TestService } from "../../../testing/service.ts";
import { merchantWithUser, signIn, type Browser } from "../../../testing/dashboard.ts";
import { bodyOfForm } from "./routes/payment-links.ts";

let svc: TestService;
let m: Awaited<ReturnType<typeof merchantWithUser>>;
let as: Browser;
beforeAll(async () => {
  svc = await startTestService({ SERVICE_WEBHOOK_WORKER: "false" });
  m = await merchantWithUser(svc, "links@l.example");
  as = await signIn(svc, "links@l.example");
});
afterAll(() => svc.close());

test("the form's fields become the API's body: only what was filled in, the amount of the kind chosen", () => {
  expect(bodyOfForm({ kind: "fixed", amount: "5.00", minAmount: "1.00", description: "x", maxUses: "", expiresOn: "" })).toEqual({ description: "x", amount: "5.00" });
  expect(bodyOfForm({ kind: "choose", amount: "5.00", minAmount: "1.00", maxAmount: "9.00", description: "x", maxUses: "3", expiresOn: "2030-01-31", redirectUrl: "https://a.example/" })).toEqual({
    description: "x",
    minAmount: "1.00",
    maxAmount: "9.00",
    maxUses: 3,
    expiresAt: "2030-01-31T23:59:59Z",
    redirectUrl: "https://a.example/",
  });
  expect(bodyOfForm({ maxUses: "two" }).maxUses).toBe("two");
});

test("create from the form, see it listed and on its page with its payments, deactivate it", async () => {
  const refused = await as.post("/dashboard/sandbox/payment-links", { kind: "fixed", amount: "0.10", description: "Too cheap" });
  expect(refused.status).toBe(400);
  const page = await refused.text();
  expect(page).toContain("amount must be at least 0.50");
  expect(page).toContain('value="Too cheap"');

  const made = await as.post("/dashboard/sandbox/payment-links", { kind: "fixed", amount: "15.00", description: "Yoga class", maxUses: "2" });
  expect(made.status).toBe(303);
  const at = made.headers.get("location")!;
  const id = /\/payment-links\/(plink_[0-9A-Za-z]{24})\?notice=payment-link-created$/.exec(at)?.[1];
  expect(id).toBeDefined();
  const api = await svc.call("GET", `/payment-links/${id}`, { auth: m.sandboxKey });
  expect(api.body).toMatchObject({ amount: "15.00", description: "Yoga class", maxUses: 2, status: "active" });

  const list = await (await as.get("/dashboard/sandbox/payment-links")).text();
  expect(list).toContain("Yoga class");
  expect(list).toContain("0 of 2");
  // Production shows its own links only.
  expect(await (await as.get("/dashboard/production/payment-links")).text()).not.toContain("Yoga class");

  // A payer starts a payment on the link's page; the link's dashboard page lists it.
  const form = await (await fetch(`${svc.url}/pay/${id}`)).text();
  const visit = /name="visit" value="([^"]+)"/.exec(form)![1]!;
  const go = await fetch(`${svc.url}/pay/${id}`, { method: "POST", redirect: "manual", headers: { "content-type": "application/x-www-form-urlencoded" }, body: `visit=${visit}` });
  const sid = new URLSearchParams(go.headers.get("location")!.split("#")[1]).get("paymentSessionId")!;
  const detail = await (await as.get(`/dashboard/sandbox/payment-links/${id}`)).text();
  expect(detail).toContain(sid);
  expect(detail).toContain(api.body.url);
  expect(detail).toContain("1 of 2");
  // The payment's own page links back to the link.
  expect(await (await as.get(`/dashboard/sandbox/transactions/${sid}`)).text()).toContain(`/dashboard/sandbox/payment-links/${id}`);

  const off = await as.post(`/dashboard/sandbox/payment-links/${id}/deactivate`);
  expect(off.status).toBe(303);
  expect(await (await as.follow(off)).text()).toContain("Deactivated");
  expect((await svc.call("GET", `/payment-links/${id}`, { auth: m.sandboxKey })).body.status).toBe("inactive");
  expect((await fetch(`${svc.url}/pay/${id}`)).status).toBe(410);
  // The payment it started is untouched.
  expect((await svc.call("GET", `/payment-sessions/${sid}`, { auth: m.sandboxKey })).body.status).toBe("PENDING");
});
