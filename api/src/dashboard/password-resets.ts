/**
 * Password reset by an emailed link (app.password_resets). The link carries a 238-bit secret;
 * the table keeps its SHA-256. A link works once, for 30 minutes; using it sets the password,
 * ends every signed-in session of the person and every other link of theirs, and writes the
 * "password_reset" line, whose trigger mails the person a notice — all in one transaction.
 *
 * Asking is answered the same whether or not the email has an account (no enumeration), and
 * throttled from the security history: at most 3 links per email and 10 asks per address in an
 * hour. Over the email's limit the answer is still the same; only the address's limit says so.
 */
import type { Db } from "../db/client.ts";
import { newSecret } from "../../../shared/ids.ts";
import { hashSecret } from "../credentials/format.ts";
import { securityEventStatement } from "../credentials/security-history.ts";
import { enqueueMail } from "../mail/outbox.ts";
import { col, decodeFirst, rowShape } from "../db/rows.ts";
import { findUserByEmail, replacePassword } from "./users.ts";

export const RESET_TTL_MINUTES = 30;
export const RESETS_PER_EMAIL_PER_HOUR = 3;
export const RESET_ASKS_PER_IP_PER_HOUR = 10;

const TOKEN = /^rst_[0-9A-Za-z]{40}$/;

const Count = rowShape("reset asks", { n: col.int });

export type ResetAsk = { outcome: "asked" } | { outcome: "throttled"; retryAfterSeconds: number };

/**
 * Someone asked for a reset link for `email` from `ip`. Writes the ask's line (the throttle's
 * count) and, for an account within its limit, the link and its mail in one transaction.
 */
export async function askForReset(db: Db, args: { email: string; ip: string | null; encryptionKey: Buffer; dashboardUrl: string }): Promise<ResetAsk> {
  const sql = db.$client;
  if (args.ip) {
    const byIp = decodeFirst(Count, await sql`select count(*)::int as n from app.security_events where action = 'password_reset_requested' and ip = ${args.ip} and created_at > now() - interval '1 hour'`)!;
    if (byIp.n >= RESET_ASKS_PER_IP_PER_HOUR) return { outcome: "throttled", retryAfterSeconds: 3600 };
  }
  const byEmail = decodeFirst(Count, await sql`select count(*)::int as n from app.security_events where action = 'password_reset_requested' and email = ${args.email} and created_at > now() - interval '1 hour'`)!;
  const user = await findUserByEmail(db, args.email);
  const token = `rst_${newSecret()}`;
  await sql.begin(async (tx) => {
    const sendLink = user !== undefined && byEmail.n < RESETS_PER_EMAIL_PER_HOUR;
    await securityEventStatement(tx, { merchantId: user?.merchantId ?? null, userId: user?.id ?? null, email: args.email, ip: args.ip }, "password_reset_requested", { linkSent: sendLink });
    if (!user || !sendLink) return;
    await tx`insert into app.password_resets (token_hash, user_id, ip, expires_at) values (${hashSecret(token)}, ${user.id}, ${args.ip}, now() + ${RESET_TTL_MINUTES} * interval '1 minute')`;
    const link = `${args.dashboardUrl}/reset-password/${token}`;
    await enqueueMail(tx, args.encryptionKey, {
      to: user.email,
      kind: "password_reset_link",
      merchantId: user.merchantId,
      subject: "Reset your Paysession password",
      text: [
        `Someone (we hope you) asked to reset the password of ${user.email} on Paysession${args.ip ? `, from the address ${args.ip}` : ""}.`,
        ``,
        `Set a new password here, within ${RESET_TTL_MINUTES} minutes; the link works once:`,
        link,
        ``,
        `If it was not you, do nothing: your password stays as it is.`,
      ].join("\n"),
    });
  });
  return { outcome: "asked" };
}

/** The person a reset link still works for (unused, unexpired), or undefined. */
export async function openReset(db: Db, token: string): Promise<{ userId: string; email: string } | undefined> {
  if (!TOKEN.test(token)) return undefined;
  const [row] = await db.$client`
    select u.id as user_id, u.email from app.password_resets r join app.dashboard_users u on u.id = r.user_id
     where r.token_hash = ${hashSecret(token)} and r.used_at is null and r.expires_at > now()`;
  return row ? { userId: row.user_id as string, email: row.email as string } : undefined;
}

/**
 * Uses the link: the password (already checked and hashed by the caller), every session and
 * every other link of the person ended, the line written — or nothing, when the link no longer
 * works (used meanwhile, expired). Returns whether it worked.
 */
export async function completeReset(db: Db, token: string, passwordHash: string, ip: string | null): Promise<boolean> {
  if (!TOKEN.test(token)) return false;
  return db.$client.begin(async (tx) => {
    const [used] = await tx`
      update app.password_resets set used_at = now()
       where token_hash = ${hashSecret(token)} and used_at is null and expires_at > now()
      returning user_id`;
    if (!used) return false;
    const userId = used.user_id as string;
    const [user] = await tx`select merchant_id, email from app.dashboard_users where id = ${userId}`;
    await tx`update app.password_resets set used_at = now() where user_id = ${userId} and used_at is null`;
    await replacePassword(tx, userId, passwordHash);
    await securityEventStatement(tx, { merchantId: user!.merchant_id as string, userId, email: user!.email as string, ip }, "password_reset");
    return true;
  });
}
