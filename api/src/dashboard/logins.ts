/**
 * Signed-in dashboard sessions, kept server-side (app.dashboard_logins). The cookie carries
 * a 238-bit random secret; the table holds only its SHA-256, so a database read gives no one
 * a session. Sign-out deletes the row; a password change deletes all of the user's. A sign-in
 * and a sign-out write their security-history line in their own transaction: a login never
 * starts or ends unrecorded.
 */
import { and, desc, eq, gt, ne, sql as dsql } from "drizzle-orm";
import type { TransactionSql } from "postgres";
import type { Db } from "../db/client.ts";
import { dashboardLogins, dashboardUsers, merchants, userTotp } from "../db/schema.ts";
import { newSecret } from "../../../shared/ids.ts";
import { hashSecret } from "../credentials/format.ts";
import type { UserRow } from "./users.ts";
import { deviceName } from "./device-name.ts";
import type { Merchant } from "../credentials/store.ts";
import { recordSecurityEvent, type Actor } from "../credentials/security-history.ts";

export const LOGIN_COOKIE = "ps_dashboard";
/** A signed-in session lasts 12 hours from sign-in, then the person signs in again. */
export const LOGIN_TTL_SECONDS = 12 * 3600;
/** last_seen_at is written at most once a minute per session. */
const TOUCH_EVERY_MS = 60_000;

export interface Login {
  tokenHash: string;
  csrfToken: string;
  user: UserRow;
  merchant: Merchant;
  createdAt: Date;
  /** Password given, second factor not yet (dashboard/two-factor.ts): only the two-factor page opens. */
  awaitingSecondFactor: boolean;
  /** When this login last passed a second factor. */
  secondFactorAt: Date | null;
  /** The person has a second factor (TOTP, or a passkey). */
  twoFactor: boolean;
  /** Their account requires one of everyone. */
  requireTwoFactor: boolean;
}

/** A new login's secrets and row (its cookie token is returned once; the row keeps its hash). */
function newLogin(userId: string, ip: string | null, userAgent: string | null, awaitingSecondFactor = false) {
  const token = `dsh_${newSecret()}`;
  const csrfToken = newSecret();
  return {
    token,
    csrfToken,
    row: { tokenHash: hashSecret(token), userId, csrfToken, ip, userAgent: userAgent?.slice(0, 300) ?? null, awaitingSecondFactor, expiresAt: new Date(Date.now() + LOGIN_TTL_SECONDS * 1000) },
  };
}

/**
 * Starts a login for `user` and writes its "sign_in" line (with `detail`), on `tx`: call it
 * inside the transaction of the change that signs the person in (signIn, or a sign-up's).
 */
export async function startLogin(
  tx: Pick<Db, "insert">,
  user: Pick<UserRow, "id" | "merchantId" | "email">,
  ip: string | null,
  detail: Record<string, unknown> = {},
  userAgent: string | null = null,
  awaitingSecondFactor = false,
): Promise<{ token: string; csrfToken: string }> {
  const { token, csrfToken, row } = newLogin(user.id, ip, userAgent, awaitingSecondFactor);
  await tx.insert(dashboardLogins).values(row);
  // The device in words: with the address, what the new-device notice compares (migration 0030's trigger).
  await recordSecurityEvent(tx, { merchantId: user.merchantId, userId: user.id, email: user.email, ip }, "sign_in", { ...detail, device: deviceName(userAgent) });
  return { token, csrfToken };
}

/** The same login on a postgres.js transaction, without a line: the change it belongs to writes its own (a password change). */
export async function startLoginIn(tx: TransactionSql, userId: string, ip: string | null, userAgent: string | null): Promise<{ token: string; csrfToken: string }> {
  const { token, csrfToken, row } = newLogin(userId, ip, userAgent);
  await tx`
    insert into app.dashboard_logins (token_hash, user_id, csrf_token, ip, user_agent, expires_at)
    values (${row.tokenHash}, ${row.userId}, ${row.csrfToken}, ${row.ip}, ${row.userAgent}, ${row.expiresAt.toISOString()}::timestamptz)`;
  return { token, csrfToken };
}

/** Signs a user whose password was checked in: the login and its line commit together, or neither does. */
export function signIn(db: Db, user: Pick<UserRow, "id" | "merchantId" | "email">, ip: string | null, userAgent: string | null = null, awaitingSecondFactor = false): Promise<{ token: string; csrfToken: string }> {
  return db.transaction((tx) => startLogin(tx, user, ip, awaitingSecondFactor ? { secondFactor: "pending" } : {}, userAgent, awaitingSecondFactor));
}

/** The login passed its second factor: no longer awaiting it, and fresh for sensitive actions. */
export async function passedSecondFactor(db: Db, tokenHash: string): Promise<void> {
  await db.update(dashboardLogins).set({ awaitingSecondFactor: false, secondFactorAt: new Date() }).where(eq(dashboardLogins.tokenHash, tokenHash));
}

