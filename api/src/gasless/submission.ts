/**
 * Submitting recorded authorizations, the pure part: the exact call the relayer sends (one
 * authorization's own call, or several through AuthorizationBatch), whether a record may still
 * be sent, what a mined receipt says it did for each, and the words of each reason a record
 * waits or failed. No I/O: the relayer's loop is sweeps/send-authorization.ts, on the
 * sweeper's transaction machinery.
 */
import { encodeFunctionData, getAddress, parseEventLogs, type Address, type Hex, type Log } from "viem";
import { eip3009Abi } from "../../../shared/contracts/eip3009.ts";
import { authorizationBatchAbi } from "../../../shared/contracts/artifacts.ts";
import type { AuthorizationReason } from "../db/schema.ts";

/** A recorded authorization as the relayer needs it (addresses and nonce lowercase, numbers as decimal strings). */
export interface RecordedAuthorization {
  sessionId: string;
  tokenAddress: string;
  fromAddress: string;
  toAddress: string;
  value: string;
  validAfter: string;
  validBefore: string;
  nonce: Hex;
  signature: Hex;
  /**
   * Sent before, in a transaction that did not carry it out (a batch another payer spoiled):
   * it goes alone now, so that one payer cannot hold the same others back again.
   */
  retried?: boolean;
}

/**
 * A 65-byte signature as the v, r, s form takes it. v is the raw last byte, not normalized: the
 * token re-packs r ‖ s ‖ v and checks exactly the bytes that were signed and simulated. Null for
 * any other length (a contract wallet's EIP-1271 signature), which only the bytes form carries.
 */
export function splitSignature(signature: Hex): { v: number; r: Hex; s: Hex } | null {
  if (!/^0x[0-9a-fA-F]{130}$/.test(signature)) return null;
  return { r: `0x${signature.slice(2, 66)}`, s: `0x${signature.slice(66, 130)}`, v: Number.parseInt(signature.slice(130, 132), 16) };
}

/**
 * One authorization's own call to the token: transferWithAuthorization in the v, r, s form for a
 * 65-byte signature (every USDC version has it, and it costs less calldata than the bytes form),
 * else the bytes form, which also carries a contract wallet's signature.
 */
export function authorizationCall(a: RecordedAuthorization): { to: Address; data: Hex } {
  const [from, to, value, validAfter, validBefore] = [getAddress(a.fromAddress), getAddress(a.toAddress), BigInt(a.value), BigInt(a.validAfter), BigInt(a.validBefore)];
  const split = splitSignature(a.signature);
  return {
    to: getAddress(a.tokenAddress),
    data: split
      ? encodeFunctionData({ abi: eip3009Abi, functionName: "transferWithAuthorization", args: [from, to, value, validAfter, validBefore, a.nonce, split.v, split.r, split.s] })
      : encodeFunctionData({ abi: eip3009Abi, functionName: "transferWithAuthorization", args: [from, to, value, validAfter, validBefore, a.nonce, a.signature] }),
  };
}

/** What one relayer transaction carries: its authorizations (oldest first) and its call. */
export interface SubmissionPlan {
  authorizations: RecordedAuthorization[];
  /** Whether the call goes through AuthorizationBatch (several payers in one transaction). */
  batched: boolean;
  call: { to: Address; data: Hex };
}

/**
 * The next transaction for checked authorizations, oldest first. Several of one token with
 * 65-byte signatures go together through AuthorizationBatch when it is deployed (`batch`): the
 * 21,000 gas every transaction starts with is paid once, not once per payment. Otherwise (one
 * due, no batch contract, the oldest signed by a contract wallet) the oldest goes alone, by its
 * own call; so does one `retried`, and retried ones join no batch. Those left out stay due for the
 * next transaction.
 */
