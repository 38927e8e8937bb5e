/** Temporary: every request body schema, and bad bodies for each (seeded, the same every run). */
import type { TSchema } from "@sinclair/typebox";
import { AuthorizationBody } from "./authorizations.schemas.ts";
import { RedeliverBody } from "./events.schemas.ts";
import { CreateSessionBody } from "./payment-sessions.schemas.ts";
import { PayerFaucetBody, PayerPayBody } from "./public-sessions.schemas.ts";
import { FaucetBody, SandboxPayBody } from "./sandbox.schemas.ts";
import { EmptyBody } from "./schemas.ts";
import { SettlementAddressBody } from "./settlement-addresses.schemas.ts";
import { CreateWebhookEndpointBody, RotateSecretBody, UpdateWebhookEndpointBody } from "./webhook-endpoints.schemas.ts";

export const BODY_SCHEMAS = {
  AuthorizationBody,
  RedeliverBody,
  CreateSessionBody,
  PayerFaucetBody,
  PayerPayBody,
  FaucetBody,
  SandboxPayBody,
  EmptyBody,
  SettlementAddressBody,
  CreateWebhookEndpointBody,
  RotateSecretBody,
  UpdateWebhookEndpointBody,
};

const ADDRESS = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const VALID: Record<string, Record<string, unknown>> = {
  AuthorizationBody: { chainId: 31337, from: ADDRESS, to: ADDRESS, value: "12340000", validAfter: "0", validBefore: "1767225600", nonce: "0x" + "ab".repeat(32), signature: "0x" + "cd".repeat(65) },
  RedeliverBody: { webhookEndpointId: "whe_x" },
  CreateSessionBody: { amount: "12.34", currency: "USD", metadata: { orderId: "1042" }, referenceId: "order_1", expiresInSeconds: 1800 },
  PayerFaucetBody: { address: ADDRESS, chainId: 31337, tokenAddress: ADDRESS },
  PayerPayBody: { chainId: 31337 },
  FaucetBody: { address: ADDRESS, amount: "100.00", chainId: 31337 },
  SandboxPayBody: { amount: "1.00", chainId: 31337 },
  EmptyBody: {},
  SettlementAddressBody: { address: ADDRESS },
  CreateWebhookEndpointBody: { url: "https://example.com/h", description: "d", enabled: true },
  RotateSecretBody: { overlapSeconds: 60 },
  UpdateWebhookEndpointBody: { url: "https://example.com/h", description: "", enabled: false },
};

const POOL: unknown[] = [
  undefined, null, true, false, 0, 1, -1, 1.5, 59, 60, 86400, 86401, 604800, 604801, 1e12, 31337,
  "", "x", "a\u0000b", "\u0000", "\uD800", "x\uDC00", "\uD83D\uDE00", "\uD800\u0000", "12.34", "0", "00", "1".repeat(78), "1".repeat(79), "-1", "0x", "0xab", "0x" + "ab".repeat(32), "0x" + "AB".repeat(32) + "a",
  "0x" + "ab".repeat(2049), "0x" + "ab".repeat(2050), "x".repeat(16), "x".repeat(17), "x".repeat(32), "x".repeat(33), "x".repeat(64), "x".repeat(65), "x".repeat(128), "x".repeat(129), "x".repeat(256), "x".repeat(257), "x".repeat(2048), "x".repeat(2049), ADDRESS,
  [], ["x"], {}, { a: "b" }, { a: 1 }, { "\u0000": "x" }, { "a\uD800": "x" }, { k: "v".repeat(500) }, { k: "v".repeat(501) }, { "a\nb": 5 }, { a: "b", c: 2, d: "\u0000" }, { __proto__x: 1 },
];
const ODD_KEYS = ["x", "__proto__", "\u0000", "a\uD800", "URL", "secret", "constructor", "a.b", "a/b~c", "", "metadata", "toString"];

/** A small seeded generator (mulberry32): the same bodies every run. */
function random(seed: number) {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function* badBodies(name: string, schema: TSchema): Generator<unknown> {
  const valid = VALID[name]!;
  const fields = Object.keys((schema as unknown as { properties: object }).properties);
  for (const root of [null, [], "x", 1, true, [valid]]) yield root;
  yield { ...valid };
  // One field at a time: each value of the pool, or left out.
  for (const f of fields) for (const v of POOL) yield Object.fromEntries(Object.entries({ ...valid, [f]: v }).filter(([, x]) => v !== undefined || x !== undefined));
  // One odd key at a time, in front, behind or among the fields.
  for (const k of ODD_KEYS) {
    for (const v of [1, "x", "\u0000", undefined]) {
      const entries = Object.entries(valid);
      for (let at = 0; at <= entries.length; at++) yield Object.fromEntries([...entries.slice(0, at), [k, v], ...entries.slice(at)]);
    }
  }
  // Several problems at once, in random key orders.
  const rnd = random(name.length * 7919 + fields.length);
  const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)]!;
  const randomRecord = () => Object.fromEntries(Array.from({ length: Math.floor(rnd() * 4) }, () => [pick(["a", "b", "\u0000", "a\uD800", "", "a\nb", "__proto__"]), rnd() < 0.4 ? "v" : pick(POOL)]));
  for (let i = 0; i < 3000; i++) {
    const entries: [string, unknown][] = [];
    for (const f of fields) {
      const r = rnd();
      if (r < 0.2) continue;
      const sub = (schema as unknown as { properties: Record<string, { patternProperties?: object }> }).properties[f]!;
      entries.push([f, r < 0.5 ? valid[f] : sub.patternProperties && r < 0.8 ? randomRecord() : pick(POOL)]);
    }
    const odd = rnd() < 0.2 ? 1 + Math.floor(rnd() * 2) : 0;
    for (let j = 0; j < odd; j++) entries.splice(Math.floor(rnd() * (entries.length + 1)), 0, [pick(ODD_KEYS), pick(POOL)]);
    for (let j = entries.length - 1; j > 0; j--) {
      if (rnd() < 0.5) continue;
      const o = Math.floor(rnd() * (j + 1));
      [entries[j], entries[o]] = [entries[o]!, entries[j]!];
    }
    yield Object.fromEntries(entries);
  }
}
