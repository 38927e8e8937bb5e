/**
 * The team end to end over HTTP, mail through a real SMTP server read back by mailparser:
 * invite → mail → accept → the new member's role holds; the link's abuses (reused, expired,
 * revoked, opened while signed in as someone else); forged posts by a Developer; a removed
 * member's open session; the last owner; ownership transferred; two owners demoting each other at once.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { simpleParser } from "mailparser";
import { startTestService, type TestService } from "../../../testing/service.ts";
import { eventually } from "../../../testing/eventually.ts";
import { csrfIn, merchantWithUser, signIn, TEST_PASSWORD } from "../../../testing/dashboard.ts";
import { startMailCatcher, type MailCatcher } from "../mail/catcher.ts";
import { createUser } from "./users.ts";

let svc: TestService;
let catcher: MailCatcher;
beforeAll(async () => {
  catcher = await startMailCatcher(mkdtempSync(join(tmpdir(), "members-mail-")));
  svc = await startTestService({ SERVICE_SMTP_URL: catcher.url, SERVICE_PUBLIC_URL: "http://localhost:4000" });
}, 60_000);
afterAll(async () => {
  await svc?.close();
  await catcher?.stop();
});

const sql = () => svc.services.database.sql;
async function inviteLink(to: string): Promise<string> {
  return eventually(async () => {
    let files: string[] = [];
    try {
      files = readdirSync(catcher.dir).sort();
    } catch {}
    for (const f of files.reverse()) {
      const m = await simpleParser(readFileSync(join(catcher.dir, f)));
      if ((m.to as { value: { address: string }[] }).value[0]!.address === to && /invited you/.test(m.subject ?? "")) {
        return /http:\/\/localhost:4000(\/dashboard\/invitations\/inv_[0-9A-Za-z]{40})/.exec(m.text ?? "")?.[1];
      }
    }
    return undefined;
  }, `the invitation to ${to}`);
}

/** The invitation page's form, posted as a browser would; returns the answer (303 + login cookie on success). */
async function accept(path: string, password = "a long member password", cookie = "") {
  const page = await fetch(`${svc.url}${path}`, { headers: { cookie } });
  if (page.status !== 200) return page;
  const pre = page.headers.getSetCookie().map((c) => c.split(";")[0]!).find((c) => c.startsWith("ps_dashboard_pre="))!;
  return fetch(`${svc.url}${path}`, {
    method: "POST",
    headers: { cookie: [pre, cookie].filter(Boolean).join("; "), "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ _csrf: csrfIn(await page.text())!, password, confirm: password }),
    redirect: "manual",
  });
}

test("invite → the mail → accept → a Developer: sandbox keys yes, production settlement and roles no (nothing changed)", async () => {
  const { merchant } = await merchantWithUser(svc, "olga@team.test");
  const o = await signIn(svc, "olga@team.test");
  const sent = await o.post("/dashboard/production/settings/members/invite", { email: "Dev@Team.test", role: "developer" });
  expect(sent.status).toBe(303);
  const link = await inviteLink("dev@team.test");
  const joined = await accept(link);
  expect(joined.status).toBe(303);
  const cookie = joined.headers.getSetCookie().find((c) => c.startsWith("ps_dashboard="))!.split(";")[0]!;
  const [dev] = await sql()`select id, role, merchant_id from app.dashboard_users where email = 'dev@team.test'`;
  expect(dev).toMatchObject({ role: "developer", merchant_id: merchant.id });
  // The same link again: used.
  expect((await fetch(`${svc.url}${link}`)).status).toBe(410);
  expect((await accept(link, "another long password")).status).toBe(410);

  const d = await signIn(svc, "dev@team.test", "a long member password");
  expect((await fetch(`${svc.url}/dashboard/sandbox`, { headers: { cookie }, redirect: "manual" })).status).toBe(200);
  expect((await d.post("/dashboard/sandbox/settings/api-keys", { name: "dev key", access: "full" })).status).toBe(303);
  const before = await sql()`select address from app.merchant_settlements where merchant_id = ${merchant.id} and environment = 'production'`;
  const forged = await d.post("/dashboard/production/settings/settlement/8453", { address: "0x00000000000000000000000000000000000000b2", password: "a long member password" });
  expect(forged.status).toBe(403);
  expect(await forged.text()).toContain("As Developer you cannot change a settlement address in production");
  expect(await sql()`select address from app.merchant_settlements where merchant_id = ${merchant.id} and environment = 'production'`).toEqual(before);
  const promote = await d.post(`/dashboard/sandbox/settings/members/${dev!.id}/role`, { role: "admin" });
  expect(promote.status).toBe(403);
  expect((await sql()`select role from app.dashboard_users where id = ${dev!.id}`)[0]!.role).toBe("developer");
  // The history names who did what.
  const lines = await sql()`select action, email from app.security_events where merchant_id = ${merchant.id} and action in ('member_invited', 'member_joined') order by created_at`;
  expect(lines.map((l) => [l.action, l.email])).toEqual([
    ["member_invited", "olga@team.test"],
    ["member_joined", "dev@team.test"],
  ]);
});

test("an invitation opened signed in as someone else, expired, revoked, or replaced does not work", async () => {
  await merchantWithUser(svc, "pia@team.test");
  const p = await signIn(svc, "pia@team.test");
  await p.post("/dashboard/sandbox/settings/members/invite", { email: "quinn@team.test", role: "viewer" });
  const first = await inviteLink("quinn@team.test");
  // Signed in as pia: refused, and the invitation is still there for quinn.
  const asOther = await fetch(`${svc.url}${first}`, { headers: { cookie: p.cookie } });
  expect(asOther.status).toBe(403);
  expect(await asOther.text()).toContain("This invitation is for quinn@team.test; you are signed in as pia@team.test");
  // A second invitation of the same email replaces the first.
  await p.post("/dashboard/sandbox/settings/members/invite", { email: "quinn@team.test", role: "support" });
  const second = await eventually(async () => {
    const l = await inviteLink("quinn@team.test");
    return l !== first ? l : undefined;
  }, "the second invitation");
  expect((await fetch(`${svc.url}${first}`)).status).toBe(410);
  // Revoked: dead.
  const [inv] = await sql()`select id from app.invitations where email = 'quinn@team.test' and revoked_at is null`;
  expect((await p.post(`/dashboard/sandbox/settings/members/invitations/${inv!.id}/revoke`)).status).toBe(303);
  expect((await fetch(`${svc.url}${second}`)).status).toBe(410);
  // Expired: dead.
  await p.post("/dashboard/sandbox/settings/members/invite", { email: "rex@team.test", role: "viewer" });
  const third = await inviteLink("rex@team.test");
  await sql()`update app.invitations set expires_at = now() - interval '1 second' where email = 'rex@team.test'`;
  expect((await fetch(`${svc.url}${third}`)).status).toBe(410);
  expect((await accept(third)).status).toBe(410);
  expect(await sql()`select 1 from app.dashboard_users where email in ('quinn@team.test', 'rex@team.test')`).toHaveLength(0);
  // An email that has an account with another business cannot be invited.
  await merchantWithUser(svc, "sam@elsewhere.test");
  const taken = await p.post("/dashboard/sandbox/settings/members/invite", { email: "sam@elsewhere.test", role: "viewer" });
  expect(taken.status).toBe(409);
});

test("a removed member's open session is refused at its next request; the last owner cannot leave; ownership is transferred", async () => {
  const { merchant } = await merchantWithUser(svc, "tara@team.test");
  const fin = await createUser(svc.services.database.db, merchant.id, "uma@team.test", TEST_PASSWORD);
  await sql()`update app.dashboard_users set role = 'finance' where id = ${fin.id}`;
  const t = await signIn(svc, "tara@team.test");
  const u = await signIn(svc, "uma@team.test");
  expect((await u.get("/dashboard/sandbox")).status).toBe(200);
  // The last owner cannot leave, nor be demoted.
  const [tara] = await sql()`select id from app.dashboard_users where email = 'tara@team.test'`;
  expect((await t.post(`/dashboard/sandbox/settings/members/${tara!.id}/remove`)).status).toBe(409);
  expect((await t.post(`/dashboard/sandbox/settings/members/${tara!.id}/role`, { role: "admin" })).status).toBe(409);
  // Removed: uma's open session is refused at once.
  expect((await t.post(`/dashboard/sandbox/settings/members/${fin.id}/remove`)).status).toBe(303);
  expect((await u.get("/dashboard/sandbox")).status).toBe(303);
  expect((await u.post("/dashboard/sandbox/settings/account/sign-out-others")).status).toBe(401);
  // Ownership to a new admin: tara becomes an administrator.
  const adm = await createUser(svc.services.database.db, merchant.id, "vic@team.test", TEST_PASSWORD);
  await sql()`update app.dashboard_users set role = 'admin' where id = ${adm.id}`;
  expect((await t.post(`/dashboard/sandbox/settings/members/${adm.id}/transfer-ownership`)).status).toBe(303);
  const roles = await sql()`select email, role from app.dashboard_users where merchant_id = ${merchant.id} order by email`;
  expect(roles.map((r) => [r.email, r.role])).toEqual([
    ["tara@team.test", "admin"],
    ["vic@team.test", "owner"],
  ]);
  // An admin cannot remove the owner.
  expect((await t.post(`/dashboard/sandbox/settings/members/${adm.id}/remove`)).status).toBe(403);
  const actions = await sql()`select action from app.security_events where merchant_id = ${merchant.id} and action like 'member_%' or (merchant_id = ${merchant.id} and action = 'ownership_transferred') order by created_at`;
  expect(actions.map((a) => a.action)).toEqual(["member_removed", "ownership_transferred"]);
});

test("a removed administrator's pending invitations end with them; an administrator cannot demote another", async () => {
  const { merchant } = await merchantWithUser(svc, "yara@team.test");
  const a1 = await createUser(svc.services.database.db, merchant.id, "zed@team.test", TEST_PASSWORD);
  const a2 = await createUser(svc.services.database.db, merchant.id, "abe@team.test", TEST_PASSWORD);
  await sql()`update app.dashboard_users set role = 'admin' where id in (${a1.id}, ${a2.id})`;
  const z = await signIn(svc, "zed@team.test");
  expect((await z.post("/dashboard/sandbox/settings/members/invite", { email: "zed-again@team.test", role: "admin" })).status).toBe(303);
  const link = await inviteLink("zed-again@team.test");
  expect((await z.post(`/dashboard/sandbox/settings/members/${a2.id}/role`, { role: "viewer" })).status).toBe(403);
  const y = await signIn(svc, "yara@team.test");
  expect((await y.post(`/dashboard/sandbox/settings/members/${a1.id}/remove`)).status).toBe(303);
  expect((await fetch(`${svc.url}${link}`)).status).toBe(410);
});

test("two owners demoting each other at once: one wins, the account keeps an owner", async () => {
  const { merchant, user: a } = await merchantWithUser(svc, "wes@team.test");
  const b = await createUser(svc.services.database.db, merchant.id, "xan@team.test", TEST_PASSWORD);
  const wa = await signIn(svc, "wes@team.test");
  const wb = await signIn(svc, "xan@team.test");
  const [ra, rb] = await Promise.all([wa.post(`/dashboard/sandbox/settings/members/${b.id}/role`, { role: "admin" }), wb.post(`/dashboard/sandbox/settings/members/${a.id}/role`, { role: "admin" })]);
  // The loser was demoted first: it acts as the administrator it now is, and may not touch an owner.
  expect([ra.status, rb.status].sort()).toEqual([303, 403]);
  const owners = await sql()`select count(*)::int as n from app.dashboard_users where merchant_id = ${merchant.id} and role = 'owner'`;
  expect(owners[0]!.n).toBe(1);
});
