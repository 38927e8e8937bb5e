/**
 * Settings, Your account, and the Outbox, over HTTP against the real service: a password change
 * (the current one asked, every other device signed out, this one kept through a fresh login, the
 * notice mailed through a real SMTP server), the device list and "sign out every other device";
 * the Outbox shows each mail and, where the service keeps its own mail, its text.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestService, type TestService } from "../../../testing/service.ts";
import { eventually } from "../../../testing/eventually.ts";
import { merchantWithUser, signIn, signInAttempt, TEST_PASSWORD } from "../../../testing/dashboard.ts";
import { startMailCatcher, type MailCatcher } from "../mail/catcher.ts";
import { deviceName } from "./device-name.ts";
import { createUser } from "./users.ts";

let svc: TestService;
let catcher: MailCatcher;
beforeAll(async () => {
  catcher = await startMailCatcher(mkdtempSync(join(tmpdir(), "account-mail-")));
  svc = await startTestService({ SERVICE_SMTP_URL: catcher.url });
}, 60_000);
afterAll(async () => {
  await svc?.close();
  await catcher?.stop();
});

const lines = (userId: string) => svc.services.database.sql`select action from app.security_events where user_id = ${userId} order by created_at, id`;

test("a password change asks the current one, signs out every other device, keeps this one, and mails the notice", async () => {
  const { user } = await merchantWithUser(svc, "erin@account.test");
  const here = await signIn(svc, "erin@account.test");
  const there = await signIn(svc, "erin@account.test");
  const page = await (await here.get("/dashboard/sandbox/settings/account")).text();
  expect(page.match(/<tr><td>[^<]*(?: <strong>\(this device\)<\/strong>)?<\/td>/g)?.length).toBe(2);
  expect(page).toContain("(this device)");

  const wrong = await here.post("/dashboard/sandbox/settings/account/password", { current: "not it at all", password: "a brand new password", confirm: "a brand new password" });
  expect(wrong.status).toBe(403);
  const differ = await here.post("/dashboard/sandbox/settings/account/password", { current: TEST_PASSWORD, password: "a brand new password", confirm: "another new password" });
  expect(differ.status).toBe(400);
  expect((await signInAttempt(svc, "erin@account.test", TEST_PASSWORD)).status).toBe(303); // nothing changed

  const done = await here.post("/dashboard/sandbox/settings/account/password", { current: TEST_PASSWORD, password: "a brand new password", confirm: "a brand new password" });
  expect(done.status).toBe(303);
  const fresh = done.headers.getSetCookie().find((c) => c.startsWith("ps_dashboard="))!.split(";")[0]!;
  // This browser goes on with its fresh login; its old one and the other device are signed out.
  expect((await fetch(`${svc.url}/dashboard/sandbox`, { headers: { cookie: fresh }, redirect: "manual" })).status).toBe(200);
  expect((await here.get("/dashboard/sandbox")).status).toBe(303);
  expect((await there.get("/dashboard/sandbox")).status).toBe(303);
  expect((await signInAttempt(svc, "erin@account.test", TEST_PASSWORD)).status).toBe(401);
  expect((await lines(user.id)).map((l) => l.action)).toContain("password_changed");
  await eventually(() => readdirSync(catcher.dir).length > 0 || undefined, "the notice mail");
  const [row] = await svc.services.database.sql`select kind, state from app.mail_outbox where to_address = 'erin@account.test'`;
  expect(row!.kind).toBe("password_changed");
});

test("sign out every other device: the others end at their next request, this one stays, the history says how many", async () => {
  const { user } = await merchantWithUser(svc, "finn@account.test");
  const here = await signIn(svc, "finn@account.test");
  const a = await signIn(svc, "finn@account.test");
  const b = await signIn(svc, "finn@account.test");
  const res = await here.post("/dashboard/sandbox/settings/account/sign-out-others");
  expect(res.status).toBe(303);
  expect(res.headers.get("location")).toContain("notice=signed-out-others");
  expect((await a.get("/dashboard/sandbox")).status).toBe(303);
  expect((await b.get("/dashboard/sandbox")).status).toBe(303);
  expect((await here.get("/dashboard/sandbox")).status).toBe(200);
  const [line] = await svc.services.database.sql`select detail from app.security_events where user_id = ${user.id} and action = 'signed_out_others'`;
  expect(line!.detail.ended).toBe(2);
  // Without the CSRF token: refused, nothing ended.
  const c = await signIn(svc, "finn@account.test");
  expect((await here.post("/dashboard/sandbox/settings/account/sign-out-others", {}, { csrf: null })).status).toBe(403);
  expect((await c.get("/dashboard/sandbox")).status).toBe(200);
});

test("the Outbox lists the account's mail; with the operator's SMTP it shows no text, with its own catcher it does", async () => {
  await merchantWithUser(svc, "gwen@account.test");
  const here = await signIn(svc, "gwen@account.test");
  await here.post("/dashboard/sandbox/settings/account/password", { current: TEST_PASSWORD, password: "gwen's new password", confirm: "gwen's new password" });
  const fresh = await signIn(svc, "gwen@account.test", "gwen's new password");
  const page = await eventually(async () => {
    const t = await (await fresh.get("/dashboard/sandbox/settings/outbox")).text();
    return t.includes("your Paysession password was changed") && t.includes(">sent<") ? t : undefined;
  }, "the notice sent, in the Outbox");
  expect(page).toContain("gwen@account.test");
  expect(page).not.toContain("mail-text");

  // A service with only sandbox networks keeps its own mail: the Outbox shows the text.
  const dataDir = mkdtempSync(join(tmpdir(), "catcher-data-"));
  const own = await startTestService({ SERVICE_DATA_DIR: dataDir }, { networks: svc.services.networks.filter((n) => n.environment === "sandbox") });
  try {
    expect(own.services.mailMode).toBe("catcher");
    await merchantWithUser(own, "hal@account.test");
    const form = await fetch(`${own.url}/dashboard/forgot-password`);
    const pre = form.headers.getSetCookie()[0]!.split(";")[0]!;
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())![1]!;
    await fetch(`${own.url}/dashboard/forgot-password`, { method: "POST", headers: { cookie: pre, "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ _csrf: csrf, email: "hal@account.test" }) });
    const b = await signIn(own, "hal@account.test");
    const outbox = await eventually(async () => {
      const t = await (await b.get("/dashboard/sandbox/settings/outbox")).text();
      return t.includes(">sent<") ? t : undefined;
    }, "the reset mail sent, in the Outbox");
    expect(outbox).toContain("Reset your Paysession password");
    expect(outbox).toMatch(/<pre class="mail-text">[^<]*\/dashboard\/reset-password\/rst_[0-9A-Za-z]{40}/);
    // Another owner of the account sees that the mail went out, never its link.
    const { merchant: hals } = (await own.services.database.sql`select merchant_id from app.dashboard_users where email = 'hal@account.test'`).map((r) => ({ merchant: r.merchant_id as string }))[0]!;
    await createUser(own.services.database.db, hals, "ida@account.test", TEST_PASSWORD);
    const ida = await (await (await signIn(own, "ida@account.test")).get("/dashboard/sandbox/settings/outbox")).text();
    expect(ida).toContain("Reset your Paysession password");
    expect(ida).toContain("its link is for hal@account.test alone");
    expect(ida).not.toContain("rst_");
    // And as a file of the catcher, under the data folder.
    expect(readdirSync(join(dataDir, "mail")).filter((f) => f.endsWith(".eml"))).toHaveLength(1);
  } finally {
    await own.close();
  }
}, 60_000);

test("a sign-in from a browser not seen in 90 days mails a notice; the first sign-in ever and a known browser do not", async () => {
  await merchantWithUser(svc, "ivy@account.test");
  const as = async (ua: string) => {
    const form = await fetch(`${svc.url}/dashboard/sign-in`, { headers: { "user-agent": ua } });
    const pre = form.headers.getSetCookie()[0]!.split(";")[0]!;
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())![1]!;
    const res = await fetch(`${svc.url}/dashboard/sign-in`, {
      method: "POST",
      headers: { cookie: pre, "content-type": "application/x-www-form-urlencoded", "user-agent": ua },
      body: new URLSearchParams({ _csrf: csrf, email: "ivy@account.test", password: TEST_PASSWORD }),
      redirect: "manual",
    });
    expect(res.status).toBe(303);
  };
  const notices = async () => (await svc.services.database.sql`select count(*)::int as n from app.mail_outbox where to_address = 'ivy@account.test' and kind = 'new_sign_in'`)[0]!.n;
  const FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:135.0) Gecko/20100101 Firefox/135.0";
  const CHROME = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36";
  await as(FIREFOX);
  expect(await notices()).toBe(0);
  await as(FIREFOX);
  expect(await notices()).toBe(0);
  await as(CHROME);
  expect(await notices()).toBe(1);
  await as(CHROME);
  expect(await notices()).toBe(1);
});

test("a device's name is what a person recognises", () => {
  expect(deviceName("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36")).toBe("Chrome on Linux");
  expect(deviceName("Mozilla/5.0 (Macintosh; Intel Mac OS X 14_1) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Safari/605.1.15")).toBe("Safari on macOS");
  expect(deviceName(null)).toBe("Unknown browser");
  expect(deviceName("curl/8.5.0")).toBe("curl/8.5.0");
});
