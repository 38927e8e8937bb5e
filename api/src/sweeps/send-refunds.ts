/**
 * The relayer's third job: paying refunds from the merchants' refund balances (docs/refunds.md),
 * on the sweeper's machinery — the same nonce lock and sequence, the same table of transactions
 * (kind `refund`), recorded before broadcast, watched by watch.ts like any other.
 *
 * A round, holding the nonce lock: claim due PENDING refunds whose destination is known (FOR
 * UPDATE SKIP LOCKED, so a cancel holding one is skipped and one being canceled is never sent),
 * choose those the merchant's day's limit and its vault's balance allow (refunds/batch.ts; the
 * others wait, with the reason, and are looked at again later: a vault funded meanwhile sends
 * them), sign one RefundVaults.payBatch, record it and mark its refunds SENT in the same commit,
 * then broadcast. The outcome is read from the receipt (recordRefundsMined): each part must show
 * as its exact Transfer from the vault to the payer. Each of these changes writes the refunds'
 * webhook events in its own commit (refunds/events.ts).
 */
import type { Sql, TransactionSql } from "postgres";
import { erc20Abi, getAddress, parseEventLogs, type Address, type Hex, type TransactionReceipt } from "viem";
import { encodePayBatch, predictedRefundVaultsAddress, refundVaultAddress, refundVaultSalt } from "../../../shared/contracts/refund-vaults.ts";
import { chooseBatch, minorOf, partsPaid, type LoggedTransfer } from "../refunds/batch.ts";
import { lockSentRefundsOf, releaseTotals } from "../refunds/store.ts";
import { recordRefundEvents } from "../refunds/events.ts";
import {
  anyRefundDue,
  claimDueRefunds,
  markRefundFailed,
  markRefundsSent,
  markRefundsWaiting,
  markRefundSucceeded,
  refundsSentToday,
  refundTransactionParts,
} from "./statements/refunds.ts";
import { recordTransactionMined } from "./statements/watch.ts";
import { withGasMargin } from "./plan.ts";
import { firstLine, isRevert, type SignedTx, type SweepChain } from "./chain.ts";
import { overSpent, relayerShortfall } from "./send.ts";
import { walletPayersOf } from "./statements/wallet-refunds.ts";
import { walletAuthorizationUsedElsewhere, walletRefundCallOf } from "./wallet-authorizations.ts";

/** How long a refund waits before it is looked at again (its vault funded, the day's limit freed). */
const WAIT_MS = { insufficient_refund_balance: 15_000, spend_guard: 60_000 } as const;

/** Whether RefundVaults is deployed on this network for this relayer (seen once: for good). */
const vaultsSeen = new WeakMap<SweepChain, boolean>();

export function refundVaultsOf(c: SweepChain): Address {
  return predictedRefundVaultsAddress(c.account.address);
}

async function vaultsPresent(c: SweepChain): Promise<boolean> {
  if (vaultsSeen.get(c)) return true;
  const code = await c.client.getCode({ address: refundVaultsOf(c) });
  const present = code !== undefined && code !== "0x";
  if (present) vaultsSeen.set(c, true);
  else if (!vaultsSeen.has(c)) {
    vaultsSeen.set(c, false);
    c.log(`sweeper ${c.net.name}: no RefundVaults at ${refundVaultsOf(c)} for relayer ${c.account.address}: refunds wait until it is deployed`);
  }
  return present;
}

const ownerOf = (r: { merchant_id: string; environment: string }) => `${r.merchant_id} ${r.environment}`;

/** Claims, chooses, signs, records and broadcasts one batch of refunds. Returns how many it sent. */
export async function sendRefunds(c: SweepChain, maxPerDayMinor: bigint): Promise<number> {
  if (!(await anyRefundDue(c.sql, c.net.chainId))) return 0;
  if (!(await vaultsPresent(c)) || (await overSpent(c))) return 0;
  const fees = await c.marketFees();
  const vaults = refundVaultsOf(c);
  let toSend: SignedTx | undefined;
  const sent = await c.sql.begin(async (tx) => {
    if (!(await c.lockNonces(tx))) return 0;
    const rows = await claimDueRefunds(tx, c.net.chainId, c.s.batchSize);
    if (rows.length === 0) return 0;
    const owners = [...new Set(rows.map(ownerOf))];
    const today = new Map<string, bigint>();
    for (const r of await refundsSentToday(tx, [...new Set(rows.map((r) => r.merchant_id))])) {
      today.set(ownerOf(r), (today.get(ownerOf(r)) ?? 0n) + minorOf(r.amount, r.unit_decimals));
    }
    // Each vault's balance of each token the batch needs, as the chain has it now.
    const balances = new Map<string, bigint>();
    for (const owner of owners) {
      const [merchantId, environment] = owner.split(" ") as [string, string];
      const vault = refundVaultAddress(vaults, refundVaultSalt(merchantId, environment));
      const tokens = [...new Set(rows.filter((r) => ownerOf(r) === owner).flatMap((r) => r.parts.map((p) => p.token)))];
      for (const token of tokens) {
        balances.set(`${owner} ${token}`, await c.client.readContract({ address: getAddress(token), abi: erc20Abi, functionName: "balanceOf", args: [vault] }));
      }
    }
    const choice = chooseBatch(
      rows.map((r) => ({ id: r.id, owner: ownerOf(r), minor: minorOf(r.amount, r.unit_decimals), parts: r.parts.map((p) => ({ token: p.token, baseUnits: BigInt(p.baseUnits) })) })),
      today,
      balances,
      maxPerDayMinor,
    );
    for (const w of choice.wait) await markRefundsWaiting(tx, [w.id], w.reason, WAIT_MS[w.reason as keyof typeof WAIT_MS]);
    if (choice.send.length === 0) return 0;
    const chosen = rows.filter((r) => choice.send.includes(r.id));
    const call = {
      to: vaults,
      data: encodePayBatch(
        chosen.flatMap((r) =>
          r.parts.map((p) => ({ vault: refundVaultSalt(r.merchant_id, r.environment), token: getAddress(p.token), to: getAddress(p.destination!), amount: BigInt(p.baseUnits) })),
        ),
      ),
    };
    let gas: bigint;
    try {
      gas = withGasMargin(await c.client.estimateGas({ account: c.account.address, to: call.to, data: call.data }));
    } catch (e) {
      if (!isRevert(e)) throw e; // an RPC problem: roll back, the refunds stay due
      // The batch would revert (a balance moved since it was read): they wait and are chosen again.
      c.log(`sweeper ${c.net.name}: a refund batch would revert (${firstLine(e)}); its ${chosen.length} refund(s) wait`);
      await markRefundsWaiting(tx, chosen.map((r) => r.id), "insufficient_refund_balance", WAIT_MS.insufficient_refund_balance);
      return 0;
    }
    const short = await relayerShortfall(c, gas, fees.maxFeePerGas, "a refund batch");
    if (short) {
      c.setWaiting(short);
      return 0;
    }
    const signed = await c.recordSigned(tx, "refund", call, gas, fees);
    await bindRefundsSent(tx, chosen.map((r) => r.id), signed.txId);
    toSend = signed;
    return chosen.length;
  });
  if (toSend) await c.dispatch(toSend, `${sent} refund(s)`);
  return sent;
}

