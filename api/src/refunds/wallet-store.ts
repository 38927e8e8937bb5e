/**
 * A refund paid from the merchant's own wallet, in the database (docs/refunds.md, "From the
 * merchant's own wallet"; the rules are wallet.ts). The refund was created with `funding:
 * merchant_wallet` and waits `awaiting_wallet`; the refund balance's sender never picks it up.
 * What the wallet gives is stored once, in app.refund_wallet_payments, under the refund's row lock
 * (as a cancel holds it, so the two never both win):
 *
 *   an authorization (the token has EIP-3009) → the refund is due: the relayer submits it
 *     (sweeps/send-wallet-refunds.ts), SENT when recorded, settled by its receipt as any refund;
 *   a transaction hash (no EIP-3009) → the refund is SENT at once (its refund.sent event in the
 *     same commit); the sweeper watches the hash's receipt (watchWalletTransfers).
 *
 * Everything is checked before anything is written: a refusal changes nothing.
 */
import type { Sql, TransactionSql } from "postgres";
import { getAddress, type Address } from "viem";
import type { NetworkConfig } from "../../../shared/chains/config.ts";
import { ApiError } from "../errors.ts";
import { col, decodeFirst, rowShape } from "../db/rows.ts";
import { tokenDomain, type DomainRead } from "../gasless/chain.ts";
import { SWEEP_CHANNEL } from "../effects/sweep-queue.ts";
import { recordRefundEvent } from "./events.ts";
import { readRefund, type RefundRow } from "./rows.ts";
import { refundNotFound, type RefundScope } from "./store.ts";
import { authorizationProblem, isTxHash, signedBySettlement, walletPaymentOf, type WalletAuthorization, type WalletPayment } from "./wallet.ts";

const Settlement = rowShape("refund's settlement address", { settlement_address: col.text });
const Locked = rowShape("wallet refund, locked", { state: col.text, funding: col.text, waiting_reason: col.nullable(col.text), paid: col.bool });
const Now = rowShape("database clock", { now: col.wholeNumber });

/** A wallet refund as its page and its POSTs need it: the refund, what the wallet must pay, and how (the token's EIP-3009 domain, if it has one). */
export interface WalletRefund {
  refund: RefundRow;
  payment: WalletPayment;
  /** `authorization` when the token has EIP-3009, `transfer` when it has not. */
  kind: "authorization" | "transfer";
  domain?: Extract<DomainRead, { ok: true }>["domain"];
  /** Whether it still waits for the wallet (PENDING, awaiting_wallet). */
  waiting: boolean;
}

/** The merchant's refund `id` paid by wallet, or the catalogue's error (404 for another merchant's, 409 for one paid from the balance). */
export async function walletRefundOf(sql: Sql, scope: RefundScope, id: string, networks: readonly NetworkConfig[]): Promise<WalletRefund> {
  const refund = await sql.begin((tx) => readRefund(tx, id));
  if (!refund || refund.merchantId !== scope.merchantId || refund.environment !== scope.environment) throw refundNotFound(id);
  if (refund.funding !== "merchant_wallet") throw new ApiError("refund_not_payable_from_wallet", "This refund is paid from the refund balance, not from a wallet.");
  const s = decodeFirst(Settlement, await sql`select settlement_address from app.session_deposits where session_id = ${refund.sessionId} and chain_id = ${refund.chainId}`);
  if (!s) throw refundNotFound(id);
  const of = walletPaymentOf(refund, s.settlement_address);
  if (!of.ok) throw new ApiError("refund_not_payable_from_wallet", of.reason);
  const net = networks.find((n) => n.chainId === refund.chainId);
  if (!net) throw new ApiError("network_unavailable", `The refund's network (chain ${refund.chainId}) is not served here.`);
  const waiting = refund.state === "PENDING" && refund.waitingReason === "awaiting_wallet";
  // The network's list says whether the token has EIP-3009 (USDC-like); the domain is read from the token itself.
  const coin = net.stablecoins.find((t) => t.address.toLowerCase() === of.payment.token.toLowerCase());
  if (!coin?.eip3009) return { refund, payment: of.payment, kind: "transfer", waiting };
  const read = await tokenDomain({ chainId: net.chainId, rpcUrl: net.rpcUrl, token: of.payment.token });
  if (!read.ok && read.reason === "unreachable") throw new ApiError("network_unavailable", `The refund's network (chain ${refund.chainId}) did not answer; try again.`);
  return read.ok ? { refund, payment: of.payment, kind: "authorization", domain: read.domain, waiting } : { refund, payment: of.payment, kind: "transfer", waiting };
}