export function planSubmission(ready: readonly RecordedAuthorization[], batch: Address | undefined, max: number): SubmissionPlan | null {
  const [first] = ready;
  if (!first) return null;
  const alone: SubmissionPlan = { authorizations: [first], batched: false, call: authorizationCall(first) };
  const batchable = (a: RecordedAuthorization) => !a.retried && splitSignature(a.signature) !== null;
  if (!batch || !batchable(first)) return alone;
  const token = first.tokenAddress.toLowerCase();
  const group = ready.filter((a) => a.tokenAddress.toLowerCase() === token && batchable(a)).slice(0, Math.max(1, max));
  if (group.length < 2) return alone;
  return { authorizations: group, batched: true, call: authorizationBatchCall(batch, getAddress(first.tokenAddress), group) };
}

/** AuthorizationBatch.submit(token, authorizations): each carried out by the token, one failing not stopping the others. */
export function authorizationBatchCall(batch: Address, token: Address, group: readonly RecordedAuthorization[]): { to: Address; data: Hex } {
  const items = group.map((a) => {
    const split = splitSignature(a.signature);
    if (!split) throw new Error(`authorizationBatchCall: the signature of ${a.sessionId} is not 65 bytes`);
    return {
      from: getAddress(a.fromAddress),
      to: getAddress(a.toAddress),
      value: BigInt(a.value),
      validAfter: BigInt(a.validAfter),
      validBefore: BigInt(a.validBefore),
      nonce: a.nonce,
      ...split,
    };
  });
  return { to: batch, data: encodeFunctionData({ abi: authorizationBatchAbi, functionName: "submit", args: [token, items] }) };
}

/**
 * Gas one submission may take, for the checks that come before a real estimate (is the relayer
 * funded enough to offer paying by authorization at all?). TestUSD's transferWithAuthorization
 * used about 81,000 gas in the bytes form to a settlement address that already held the token
 * (≈ 69,000 in the v, r, s form; ≈ 17,000 more to a new holder); this is the gas limit the send
 * signs for the dearer one (estimate × 1.25 + 20,000, plan.ts withGasMargin), rounded up. In a
 * batch each costs less (bench/payment-gas.ts).
 */
export const SUBMISSION_GAS_BUDGET = 150_000n;

/**
 * An authorization whose own call takes more gas than one submission's budget is not ours to pay
 * for: a contract payer's EIP-1271 check runs on the relayer's gas, and one that burns millions
 * before saying yes would make every such payment cost the relayer that much. TestUSD's dearest
 * (the bytes form to a new holder, ≈ 98,000 with the transaction's 21,000) and an ordinary
 * wallet's check fit. Asked of the route's simulation and of each send's own estimate.
 */
export function gasRefusal(estimate: bigint): Refusal | null {
  if (estimate <= SUBMISSION_GAS_BUDGET) return null;
  return {
    reason: "rejected",
    detail: `Its transfer takes ${estimate} gas (the payer's wallet's signature check included), more than the relayer pays for one payment (${SUBMISSION_GAS_BUDGET}).`,
  };
}

/** Seconds an authorization must still have when it is sent: a block or two, and clocks that run apart. */
export const SEND_MIN_SECONDS_LEFT = 5n;

export type Refusal = { reason: AuthorizationReason; detail: string };

/**
 * Whether a record may be sent now, decided under the session row's lock: its session still
 * PENDING (never after a cancel, an expiry or a payment seen otherwise), its window still open
 * long enough, and the session within its relayer-transaction budget. A refusal is final.
 */
export function sendRefusal(
  session: { status: string },
  validBefore: bigint,
  nowSeconds: bigint,
  overBudget: string | undefined,
): Refusal | null {
  if (session.status !== "PENDING") {
    return { reason: "session_closed", detail: `The session is ${session.status}: the authorization is not sent (nothing was spent).` };
  }
  if (validBefore - nowSeconds < SEND_MIN_SECONDS_LEFT) {
    return { reason: "expired", detail: "The authorization's window (the session's expiry) closed before it could be sent." };
  }
  if (overBudget) return { reason: "session_budget", detail: overBudget };
  return null;
}

/** The token's revert reason of a simulation or estimate → why the record fails (EIP-3009's messages, as in USDC). */
export function refusalOfRevert(message: string): Refusal {
  if (/authorization is used or canceled/i.test(message)) {
    return { reason: "used_elsewhere", detail: "The payer's authorization was already used on-chain (someone else submitted it, or the payer canceled it)." };
  }
  if (/authorization is expired/i.test(message)) {
    return { reason: "expired", detail: "The token says the authorization has expired." };
  }
  return { reason: "rejected", detail: `The token refused the transfer: ${message.slice(0, 300)}` };
}

