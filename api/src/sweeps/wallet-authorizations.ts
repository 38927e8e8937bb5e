/**
 * A wallet refund's stored EIP-3009 authorization (app.refund_wallet_payments) as the relayer's
 * transactions carry it: the call (gasless/submission.ts authorizationCall, the payers' own), the
 * call of a recorded refund transaction that carries one (to re-sign it), and whether a receipt
 * that did not carry it out left it used by someone else. Apart from send-wallet-refunds.ts so
 * that send-refunds.ts, which settles every refund transaction, reads these without a circle.
 */
import type { Address, Hex, TransactionReceipt } from "viem";
import { authorizationCall, receiptPaid, type RecordedAuthorization } from "../gasless/submission.ts";
import { usedOnChain } from "./authorization-outcome.ts";
import type { SweepChain } from "./chain.ts";
import { walletAuthorizationOfTransaction, type DueWalletAuthorization } from "./statements/wallet-refunds.ts";

/** A stored wallet authorization as the gasless call builder takes it. */
export function recorded(a: Pick<DueWalletAuthorization, "refund_id" | "token_address" | "from_address" | "to_address" | "value" | "valid_after" | "valid_before" | "nonce" | "signature">): RecordedAuthorization {
  return {
    sessionId: a.refund_id,
    tokenAddress: a.token_address,
    fromAddress: a.from_address,
    toAddress: a.to_address,
    value: a.value.toString(),
    validAfter: a.valid_after.toString(),
    validBefore: a.valid_before.toString(),
    nonce: a.nonce as Hex,
    signature: a.signature as Hex,
  };
}

/**
 * The refund whose wallet authorization `receipt` (of relayer transaction `txId`) did not carry
 * out although the token says its nonce is used — by someone who submitted the signature first —
 * or undefined. Its payer was paid by that other transaction: the authorization's signed terms fix
 * the recipient and the amount.
 */
export async function walletAuthorizationUsedElsewhere(c: SweepChain, txId: string, receipt: TransactionReceipt): Promise<string | undefined> {
  const a = await walletAuthorizationOfTransaction(c.sql, txId);
  if (!a) return undefined;
  const auth = recorded(a);
  if (receiptPaid(receipt, auth)) return undefined;
  return (await usedOnChain(c, auth)) ? a.refund_id : undefined;
}

/** The call of a refund transaction that carries a wallet authorization (to re-sign it with higher fees), else undefined. */
export async function walletRefundCallOf(c: SweepChain, txId: string): Promise<{ to: Address; data: Hex } | undefined> {
  const a = await walletAuthorizationOfTransaction(c.sql, txId);
  return a && authorizationCall(recorded(a));
}
