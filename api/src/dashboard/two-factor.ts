/**
 * Two-factor sign-in by TOTP (RFC 6238, otpauth): enrolling (a secret shown once as a QR code,
 * confirmed by a first code, then ten single-use recovery codes shown once), checking a code at
 * sign-in or before a sensitive action, and turning it off. The secret is sealed with the
 * service's key bound to the person; recovery codes are kept as SHA-256.
 *
 * A code is accepted once: the 30-second step it belongs to must be later than the last accepted
 * one, and the update that records it is conditional on that, so two tabs racing the same code
 * cannot both pass. Failures are lines of the security history and throttled as sign-ins are.
 */
import type { Sql, TransactionSql } from "postgres";
import { randomInt } from "node:crypto";
import { hashSecret } from "../credentials/format.ts";
import { Secret, TOTP } from "otpauth";
import { seal, unseal } from "../credentials/seal.ts";
import { securityEventStatement, type Actor } from "../credentials/security-history.ts";
import { retryAfterSeconds, WINDOW_SECONDS } from "../credentials/sign-in-throttle.ts";

const PERIOD = 30;
export const RECOVERY_CODE_COUNT = 10;
/** A second factor passed this recently counts as fresh for a sensitive action. */
export const FRESH_SECOND_FACTOR_MS = 5 * 60 * 1000;
/** Enrolling secrets not confirmed within this are replaced by a new one. */
const PENDING_MINUTES = 15;

const sealFormat = (userId: string) => ({ label: "v1", aad: `totp:${userId}` }) as const;
const totpOf = (base32: string, email: string) => new TOTP({ issuer: "Paysession", label: email, algorithm: "SHA1", digits: 6, period: PERIOD, secret: Secret.fromBase32(base32) });

/** Recovery codes as typed: case, spaces and dashes do not matter. */
export const normalizeRecoveryCode = (raw: string) => raw.toUpperCase().replace(/[\s-]/g, "");
const hashCode = (code: string) => hashSecret(normalizeRecoveryCode(code));
const CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
function newRecoveryCode(): string {
  const c = Array.from({ length: 10 }, () => CODE_ALPHABET[randomInt(CODE_ALPHABET.length)]).join("");
  return `${c.slice(0, 5)}-${c.slice(5)}`;
}

/** The 30-second step `code` belongs to (now, or one step either side: clocks drift), or undefined. */
export function stepOf(base32: string, email: string, code: string, now = Date.now()): number | undefined {
  if (!/^\d{6}$/.test(code)) return undefined;
  const delta = totpOf(base32, email).validate({ token: code, timestamp: now, window: 1 });
  return delta === null ? undefined : Math.floor(now / 1000 / PERIOD) + delta;
}

export interface TwoFactorState {
  /** TOTP is on. */
  enabled: boolean;
  recoveryLeft: number;
  /** Passkeys registered (dashboard/passkeys.ts). */
  passkeys: number;
}

export async function twoFactorState(sql: Sql, userId: string): Promise<TwoFactorState> {
  const [r] = await sql`
    select (select confirmed_at is not null from app.user_totp where user_id = ${userId}) as enabled,
           (select count(*)::int from app.recovery_codes where user_id = ${userId} and used_at is null) as left_,
           (select count(*)::int from app.passkeys where user_id = ${userId}) as passkeys`;
  return { enabled: r?.enabled === true, recoveryLeft: r?.left_ ?? 0, passkeys: r?.passkeys ?? 0 };
}

/** A secret to enroll (the pending one if recent, else a new one): its base32 text and otpauth URI for the QR code. */
export async function enrollmentSecret(sql: Sql, key: Buffer, user: { id: string; email: string }): Promise<{ base32: string; uri: string } | undefined> {
  const [row] = await sql`select secret_sealed, confirmed_at, created_at > now() - ${PENDING_MINUTES} * interval '1 minute' as recent from app.user_totp where user_id = ${user.id}`;
  if (row?.confirmed_at) return undefined;
  let base32: string;
  if (row?.recent) base32 = unseal(key, row.secret_sealed, sealFormat(user.id));
  else {
    base32 = new Secret({ size: 20 }).base32;
    const sealed = seal(key, base32, sealFormat(user.id));
    await sql`
      insert into app.user_totp (user_id, secret_sealed) values (${user.id}, ${sealed})
      on conflict (user_id) do update set secret_sealed = excluded.secret_sealed, created_at = now(), last_step = 0 where app.user_totp.confirmed_at is null`;
  }
  return { base32, uri: totpOf(base32, user.email).toString() };
}

