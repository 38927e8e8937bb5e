/**
 * The x402 facilitator (docs/x402.md): what GET /x402/supported, POST /x402/verify and POST
 * /x402/settle do, for a merchant's API key. The checks are ./exact.ts (pure) and the gasless
 * path's own (gasless/authorization.ts the signature, gasless/chain.ts the token's domain, the
 * nonce, the balance and the simulation of the very call the relayer sends); nothing here sends
 * a transaction.
 *
 * A settle is a payment session like any other: made by the one create path
 * (sessions/create/create.ts: amount at par from the token amount, referenceId the resource URL,
 * metadata from the requirements), its authorization recorded for the relayer
 * (./records.ts), which submits it in its batches with its guards (sweeps/send-authorization.ts).
 * The settle waits for the relayer's receipt and answers its transaction; the session turns
 * FUNDED and SUCCEEDED from what the indexer sees, with the usual webhooks, dashboard and CSV.
 */
import { getAddress, isAddress, isAddressEqual, type Address } from "viem";
import type { Environment } from "../../../shared/environment.ts";
import type { NetworkConfig } from "../../../shared/chains/config.ts";
import { formatAmount } from "../../../shared/money.ts";
import { ApiError } from "../errors.ts";
import { signedByFrom, type AuthorizationTerms, type SubmittedAuthorization } from "../gasless/authorization.ts";
import { chainChecks, hasCode, relayerCapacity, tokenDomain, type TokenOnNetwork } from "../gasless/chain.ts";
import { findAuthorization } from "../gasless/records.ts";
import { relayerAddressOn } from "../credentials/relayer.ts";
import { requestCancel } from "../sessions/cancel.ts";
import { depositsOfSession } from "../sessions/repository.ts";
import { createPaymentSession, type CreateDeps, type CreatingKey, type KeyInHand } from "../sessions/create/create.ts";
import { checkRequest, checkTerms, INVALID, networkOf, SCHEME, sessionFacts, X402_VERSION, type Invalid, type InvalidReason, type PaymentPayload, type Requirements } from "./exact.ts";
import { nonceTaken, recordX402Authorization } from "./records.ts";

export interface FacilitatorDeps extends CreateDeps {
  config: CreateDeps["config"] & { x402MinAmountMinor: bigint; sweeps: { relayerPrivateKey?: { reveal(): `0x${string}` } | undefined } };
}

export interface FacilitatorRequest {
  x402Version: number;
  paymentPayload: PaymentPayload;
  paymentRequirements: Requirements;
}

/** The networks of an environment an x402 payment may be made on: paying by authorization switched on. */
function offered(deps: FacilitatorDeps, environment: Environment): NetworkConfig[] {
  return deps.networks.filter((n) => n.environment === environment && n.gasless === true);
}

/**
 * GET /x402/supported: `exact` on each network of the key's environment, with where this
 * merchant is paid there (`payTo`, what its requirements must name) and its stablecoins with
 * their EIP-712 domain where they have EIP-3009 (read from the token, cached: gasless/chain.ts),
 * so that a resource server needs nothing but its key to write its requirements; and the relayer
 * that submits.
 */
export async function supported(deps: FacilitatorDeps, key: Pick<CreatingKey, "environment" | "settlements">) {
  const nets = offered(deps, key.environment);
  const signers: string[] = [];
  const kinds = [];
  for (const n of nets) {
    const relayer = relayerAddressOn(n, deps.config.sweeps.relayerPrivateKey?.reveal());
    if (relayer && !signers.includes(relayer)) signers.push(relayer);
    const settlement = settlementOf(deps, key, n.chainId);
    const assets = await Promise.all(
      n.stablecoins.map(async (c) => {
        const read = await tokenDomain({ chainId: n.chainId, rpcUrl: n.rpcUrl, token: getAddress(c.address) });
        return { asset: getAddress(c.address), symbol: c.symbol, decimals: c.decimals, ...(read.ok ? { name: read.domain.name, version: read.domain.version } : {}), eip3009: read.ok };
      }),
    );
    kinds.push({ x402Version: X402_VERSION, scheme: SCHEME, network: networkOf(n.chainId), extra: { ...(settlement ? { payTo: getAddress(settlement) } : {}), assets } });
  }
  return { kinds, extensions: [] as string[], signers: signers.length ? { "eip155:*": signers } : {} };
}

/** Where this merchant is paid on a network (the sandbox's default address when it set none there). */
function settlementOf(deps: FacilitatorDeps, key: Pick<CreatingKey, "environment" | "settlements">, chainId: number): string | undefined {
  return key.settlements.get(chainId) ?? (key.environment === "sandbox" ? deps.config.sandboxSettlementAddress : undefined);
}

export interface Verified {
  payer: Address;
  net: NetworkConfig;
  token: TokenOnNetwork;
  terms: AuthorizationTerms;
  submitted: SubmittedAuthorization;
  cents: bigint;
  relayer: Address | undefined;
}

