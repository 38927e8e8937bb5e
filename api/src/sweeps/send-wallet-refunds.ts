/**
 * Refunds paid from the merchant's own wallet (docs/refunds.md, "From the merchant's own wallet";
 * refunds/wallet-store.ts stores what the wallet gave), the relayer's part:
 *
 *   sendWalletRefunds — a stored EIP-3009 authorization goes out as the token's own
 *     transferWithAuthorization (gasless/submission.ts authorizationCall, the call the payers'
 *     authorizations use), on the sweeper's machinery: under the nonce lock, recorded (`signed`,
 *     kind `refund`) and the refund bound SENT with its refund.sent event in one commit, then
 *     broadcast; watch.ts follows it like any refund transaction and recordRefundsMined settles it
 *     from the receipt's Transfer log (from the settlement address, not a vault). A window that
 *     closed or a token that refuses it sends nothing: the refund waits for the wallet again.
 *   watchWalletTransfers — a transfer the wallet sent itself: its receipt, once deep enough, marks
 *     the refund SUCCEEDED (its Transfer from the settlement address to the destination of exactly
 *     the amount) or FAILED (`reverted`, `transfer_missing`), with its event, once.
 */
import { erc20Abi, getAddress, parseEventLogs, type Address, type Hex, type TransactionReceipt } from "viem";
import { authorizationCall, SEND_MIN_SECONDS_LEFT } from "../gasless/submission.ts";
import { recorded } from "./wallet-authorizations.ts";
import { usedOnChain } from "./authorization-outcome.ts";
import { transferOutcome } from "../refunds/wallet.ts";
import { recordRefundEvent } from "../refunds/events.ts";
import { releaseTotals } from "../refunds/store.ts";
import { readRefund } from "../refunds/rows.ts";
import type { LoggedTransfer } from "../refunds/batch.ts";
import { bindRefundsSent } from "./send-refunds.ts";
import { markRefundFailed, markRefundSucceeded } from "./statements/refunds.ts";
import {
  anyWalletAuthorizationDue,
  askWalletAgain,
  claimDueWalletAuthorization,
  lockSentRefund,
  sentWalletTransfers,
  carriedOutElsewhere,
} from "./statements/wallet-refunds.ts";
import { withGasMargin } from "./plan.ts";
import { firstLine, isRevert, type SignedTx, type SweepChain } from "./chain.ts";
import { overSpent, relayerShortfall } from "./send.ts";

/** Submits one due wallet authorization (one per transaction). Returns how many refunds it settled (sent, or sent back to the wallet). */
export async function sendWalletRefunds(c: SweepChain): Promise<number> {
  if (!(await anyWalletAuthorizationDue(c.sql, c.net.chainId))) return 0;
  if (await overSpent(c)) return 0;
  const fees = await c.marketFees();
  let toSend: SignedTx | undefined;
  const settled = await c.sql.begin(async (tx) => {
    if (!(await c.lockNonces(tx))) return 0;
    const row = await claimDueWalletAuthorization(tx, c.net.chainId);
    if (!row) return 0;
    if (row.valid_before - row.now_seconds < SEND_MIN_SECONDS_LEFT) {
      c.log(`sweeper ${c.net.name}: the wallet authorization of refund ${row.refund_id} expired before it could be sent; the refund waits for the wallet again`);
      await askWalletAgain(tx, row.refund_id);
      return 1;
    }
    const auth = recorded(row);
    if (await usedOnChain(c, auth)) {
      // Carried out already (an earlier transaction of ours the chain lost while a copy of the
      // signature landed, or someone else submitted it): the payer has the money. Never asked
      // of the wallet again, which would pay twice.
      c.log(`sweeper ${c.net.name}: the wallet authorization of refund ${row.refund_id} is used on-chain already; the refund succeeded`);
      await carriedOutElsewhere(tx, row.refund_id);
      return 1;
    }
    const call = authorizationCall(auth);
    let gas: bigint;
    try {
      gas = withGasMargin(await c.client.estimateGas({ account: c.account.address as Address, to: call.to, data: call.data }));
    } catch (e) {
      if (!isRevert(e)) throw e; // an RPC problem: roll back, it stays due
      // The token refuses it (the settlement address lacks the money, the nonce is used): nothing is sent.
      c.log(`sweeper ${c.net.name}: the wallet authorization of refund ${row.refund_id} would revert (${firstLine(e)}); the refund waits for the wallet again`);
      await askWalletAgain(tx, row.refund_id);
      return 1;
    }
    const short = await relayerShortfall(c, gas, fees.maxFeePerGas, "a wallet refund");
    if (short) {
      c.setWaiting(short);
      return 0;
    }
    // Recorded and bound (SENT, refund.sent) in this commit; broadcast only after it.
    const signed = await c.recordSigned(tx, "refund", call, gas, fees);
    await bindRefundsSent(tx, [row.refund_id], signed.txId);
    toSend = signed;
    return 1;
  });
  if (toSend) await c.dispatch(toSend, `the wallet authorization of 1 refund`);
  return settled;
}

function transfersIn(receipt: TransactionReceipt): LoggedTransfer[] {
  if (receipt.status !== "success") return [];
  return parseEventLogs({ abi: erc20Abi, eventName: "Transfer", logs: receipt.logs }).map((l) => ({
    token: l.address.toLowerCase(),
    from: l.args.from.toLowerCase(),
    to: l.args.to.toLowerCase(),
    value: l.args.value,
  }));
}

/** Follows the transfers merchants' wallets sent themselves; returns how many are still open. */
export async function watchWalletTransfers(c: SweepChain): Promise<number> {
  const open = await sentWalletTransfers(c.sql, c.net.chainId, 50);
  if (open.length === 0) return 0;
  const head = await c.client.getBlockNumber();
  let left = open.length;
  for (const t of open) {
    // Not mined yet, or not known to this node: it stays SENT (only a receipt decides).
    const receipt = await c.client.getTransactionReceipt({ hash: t.tx_hash as Hex }).catch(() => undefined);
    if (!receipt || head - receipt.blockNumber + 1n < BigInt(c.net.confirmations)) continue;
    const outcome = transferOutcome(receipt.status, transfersIn(receipt), {
      chainId: c.net.chainId,
      from: getAddress(t.from_address),
      token: getAddress(t.token_address),
      to: getAddress(t.to_address),
      value: t.value,
    });
    const done = await c.sql.begin(async (tx) => {
      if (!(await lockSentRefund(tx, t.refund_id))) return false; // another sweeper recorded it
      if (outcome.paid) await markRefundSucceeded(tx, t.refund_id);
      else {
        await markRefundFailed(tx, t.refund_id, outcome.reason);
        await releaseTotals(tx, (await readRefund(tx, t.refund_id))!);
      }
      await recordRefundEvent(tx, t.refund_id, outcome.paid ? "refund.succeeded" : "refund.failed");
      return true;
    });
    if (done) c.log(`sweeper ${c.net.name}: refund ${t.refund_id} paid by the merchant's wallet in ${t.tx_hash}: ${outcome.paid ? "succeeded" : `failed (${outcome.reason})`}`);
    left--;
  }
  return left;
}
