/**
 * An Idempotency-Key record written before the one seal (credentials/seal.ts) still opens: its
 * derivations (lookup hash, request MAC, sealing key) and its sealed form are what the code
 * before wrote. The vector was made by that code (db/idempotency-keys.ts createClaim) with the
 * service's secret and the IV fixed. What the records do over HTTP is in http/idempotency.test.ts.
 */
import { expect, test } from "bun:test";
import { createClaim, openSealedResponse, type KeyClaim } from "./idempotency-keys.ts";

const claim: KeyClaim = {
  ctx: {
    secret: Buffer.from("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", "hex"),
    merchantId: "mch_test_vector",
    environment: "sandbox",
    endpoint: "POST /payment-sessions",
  },
  key: "order-vector-1",
  hash: "a".repeat(64),
};
const created = { sessionId: "ps_test_vector", token: "pst_test_vector" };
const BEFORE = {
  keyHash: "1a2ca235662cda0370920ff33ebac4fed5a9b8aa34c705b840cc5af3bac38d69",
  legacyHash: "c6e408ac01066253b0bd60734b1609677b622967842d39f0c1c92a7d16ac1d7a",
  endpoint: "POST /payment-sessions",
  requestMac: "08bcc0f42a4abf422909b763698eaf4e4e82268723be759f6a89ea197219c8b9",
  sealed:
    "v2.AAECAwQFBgcICQoL.4makt5P7kkqa/hyEf2LkfA==.KqtTDkFt8piXJB6X2XfalUINfqxUyxmJtuj9WbmmSDX6MIZgVuesHdM4Ji6C+eb+p2d4aJDhdz2Ng0hCTf5aGOHi2KwjP500o/xGaG/JetAX569W3v6W",
};

test("a create's record from before derives the same hashes, and its sealed answer opens", () => {
  const now = createClaim(claim, created);
  expect({ ...now, sealed: undefined }).toEqual({ ...BEFORE, sealed: undefined });
  expect(now.sealed).toStartWith("v2.");
  expect(now.sealed).not.toBe(BEFORE.sealed); // a fresh IV
  const expected = JSON.stringify({ "paysession:created-session": created });
  expect(openSealedResponse(claim, BEFORE.sealed)).toBe(expected);
  expect(openSealedResponse(claim, now.sealed)).toBe(expected);
});

test("the record opens only for its own key, merchant, environment and service secret, and only unaltered", () => {
  const ctx = claim.ctx;
  for (const other of [
    { ...claim, key: "order-vector-2" },
    { ...claim, ctx: { ...ctx, merchantId: "mch_test_other" } },
    { ...claim, ctx: { ...ctx, environment: "production" as const } },
    { ...claim, ctx: { ...ctx, secret: Buffer.alloc(32, 9) } },
  ]) {
    expect(() => openSealedResponse(other, BEFORE.sealed)).toThrow();
  }
  const [label, iv, tag, ct] = BEFORE.sealed.split(".") as [string, string, string, string];
  const bytes = Buffer.from(ct, "base64");
  bytes[5]! ^= 0x80;
  expect(() => openSealedResponse(claim, [label, iv, tag, bytes.toString("base64")].join("."))).toThrow();
});
