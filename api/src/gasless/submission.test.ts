/** The pure part of submitting a recorded authorization (submission.ts): what a receipt proves, when a record may be sent, what a revert means. */
import { expect, test } from "bun:test";
import { decodeFunctionData, encodeAbiParameters, keccak256, pad, stringToHex } from "viem";
import { authorizationBatchAbi } from "../../../shared/contracts/artifacts.ts";
import { eip3009Abi } from "../../../shared/contracts/eip3009.ts";
import { authorizationCall, planSubmission, receiptPaid, refusalOfRevert, sendRefusal, capacity, splitSignature, type RecordedAuthorization } from "./submission.ts";

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

const R = `0x${"11".repeat(32)}` as const;
const S = `0x${"22".repeat(32)}` as const;
const eoa = (sessionId: string, v = "1b", tokenAddress: string = token): RecordedAuthorization => ({ ...auth, sessionId, tokenAddress, nonce: keccak256(stringToHex(sessionId)), signature: `${R}${S.slice(2)}${v}` });
const BATCH = "0x85e22Ff4406070b7c7919c260402dbDB3D882B86" as const;

test("a 65-byte signature splits into r, s and the raw v byte (the token re-packs exactly what was signed); any other length does not", () => {
  expect(splitSignature(eoa("a").signature)).toEqual({ r: R, s: S, v: 27 });
  expect(splitSignature(eoa("a", "00").signature)?.v).toBe(0); // not "normalized" to 27: the token decides
  expect(splitSignature("0x")).toBeNull();
  expect(splitSignature(`${eoa("a").signature}00`)).toBeNull(); // a contract wallet's longer signature
});

test("alone, an EOA's authorization goes by the v, r, s form; a contract wallet's by the bytes form", () => {
  const a = eoa("ps_a");
  const vrs = decodeFunctionData({ abi: eip3009Abi, data: authorizationCall(a).data });
  expect(vrs.args).toHaveLength(9);
  expect(vrs.args.slice(6)).toEqual([27, R, S]);
  const wallet = { ...a, signature: `0x${"ab".repeat(100)}` as const };
  const bytes = decodeFunctionData({ abi: eip3009Abi, data: authorizationCall(wallet).data });
  expect(bytes.args).toHaveLength(7);
  expect(bytes.args[6]).toBe(wallet.signature);
});

test("planSubmission: several of one token through AuthorizationBatch, oldest first, at most `max`; else the oldest alone", () => {
  const [a, b, c] = [eoa("ps_a"), eoa("ps_b"), eoa("ps_c")];
  const other = eoa("ps_other_token", "1b", "0x0000000000000000000000000000000000000abc");
  const wallet = { ...eoa("ps_wallet"), signature: `0x${"ab".repeat(100)}` as const };

  const batched = planSubmission([a, other, b, wallet, c], BATCH, 10)!;
  expect(batched.batched).toBe(true);
  expect(batched.call.to).toBe(BATCH);
  expect(batched.authorizations.map((x) => x.sessionId)).toEqual(["ps_a", "ps_b", "ps_c"]); // the other token's and the wallet's wait
  const decoded = decodeFunctionData({ abi: authorizationBatchAbi, data: batched.call.data });
  expect(decoded.args[0].toLowerCase()).toBe(token);
  expect(decoded.args[1].map((x) => [x.nonce, x.v, x.r, x.s, x.value])).toEqual([a, b, c].map((x) => [x.nonce, 27, R, S, 1_000_000n]));

  expect(planSubmission([a, b, c], BATCH, 2)!.authorizations.map((x) => x.sessionId)).toEqual(["ps_a", "ps_b"]);
  // Alone: no batch contract on the network, only one due, or the oldest is a contract wallet's.
  for (const [ready, batch] of [[[a, b], undefined], [[a], BATCH], [[a, other], BATCH], [[wallet, a, b], BATCH]] as const) {
    const plan = planSubmission(ready, batch, 10)!;
    expect(plan.batched).toBe(false);
    expect(plan.authorizations).toEqual([ready[0]]);
    expect(plan.call).toEqual(authorizationCall(ready[0]));
  }
  expect(planSubmission([], BATCH, 10)).toBeNull();
});

test("planSubmission: one that a batch did not carry out (retried) goes alone and joins no batch: one payer cannot spoil the same others twice", () => {
  const [a, b, c] = [eoa("ps_a"), eoa("ps_b"), eoa("ps_c")];
  const [ra, rb] = [{ ...a, retried: true }, { ...b, retried: true }];
  const first = planSubmission([ra, rb, c], BATCH, 10)!;
  expect([first.batched, first.authorizations]).toEqual([false, [ra]]);
  expect(first.call).toEqual(authorizationCall(ra));
  const later = planSubmission([c, rb, a], BATCH, 10)!;
  expect([later.batched, later.authorizations.map((x) => x.sessionId)]).toEqual([true, ["ps_c", "ps_a"]]);
  expect(planSubmission([c, rb], BATCH, 10)!.authorizations).toEqual([c]);
});
