import { describe, expect, test } from "bun:test";
import { keccak256, stringToHex, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import {
  authorizationNonce,
  authorizationTerms,
  MIN_SECONDS_LEFT,
  offerOf,
  signedByFrom,
  termsMismatch,
  tooLate,
  typedData,
  type SubmittedAuthorization,
  type TokenDomain,
} from "./authorization.ts";

const SESSION = { id: "ps_test_abc123", expiresAt: new Date("2030-01-02T03:04:05.678Z") };
const DEPOSIT = { settlementAddress: "0x70997970c51812dc3a010c7d01b50e0d17dc79c8", requiredBaseUnits: "12340000" };
const DOMAIN: TokenDomain = { name: "Test USD", version: "2", chainId: 31337, verifyingContract: "0xe2b4152e3b6Cc732B52DF67F42b2cBDbaEe385a5" };
const payer = privateKeyToAccount(generatePrivateKey());

const terms = authorizationTerms(SESSION, DEPOSIT);
const submitted = (over: Partial<SubmittedAuthorization> = {}): SubmittedAuthorization => ({
  chainId: 31337,
  from: payer.address,
  value: terms.value,
  validAfter: terms.validAfter,
  validBefore: terms.validBefore,
  nonce: terms.nonce,
  signature: "0x",
  ...over,
});

describe("the session's nonce", () => {
  test("keccak256 of the versioned prefix and the session id: 32 bytes, the documented formula", () => {
    const n = authorizationNonce("ps_test_abc123");
    expect(n).toBe(keccak256(stringToHex("paysession:eip3009:v1:ps_test_abc123")));
    expect(n).toMatch(/^0x[0-9a-f]{64}$/);
  });
  test("another session, another nonce; never the deposit salt (keccak256 of the bare id)", () => {
    expect(authorizationNonce("ps_test_abc124")).not.toBe(authorizationNonce("ps_test_abc123"));
    expect(authorizationNonce("ps_test_abc123")).not.toBe(keccak256(stringToHex("ps_test_abc123")));
    expect(() => authorizationNonce("")).toThrow();
  });
});

describe("the terms of a session on a network", () => {
  test("to the settlement address (checksummed), the amount in base units, from 0 to the expiry in whole seconds", () => {
    expect(terms).toEqual({
      to: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
      value: 12_340_000n,
      validAfter: 0n,
      validBefore: BigInt(Date.UTC(2030, 0, 2, 3, 4, 5)) / 1000n,
      nonce: authorizationNonce(SESSION.id),
    });
  });
  test("the offer is the typed data without `from`, numbers as strings", () => {
    const offer = offerOf(DOMAIN, terms);
    expect(offer.primaryType).toBe("TransferWithAuthorization");
    expect(offer.domain).toEqual(DOMAIN);
    expect(offer.types.TransferWithAuthorization.map((f) => f.name)).toEqual(["from", "to", "value", "validAfter", "validBefore", "nonce"]);
    expect(offer.message).toEqual({ to: terms.to, value: "12340000", validAfter: "0", validBefore: terms.validBefore.toString(), nonce: terms.nonce });
    expect(JSON.parse(JSON.stringify(offer))).toEqual(offer);
  });
});

describe("a submission against the terms", () => {
  test("exactly the terms: no mismatch; `to` may be left out or given in any case", () => {
    expect(termsMismatch(submitted(), terms)).toBeNull();
    expect(termsMismatch(submitted({ to: DEPOSIT.settlementAddress as Address }), terms)).toBeNull();
    expect(termsMismatch(submitted({ nonce: terms.nonce.toUpperCase().replace("0X", "0x") as `0x${string}` }), terms)).toBeNull();
  });
  test("each field that differs has its own reason, in a fixed order", () => {
    expect(termsMismatch(submitted({ to: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC" }), terms)).toBe("recipient");
    expect(termsMismatch(submitted({ value: terms.value - 1n }), terms)).toBe("value");
    expect(termsMismatch(submitted({ value: terms.value + 1n }), terms)).toBe("value");
    expect(termsMismatch(submitted({ validAfter: 1n }), terms)).toBe("window");
    expect(termsMismatch(submitted({ validBefore: terms.validBefore + 3600n }), terms)).toBe("window");
    expect(termsMismatch(submitted({ nonce: authorizationNonce("ps_test_other") }), terms)).toBe("nonce");
    expect(termsMismatch(submitted({ value: 1n, nonce: authorizationNonce("ps_test_other") }), terms)).toBe("value");
  });
  test("too late once fewer than MIN_SECONDS_LEFT remain before the expiry", () => {
    expect(tooLate(terms, terms.validBefore - MIN_SECONDS_LEFT)).toBe(false);
    expect(tooLate(terms, terms.validBefore - MIN_SECONDS_LEFT + 1n)).toBe(true);
    expect(tooLate(terms, terms.validBefore + 10n)).toBe(true);
  });
});

describe("the signature", () => {
  test("the payer's signature of the typed data recovers to `from`", async () => {
    const signature = await payer.signTypedData(typedData(DOMAIN, terms, payer.address));
    expect(await signedByFrom(DOMAIN, terms, submitted({ signature }))).toBe(true);
  });
  test("another key, another domain (chain, token, version), or another `from`: not signed by `from`", async () => {
    const other = privateKeyToAccount(generatePrivateKey());
    expect(await signedByFrom(DOMAIN, terms, submitted({ signature: await other.signTypedData(typedData(DOMAIN, terms, payer.address)) }))).toBe(false);
    for (const domain of [{ ...DOMAIN, chainId: 1 }, { ...DOMAIN, verifyingContract: other.address }, { ...DOMAIN, version: "1" }]) {
      const signature = await payer.signTypedData(typedData(domain, terms, payer.address));
      expect(await signedByFrom(DOMAIN, terms, submitted({ signature }))).toBe(false);
    }
    const signature = await payer.signTypedData(typedData(DOMAIN, terms, payer.address));
    expect(await signedByFrom(DOMAIN, terms, submitted({ signature, from: other.address }))).toBe(false);
  });
  test("not a 65-byte signature (garbage, a contract wallet's longer one): false, never a throw", async () => {
    expect(await signedByFrom(DOMAIN, terms, submitted({ signature: "0x" }))).toBe(false);
    expect(await signedByFrom(DOMAIN, terms, submitted({ signature: `0x${"ab".repeat(65)}` }))).toBe(false);
    expect(await signedByFrom(DOMAIN, terms, submitted({ signature: `0x${"00".repeat(200)}` }))).toBe(false);
  });
});
