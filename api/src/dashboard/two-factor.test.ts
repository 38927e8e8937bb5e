/**
 * Two-factor sign-in over HTTP against the real service, codes made by an independent TOTP
 * implementation (otpauth, as an authenticator app would): enrolling, a login that waits for its
 * code, replay and guessing, recovery codes, the fresh factor a sensitive action asks for, an
 * owner requiring it of everyone, and turning it off.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Secret, TOTP } from "otpauth";
import { startTestService, type TestService } from "../../../testing/service.ts";
import { merchantWithUser, signIn, signInAttempt, TEST_PASSWORD, type Browser } from "../../../testing/dashboard.ts";
import { createUser } from "./users.ts";

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
}, 60_000);
afterAll(async () => {
  await svc?.close();
});

const codeAt = (base32: string, offsetSteps = 0) => new TOTP({ secret: Secret.fromBase32(base32), digits: 6, period: 30, algorithm: "SHA1" }).generate({ timestamp: Date.now() + offsetSteps * 30_000 });

/** Enrolls the signed-in person: the key from the page, a first code, the ten recovery codes shown once. */
async function enroll(b: Browser): Promise<{ base32: string; recovery: string[] }> {
  const page = await (await b.get("/dashboard/sandbox/settings/account/two-factor")).text();
  expect(page).toContain("<svg class=\"qr\"");
  const base32 = /id="totp-key" class="secret">([A-Z2-7]+)</.exec(page)![1]!;
  // A wrong first code enrolls nothing.
  const wrong = codeAt(base32) === "000000" ? "111111" : "000000";
  expect((await b.post("/dashboard/sandbox/settings/account/two-factor", { code: wrong })).status).toBe(400);
  const done = await b.post("/dashboard/sandbox/settings/account/two-factor", { code: codeAt(base32) });
  expect(done.status).toBe(200);
  const recovery = [...(await done.text()).matchAll(/<li><code>([A-Z2-9]{5}-[A-Z2-9]{5})<\/code><\/li>/g)].map((m) => m[1]!);
  expect(recovery).toHaveLength(10);
  return { base32, recovery };
}

/** Signs in with the password: the login waits for the code (its cookie opens only the code page). */
async function passwordOnly(email: string, password = TEST_PASSWORD) {
  const res = await signInAttempt(svc, email, password);
  expect(res.status).toBe(303);
  expect(res.headers.get("location")).toStartWith("/dashboard/two-factor");
  const cookie = res.headers.getSetCookie().find((c) => c.startsWith("ps_dashboard="))!.split(";")[0]!;
  const codePage = await fetch(`${svc.url}/dashboard/two-factor`, { headers: { cookie } });
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await codePage.text())![1]!;
  const give = (code: string) =>
    fetch(`${svc.url}/dashboard/two-factor`, { method: "POST", headers: { cookie, "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ _csrf: csrf, code }), redirect: "manual" });
  const open = (path: string) => fetch(`${svc.url}${path}`, { headers: { cookie }, redirect: "manual" });
  return { cookie, give, open };
}

test("enrolled: the password alone opens only the code page; a right code signs in; the same code again does not; guessing is throttled", async () => {
  await merchantWithUser(svc, "ana@tf.test");
  const b = await signIn(svc, "ana@tf.test");
  const { base32 } = await enroll(b);
  const s = await passwordOnly("ana@tf.test");
  const waiting = await s.open("/dashboard/sandbox/transactions");
  expect(waiting.status).toBe(303);
  expect(waiting.headers.get("location")).toStartWith("/dashboard/two-factor");
  expect((await s.give("123456")).status).toBe(401);
  const code = codeAt(base32, 1);
  expect((await s.give(code)).status).toBe(303);
  expect((await s.open("/dashboard/sandbox/transactions")).status).toBe(200);
  // A second sign-in with the same code (a replay within its step): refused.
  const t = await passwordOnly("ana@tf.test");
  expect((await t.give(code)).status).toBe(401);
  // Guessing: five wrong codes, then 429 even for a right one.
  for (let i = 0; i < 4; i++) expect((await t.give(String(100000 + i))).status).toBe(401);
  const throttled = await t.give(codeAt(base32, 1));
  expect(throttled.status).toBe(429);
  expect(Number(throttled.headers.get("retry-after"))).toBeGreaterThan(0);
  const lines = await svc.services.database.sql`select action from app.security_events where email = 'ana@tf.test' and action like 'two_factor%' order by created_at`;
  expect(lines.filter((l) => l.action === "two_factor_failed").length).toBe(6);
  expect(lines.filter((l) => l.action === "two_factor_verified").length).toBe(1);
});

test("guesses sent all at once are counted one by one: five wrong, then throttled, none slipping past the count", async () => {
  await merchantWithUser(svc, "eli@tf.test");
  const b = await signIn(svc, "eli@tf.test");
  await enroll(b);
  const s = await passwordOnly("eli@tf.test");
  const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => s.give(String(200000 + i))));
  const statuses = answers.map((r) => r.status).sort();
  expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429, 429, 429, 429]);
  const [n] = await svc.services.database.sql`select count(*)::int as n from app.security_events where email = 'eli@tf.test' and action = 'two_factor_failed'`;
  expect(n!.n).toBe(5);
});

