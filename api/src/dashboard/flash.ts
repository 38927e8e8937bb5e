/**
 * One-time messages carried across a redirect (POST, then 303, then GET), so that a reload
 * never sends a form again. Most notices are fixed texts named in the redirect's query
 * (`?notice=`); a flash carries what cannot be named there: a secret shown once (a new API key,
 * a new or revealed webhook secret) and a result worked out by the action (a test delivery's
 * answer).
 *
 * A flash lives in a cookie, sealed with the service's encryption key and bound to the signed-in
 * session and to the page it is for: no server state to lose on a restart, nothing readable by
 * the page's scripts (HttpOnly), and useless to anyone without both. The page that shows it
 * clears it in the same answer, so a reload shows it no more. It expires after five minutes.
 */
import { seal, unseal, type SealFormat } from "../credentials/seal.ts";
import { cookieName, cookiePath, readCookie } from "./logins.ts";
import type { Notice } from "./layout.ts";

const FLASH_COOKIE = "ps_flash";
const FLASH_TTL_SECONDS = 300;

/** A secret to show once, with what it belongs to. */
export interface ShownSecret {
  value: string;
  /** The key's name or the endpoint's URL. */
  label: string;
}

export interface Flash {
  notice?: { kind: Notice["kind"]; text: string };
  secret?: ShownSecret;
}

interface Sealed extends Flash {
  /** The page it is for (a path), so it shows nowhere else. */
  page: string;
  /** Unix seconds after which it is ignored. */
  until: number;
}

/** Sealed as `v1` (credentials/seal.ts), bound to the signed-in session: cookies already in browsers were written so. */
const flashSeal = (loginTokenHash: string) => ({ label: "v1", aad: `dashboard-flash\0${loginTokenHash}` }) as const satisfies SealFormat;

/** The Set-Cookie value that carries `flash` to `page` (for this signed-in session only). */
export function flashCookie(key: Buffer, loginTokenHash: string, page: string, flash: Flash, secure: boolean, now = new Date()): string {
  const body: Sealed = { ...flash, page, until: Math.floor(now.getTime() / 1000) + FLASH_TTL_SECONDS };
  const value = Buffer.from(seal(key, JSON.stringify(body), flashSeal(loginTokenHash))).toString("base64url");
  return cookie(value, secure, FLASH_TTL_SECONDS);
}

/** The Set-Cookie value that removes the flash. */
export const clearFlashCookie = (secure: boolean) => cookie("", secure, 0);

function cookie(value: string, secure: boolean, maxAge: number): string {
  return [`${cookieName(FLASH_COOKIE, secure)}=${value}`, `Path=${cookiePath(secure)}`, "HttpOnly", "SameSite=Strict", `Max-Age=${maxAge}`, ...(secure ? ["Secure"] : [])].join("; ");
}

/**
 * The flash the request carries for `page`, if any, and whether there was a cookie to clear.
 * A flash for another page stays for that page; one sealed for another session, altered,
 * or expired is dropped (and cleared).
 */
export function readFlash(request: Request, key: Buffer, loginTokenHash: string, page: string, secure: boolean, now = new Date()): { flash?: Flash; clear: boolean } {
  const raw = readCookie(request.headers.get("cookie"), cookieName(FLASH_COOKIE, secure));
  if (!raw) return { clear: false };
  let body: Sealed;
  try {
    body = JSON.parse(unseal(key, Buffer.from(raw, "base64url").toString("utf8"), flashSeal(loginTokenHash))) as Sealed;
  } catch {
    return { clear: true };
  }
  if (body.until < now.getTime() / 1000) return { clear: true };
  if (body.page !== page) return { clear: false };
  return { flash: { notice: body.notice, secret: body.secret }, clear: true };
}
