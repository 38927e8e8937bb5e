/** TEST helper: a signed-in dashboard user over plain HTTP (cookies and CSRF handled by hand). */
import type { TestService } from "./service.ts";
import { createUser } from "../api/src/dashboard/users.ts";

export const TEST_PASSWORD = "correct horse battery staple";

export interface Browser {
  /** The Cookie header this browser sends: its login, and whatever the pages set since (a flash). */
  readonly cookie: string;
  csrf: string;
  get(path: string): Promise<Response>;
  /** `fields` as pairs where a name repeats (checkboxes). */
  post(path: string, fields?: Record<string, string> | [string, string][], opts?: { csrf?: string | null; headers?: Record<string, string> }): Promise<Response>;
  /** The page a 303 points to, as a browser follows it (with the cookies it set). */
  follow(res: Response): Promise<Response>;
}

const cookieOf = (res: Response, name: string) =>
  res.headers
    .getSetCookie()
    .map((c) => c.split(";")[0]!)
    .find((c) => c.startsWith(`${name}=`));

export const csrfIn = (page: string) => /name="_csrf" value="([^"]+)"/.exec(page)?.[1];

/** Signs in through the form, as a browser would. Throws unless the sign-in succeeded. */
export async function signIn(svc: TestService, email: string, password = TEST_PASSWORD): Promise<Browser> {
  const res = await signInAttempt(svc, email, password);
  const login = cookieOf(res, "ps_dashboard");
  if (res.status !== 303 || !login) throw new Error(`sign-in failed: ${res.status}`);
  // A small cookie jar: what a response sets is sent from then on; Max-Age=0 removes it. The
  // login cookie stays as signed in, so a test can see the server refuse it after sign-out.
  const jar = new Map<string, string>([login.split("=", 2) as [string, string]]);
  const keep = (res: Response) => {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(";");
      const i = pair!.indexOf("=");
      const [name, value] = [pair!.slice(0, i), pair!.slice(i + 1)];
      if (name === "ps_dashboard") continue;
      if (/Max-Age=0\b/i.test(c) || value === "") jar.delete(name);
      else jar.set(name, value);
    }
    return res;
  };
  const b: Browser = {
    get cookie() {
      return [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
    },
    csrf: "",
    get: async (path) => keep(await fetch(`${svc.url}${path}`, { headers: { cookie: b.cookie }, redirect: "manual" })),
    post: async (path, fields = {}, opts = {}) => {
      const body = new URLSearchParams(fields);
      const csrf = opts.csrf === undefined ? b.csrf : opts.csrf;
      if (csrf !== null) body.set("_csrf", csrf);
      return keep(
        await fetch(`${svc.url}${path}`, {
          method: "POST",
          headers: { cookie: b.cookie, "content-type": "application/x-www-form-urlencoded", ...(opts.headers ?? {}) },
          body,
          redirect: "manual",
        }),
      );
    },
    follow: (res) => {
      const to = res.headers.get("location");
      if (res.status !== 303 || !to) throw new Error(`expected a 303 with a location, got ${res.status}`);
      return b.get(to);
    },
  };
  // A page every role may open (Your account) carries the session's token.
  b.csrf = csrfIn(await (await b.get("/dashboard/sandbox/settings/account")).text()) ?? "";
  return b;
}

export function signInAttempt(svc: TestService, email: string, password: string): Promise<Response> {
  return signInAttemptAt(svc.url, email, password);
}

/** The sign-in form as a browser fills it (its own CSRF token and cookie), against any server. */
export async function signInAttemptAt(base: string, email: string, password: string): Promise<Response> {
  const form = await fetch(`${base}/dashboard/sign-in`);
  const pre = cookieOf(form, "ps_dashboard_pre")!;
  const csrf = csrfIn(await form.text())!;
  return fetch(`${base}/dashboard/sign-in`, {
    method: "POST",
    headers: { cookie: pre, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ _csrf: csrf, email, password }),
    redirect: "manual",
  });
}

/** A merchant (with keys, TestService.merchant) and a dashboard user of it. */
export async function merchantWithUser(svc: TestService, email: string) {
  const m = await svc.merchant(email.split("@")[0]);
  const user = await createUser(svc.services.database.db, m.merchant.id, email, TEST_PASSWORD);
  return { ...m, user };
}