test("a recovery code signs in once; a sensitive action asks for a fresh factor; turning it off asks password and code", async () => {
  const { merchant } = await merchantWithUser(svc, "ben@tf.test");
  const b = await signIn(svc, "ben@tf.test");
  const { base32, recovery } = await enroll(b);
  const s = await passwordOnly("ben@tf.test");
  expect((await s.give(recovery[0]!.toLowerCase())).status).toBe(303);
  const again = await passwordOnly("ben@tf.test");
  expect((await again.give(recovery[0]!)).status).toBe(401);
  // As if the factor were passed long ago: a production settlement change asks for it again, and changes nothing.
  await svc.services.database.sql`update app.dashboard_logins set second_factor_at = now() - interval '1 hour' where user_id = (select id from app.dashboard_users where email = 'ben@tf.test')`;
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await (await s.open("/dashboard/production/settings/account")).text())![1]!;
  const change = () =>
    fetch(`${svc.url}/dashboard/production/settings/settlement/8453`, {
      method: "POST",
      headers: { cookie: s.cookie, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ _csrf: csrf, address: "0x00000000000000000000000000000000000000c3", password: TEST_PASSWORD }),
      redirect: "manual",
    });
  const before = await svc.services.database.sql`select address from app.merchant_settlements where merchant_id = ${merchant.id} and environment = 'production'`;
  const asked = await change();
  expect(asked.status).toBe(403);
  expect(await asked.text()).toContain("Confirm it is you");
  expect(await svc.services.database.sql`select address from app.merchant_settlements where merchant_id = ${merchant.id} and environment = 'production'`).toEqual(before);
  // The step-up: the code page for a signed-in login, then the change goes through.
  expect((await s.give(codeAt(base32, 1))).status).toBe(303);
  expect((await change()).status).toBe(303);
  // Off: the password and a code, both right.
  const off = (password: string, code: string) =>
    fetch(`${svc.url}/dashboard/sandbox/settings/account/two-factor/disable`, {
      method: "POST",
      headers: { cookie: s.cookie, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ _csrf: csrf, password, code }),
      redirect: "manual",
    });
  expect((await off("wrong password!!", codeAt(base32))).status).toBe(403);
  expect((await off(TEST_PASSWORD, recovery[1]!)).status).toBe(303);
  expect((await signInAttempt(svc, "ben@tf.test", TEST_PASSWORD)).headers.get("location")).toBe("/dashboard/sandbox");
});

test("an owner requires it of everyone: a member without it is led to set it up and can do nothing else until then", async () => {
  const { merchant } = await merchantWithUser(svc, "cleo@tf.test");
  const owner = await signIn(svc, "cleo@tf.test");
  // Not before the owner has it.
  const early = await owner.post("/dashboard/sandbox/settings/members/require-two-factor", { required: "true" });
  expect(early.headers.get("location")).toContain("two-factor-yourself-first");
  await enroll(owner);
  expect((await owner.post("/dashboard/sandbox/settings/members/require-two-factor", { required: "true" })).status).toBe(303);
  const m = await createUser(svc.services.database.db, merchant.id, "dora@tf.test", TEST_PASSWORD);
  await svc.services.database.sql`update app.dashboard_users set role = 'finance' where id = ${m.id}`;
  const d = await signIn(svc, "dora@tf.test");
  const led = await d.get("/dashboard/sandbox/transactions");
  expect(led.status).toBe(303);
  expect(led.headers.get("location")).toBe("/dashboard/sandbox/settings/account/two-factor?notice=two-factor-required");
  expect((await d.post("/dashboard/sandbox/settings/refunds", { automaticReturns: "off" })).status).toBe(403);
  const mine = await enroll(d);
  expect((await d.get("/dashboard/sandbox/transactions")).status).toBe(200);
  // Required: it cannot be turned off.
  expect((await d.post("/dashboard/sandbox/settings/account/two-factor/disable", { password: TEST_PASSWORD, code: codeAt(mine.base32) })).status).toBe(409);
  // Only an owner may change the requirement.
  expect((await d.post("/dashboard/sandbox/settings/members/require-two-factor", { required: "false" })).status).toBe(403);
});
