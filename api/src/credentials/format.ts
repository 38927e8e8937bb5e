/**
 * The shapes of our credentials, pure. Every credential names its environment in its
 * prefix (docs/decisions.md, "Environments and credentials"), so a request can be told "wrong environment" before any lookup:
 *   sk_test_<40>  / sk_live_<40>   API keys (server side)
 *   pst_test_<40> / pst_live_<40>  session tokens (one session, short-lived)
 *   mch_test_<24> / mch_live_<24>  public merchant ids
 * Secrets are stored only as SHA-256 hashes: they are 238-bit random strings, so a fast
 * hash is enough (no password stretching needed) and lookups stay one index probe.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { ENV_TAG, environmentFromTag, type Environment } from "../../../shared/environment.ts";
import { newSecret } from "../../../shared/ids.ts";
import { customAlphabet } from "nanoid";

export type CredentialKind = "api_key" | "session_token";

const KIND_PREFIX: Record<CredentialKind, string> = { api_key: "sk", session_token: "pst" };
const SHAPE = /^(sk|pst)_(test|live)_([0-9A-Za-z]{40})$/;

export interface ParsedCredential {
  kind: CredentialKind;
  environment: Environment;
  raw: string;
}

export function mintCredential(kind: CredentialKind, environment: Environment): string {
  return `${KIND_PREFIX[kind]}_${ENV_TAG[environment]}_${newSecret()}`;
}

/** undefined when the text is not shaped like any credential of ours. */
export function parseCredential(raw: string): ParsedCredential | undefined {
  const m = SHAPE.exec(raw);
  if (!m) return undefined;
  const environment = environmentFromTag(m[2]!)!;
  return { kind: m[1] === "sk" ? "api_key" : "session_token", environment, raw };
}

export function hashSecret(raw: string): string {
  return createHash("sha256").update(raw).digest("hex");
}

/** Constant-time comparison of two hex hashes of equal length. */
export function sameHash(a: string, b: string): boolean {
  const ba = Buffer.from(a, "hex");
  const bb = Buffer.from(b, "hex");
  return ba.length === bb.length && timingSafeEqual(ba, bb);
}

/** What may be shown of a credential after creation: kind, environment and 4 characters ("sk_test_4f9K"). */
export function displayPrefix(raw: string): string {
  const secretStart = raw.lastIndexOf("_") + 1;
  return raw.slice(0, secretStart + 4);
}

const publicIdPart = customAlphabet("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", 24);
export function newMerchantPublicId(environment: Environment): string {
  return `mch_${ENV_TAG[environment]}_${publicIdPart()}`;
}

/** Reads "Bearer <credential>" from an Authorization header value. */
export function bearer(header: string | null | undefined): string | undefined {
  if (!header) return undefined;
  const m = /^Bearer +(\S+)\s*$/i.exec(header);
  return m ? m[1] : undefined;
}
