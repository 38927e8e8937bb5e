/**
 * Password reset end to end over HTTP, with mail through a real SMTP server (the catcher) read
 * back by mailparser: the same answer for unknown emails, a link that works once and for 30
 * minutes, every session ended, the notice mailed, the throttle, and a service that has no mail.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { simpleParser } from "mailparser";
import { startTestService, type TestService } from "../../../testing/service.ts";
import { eventually } from "../../../testing/eventually.ts";
import { csrfIn, merchantWithUser, signIn, signInAttempt, TEST_PASSWORD } from "../../../testing/dashboard.ts";
import { startMailCatcher, type MailCatcher } from "../mail/catcher.ts";

let svc: TestService;
let catcher: MailCatcher;
beforeAll(async () => {
  catcher = await startMailCatcher(mkdtempSync(join(tmpdir(), "reset-mail-")));
  svc = await startTestService({ SERVICE_SMTP_URL: catcher.url, SERVICE_PUBLIC_URL: "http://localhost:4000" });
}, 60_000);
afterAll(async () => {
  await svc?.close();
  await catcher?.stop();
});

const files = () => {
  try {
    return readdirSync(catcher.dir).sort();
  } catch {
    return [];
  }
};
/** The mails to `to` so far, parsed, oldest first. */
async function mailsTo(to: string) {
  const all = await Promise.all(files().map((f) => simpleParser(readFileSync(join(catcher.dir, f)))));
  return all.filter((m) => (m.to as { value: { address: string }[] }).value.some((v) => v.address === to));
}

/** The forgot-password form as a browser fills it, from `ip` (the socket: here always 127.0.0.1). */
async function ask(email: string, headers: Record<string, string> = {}) {
  const form = await fetch(`${svc.url}/dashboard/forgot-password`);
  const pre = form.headers.getSetCookie().map((c) => c.split(";")[0]!).find((c) => c.startsWith("ps_dashboard_pre="))!;
  const csrf = csrfIn(await form.text())!;
  return fetch(`${svc.url}/dashboard/forgot-password`, {
    method: "POST",
    headers: { cookie: pre, "content-type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams({ _csrf: csrf, email }),
  });
}

/** The reset page's form, posted as a browser would. */
async function reset(path: string, password: string, confirm = password) {
  const form = await fetch(`${svc.url}${path}`);
  if (form.status !== 200) return form;
  const pre = form.headers.getSetCookie().map((c) => c.split(";")[0]!).find((c) => c.startsWith("ps_dashboard_pre="))!;
  const csrf = csrfIn(await form.text())!;
  return fetch(`${svc.url}${path}`, {
    method: "POST",
    headers: { cookie: pre, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ _csrf: csrf, password, confirm }),
    redirect: "manual",
  });
}

const linkIn = (text: string) => /http:\/\/localhost:4000(\/dashboard\/reset-password\/rst_[0-9A-Za-z]{40})/.exec(text)?.[1];

test("an account's email gets a link; an unknown email gets the same answer and no mail", async () => {
  await merchantWithUser(svc, "ada@reset.test");
  const known = await ask("Ada@Reset.test");
  const unknown = await ask("nobody@reset.test");
  expect(known.status).toBe(200);
  expect(unknown.status).toBe(200);
  const say = (t: string) => /If an account uses that email, a link to set a new password is on its way/.test(t);
  expect(say(await known.text())).toBe(true);
  expect(say(await unknown.text())).toBe(true);
  const [mail] = await eventually(async () => ((await mailsTo("ada@reset.test")).length ? mailsTo("ada@reset.test") : undefined), "the reset mail");
  expect(mail!.subject).toBe("Reset your Paysession password");
  expect(linkIn(mail!.text ?? "")).toBeDefined();
  expect(await mailsTo("nobody@reset.test")).toHaveLength(0);
  // Stored hashed: the link's secret is nowhere in the table.
  const secret = linkIn(mail!.text!)!.split("/").at(-1)!;
  const rows = await svc.services.database.sql`select token_hash from app.password_resets`;
  expect(rows.some((r) => r.token_hash === secret)).toBe(false);
});

test("the link sets the password once: every session ends, the old password stops, a notice is mailed, the link is dead after", async () => {
  const { user } = await merchantWithUser(svc, "bob@reset.test");
  const elsewhere = await signIn(svc, "bob@reset.test");
  expect((await elsewhere.get("/dashboard/sandbox")).status).toBe(200);
  await ask("bob@reset.test");
  const [mail] = await eventually(async () => ((await mailsTo("bob@reset.test")).length ? mailsTo("bob@reset.test") : undefined), "the reset mail");
  const path = linkIn(mail!.text!)!;
  // The page names the email it is for; two different passwords and a short one are refused and change nothing.
  const page = await fetch(`${svc.url}${path}`);
  expect(await page.text()).toContain("bob@reset.test");
  expect(page.headers.get("referrer-policy")).toBe("no-referrer");
  expect((await reset(path, "a brand new password", "another password!!")).status).toBe(400);
  expect((await reset(path, "short")).status).toBe(400);
  const done = await reset(path, "a brand new password");
  expect(done.status).toBe(303);
  expect(done.headers.get("location")).toBe("/dashboard/sign-in?notice=password-reset");
  // The other device is signed out; the old password no longer works, the new one does.
  expect((await elsewhere.get("/dashboard/sandbox")).status).toBe(303);
  expect((await signInAttempt(svc, "bob@reset.test", TEST_PASSWORD)).status).toBe(401);
  expect((await signInAttempt(svc, "bob@reset.test", "a brand new password")).status).toBe(303);
  // Used once: the page and a replayed post are both "no longer works", and nothing changes.
  expect((await fetch(`${svc.url}${path}`)).status).toBe(410);
  expect((await reset(path, "a third password here")).status).toBe(410);
  expect((await signInAttempt(svc, "bob@reset.test", "a brand new password")).status).toBe(303);
  // The history has the reset; the notice reached the person.
  const lines = await svc.services.database.sql`select action from app.security_events where user_id = ${user.id} and action like 'password_reset%' order by created_at`;
  expect(lines.map((l) => l.action)).toEqual(["password_reset_requested", "password_reset"]);
  const notice = await eventually(async () => (await mailsTo("bob@reset.test")).find((m) => m.subject?.endsWith("your Paysession password was reset")), "the notice");
  expect(notice.text).toContain("Every other signed-in device was signed out");
});

