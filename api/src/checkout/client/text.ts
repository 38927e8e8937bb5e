/**
 * What the checkout says, as pure functions: amounts, the countdown, the EIP-681 payment
 * URI, the final screen of each status and reason, and a plain message with a way forward
 * for every wallet failure. Unit-tested apart from the page (text.test.ts).
 */
import type { SessionStatus as Status } from "../../../../shared/status.ts";
import { sameAddress, type TokenOption } from "./tokens.ts";
import { hasErrorCode } from "../../../../shared/error-chain.ts";

export type { Status };

/** Base units → a decimal string with at least two places ("12340000", 6 → "12.34"). Never a float. */
export function formatUnits(baseUnits: bigint, decimals: number): string {
  const neg = baseUnits < 0n;
  const abs = neg ? -baseUnits : baseUnits;
  const scale = 10n ** BigInt(decimals);
  const whole = abs / scale;
  let frac = (abs % scale).toString().padStart(decimals, "0").replace(/0+$/, "");
  if (frac.length < 2) frac = frac.padEnd(2, "0");
  return `${neg ? "-" : ""}${whole.toString()}${decimals > 0 ? `.${frac}` : ""}`;
}

/** A network fee in wei, rounded up to 6 decimals of the coin for reading ("0.000063"). */
export function formatFee(wei: bigint): string {
  const step = 10n ** 12n;
  return formatUnits(((wei + step - 1n) / step) * step, 18);
}