/** The RPC did not answer: 503 to retry, never a 500 (and never its URL). */
async function onChain<T>(net: NetworkConfig, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    throw new ApiError("network_unavailable", `${net.name} did not answer; retry shortly.`, undefined, { "retry-after": "5" }, { cause: e });
  }
}

/**
 * Every check of a payment, the chain's included, with nothing written: the request (version,
 * scheme, network), the terms (asset, EIP-712 domain, payTo the merchant's settlement address,
 * window, amount), the signature, the nonce unused here and on the chain, the balance, and the
 * relayer's exact call simulated.
 */
export async function verifyPayment(deps: FacilitatorDeps, key: Pick<CreatingKey, "environment" | "settlements" | "merchant">, body: FacilitatorRequest, simulation: "estimate" | "call" = "call"): Promise<Verified | (Invalid & { payer?: Address })> {
  const nets = offered(deps, key.environment);
  const request = checkRequest(body.x402Version, body.paymentPayload, body.paymentRequirements, (id) => nets.some((n) => n.chainId === id));
  if ("reason" in request) return request;
  const { chainId, authorization: a } = request;
  const payer = a.from;
  const net = nets.find((n) => n.chainId === chainId)!;
  const asset = body.paymentRequirements.asset;
  const coin = net.stablecoins.find((c) => c.address.toLowerCase() === asset.toLowerCase());
  const token: TokenOnNetwork | undefined = coin && { chainId: net.chainId, rpcUrl: net.rpcUrl, token: getAddress(coin.address) };
  let domain;
  if (token) {
    const read = await tokenDomain(token);
    if (!read.ok && read.reason === "unreachable") throw new ApiError("network_unavailable", `${net.name} did not answer; retry shortly.`, undefined, { "retry-after": "5" });
    domain = read.ok ? read.domain : undefined;
  }
  const settlement = settlementOf(deps, key, chainId);
  // Another account's key naming this account's address: not a payment this key may make at all
  // (403), where any other wrong payTo is a payment that does not match (invalid, as x402 says).
  const payTo = body.paymentRequirements.payTo;
  if (typeof payTo === "string" && isAddress(payTo, { strict: false }) && !(settlement && isAddressEqual(payTo as Address, settlement as Address))) {
    const [theirs] = await deps.database.sql`
      select 1 from app.merchant_settlements
       where environment = ${key.environment} and chain_id = ${chainId} and lower(address) = ${payTo.toLowerCase()} and merchant_id <> ${key.merchant.id} limit 1`;
    if (theirs) throw new ApiError("pay_to_other_account", "payTo is another account's settlement address on this network: this API key pays only its own account's (GET /x402/supported names it).", "paymentRequirements.payTo");
  }
  const checked = checkTerms(body.paymentPayload, body.paymentRequirements, a, {
    token: coin && { address: getAddress(coin.address), decimals: coin.decimals },
    domain,
    settlement: settlement ? getAddress(settlement) : undefined,
    minCents: deps.config.x402MinAmountMinor,
    maxCents: deps.config.maxAmountMinor,
    nowSeconds: BigInt(Math.floor(Date.now() / 1000)),
  });
  if ("reason" in checked) return { ...checked, payer };
  const { terms, submitted, cents } = checked;
  // The signature, our nonces and the chain's checks at once (reads only; verify is on the
  // resource server's request path), then told in a fixed order. A plain wallet's signature is
  // checked here; a contract wallet's (EIP-1271) only the token can check, in the simulation.
  const relayer = relayerAddressOn(net, deps.config.sweeps.relayerPrivateKey?.reveal());
  const [signed, taken, verdict] = await Promise.all([
    signedByFrom(domain!, terms, submitted),
    nonceTaken(deps.database.db, terms.nonce),
    onChain(net, () => chainChecks(token!, terms, submitted, relayer, simulation)),
  ]);
  if (!signed && !(await onChain(net, () => hasCode(token!, payer)))) {
    return { reason: INVALID.signature, message: "The signature is not the payer's over this authorization.", payer };
  }
  if (taken) {
    return { reason: INVALID.nonceUsed, message: "This authorization's nonce was already settled here (or is a payment session's own).", payer };
  }
  if (!verdict.ok) {
    const reason: Record<typeof verdict.reason, InvalidReason> = {
      nonce_used: INVALID.nonceUsed,
      insufficient_balance: INVALID.balance,
      signature_invalid: INVALID.signature,
      rejected: INVALID.simulation,
    };
    return { reason: reason[verdict.reason], message: verdict.detail, payer };
  }
  return { payer, net, token: token!, terms, submitted, cents, relayer };
}