/** The refund's row locked, still waiting for its wallet payment; else refund_not_payable_from_wallet (nothing written). */
async function lockWaiting(tx: TransactionSql, id: string): Promise<void> {
  const r = decodeFirst(
    Locked,
    await tx`select state, funding, waiting_reason, exists (select 1 from app.refund_wallet_payments w where w.refund_id = r.id) as paid
               from app.refunds r where id = ${id} for update`,
  );
  if (!r || r.funding !== "merchant_wallet" || r.state !== "PENDING" || r.waiting_reason !== "awaiting_wallet" || r.paid) {
    throw new ApiError("refund_not_payable_from_wallet", `This refund no longer waits for your wallet (it is ${r?.state ?? "gone"}${r?.paid ? ", paid by the wallet already" : ""}).`);
  }
}

/**
 * Stores the settlement address's signed TransferWithAuthorization for the refund, once checked:
 * the signer is the settlement address, the destination, amount and window are the refund's. The
 * refund becomes due for the relayer (sweeps/send-wallet-refunds.ts).
 */
export async function recordWalletAuthorization(sql: Sql, w: WalletRefund, sub: WalletAuthorization): Promise<RefundRow> {
  if (w.kind !== "authorization" || !w.domain) {
    throw new ApiError("refund_wallet_payment_invalid", "This token has no EIP-3009 authorizations: send the transfer from your wallet instead.");
  }
  const now = decodeFirst(Now, await sql`select floor(extract(epoch from now()))::bigint::text as now`)!.now;
  const problem = authorizationProblem(sub, w.payment, now);
  if (problem) throw new ApiError("refund_wallet_payment_invalid", problem);
  if (!(await signedBySettlement(w.domain, sub))) {
    throw new ApiError("refund_wallet_payment_invalid", `The signature is not ${w.payment.from}'s signature of this TransferWithAuthorization on ${w.domain.name}.`);
  }
  return sql.begin(async (tx) => {
    await lockWaiting(tx, w.refund.id);
    await tx`
      insert into app.refund_wallet_payments (refund_id, kind, from_address, token_address, to_address, value, valid_after, valid_before, nonce, signature)
      values (${w.refund.id}, 'authorization', ${lower(w.payment.from)}, ${lower(w.payment.token)}, ${lower(w.payment.to)}, ${w.payment.value.toString()}::numeric,
              ${sub.validAfter.toString()}::numeric, ${sub.validBefore.toString()}::numeric, ${sub.nonce.toLowerCase()}, ${sub.signature.toLowerCase()})`;
    await tx`update app.refunds set waiting_reason = null, next_attempt_at = now(), updated_at = now() where id = ${w.refund.id}`;
    await tx`select pg_notify(${SWEEP_CHANNEL}, '')`;
    return (await readRefund(tx, w.refund.id))!;
  });
}

const Used = rowShape("wallet transfer hash used", { refund_id: col.text });

/**
 * Stores the hash of the ERC-20 transfer the merchant's wallet sent for the refund: SENT now (its
 * refund.sent event in the same commit); the receipt decides SUCCEEDED or FAILED. A hash already
 * given for another refund is refused (one transfer settles one refund).
 */
export async function recordWalletTransfer(sql: Sql, w: WalletRefund, txHash: string): Promise<RefundRow> {
  if (!isTxHash(txHash)) throw new ApiError("refund_wallet_payment_invalid", "The transaction hash is not 32 bytes of hex.");
  if (w.kind !== "transfer") throw new ApiError("refund_wallet_payment_invalid", "This token takes a signed authorization: sign it in your wallet instead of sending a transfer.");
  return sql.begin(async (tx) => {
    await lockWaiting(tx, w.refund.id);
    if (decodeFirst(Used, await tx`select refund_id from app.refund_wallet_payments where tx_hash = ${txHash.toLowerCase()}`)) {
      throw new ApiError("refund_wallet_payment_invalid", "This transaction was given for another refund already.");
    }
    await tx`
      insert into app.refund_wallet_payments (refund_id, kind, from_address, token_address, to_address, value, tx_hash)
      values (${w.refund.id}, 'transfer', ${lower(w.payment.from)}, ${lower(w.payment.token)}, ${lower(w.payment.to)}, ${w.payment.value.toString()}::numeric, ${txHash.toLowerCase()})`;
    await tx`update app.refunds set state = 'SENT', waiting_reason = null, attempts = attempts + 1, sent_at = now(), updated_at = now() where id = ${w.refund.id}`;
    await recordRefundEvent(tx, w.refund.id, "refund.sent");
    await tx`select pg_notify(${SWEEP_CHANNEL}, '')`;
    return (await readRefund(tx, w.refund.id))!;
  });
}

const lower = (a: Address) => getAddress(a).toLowerCase();
