/**
 * Sign-in, sign-out and sign-up write their security-history line in their own transaction
 * (logins.ts, sign-up.ts), as every change does (http/security-history.test.ts): a line that
 * cannot be written undoes the login, the logout or the new account.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestService, type TestService } from "../../../testing/service.ts";
import { csrfIn, merchantWithUser, signIn, signInAttempt } from "../../../testing/dashboard.ts";
import { decodeFirst, decodeRows, rowShape, col } from "../db/rows.ts";

let svc: TestService;
const sql = () => svc.services.database.sql;

beforeAll(async () => {
  svc = await startTestService({ SERVICE_WEBHOOK_WORKER: "false", SERVICE_DASHBOARD_SIGNUP: "true" });
}, 60_000);
afterAll(() => svc.close());

const Count = rowShape("test count", { n: col.int });
const Line = rowShape("test line", { action: col.text, email: col.nullable(col.text), detail: col.json() });

/** While `run` runs, the security history refuses lines of `action` for `email` (as a full disk or a broken constraint would). */
async function refusingLines<T>(email: string, action: string, run: () => Promise<T>): Promise<T> {
  await sql().unsafe(`
    create or replace function app.test_refuse_login_line() returns trigger language plpgsql as $$
    begin if new.email = '${email}' and new.action = '${action}' then raise exception 'line refused by test'; end if; return new; end $$;
    create trigger test_refuse_login_line before insert on app.security_events for each row execute function app.test_refuse_login_line();`);
  try {
    return await run();
  } finally {
    await sql().unsafe(`drop trigger test_refuse_login_line on app.security_events; drop function app.test_refuse_login_line();`);
  }
}

const linesOf = async (email: string) => decodeRows(Line, await sql()`select action, email, detail from app.security_events where email = ${email} order by created_at, id`);
const loginsOf = async (userId: string) => decodeFirst(Count, await sql()`select count(*)::int as n from app.dashboard_logins where user_id = ${userId}`)!.n;
const hasLoginCookie = (res: Response) => res.headers.getSetCookie().some((c) => c.startsWith("ps_dashboard=dsh_"));

describe("sign-in", () => {
  test("a sign-in whose line cannot be written signs no one in; with its line it does", async () => {
    const m = await merchantWithUser(svc, "in@history.example");
    const refused = await refusingLines("in@history.example", "sign_in", () => signInAttempt(svc, "in@history.example", "correct horse battery staple"));
    expect(refused.status).toBe(500);
    expect(hasLoginCookie(refused)).toBe(false);
    expect(await loginsOf(m.user.id)).toBe(0);
    expect(await linesOf("in@history.example")).toEqual([]);

    const ok = await signInAttempt(svc, "in@history.example", "correct horse battery staple");
    expect(ok.status).toBe(303);
    expect(await loginsOf(m.user.id)).toBe(1);
    expect(await linesOf("in@history.example")).toEqual([{ action: "sign_in", email: "in@history.example", detail: { device: expect.any(String) } }]);
  });
});

describe("sign-out", () => {
  test("a sign-out whose line cannot be written keeps the person signed in; with its line it ends the login", async () => {
    const m = await merchantWithUser(svc, "out@history.example");
    const me = await signIn(svc, "out@history.example");
    expect(await loginsOf(m.user.id)).toBe(1);

    const refused = await refusingLines("out@history.example", "sign_out", () => me.post("/dashboard/sign-out"));
    expect(refused.status).toBe(500);
    expect(await loginsOf(m.user.id)).toBe(1);
    expect((await me.get("/dashboard/sandbox/settings/api-keys")).status).toBe(200);
    expect((await linesOf("out@history.example")).map((l) => l.action)).toEqual(["sign_in"]);

    expect((await me.post("/dashboard/sign-out")).status).toBe(303);
    expect(await loginsOf(m.user.id)).toBe(0);
    expect((await linesOf("out@history.example")).map((l) => l.action)).toEqual(["sign_in", "sign_out"]);
    expect((await me.get("/dashboard/sandbox/settings/api-keys")).status).toBe(303);
  });
});

describe("sign-up", () => {
  async function signUpForm() {
    const form = await fetch(`${svc.url}/dashboard/sign-up`);
    const pre = form.headers.getSetCookie().find((c) => c.startsWith("ps_dashboard_pre="))!.split(";")[0]!;
    const csrf = csrfIn(await form.text())!;
    return (fields: Record<string, string>) =>
      fetch(`${svc.url}/dashboard/sign-up`, {
        method: "POST",
        headers: { cookie: pre, "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ _csrf: csrf, ...fields }),
        redirect: "manual",
      });
  }
  const merchantsNamed = async (name: string) => decodeFirst(Count, await sql()`select count(*)::int as n from app.merchants where name = ${name}`)!.n;
  const usersWith = async (email: string) => decodeFirst(Count, await sql()`select count(*)::int as n from app.dashboard_users where email = ${email}`)!.n;

  test("a sign-up whose line cannot be written leaves no merchant, no user and no login", async () => {
    const post = await signUpForm();
    const refused = await refusingLines("up@history.example", "sign_in", () => post({ name: "Unrecorded Shop", email: "up@history.example", password: "a good long password" }));
    expect(refused.status).toBe(500);
    expect(hasLoginCookie(refused)).toBe(false);
    expect(await merchantsNamed("Unrecorded Shop")).toBe(0);
    expect(await usersWith("up@history.example")).toBe(0);
    expect(await linesOf("up@history.example")).toEqual([]);

    const made = await (await signUpForm())({ name: "Recorded Shop", email: "up@history.example", password: "a good long password" });
    expect(made.status).toBe(303);
    expect(hasLoginCookie(made)).toBe(true);
    expect(await merchantsNamed("Recorded Shop")).toBe(1);
    expect(await linesOf("up@history.example")).toEqual([{ action: "sign_in", email: "up@history.example", detail: { signUp: true, device: expect.any(String) } }]);
  });

  test("a refused password leaves no merchant behind", async () => {
    const post = await signUpForm();
    const res = await post({ name: "Short Password Shop", email: "short@history.example", password: "short" });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("at least 12 characters");
    expect(await merchantsNamed("Short Password Shop")).toBe(0);
    expect(await usersWith("short@history.example")).toBe(0);
  });
});