test("an expired link, a malformed one and a newer reset's older link are dead; a forged cross-site post is refused", async () => {
  await merchantWithUser(svc, "carol@reset.test");
  await ask("carol@reset.test");
  await ask("carol@reset.test");
  const mails = await eventually(async () => ((await mailsTo("carol@reset.test")).length >= 2 ? mailsTo("carol@reset.test") : undefined), "two reset mails");
  const [first, second] = mails.map((m) => linkIn(m.text!)!);
  expect((await fetch(`${svc.url}/dashboard/reset-password/rst_short`)).status).toBe(410);
  expect((await fetch(`${svc.url}/dashboard/reset-password/%E0%A4%A`)).status).toBeLessThan(500);
  // A cross-site post with a planted cookie: refused by the origin check, the link still works.
  const pageRes = await fetch(`${svc.url}${second}`);
  const pre = pageRes.headers.getSetCookie().map((c) => c.split(";")[0]!).find((c) => c.startsWith("ps_dashboard_pre="))!;
  const forged = await fetch(`${svc.url}${second}`, {
    method: "POST",
    headers: { cookie: pre, "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "cross-site", origin: "http://evil.test" },
    body: new URLSearchParams({ _csrf: csrfIn(await pageRes.text())!, password: "attacker's password", confirm: "attacker's password" }),
    redirect: "manual",
  });
  expect(forged.status).toBe(403);
  expect((await reset(second!, "carol's new password")).status).toBe(303);
  // Using the newer link ended the older one.
  expect((await fetch(`${svc.url}${first}`)).status).toBe(410);
  // An expired link: as if 31 minutes had passed.
  await ask("carol@reset.test");
  const third = await eventually(async () => {
    const all = await mailsTo("carol@reset.test");
    return all.filter((m) => m.subject === "Reset your Paysession password").length >= 3 ? linkIn(all.filter((m) => m.subject === "Reset your Paysession password").at(-1)!.text!) : undefined;
  }, "a third link");
  await svc.services.database.sql`update app.password_resets set expires_at = now() - interval '1 second' where used_at is null`;
  expect((await fetch(`${svc.url}${third}`)).status).toBe(410);
});

test("at most three links per email an hour (the same answer after); ten asks per address an hour, then 429", async () => {
  // A service of its own: the asks above count toward this address's hour.
  const own = await startTestService({ SERVICE_SMTP_URL: catcher.url });
  const prev = svc;
  svc = own;
  try {
    await merchantWithUser(svc, "dan@reset.test");
    for (let i = 0; i < 5; i++) expect((await ask("dan@reset.test")).status).toBe(200);
    const [links] = await svc.services.database.sql`select count(*)::int as n from app.password_resets r join app.dashboard_users u on u.id = r.user_id where u.email = 'dan@reset.test'`;
    expect(links!.n).toBe(3);
    const lines = await svc.services.database.sql`select detail->>'linkSent' as sent from app.security_events where action = 'password_reset_requested' order by created_at`;
    expect(lines.map((l) => l.sent)).toEqual(["true", "true", "true", "false", "false"]);
    for (let i = 0; i < 5; i++) expect((await ask(`someone${i}@reset.test`)).status).toBe(200);
    const over = await ask("someone-else@reset.test");
    expect(over.status).toBe(429);
    expect(over.headers.get("retry-after")).toBe("3600");
    expect(await over.text()).toContain("Too many reset links were asked for from your address");
  } finally {
    svc = prev;
    await own.close();
  }
}, 60_000);

test("a service with a production network and no SMTP setting says it cannot send a link, and sends none", async () => {
  const own = await startTestService();
  try {
    expect(own.services.mailMode).toBe("off");
    const res = await fetch(`${own.url}/dashboard/forgot-password`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("SERVICE_SMTP_URL");
    const post = await fetch(`${own.url}/dashboard/forgot-password`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "email=a%40b.test" });
    expect(post.status).toBe(409);
    const [n] = await own.services.database.sql`select count(*)::int as n from app.mail_outbox`;
    expect(n!.n).toBe(0);
  } finally {
    await own.close();
  }
}, 60_000);
