/** The pure rules of a refund paid from the merchant's wallet (wallet.ts): what it must pay, the checks of an authorization, a transfer's outcome. */
import { describe, expect, test } from "bun:test";
import { getAddress } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { TRANSFER_WITH_AUTHORIZATION_TYPES } from "../../../shared/contracts/eip3009.ts";
import { authorizationProblem, signedBySettlement, transferOutcome, walletPaymentOf, type WalletAuthorization } from "./wallet.ts";

const settlement = privateKeyToAccount("0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a");
const other = privateKeyToAccount("0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba");
const token = "0x00000000000000000000000000000000000000aa";
const payer = "0x00000000000000000000000000000000000000bb";
const part = { token, baseUnits: "2500000", destination: payer };

describe("what the wallet must pay", () => {
  test("one part with a destination, from the settlement address; two tokens or no destination cannot", () => {
    const p = walletPaymentOf({ chainId: 1, parts: [part] }, settlement.address.toLowerCase());
    expect(p).toEqual({ ok: true, payment: { chainId: 1, from: settlement.address, token: getAddress(token), to: getAddress(payer), value: 2_500_000n } });
    expect(walletPaymentOf({ chainId: 1, parts: [part, part] }, settlement.address).ok).toBe(false);
    expect(walletPaymentOf({ chainId: 1, parts: [{ ...part, destination: null }] }, settlement.address).ok).toBe(false);
  });
});

describe("an authorization against the refund", () => {
  const payment = (walletPaymentOf({ chainId: 1, parts: [part] }, settlement.address) as { ok: true; payment: any }).payment;
  const now = 1_000_000n;
  const good: WalletAuthorization = { from: settlement.address, to: payer, value: 2_500_000n, validAfter: 0n, validBefore: now + 600n, nonce: `0x${"12".repeat(32)}`, signature: "0x" };
  test("each mismatch, in a fixed order", () => {
    expect(authorizationProblem(good, payment, now)).toBeNull();
    expect(authorizationProblem({ ...good, from: other.address }, payment, now)).toContain("not the session's settlement address");
    expect(authorizationProblem({ ...good, to: other.address }, payment, now)).toContain("not the refund's destination");
    expect(authorizationProblem({ ...good, value: 2_500_001n }, payment, now)).toContain("the refund is 2500000");
    expect(authorizationProblem({ ...good, validBefore: now + 59n }, payment, now)).toContain("window has closed");
    expect(authorizationProblem({ ...good, validAfter: now + 1n }, payment, now)).toContain("not valid yet");
    expect(authorizationProblem({ ...good, validBefore: now + 3601n }, payment, now)).toContain("too long");
    expect(authorizationProblem({ ...good, from: other.address, value: 1n }, payment, now)).toContain("settlement address"); // the signer first
  });
  test("the signature must be the settlement address's over exactly these terms", async () => {
    const domain = { name: "TestUSD", version: "2", chainId: 1, verifyingContract: token } as const;
    const message = { from: good.from, to: good.to, value: good.value, validAfter: good.validAfter, validBefore: good.validBefore, nonce: good.nonce };
    const sig = await settlement.signTypedData({ domain, types: TRANSFER_WITH_AUTHORIZATION_TYPES, primaryType: "TransferWithAuthorization", message });
    expect(await signedBySettlement(domain, { ...good, signature: sig })).toBe(true);
    expect(await signedBySettlement(domain, { ...good, value: 1n, signature: sig })).toBe(false);
    expect(await signedBySettlement({ ...domain, chainId: 2 }, { ...good, signature: sig })).toBe(false);
    const theirs = await other.signTypedData({ domain, types: TRANSFER_WITH_AUTHORIZATION_TYPES, primaryType: "TransferWithAuthorization", message });
    expect(await signedBySettlement(domain, { ...good, signature: theirs })).toBe(false);
    expect(await signedBySettlement(domain, { ...good, signature: "0x1234" })).toBe(false);
  });
});

describe("a wallet transfer's receipt", () => {
  const payment = { chainId: 1, from: settlement.address, token, to: payer, value: 5n } as const;
  const log = { token, from: settlement.address.toLowerCase(), to: payer, value: 5n };
  test("the exact Transfer pays it; anything else does not", () => {
    expect(transferOutcome("success", [log], payment)).toEqual({ paid: true });
    expect(transferOutcome("reverted", [log], payment)).toEqual({ paid: false, reason: "reverted" });
    expect(transferOutcome("success", [{ ...log, value: 4n }], payment)).toEqual({ paid: false, reason: "transfer_missing" });
    expect(transferOutcome("success", [{ ...log, from: other.address.toLowerCase() }], payment)).toEqual({ paid: false, reason: "transfer_missing" });
    expect(transferOutcome("success", [{ ...log, token: "0x00000000000000000000000000000000000000cc" }], payment)).toEqual({ paid: false, reason: "transfer_missing" });
    expect(transferOutcome("success", [], payment)).toEqual({ paid: false, reason: "transfer_missing" });
  });
});
