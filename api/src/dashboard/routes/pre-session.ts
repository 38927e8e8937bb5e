/**
 * The forms before sign-in (sign-in, sign-up, forgot password, the reset page) have no session to
 * hold a CSRF token: theirs is matched against a cookie of its own (double submit). Cookies know
 * no ports, so a page on another port of this host could plant that cookie; the origin check is
 * what refuses its post.
 */
import { cookieName, cookiePath, readCookie } from "../logins.ts";
import { originProblem, sameSecret } from "../request.ts";

const PRE_COOKIE = "ps_dashboard_pre";

export function preSession(secure: boolean) {
  return {
    /** The pre-session cookie carrying `v` (empty with maxAge 0: cleared). */
    preCookie: (v: string, maxAge = 3600) => `${cookieName(PRE_COOKIE, secure)}=${v}; Path=${cookiePath(secure)}; HttpOnly; SameSite=Strict; Max-Age=${maxAge}${secure ? "; Secure" : ""}`,
    /** Whether a pre-session form came from our page: same origin, and its token matches the cookie. */
    preOk: (request: Request, form: URLSearchParams) => {
      if (originProblem(request)) return false;
      const cookie = readCookie(request.headers.get("cookie"), cookieName(PRE_COOKIE, secure));
      const sent = form.get("_csrf");
      return !!cookie && !!sent && sameSecret(cookie, sent);
    },
  };
}

/** A `next` page to return to after signing in or a second factor: a dashboard path of this site, else none (never an open redirect). */
export function safeNext(next: string | null | undefined): string | undefined {
  return next && /^\/dashboard\/[A-Za-z0-9/_.?=&%-]*$/.test(next) && !next.startsWith("//") ? next : undefined;
}