/** Used on-chain already, by anyone: the state a record ends in when that was not our transaction. */
export const USED_ELSEWHERE: Refusal = refusalOfRevert("authorization is used or canceled");

export interface ReceiptLike {
  status: "success" | "reverted";
  logs: readonly Pick<Log, "address" | "topics" | "data">[];
}

/**
 * Whether a mined receipt carried the authorization out: the token's Transfer(from → to, value)
 * and its AuthorizationUsed(from, nonce), both logged by the token. The receipt's status alone
 * is not enough: a call to an address without code "succeeds" too.
 */
export function receiptPaid(receipt: ReceiptLike, a: RecordedAuthorization): boolean {
  if (receipt.status !== "success") return false;
  const token = a.tokenAddress.toLowerCase();
  const logs = receipt.logs.filter((l) => l.address.toLowerCase() === token).map((l) => ({ ...l, topics: [...l.topics] })) as unknown as Log[];
  const used = parseEventLogs({ abi: eip3009Abi, eventName: "AuthorizationUsed", logs, strict: false }).some(
    (e) => e.args.authorizer?.toLowerCase() === a.fromAddress.toLowerCase() && e.args.nonce?.toLowerCase() === a.nonce.toLowerCase(),
  );
  const transferred = parseEventLogs({ abi: TRANSFER_ABI, eventName: "Transfer", logs, strict: false }).some(
    (e) => e.args.from?.toLowerCase() === a.fromAddress.toLowerCase() && e.args.to?.toLowerCase() === a.toAddress.toLowerCase() && e.args.value === BigInt(a.value),
  );
  return used && transferred;
}

const TRANSFER_ABI = [
  {
    type: "event",
    name: "Transfer",
    inputs: [
      { name: "from", type: "address", indexed: true },
      { name: "to", type: "address", indexed: true },
      { name: "value", type: "uint256", indexed: false },
    ],
  },
] as const;

/** What the payer view and the record say while a record waits (recorded, with a reason). */
export function waitingDetail(reason: "gasless_off" | "spend_guard" | "fee_above_ceiling" | "relayer_unfunded", facts: string): string {
  switch (reason) {
    case "gasless_off":
      return `Paying by authorization is switched off on this network (SERVICE_GASLESS_<KEY>); the authorization waits. ${facts}`.trim();
    case "spend_guard":
      return `The relayer-spend guard holds new relayer transactions for now; the authorization waits. ${facts}`.trim();
    case "fee_above_ceiling":
      return `The network's fee is above the relayer's ceiling for authorizations (SERVICE_GASLESS_MAX_FEE_GWEI_<KEY>); the authorization waits. ${facts}`.trim();
    case "relayer_unfunded":
      return `The relayer does not hold enough gas coin to submit it; the authorization waits until it is funded. ${facts}`.trim();
  }
}

export type Capacity = { ok: true } | { ok: false; reason: "fee_above_ceiling" | "relayer_unfunded" | "unreachable"; detail: string };

/**
 * Whether the relayer can submit an authorization now: the max fee it would sign within the
 * network's ceiling, and its balance enough for `gas` at that fee. Both the payer view's offer
 * (with SUBMISSION_GAS_BUDGET) and the send (with the real estimate) ask this.
 */
export function capacity(maxFeePerGas: bigint, ceilingWei: bigint, balanceWei: bigint, gas: bigint): Capacity {
  if (maxFeePerGas > ceilingWei) {
    return { ok: false, reason: "fee_above_ceiling", detail: waitingDetail("fee_above_ceiling", `(max fee ${maxFeePerGas} wei per gas, ceiling ${ceilingWei})`) };
  }
  const cost = gas * maxFeePerGas;
  if (balanceWei < cost) {
    return { ok: false, reason: "relayer_unfunded", detail: waitingDetail("relayer_unfunded", `(it holds ${balanceWei} wei; one submission may cost ${cost})`) };
  }
  return { ok: true };
}