/**
 * Refunds bound to the relayer transaction just recorded, in its commit: SENT, and their
 * refund.sent events with their deliveries (no refund is SENT without its event).
 */
export async function bindRefundsSent(tx: TransactionSql, ids: readonly string[], transactionId: string): Promise<void> {
  await markRefundsSent(tx, ids, transactionId);
  await recordRefundEvents(tx, ids, "refund.sent");
}

/**
 * A refund transaction mined and deep enough: SUCCEEDED for each refund whose every part is in the
 * receipt's Transfer logs exactly, FAILED otherwise (`reverted`, or `transfer_missing`), its amount
 * refundable again. One database transaction, once (the record's state decides).
 */
export async function recordRefundsMined(c: SweepChain, txId: string, receipt: TransactionReceipt): Promise<void> {
  const vaults = refundVaultsOf(c);
  const logs: LoggedTransfer[] =
    receipt.status === "success"
      ? parseEventLogs({ abi: erc20Abi, eventName: "Transfer", logs: receipt.logs }).map((l) => ({
          token: l.address.toLowerCase(),
          from: l.args.from.toLowerCase(),
          to: l.args.to.toLowerCase(),
          value: l.args.value,
        }))
      : [];
  // A wallet authorization this transaction did not carry out, whose nonce the chain says is used:
  // someone else submitted the signature first. Its terms fix the recipient and amount, so the
  // payer was paid all the same: the refund succeeded (never failed, and so never paid twice).
  const paidElsewhere = await walletAuthorizationUsedElsewhere(c, txId, receipt);
  const counts = await c.sql.begin(async (tx) => {
    if (!(await recordTransactionMined(tx, txId, receipt))) return undefined;
    const refunds = await lockSentRefundsOf(tx, txId);
    // A refund paid by the merchant's wallet's authorization is paid from its settlement address, not a vault.
    const walletPayers = await walletPayersOf(tx, refunds.filter((r) => r.funding === "merchant_wallet").map((r) => r.id));
    const used = new Set<number>();
    let ok = 0;
    for (const r of refunds) {
      const vault = walletPayers.get(r.id) ?? refundVaultAddress(vaults, refundVaultSalt(r.merchantId, r.environment)).toLowerCase();
      const paid = paidElsewhere === r.id || (receipt.status === "success" && partsPaid(r.parts.map((p) => ({ token: p.token, to: p.destination ?? "", baseUnits: BigInt(p.baseUnits) })), vault, logs, used));
      if (paid) {
        ok++;
        await markRefundSucceeded(tx, r.id);
      } else {
        await markRefundFailed(tx, r.id, receipt.status === "success" ? "transfer_missing" : "reverted");
        await releaseTotals(tx, r);
      }
    }
    // Each outcome's event (refund.succeeded, or refund.failed with its failureReason), in the same commit.
    await recordRefundEvents(tx, refunds.map((r) => r.id), (r) => (r.state === "SUCCEEDED" ? "refund.succeeded" : "refund.failed"));
    return { ok, failed: refunds.length - ok };
  });
  if (counts) c.log(`sweeper ${c.net.name}: refunds in ${receipt.transactionHash}: ${counts.ok} succeeded, ${counts.failed} failed`);
}

/** The call a refund transaction carries, rebuilt from its refunds (to re-sign it when the node no longer has it). */
export async function refundCallOf(sql: Sql, c: SweepChain, txId: string): Promise<{ to: Address; data: Hex } | undefined> {
  const wallet = await walletRefundCallOf(c, txId);
  if (wallet) return wallet;
  const rows = await refundTransactionParts(sql, txId);
  if (rows.length === 0) return undefined;
  return {
    to: refundVaultsOf(c),
    data: encodePayBatch(rows.flatMap((r) => r.parts.map((p) => ({ vault: refundVaultSalt(r.merchant_id, r.environment), token: getAddress(p.token), to: getAddress(p.destination!), amount: BigInt(p.baseUnits) })))),
  };
}