/** A person's signed-in sessions (their devices), newest first. */
export async function loginsOf(db: Db, userId: string): Promise<{ tokenHash: string; ip: string | null; userAgent: string | null; createdAt: Date; lastSeenAt: Date }[]> {
  return db
    .select({ tokenHash: dashboardLogins.tokenHash, ip: dashboardLogins.ip, userAgent: dashboardLogins.userAgent, createdAt: dashboardLogins.createdAt, lastSeenAt: dashboardLogins.lastSeenAt })
    .from(dashboardLogins)
    .where(and(eq(dashboardLogins.userId, userId), gt(dashboardLogins.expiresAt, new Date())))
    .orderBy(desc(dashboardLogins.createdAt));
}

/** Ends every other signed-in session of the person (this one stays); the line in the same transaction. Returns how many ended. */
export async function endOtherLogins(db: Db, login: Pick<Login, "tokenHash" | "user">, actor: Actor): Promise<number> {
  return db.transaction(async (tx) => {
    const ended = await tx
      .delete(dashboardLogins)
      .where(and(eq(dashboardLogins.userId, login.user.id), ne(dashboardLogins.tokenHash, login.tokenHash)))
      .returning({ tokenHash: dashboardLogins.tokenHash });
    await recordSecurityEvent(tx, actor, "signed_out_others", { ended: ended.length });
    return ended.length;
  });
}

export async function findLogin(db: Db, token: string): Promise<Login | undefined> {
  if (!/^dsh_[0-9A-Za-z]{40}$/.test(token)) return undefined;
  const now = new Date();
  const [row] = await db
    .select({
      login: dashboardLogins,
      user: dashboardUsers,
      merchant: merchants,
      totpConfirmedAt: userTotp.confirmedAt,
      hasPasskey: dsql<boolean>`exists (select 1 from app.passkeys p where p.user_id = ${dashboardUsers.id})`,
    })
    .from(dashboardLogins)
    .innerJoin(dashboardUsers, eq(dashboardUsers.id, dashboardLogins.userId))
    .innerJoin(merchants, eq(merchants.id, dashboardUsers.merchantId))
    .leftJoin(userTotp, eq(userTotp.userId, dashboardUsers.id))
    .where(and(eq(dashboardLogins.tokenHash, hashSecret(token)), gt(dashboardLogins.expiresAt, now)));
  if (!row) return undefined;
  if (row.login.lastSeenAt.getTime() + TOUCH_EVERY_MS <= now.getTime()) {
    await db.update(dashboardLogins).set({ lastSeenAt: now }).where(eq(dashboardLogins.tokenHash, row.login.tokenHash));
  }
  const { requireTwoFactor, ...merchant } = row.merchant;
  return {
    tokenHash: row.login.tokenHash,
    csrfToken: row.login.csrfToken,
    user: row.user,
    merchant,
    createdAt: row.login.createdAt,
    awaitingSecondFactor: row.login.awaitingSecondFactor,
    secondFactorAt: row.login.secondFactorAt,
    twoFactor: row.totpConfirmedAt !== null || row.hasPasskey === true,
    requireTwoFactor,
  };
}

/** Signs out: the login's row goes and its "sign_out" line is written, together or not at all. */
export async function endLogin(db: Db, tokenHash: string, actor: Actor): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.delete(dashboardLogins).where(eq(dashboardLogins.tokenHash, tokenHash));
    await recordSecurityEvent(tx, actor, "sign_out");
  });
}

/**
 * A dashboard cookie's name. Where cookies are Secure it carries the `__Host-` prefix: a browser
 * accepts such a cookie only from this very host, Secure, with Path=/ and no Domain, so a page
 * on a sibling subdomain cannot plant one (which would sign a victim into the planter's account,
 * or pass sign-in's cookie-against-form check). Plain-http loopback cannot use the prefix.
 */
export function cookieName(base: string, secure: boolean): string {
  return secure ? `__Host-${base}` : base;
}

/** Path=/dashboard, or / where the `__Host-` prefix requires it. */
export const cookiePath = (secure: boolean) => (secure ? "/" : "/dashboard");

/** The Set-Cookie value: HttpOnly, SameSite=Lax, Secure unless served on localhost over http. */
export function loginCookie(token: string, secure: boolean, maxAgeSeconds = LOGIN_TTL_SECONDS): string {
  return [`${cookieName(LOGIN_COOKIE, secure)}=${token}`, `Path=${cookiePath(secure)}`, "HttpOnly", "SameSite=Lax", `Max-Age=${maxAgeSeconds}`, ...(secure ? ["Secure"] : [])].join("; ");
}

/** Cookies are Secure everywhere but plain-http loopback (a browser drops Secure cookies there). */
export function secureCookies(publicUrl: URL): boolean {
  const local = ["localhost", "127.0.0.1", "[::1]"].includes(publicUrl.hostname);
  return publicUrl.protocol === "https:" || !local;
}

export function readCookie(header: string | null, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const i = part.indexOf("=");
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim();
  }
  return undefined;
}
