/**
 * Passkeys (WebAuthn, @simplewebauthn/server) as a second factor: registered under Your account by
 * a signed-in person, then used on the two-factor page instead of a TOTP code (at sign-in, or
 * before a sensitive action). The relying party is the dashboard's host; the origin the browser
 * reports must be the page's own (the dashboard's origin check already holds the request to it).
 * Each ceremony's challenge is kept per login and purpose, used once, for five minutes; a passkey's
 * signature counter must rise where the authenticator keeps one.
 */
import type { Sql } from "postgres";
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type RegistrationResponseJSON,
} from "@simplewebauthn/server";
import { securityEventStatement, type Actor } from "../credentials/security-history.ts";

const CHALLENGE_MINUTES = 5;
type Purpose = "register" | "authenticate";

/** The relying party of a request: the dashboard's host (its name, without the port) and the page's origin. */
export interface RelyingParty {
  id: string;
  origin: string;
}

export function relyingPartyOf(request: Request): RelyingParty {
  const host = request.headers.get("host") ?? new URL(request.url).host;
  const origin = request.headers.get("origin") ?? `${new URL(request.url).protocol}//${host}`;
  return { id: host.replace(/:\d+$/, "").replace(/^\[|\]$/g, ""), origin };
}

async function keepChallenge(sql: Sql, loginHash: string, purpose: Purpose, challenge: string) {
  await sql`
    insert into app.webauthn_challenges (login_hash, purpose, challenge, expires_at)
    values (${loginHash}, ${purpose}, ${challenge}, now() + ${CHALLENGE_MINUTES} * interval '1 minute')
    on conflict (login_hash, purpose) do update set challenge = excluded.challenge, expires_at = excluded.expires_at`;
}

async function takeChallenge(sql: Sql, loginHash: string, purpose: Purpose): Promise<string | undefined> {
  const [row] = await sql`delete from app.webauthn_challenges where login_hash = ${loginHash} and purpose = ${purpose} and expires_at > now() returning challenge`;
  return row?.challenge as string | undefined;
}

const fromB64url = (s: string) => new Uint8Array(Buffer.from(s, "base64url"));
const toB64url = (b: Uint8Array) => Buffer.from(b).toString("base64url");

export async function passkeysOf(sql: Sql, userId: string): Promise<{ id: string; name: string; createdAt: Date; lastUsedAt: Date | null }[]> {
  const rows = await sql`select id, name, created_at, last_used_at from app.passkeys where user_id = ${userId} order by created_at`;
  return rows.map((r) => ({ id: r.id, name: r.name, createdAt: new Date(r.created_at), lastUsedAt: r.last_used_at ? new Date(r.last_used_at) : null }));
}

export async function registrationOptions(sql: Sql, rp: RelyingParty, login: { tokenHash: string; user: { id: string; email: string } }) {
  const existing = await sql`select id, transports from app.passkeys where user_id = ${login.user.id}`;
  const options = await generateRegistrationOptions({
    rpName: "Paysession",
    rpID: rp.id,
    userName: login.user.email,
    userID: new TextEncoder().encode(login.user.id),
    attestationType: "none",
    excludeCredentials: existing.map((c) => ({ id: c.id as string, transports: (c.transports ?? undefined) as never })),
    authenticatorSelection: { residentKey: "preferred", userVerification: "preferred" },
  });
  await keepChallenge(sql, login.tokenHash, "register", options.challenge);
  return options;
}

/** Verifies and keeps a new passkey with its line; false when the ceremony does not verify (nothing kept). */
export async function registerPasskey(sql: Sql, rp: RelyingParty, login: { tokenHash: string; user: { id: string } }, response: RegistrationResponseJSON, name: string, actor: Actor): Promise<boolean> {
  const challenge = await takeChallenge(sql, login.tokenHash, "register");
  if (!challenge) return false;
  let verified;
  try {
    verified = await verifyRegistrationResponse({ response, expectedChallenge: challenge, expectedOrigin: rp.origin, expectedRPID: rp.id, requireUserVerification: false });
  } catch {
    return false;
  }
  if (!verified.verified || !verified.registrationInfo) return false;
  const c = verified.registrationInfo.credential;
  await sql.begin(async (tx) => {
    await tx`
      insert into app.passkeys (id, user_id, public_key, counter, transports, name)
      values (${c.id}, ${login.user.id}, ${toB64url(c.publicKey)}, ${c.counter}, ${(c.transports ?? []) as string[]}, ${name})`;
    await securityEventStatement(tx, actor, "two_factor_enabled", { method: "passkey", name });
  });
  return true;
}

export async function authenticationOptions(sql: Sql, rp: RelyingParty, login: { tokenHash: string; user: { id: string } }) {
  const mine = await sql`select id, transports from app.passkeys where user_id = ${login.user.id}`;
  const options = await generateAuthenticationOptions({ rpID: rp.id, allowCredentials: mine.map((c) => ({ id: c.id as string, transports: (c.transports ?? undefined) as never })), userVerification: "preferred" });
  await keepChallenge(sql, login.tokenHash, "authenticate", options.challenge);
  return options;
}

/** Verifies a passkey's assertion for the login's person: the counter raised and the line written. */
export async function checkPasskey(sql: Sql, rp: RelyingParty, login: { tokenHash: string; user: { id: string } }, response: AuthenticationResponseJSON, actor: Actor, purpose: "sign_in" | "step_up"): Promise<boolean> {
  const challenge = await takeChallenge(sql, login.tokenHash, "authenticate");
  const [row] = await sql`select id, public_key, counter, transports from app.passkeys where id = ${String(response?.id ?? "")} and user_id = ${login.user.id}`;
  let ok = false;
  if (challenge && row) {
    try {
      const v = await verifyAuthenticationResponse({
        response,
        expectedChallenge: challenge,
        expectedOrigin: rp.origin,
        expectedRPID: rp.id,
        credential: { id: row.id, publicKey: fromB64url(row.public_key), counter: Number(row.counter), transports: row.transports ?? undefined },
        requireUserVerification: false,
      });
      if (v.verified) {
        // Conditional: a counter that did not rise (a cloned authenticator) is refused; 0 means the authenticator keeps none.
        const raised = await sql`
          update app.passkeys set counter = ${v.authenticationInfo.newCounter}, last_used_at = now()
           where id = ${row.id} and (counter < ${v.authenticationInfo.newCounter} or ${v.authenticationInfo.newCounter} = 0) returning id`;
        ok = raised.length > 0;
      }
    } catch {
      ok = false;
    }
  }
  await securityEventStatement(sql, actor, ok ? "two_factor_verified" : "two_factor_failed", { purpose, method: "passkey" });
  return ok;
}

export async function removePasskey(sql: Sql, userId: string, id: string, actor: Actor): Promise<boolean> {
  return sql.begin(async (tx) => {
    const gone = await tx`delete from app.passkeys where id = ${id} and user_id = ${userId} returning name`;
    if (gone.length) await securityEventStatement(tx, actor, "two_factor_disabled", { method: "passkey", name: gone[0]!.name });
    return gone.length > 0;
  });
}
