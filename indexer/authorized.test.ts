/** Pairing an AuthorizationUsed with its Transfer (pure). */
import { expect, test } from "bun:test";
import { AuthorizationPairs } from "./authorized.ts";

const payer = "0x00000000000000000000000000000000000000Aa";
const nonce = `0x${"ab".repeat(32)}`;
const USDC = "0x00000000000000000000000000000000000000C1";

test("the Transfer after the use, in the same transaction, from the authorizer, carries it out (once)", () => {
  const p = new AuthorizationPairs();
  p.used(1, 10n, { token: USDC, txHash: "0xTX", logIndex: 4, authorizer: payer, nonce });
  expect(p.take(1, 10n, { token: USDC, txHash: "0xtx", logIndex: 5, from: payer.toLowerCase() })).toEqual({ txHash: "0xtx", logIndex: 4, token: USDC.toLowerCase(), authorizer: payer.toLowerCase(), nonce });
  expect(p.take(1, 10n, { token: USDC, txHash: "0xtx", logIndex: 6, from: payer })).toBeUndefined();
  expect(p.waiting(1)).toBe(0);
});

test("no pairing with another transaction, another sender, an earlier log, another chain or another block", () => {
  const p = new AuthorizationPairs();
  p.used(1, 10n, { token: USDC, txHash: "0xtx", logIndex: 4, authorizer: payer, nonce });
  expect(p.take(1, 10n, { token: USDC, txHash: "0xother", logIndex: 5, from: payer })).toBeUndefined();
  expect(p.take(1, 10n, { token: USDC, txHash: "0xtx", logIndex: 5, from: "0x01" })).toBeUndefined();
  expect(p.take(1, 10n, { token: USDC, txHash: "0xtx", logIndex: 3, from: payer })).toBeUndefined();
  expect(p.take(2, 10n, { token: USDC, txHash: "0xtx", logIndex: 5, from: payer })).toBeUndefined();
  expect(p.take(1, 11n, { token: USDC, txHash: "0xtx", logIndex: 5, from: payer })).toBeUndefined();
});

test("a new block forgets the last one's unpaired uses: memory holds one block per chain", () => {
  const p = new AuthorizationPairs();
  p.used(1, 10n, { token: USDC, txHash: "0xa", logIndex: 0, authorizer: payer, nonce });
  p.used(1, 11n, { token: USDC, txHash: "0xb", logIndex: 0, authorizer: payer, nonce });
  expect(p.waiting(1)).toBe(1);
  expect(p.take(1, 11n, { token: USDC, txHash: "0xa", logIndex: 1, from: payer })).toBeUndefined();
  expect(p.take(1, 11n, { token: USDC, txHash: "0xb", logIndex: 1, from: payer })?.txHash).toBe("0xb");
});

test("two uses in one transaction (a batch): each Transfer takes the first waiting use of its sender", () => {
  const p = new AuthorizationPairs();
  const other = "0x00000000000000000000000000000000000000bb";
  p.used(1, 10n, { token: USDC, txHash: "0xt", logIndex: 0, authorizer: payer, nonce: "0x01" });
  p.used(1, 10n, { token: USDC, txHash: "0xt", logIndex: 2, authorizer: other, nonce: "0x02" });
  // USDC order: use, transfer, use, transfer; the first transfer is logIndex 1.
  expect(p.take(1, 10n, { token: USDC, txHash: "0xt", logIndex: 1, from: payer })?.nonce).toBe("0x01");
  expect(p.take(1, 10n, { token: USDC, txHash: "0xt", logIndex: 3, from: other })?.nonce).toBe("0x02");
});

test("the Transfer must be the same token's: a use of one token is not carried out by another token's transfer in the same transaction", () => {
  const p = new AuthorizationPairs();
  const usdt = "0x00000000000000000000000000000000000000d2";
  p.used(1, 10n, { token: USDC, txHash: "0xt", logIndex: 0, authorizer: payer, nonce });
  expect(p.take(1, 10n, { token: usdt, txHash: "0xt", logIndex: 1, from: payer })).toBeUndefined();
  expect(p.take(1, 10n, { token: USDC.toLowerCase(), txHash: "0xt", logIndex: 2, from: payer })?.nonce).toBe(nonce);
});