/** What POST /x402/verify answers (x402's VerifyResponse). */
export function verifyAnswer(v: Verified | (Invalid & { payer?: Address })) {
  if ("reason" in v) return { isValid: false, invalidReason: v.reason, invalidMessage: v.message, ...(v.payer ? { payer: v.payer } : {}) };
  return { isValid: true, payer: v.payer };
}

/** How long a settle waits for the relayer's receipt before answering `settlement_pending` (the payment may still land; the session shows it). */
export const SETTLE_WAIT_MS = 60_000;
const POLL_MS = 20;

/** Why a recorded authorization failed (gasless/submission.ts), as x402 names it. */
const FAILED: Record<string, InvalidReason> = {
  used_elsewhere: INVALID.nonceUsed,
  expired: INVALID.validBefore,
  session_closed: INVALID.transactionFailed,
  session_budget: INVALID.transactionFailed,
  rejected: INVALID.transactionFailed,
  reverted: INVALID.transactionFailed,
};

/**
 * POST /x402/settle: verified again, then a payment session made for it, its authorization
 * recorded (the nonce claimed, so a replay fails), and the relayer's receipt awaited. Answers
 * x402's SettleResponse; `extra.paymentSessionId` names the session.
 */
export async function settlePayment(deps: FacilitatorDeps, caller: KeyInHand, body: FacilitatorRequest, waitMs = SETTLE_WAIT_MS) {
  const network = body.paymentRequirements.network;
  const failed = (reason: InvalidReason, message: string, payer?: string, extra?: Record<string, unknown>) => ({
    success: false,
    errorReason: reason,
    errorMessage: message,
    transaction: "",
    network,
    ...(payer ? { payer } : {}),
    ...(extra ? { extra } : {}),
  });
  // Settle holds the payment to what a record is held to: the relayer's estimate within its budget.
  const v = await verifyPayment(deps, caller.key, body, "estimate");
  if ("reason" in v) return failed(v.reason, v.message, v.payer);
  // What the payer view withholds is not taken either: the relayer could not submit it now.
  const can = v.relayer ? await relayerCapacity(v.net, v.relayer) : ({ ok: false, reason: "relayer_unfunded" } as const);
  if (!can.ok) {
    if (can.reason === "unreachable") throw new ApiError("network_unavailable", `${v.net.name} did not answer; retry shortly.`, undefined, { "retry-after": "5" });
    return failed(INVALID.unavailable, `The relayer cannot submit on ${v.net.name} right now (${can.reason}); nothing was recorded.`, v.payer);
  }

  const facts = sessionFacts(body.paymentPayload, body.paymentRequirements, v.payer, v.terms.nonce);
  const x402Deps: CreateDeps = { ...deps, config: { ...deps.config, minAmountMinor: deps.config.x402MinAmountMinor } };
  const created = await createPaymentSession(x402Deps, caller, {
    body: { amount: formatAmount(v.cents), currency: "USD", metadata: facts.metadata, ...(facts.referenceId ? { referenceId: facts.referenceId } : {}) },
  });
  const sessionId = (created.body as { paymentSessionId: string }).paymentSessionId;
  const deposit = (await depositsOfSession(deps.database.db, sessionId)).find((d) => d.chainId === v.net.chainId);
  if (!deposit?.settlementAddress || !isAddressEqual(getAddress(deposit.settlementAddress), v.terms.to)) {
    await requestCancel(deps.database.sql, sessionId, "merchant").catch(() => {});
    return failed(INVALID.recipient, "The account's settlement address changed while the payment was being settled; nothing was recorded.", v.payer);
  }
  const recorded = await recordX402Authorization(deps.database.db, sessionId, v.token.token, v.terms, v.submitted);
  if (recorded.kind !== "recorded") {
    // Another settle of the same authorization claimed the nonce first: this session is not paid by it.
    await requestCancel(deps.database.sql, sessionId, "merchant").catch(() => {});
    return recorded.kind === "nonce_taken"
      ? failed(INVALID.nonceUsed, "This authorization was settled here already.", v.payer)
      : failed(INVALID.unavailable, `The payment session is ${recorded.status}.`, v.payer);
  }

  const extra = { paymentSessionId: sessionId };
  const deadline = Date.now() + waitMs;
  for (;;) {
    const row = await findAuthorization(deps.database.db, sessionId);
    if (row?.status === "mined" && row.txHash) return { success: true, transaction: row.txHash, network, payer: v.payer, amount: v.terms.value.toString(), extra };
    if (row?.status === "failed") return failed(FAILED[row.reason ?? "rejected"] ?? INVALID.transactionFailed, row.detail ?? "The relayer could not carry it out.", v.payer, { ...extra, ...(row.txHash ? { transaction: row.txHash } : {}) });
    if (Date.now() >= deadline) {
      return failed(INVALID.pending, `Recorded and waiting for the relayer (${row?.reason ?? "queued"}); the payment session ${sessionId} shows the payment when it lands.`, v.payer, extra);
    }
    await Bun.sleep(POLL_MS);
  }
}
