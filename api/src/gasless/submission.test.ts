/** The pure part of submitting a recorded authorization (submission.ts): what a receipt proves, when a record may be sent, what a revert means. */
import { expect, test } from "bun:test";
import { encodeAbiParameters, keccak256, pad, stringToHex } from "viem";
import { receiptPaid, refusalOfRevert, sendRefusal, capacity, type RecordedAuthorization } from "./submission.ts";

const token: `0x${string}` = "0xe2b4152e3b6cc732b52df67f42b2cbdbaee385a5";
const auth: RecordedAuthorization = {
  sessionId: "ps_x",
  tokenAddress: token,
  fromAddress: "0x90f79bf6eb2c4f870365e785982e1f101e93b906",
  toAddress: "0x70997970c51812dc3a010c7d01b50e0d17dc79c8",
  value: "1000000",
  validAfter: "0",
  validBefore: "2000000000",
  nonce: keccak256(stringToHex("n")),
  signature: "0x",
};
const TRANSFER = keccak256(stringToHex("Transfer(address,address,uint256)"));
const USED = keccak256(stringToHex("AuthorizationUsed(address,bytes32)"));
const transfer = (to = auth.toAddress, value = 1_000_000n, address: `0x${string}` = token) => ({
  address,
  topics: [TRANSFER, pad(auth.fromAddress as `0x${string}`), pad(to as `0x${string}`)] as [`0x${string}`, ...`0x${string}`[]],
  data: encodeAbiParameters([{ type: "uint256" }], [value]),
});
const used = (address: `0x${string}` = token) => ({ address, topics: [USED, pad(auth.fromAddress as `0x${string}`), auth.nonce as `0x${string}`] as [`0x${string}`, ...`0x${string}`[]], data: "0x" as const });

test("paid only when the token logged the Transfer to the settlement address for the value and AuthorizationUsed: not the receipt's status alone", () => {
  expect(receiptPaid({ status: "success", logs: [transfer(), used()] }, auth)).toBe(true);
  expect(receiptPaid({ status: "success", logs: [] }, auth)).toBe(false); // a call that "succeeded" without doing it
  expect(receiptPaid({ status: "reverted", logs: [transfer(), used()] }, auth)).toBe(false);
  expect(receiptPaid({ status: "success", logs: [transfer(), used("0x0000000000000000000000000000000000000001")] }, auth)).toBe(false); // another contract's event
  expect(receiptPaid({ status: "success", logs: [transfer(auth.fromAddress), used()] }, auth)).toBe(false); // to someone else
  expect(receiptPaid({ status: "success", logs: [transfer(auth.toAddress, 1n), used()] }, auth)).toBe(false); // another amount
  expect(receiptPaid({ status: "success", logs: [transfer()] }, auth)).toBe(false);
});

test("never sent after the session left PENDING, with its window closing, or past the session's budget", () => {
  expect(sendRefusal({ status: "PENDING" }, 1_000n, 900n, undefined)).toBeNull();
  expect(sendRefusal({ status: "CANCELED" }, 1_000n, 900n, undefined)?.reason).toBe("session_closed");
  expect(sendRefusal({ status: "FUNDED" }, 1_000n, 900n, undefined)?.reason).toBe("session_closed");
  expect(sendRefusal({ status: "PENDING" }, 1_000n, 996n, undefined)?.reason).toBe("expired");
  expect(sendRefusal({ status: "PENDING" }, 1_000n, 900n, "over")?.reason).toBe("session_budget");
});

test("the token's revert reasons name the outcome", () => {
  expect(refusalOfRevert("FiatTokenV2: authorization is used or canceled").reason).toBe("used_elsewhere");
  expect(refusalOfRevert("FiatTokenV2: authorization is expired").reason).toBe("expired");
  expect(refusalOfRevert("ERC20: transfer amount exceeds balance")).toMatchObject({ reason: "rejected", detail: expect.stringContaining("exceeds balance") });
});

test("capacity: the fee within the ceiling, then the balance for the gas at that fee", () => {
  expect(capacity(10n, 10n, 1_000n, 100n)).toEqual({ ok: true });
  expect(capacity(11n, 10n, 10n ** 18n, 100n)).toMatchObject({ ok: false, reason: "fee_above_ceiling" });
  expect(capacity(10n, 10n, 999n, 100n)).toMatchObject({ ok: false, reason: "relayer_unfunded" });
});