/** "29:59", "1:02:03", "0:00": the time left, never negative. */
export function formatCountdown(msLeft: number): string {
  const s = Math.max(0, Math.floor(msLeft / 1000));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = String(s % 60).padStart(2, "0");
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${sec}` : `${m}:${sec}`;
}

/**
 * An address short enough never to wrap ("0x1a65…7e36"): the payer recognises their account by
 * its ends, and the page gives the whole address in a title. Anything not 0x-hex-like is kept whole.
 */
export function shortAddress(address: string): string {
  return /^0x[0-9a-fA-F]{12,}$/.test(address) ? `${address.slice(0, 6)}…${address.slice(-4)}` : address;
}

/**
 * The line under the pay button: what the payer sends in the token, and that it is the price
 * in the session's currency ("You send 12.34 TUSD = 12.34 USD, the price.").
 */
export function sendsLine(tokenAmountText: string, priceText: string): string {
  return `You send ${tokenAmountText} = ${priceText}, the price.`;
}

/** "12.34 tUSDT": a token's amount of the session, in its own base units and decimals. */
export function tokenAmountText(t: TokenOption): string {
  return `${formatUnits(BigInt(t.amountBaseUnits), t.decimals)} ${t.tokenSymbol}`;
}

/** A network in the network choice: its name and what it takes ("Base · 12.34 USDC or USDT"; all at par, so one amount). */
export function networkChoiceText(n: { network: string; tokens: readonly TokenOption[] }): string {
  const [main, ...others] = n.tokens;
  if (!main) return n.network;
  return `${n.network} · ${tokenAmountText(main)}${others.map((t) => ` or ${t.tokenSymbol}`).join("")}`;
}

/** Under a token in the token choice: the wallet's balance of it ("Balance 50.00"), "" until known. */
export function tokenBalanceText(t: TokenOption, balance: bigint | undefined): string {
  return balance === undefined ? "" : `Balance ${formatUnits(balance, t.decimals)}`;
}

/**
 * The wallet holds too little of the chosen token: what it holds, what is needed, and the way
 * on — another accepted token it holds enough of (`instead`), else adding some or another wallet.
 */
export function insufficientTokenMessage(v: { held: bigint; token: TokenOption; networkName: string; instead?: TokenOption }): string {
  const t = v.token;
  const start = `Your wallet holds ${formatUnits(v.held, t.decimals)} ${t.tokenSymbol} on ${v.networkName}; this payment needs ${tokenAmountText(t)}.`;
  if (v.instead) return `${start} It holds enough ${v.instead.tokenSymbol}: pay in ${v.instead.tokenSymbol} instead.`;
  return `${start} Add ${t.tokenSymbol} to this wallet, or pay from another wallet with the QR code.`;
}

/**
 * The unit of what arrived, for under- and over-payment texts (amounts in the network's unit): the
 * token's symbol when every payment was in the same accepted token, else `currency` — several
 * tokens add up at par, so the sum is in the session's currency.
 */
export function receivedSymbol(payments: readonly { token: string | null }[], tokens: readonly TokenOption[], currency: string): string {
  const first = payments[0]?.token;
  if (!first || payments.some((p) => !p.token || !sameAddress(p.token, first))) return currency;
  return tokens.find((t) => sameAddress(t.tokenAddress, first))?.tokenSymbol ?? currency;
}

/**
 * EIP-681: a call of `transfer(deposit, amount)` on the token contract of `chainId`, which
 * mobile wallets open as a prefilled token transfer.
 */
export function paymentUri(n: { tokenAddress: string; chainId: number; depositAddress: string; amountBaseUnits: string }): string {
  return `ethereum:${n.tokenAddress}@${n.chainId}/transfer?address=${n.depositAddress}&uint256=${n.amountBaseUnits}`;
}

export interface FinalScreen {
  tone: "success" | "info" | "warning" | "error";
  title: string;
  body: string;
}

/**
 * The final screen of a status. `received` is what reached the deposit on the paid network
 * (base units, formatted by the caller into `receivedText`), for under- and over-payments.
 */
export function finalScreen(
  status: Status,
  reason: string,
  ctx: { merchantName: string; amountText: string; receivedText?: string; overpaidText?: string; byAuthorization?: boolean },
): FinalScreen | undefined {
  const m = ctx.merchantName;
  // How it was paid, when it was by signature: the payer sent no transaction and paid no fee.
  const how = ctx.byAuthorization ? " Paid by your signature: the network fee was covered for you." : "";
  switch (status) {
    case "PENDING":
      return undefined;
    case "SUCCEEDED":
      return {
        tone: "success",
        title: "Payment complete",
        body:
          `You paid ${ctx.amountText} to ${m}.${how}` +
          (ctx.overpaidText ? ` You sent ${ctx.overpaidText} more than asked; the surplus went to ${m} too: ask them for a refund of it.` : ""),
      };
    case "FUNDED":
      return {
        tone: "success",
        title: "Payment received",
        body:
          `${m} has received your ${ctx.amountText}; it is being settled. You can close this window.${how}` +
          (ctx.overpaidText ? ` You sent ${ctx.overpaidText} more than asked; the surplus goes to ${m} too: ask them for a refund of it.` : ""),
      };
    case "CANCELED":
      if (reason === "expired") return { tone: "info", title: "This payment has expired", body: `The time to pay ran out and nothing was received. Nothing was charged. Go back to ${m} to start again.` };
      if (reason === "canceled_by_merchant") return { tone: "info", title: "Payment canceled by the merchant", body: `${m} canceled this payment. Nothing was charged.` };
      return { tone: "info", title: "Payment canceled", body: `You canceled this payment. Nothing was charged.` };
    case "ERROR":
      switch (reason) {
        case "underpaid":
          return {
            tone: "warning",
            title: "Payment incomplete",
            body: `Only ${ctx.receivedText ?? "part of the amount"} of ${ctx.amountText} arrived before the payment expired. What arrived goes to ${m}: contact them to complete the order or get it refunded.`,
          };
        case "paid_after_cancel":
          return {
            tone: "warning",
            title: "Payment arrived too late",
            body: `Your payment${ctx.receivedText ? ` of ${ctx.receivedText}` : ""} arrived after this payment had ended. The funds are not lost: they go to ${m}. Contact them for the order or a refund.`,
          };
        case "sweep_failed":
          return {
            tone: "warning",
            title: "Payment received, settlement delayed",
            body: `Your payment arrived, but passing it on to ${m} failed for now. Your funds are safe and will be settled; ${m} has been told.`,
          };
        case "reorged":
          return {
            tone: "error",
            title: "Payment reversed by the network",
            body: `The network dropped the block that held your payment, so it did not happen. Check your wallet; if the tokens are still there, go back to ${m} and pay again.`,
          };
        case "simulated":
          return { tone: "error", title: "Payment failed (sandbox)", body: "A simulated error, as asked by the merchant's sandbox test. No real funds were involved." };
        default:
          return { tone: "error", title: "Payment failed", body: `Something went wrong with this payment. Contact ${m}; any funds received go to them and are not lost.` };
      }
  }
}

export type WalletProblemKind = "rejected" | "wrong_network" | "insufficient_token" | "insufficient_gas" | "disconnected" | "expired" | "unknown_network" | "no_wallet" | "other";

export interface WalletProblem {
  kind: WalletProblemKind;
  message: string;
}

/** An EIP-1193 error (or anything a wallet threw) → a plain message with a way forward. */
export function walletProblem(err: unknown, ctx: { networkName?: string } = {}): WalletProblem {
  const e = (err ?? {}) as { message?: string };
  // Some wallets wrap the real error in an internal one (-32603 with data.originalError), and
  // libraries in a `cause`: the codes are looked for along the whole chain.
  const is = (...codes: number[]) => hasErrorCode(err, ...codes);
  const text = typeof e.message === "string" ? e.message : typeof err === "string" ? err : "";
  if (is(4001) || /user rejected|user denied|rejected the request/i.test(text)) {
    return { kind: "rejected", message: "You rejected the request in your wallet. Nothing was sent. Try again when you are ready." };
  }
  if (is(4100)) return { kind: "rejected", message: "Your wallet did not allow this site. Connect again and approve the connection." };
  if (is(4900, 4901)) return { kind: "disconnected", message: "Your wallet is disconnected. Connect it again to go on." };
  if (is(4902)) {
    return { kind: "unknown_network", message: `Your wallet does not know ${ctx.networkName ?? "this network"}. Add it in your wallet, or pay with the QR code instead.` };
  }
  if (/insufficient funds|gas required exceeds|exceeds balance|insufficient balance for transfer/i.test(text)) {
    return { kind: "insufficient_gas", message: `Not enough ${ctx.networkName ? `native coin on ${ctx.networkName}` : "native coin"} to pay the network fee. Add some to your wallet and try again.` };
  }
  return { kind: "other", message: `Your wallet reported a problem: ${text.slice(0, 160) || "unknown error"}. Try again, or pay with the QR code instead.` };
}

/** The wallet cannot sign typed data (EIP-1193 4200 unsupported method, JSON-RPC -32601 method not found): pay by transfer instead. */
export function cannotSignTypedData(err: unknown): boolean {
  const e = (err ?? {}) as { message?: string };
  return hasErrorCode(err, 4200, -32601) || /signTypedData.*(not supported|unsupported|does not exist)|method not found/i.test(String(e.message ?? ""));
}

/** Under the Pay button when the payment is by signature: what the payer signs and that it costs no network fee. */
export function gaslessLine(amount: string, price: string): string {
  return `You sign a transfer of ${amount} = ${price}, the price. No network fee: the payment service submits it for you.`;
}

export interface ProgressStep {
  id: "sent" | "seen" | "confirmations" | "funded" | "settled";
  label: string;
  state: "done" | "active" | "todo";
}

/**
 * The live progress of a payment on the chosen network: sent (the wallet gave a transaction
 * hash, or a payment is seen), seen on-chain (indexed), confirmations n of m, funded, settled.
 * undefined while there is nothing to show (no payment sent or seen).
 */
export function progressSteps(v: {
  status: Status;
  reason: string;
  required: number;
  payments: { txHash: string; confirmations: number }[];
  sentTxHash?: string;
  /** The payer signed an authorization, which the payment service submits (no transaction of theirs). */
  authorized?: boolean;
}): ProgressStep[] | undefined {
  const seen = v.payments.length > 0;
  if (!seen && !v.sentTxHash && !v.authorized && v.status !== "FUNDED" && v.status !== "SUCCEEDED") return undefined;
  const funded = v.status === "FUNDED" || v.status === "SUCCEEDED" || (v.status === "ERROR" && v.reason === "sweep_failed");
  const settled = v.status === "SUCCEEDED";
  const conf = Math.min(v.required, Math.max(0, ...v.payments.map((p) => p.confirmations)));
  const confirmed = funded || (seen && conf >= v.required);
  const steps: [ProgressStep["id"], string, boolean][] = [
    ["sent", v.authorized ? "Payment signed (no network fee)" : "Payment sent", true],
    ["seen", "Seen on-chain", seen || funded],
    ["confirmations", `Confirmations: ${confirmed ? v.required : conf} of ${v.required}`, confirmed],
    ["funded", "Payment received", funded],
    ["settled", "Settled to the merchant", settled],
  ];
  let activeGiven = false;
  return steps.map(([id, label, done]) => {
    if (done) return { id, label, state: "done" as const };
    const state = activeGiven ? ("todo" as const) : ("active" as const);
    activeGiven = true;
    return { id, label, state };
  });
}

/**
 * How long the page follows the session after the payment service refused a signature as
 * already used (someone else — a wallet, a relay — may have submitted it on-chain first) before
 * it says so: a few blocks and their indexing. A payment by it shows in the session well within.
 */
export const USED_ELSEWHERE_GRACE_MS = 20_000;

/**
 * After a refusal of the payer's signature as already used on-chain (or of a session no longer
 * PENDING), what the page does: `follow` the session (it shows the payment if the signature paid
 * it), or, once the session has shown nothing of it for USED_ELSEWHERE_GRACE_MS, `problem`.
 */
export function afterUsedElsewhere(v: { refusedAt: number; now: number; status: Status; paymentsOnNetwork: number }): "follow" | "problem" {
  if (v.status !== "PENDING" || v.paymentsOnNetwork > 0) return "follow";
  return v.now - v.refusedAt >= USED_ELSEWHERE_GRACE_MS ? "problem" : "follow";
}