/** Confirms enrollment with a first code: the authenticator on, ten recovery codes (returned once), the line. Undefined when the code is wrong. */
export async function confirmEnrollment(sql: Sql, key: Buffer, user: { id: string; email: string }, code: string, actor: Actor): Promise<string[] | undefined> {
  return sql.begin(async (tx) => {
    const [row] = await tx`select secret_sealed from app.user_totp where user_id = ${user.id} and confirmed_at is null for update`;
    if (!row) return undefined;
    const step = stepOf(unseal(key, row.secret_sealed, sealFormat(user.id)), user.email, code.trim());
    if (step === undefined) return undefined;
    await tx`update app.user_totp set confirmed_at = now(), last_step = ${step} where user_id = ${user.id}`;
    await tx`delete from app.recovery_codes where user_id = ${user.id}`;
    const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
    for (const c of codes) await tx`insert into app.recovery_codes (user_id, code_hash) values (${user.id}, ${hashCode(c)})`;
    await securityEventStatement(tx, actor, "two_factor_enabled", { method: "totp" });
    return codes;
  });
}

/**
 * Checks a second factor: a 6-digit TOTP code (accepted once, never an earlier step) or a
 * recovery code (used up), unless the person is throttled. The throttle's count, the check and
 * the outcome's line happen under the person's lock, one try at a time: parallel guesses cannot
 * all see the count before any failure is written. Returns how it passed, or why not.
 */
export async function checkSecondFactor(
  sql: Sql,
  key: Buffer,
  user: { id: string; email: string },
  raw: string,
  actor: Actor,
  purpose: "sign_in" | "step_up",
): Promise<{ ok: "totp" | "recovery" } | { ok: false; retryAfterSeconds?: number }> {
  const code = raw.trim();
  return sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(hashtext(${`second-factor:${user.id}`}))`;
    const wait = await secondFactorWait(tx, user.email);
    if (wait > 0) return { ok: false as const, retryAfterSeconds: wait };
    let how: "totp" | "recovery" | undefined;
    if (/^\d{6}$/.test(code)) {
      const [row] = await tx`select secret_sealed from app.user_totp where user_id = ${user.id} and confirmed_at is not null`;
      const step = row ? stepOf(unseal(key, row.secret_sealed, sealFormat(user.id)), user.email, code) : undefined;
      if (step !== undefined) {
        const taken = await tx`update app.user_totp set last_step = ${step} where user_id = ${user.id} and last_step < ${step} returning user_id`;
        if (taken.length) how = "totp";
      }
    } else if (normalizeRecoveryCode(code).length === 10) {
      const used = await tx`update app.recovery_codes set used_at = now() where user_id = ${user.id} and code_hash = ${hashCode(code)} and used_at is null returning user_id`;
      if (used.length) how = "recovery";
    }
    await securityEventStatement(tx, actor, how ? "two_factor_verified" : "two_factor_failed", { purpose, ...(how ? { method: how } : {}) });
    return how ? { ok: how } : { ok: false as const };
  });
}

/** Seconds before another second-factor try (0: now): 5 failures since the last success are free, then the sign-in backoff. */
export async function secondFactorWait(sql: Sql | TransactionSql, email: string): Promise<number> {
  const [r] = await sql`
    select count(*)::int as n, max(created_at) as last from app.security_events
     where action = 'two_factor_failed' and email = ${email} and created_at > now() - make_interval(secs => ${WINDOW_SECONDS})
       and created_at > coalesce((select max(created_at) from app.security_events where action = 'two_factor_verified' and email = ${email}), '-infinity')`;
  const byEmail = { count: r?.n ?? 0, lastAt: r?.last ? new Date(r.last) : null };
  return retryAfterSeconds(byEmail, { count: 0, lastAt: null }, new Date());
}

/** Turns it off: the authenticator and the recovery codes go, the line is written. */
export async function disableTwoFactor(sql: Sql, userId: string, actor: Actor): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`delete from app.user_totp where user_id = ${userId}`;
    await tx`delete from app.recovery_codes where user_id = ${userId}`;
    await securityEventStatement(tx, actor, "two_factor_disabled", {});
  });
}

/** Whether the login passed a second factor recently enough for a sensitive action. */
export function freshSecondFactor(secondFactorAt: Date | null, now = Date.now()): boolean {
  return secondFactorAt !== null && now - secondFactorAt.getTime() <= FRESH_SECOND_FACTOR_MS;
}
