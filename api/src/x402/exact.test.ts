/** The pure checks of an x402 payment (exact.ts): network ids, the payload read, cents, and the order of the refusals. */
import { describe, expect, test } from "bun:test";
import type { Address, Hex } from "viem";
import { centsOf, chainIdOf, checkRequest, checkTerms, INVALID, readAuthorization, sessionFacts, type PaymentContext, type PaymentPayload, type Requirements } from "./exact.ts";

const TOKEN = "0xe2b4152e3b6Cc732B52DF67F42b2cBDbaEe385a5" as Address;
const PAY_TO = "0x5E77E7000000000000000000000000000000C0De" as Address;
const FROM = "0x90F79bf6EB2c4f870365E785982E1f101E93b906" as Address;
const NONCE = `0x${"ab".repeat(32)}` as Hex;
const SIG = `0x${"11".repeat(65)}` as Hex;
const NOW = 1_800_000_000n;

const requirements = (change: Partial<Requirements> = {}): Requirements => ({
  scheme: "exact",
  network: "eip155:31337",
  asset: TOKEN,
  amount: "10000",
  payTo: PAY_TO,
  maxTimeoutSeconds: 60,
  extra: { name: "Test USD", version: "2" },
  ...change,
});
const payment = (auth: Record<string, unknown> = {}, req = requirements()): PaymentPayload => ({
  x402Version: 2,
  accepted: req,
  payload: { authorization: { from: FROM, to: PAY_TO, value: "10000", validAfter: "0", validBefore: String(NOW + 60n), nonce: NONCE, ...auth }, signature: SIG },
});
const ctx = (change: Partial<PaymentContext> = {}): PaymentContext => ({
  token: { address: TOKEN, decimals: 6 },
  domain: { name: "Test USD", version: "2", chainId: 31337, verifyingContract: TOKEN },
  settlement: PAY_TO,
  minCents: 1n,
  maxCents: 100_000_000n,
  nowSeconds: NOW,
  ...change,
});
function terms(p: PaymentPayload, r: Requirements, c = ctx()) {
  const a = readAuthorization(p.payload);
  if ("reason" in a) return a.reason;
  const out = checkTerms(p, r, a, c);
  return "reason" in out ? out.reason : out;
}

describe("network ids and amounts", () => {
  test("eip155:<chainId> only", () => {
    expect(chainIdOf("eip155:8453")).toBe(8453);
    expect(chainIdOf("eip155:0")).toBeNull();
    expect(chainIdOf("eip155:08453")).toBeNull();
    expect(chainIdOf("solana:mainnet")).toBeNull();
    expect(chainIdOf("eip155:99999999999999999999")).toBeNull();
  });
  test("whole cents at the token's decimals, or nothing", () => {
    expect(centsOf(10_000n, 6)).toBe(1n);
    expect(centsOf(12_340_000n, 6)).toBe(1234n);
    expect(centsOf(12_345n, 6)).toBeNull();
    expect(centsOf(1n, 2)).toBe(1n);
    expect(centsOf(1n, 1)).toBeNull();
  });
});

describe("the request", () => {
  const offered = (id: number) => id === 31337;
  test("version, scheme, network, then the payload", () => {
    expect(checkRequest(1, payment(), requirements(), offered)).toMatchObject({ reason: INVALID.version });
    expect(checkRequest(2, payment(), requirements({ scheme: "upto" }), offered)).toMatchObject({ reason: INVALID.scheme });
    expect(checkRequest(2, payment(), requirements({ network: "eip155:1" }), offered)).toMatchObject({ reason: INVALID.network });
    const other = requirements({ network: "eip155:1" });
    expect(checkRequest(2, payment({}, other), other, offered)).toMatchObject({ reason: INVALID.network });
    expect(checkRequest(2, payment({ nonce: "0x12" }), requirements(), offered)).toMatchObject({ reason: INVALID.payload });
    const ok = checkRequest(2, payment(), requirements(), offered);
    expect(ok).toMatchObject({ chainId: 31337, authorization: { from: FROM, value: 10_000n, nonce: NONCE } });
  });
  test("a payload that is not one is refused, never thrown", () => {
    for (const payload of [{}, { authorization: [] }, { authorization: { from: "x" } }, { authorization: { from: FROM, to: PAY_TO, value: "1e6", validAfter: "0", validBefore: "1", nonce: NONCE }, signature: SIG }]) {
      expect(readAuthorization(payload as Record<string, unknown>)).toMatchObject({ reason: INVALID.payload });
    }
  });
});

describe("the terms, in a fixed order", () => {
  test("a good payment: the terms the relayer carries out, the session in cents", () => {
    const out = terms(payment(), requirements());
    expect(out).toMatchObject({ cents: 1n, terms: { to: PAY_TO, value: 10_000n, validAfter: 0n, validBefore: NOW + 60n, nonce: NONCE } });
  });
  test("each refusal", () => {
    expect(terms(payment(), requirements({ asset: "0x00000000000000000000000000000000000000a1" }))).toBe(INVALID.notSupported);
    expect(terms(payment(), requirements(), ctx({ token: undefined }))).toBe(INVALID.notSupported);
    expect(terms(payment(), requirements(), ctx({ domain: undefined }))).toBe(INVALID.notSupported);
    expect(terms(payment(), requirements({ extra: {} }))).toBe(INVALID.missingDomain);
    expect(terms(payment(), requirements({ extra: { name: "USD Coin", version: "2" } }))).toBe(INVALID.nameMismatch);
    expect(terms(payment(), requirements({ extra: { name: "Test USD", version: "1" } }))).toBe(INVALID.versionMismatch);
    expect(terms(payment(), requirements(), ctx({ settlement: undefined }))).toBe(INVALID.recipient);
    expect(terms(payment(), requirements({ payTo: FROM }))).toBe(INVALID.recipient);
    expect(terms(payment({ to: FROM }), requirements())).toBe(INVALID.recipient);
    expect(terms(payment({ validBefore: String(NOW + 9n) }), requirements())).toBe(INVALID.validBefore);
    expect(terms(payment({ validAfter: String(NOW + 1n) }), requirements())).toBe(INVALID.validAfter);
    expect(terms(payment({ value: "9999" }), requirements())).toBe(INVALID.valueMismatch);
    expect(terms(payment({ value: "12345" }, requirements({ amount: "12345" })), requirements({ amount: "12345" }))).toBe(INVALID.value);
    expect(terms(payment(), requirements(), ctx({ minCents: 2n }))).toBe(INVALID.value);
  });
  test("the first failing check is the one told: a wrong recipient before an expired window", () => {
    expect(terms(payment({ to: FROM, validBefore: "1" }), requirements())).toBe(INVALID.recipient);
    expect(terms(payment({ validBefore: "1", value: "1" }), requirements())).toBe(INVALID.validBefore);
  });
});

test("the session's facts stay within the session's limits", () => {
  const long = `http://api.example/${"x".repeat(600)}`;
  const facts = sessionFacts({ ...payment(), resource: { url: long, description: "d" } }, requirements(), FROM, NONCE);
  expect(facts.referenceId!.length).toBe(128);
  expect(facts.metadata.x402_resource!.length).toBe(500);
  expect(Object.keys(facts.metadata).length).toBeLessThanOrEqual(20);
  expect(Object.keys(facts.metadata).every((k) => k.length <= 40)).toBe(true);
  expect(facts.metadata).toMatchObject({ x402_payer: FROM, x402_nonce: NONCE, x402_description: "d" });
});
