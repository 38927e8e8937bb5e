/**
 * POST /api/payment-sessions/authorizations (session token): the payer hands over a signed
 * EIP-3009 TransferWithAuthorization instead of sending a transfer — no gas coin needed.
 *
 * Everything is checked before anything is written, and nothing is sent on-chain: the network
 * offers it, the session is PENDING and not about to expire, to/value/window/nonce are exactly
 * the session's terms (api/src/gasless/authorization.ts), the signature is `from`'s, and on the
 * chain the nonce is unused, `from` holds the amount, and the exact transaction the relayer
 * will send succeeds in a simulation (gasless/chain.ts). Then it is recorded, once per session
 * (gasless/records.ts), and the answer is 202 with the record. Each refusal is its own 4xx code.
 * The relayer submits it later (sweeps/send-authorization.ts); GET answers the record with how
 * far that got.
 *
 * Anyone who saw the signature may submit it on-chain before this request reaches us. So the
 * route first looks whether this very authorization already paid the session (as the session
 * sees it: sessions/carried-out.ts) and then answers that — 202 with the record, `mined`, and the
 * transaction that paid — whatever it would otherwise refuse (the nonce used, the session no
 * longer PENDING, its window closed). A payment the indexer has not stored yet is not seen: the
 * refusal of the used nonce says the session will show the payment if it was one.
 */
import { Elysia } from "elysia";
import { getAddress, type Address, type Hex } from "viem";
import { ApiError, type ErrorCode } from "../errors.ts";
import {
  authorizationTerms,
  signedByFrom,
  termsMismatch,
  tooLate,
  type AuthorizationTerms,
  type SubmittedAuthorization,
  type TermsMismatch,
} from "../gasless/authorization.ts";
import { chainChecks, hasCode, relayerCapacity, tokenDomain, type ChainVerdict, type TokenOnNetwork } from "../gasless/chain.ts";
import { carriedOutPayment } from "../sessions/carried-out.ts";
import { authorizationView, findAuthorization, recordAuthorization, recordCarriedOut, sameAuthorization, type AuthorizationRow } from "../gasless/records.ts";
import { relayerAddressOn } from "../credentials/relayer.ts";
import { AuthorizationBody, PaymentAuthorization } from "./authorizations.schemas.ts";
import { PublicQuery } from "./payment-sessions.schemas.ts";
import { readJsonBody } from "./body.ts";
import { requireSessionToken } from "./auth.ts";
import { BODY_ERRORS, doc, TOKEN_ERRORS } from "./schemas.ts";
import type { Services } from "./services.ts";
import { addressParam, validateBody } from "./validate.ts";

const TAG = "Payment session (browser, session token)";

const MISMATCH: Record<TermsMismatch, { code: ErrorCode; param: string }> = {
  recipient: { code: "authorization_recipient_mismatch", param: "to" },
  value: { code: "authorization_value_mismatch", param: "value" },
  window: { code: "authorization_window_mismatch", param: "validBefore" },
  nonce: { code: "authorization_nonce_mismatch", param: "nonce" },
};

const VERDICT: Record<Exclude<ChainVerdict, { ok: true }>["reason"], ErrorCode> = {
  nonce_used: "authorization_nonce_used",
  insufficient_balance: "authorization_insufficient_balance",
  signature_invalid: "authorization_signature_invalid",
  rejected: "authorization_rejected",
};

export function authorizationRoutes(services: Services) {
  /** The network did not answer: a 503 to retry, never a 500 (and never its URL). */
  async function onChain<T>(name: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (e) {
      throw new ApiError("network_unavailable", `${name} did not answer; retry shortly.`, undefined, { "retry-after": "5" }, { cause: e });
    }
  }

  /**
   * Whether this very authorization has already paid the session, as the session sees it
   * (sessions/carried-out.ts): then it is recorded `mined` with the transaction that paid, and
   * that record is the answer. Only the payer's own signature is recorded (a contract wallet's,
   * by EIP-1271, the chain itself has just accepted).
   */
  async function carriedOut(networkName: string, token: TokenOnNetwork, terms: AuthorizationTerms, sub: SubmittedAuthorization, sessionId: string): Promise<AuthorizationRow | undefined> {
    if (termsMismatch(sub, terms)) return undefined;
    const paid = await carriedOutPayment(services.database.sql, sessionId, token.token, terms, sub);
    if (!paid) return undefined;
    const read = await tokenDomain(token);
    if (!read.ok || (!(await signedByFrom(read.domain, terms, sub)) && !(await onChain(networkName, () => hasCode(token, sub.from))))) return undefined;
    const outcome = await recordCarriedOut(services.database.db, sessionId, token.token, terms, sub, paid.txHash);
    if (outcome.kind === "exists" && !sameAuthorization(outcome.row, sub)) throw new ApiError("authorization_exists");
    return outcome.row;
  }

  return new Elysia()
    .get(
      "/api/payment-sessions/authorizations",
      async ({ request, query }) => {
        const auth = await requireSessionToken(services, request);
        // As on GET /api/payment-sessions: the token names the session; `paymentSessionId` may be added as a check.
        if (query.paymentSessionId !== undefined && query.paymentSessionId !== auth.session.id) {
          throw new ApiError("session_token_mismatch", undefined, "paymentSessionId");
        }
        const row = await findAuthorization(services.database.db, auth.session.id);
        if (!row) throw new ApiError("resource_not_found", "The payment session has no authorization recorded.");
        return authorizationView(row);
      },
      {
        query: PublicQuery,
        detail: doc({
          tag: TAG,
          summary: "The session's authorization and how far the relayer got with it",
          description:
            "The record of the session's signed authorization (POST /api/payment-sessions/authorizations) with its `status` (`recorded` → `sending` → `mined`, or `failed`), the `reason` it waits or failed, and the relayer's `txHash` once mined. A checkout polls it to say what is happening; the session's own status follows what the chain shows.",
          auth: "sessionToken",
          ok: { status: 200, schema: PaymentAuthorization, description: "The record." },
          errors: [...TOKEN_ERRORS, "session_token_mismatch", "resource_not_found"],
        }),
      },
    )
    .post(
    "/api/payment-sessions/authorizations",
    async ({ request, set }) => {
      const auth = await requireSessionToken(services, request);
      const body = validateBody(AuthorizationBody, await readJsonBody(request));
      const sub: SubmittedAuthorization = {
        chainId: body.chainId,
        from: addressParam(body.from, "from", { nonZero: true }),
        ...(body.to !== undefined ? { to: addressParam(body.to, "to") } : {}),
        value: BigInt(body.value),
        validAfter: BigInt(body.validAfter),
        validBefore: BigInt(body.validBefore),
        nonce: body.nonce.toLowerCase() as Hex,
        signature: body.signature.toLowerCase() as Hex,
      };
      const session = auth.session;
      const deposit = auth.deposits.find((d) => d.chainId === sub.chainId);
      if (!deposit) {
        throw new ApiError("parameter_invalid", `chainId must be one of the session's networks: ${auth.deposits.map((d) => d.chainId).join(", ")}.`, "chainId");
      }

      // The same authorization again is answered with its record, whatever happened since.
      const existing = await findAuthorization(services.database.db, session.id);
      if (existing) {
        if (!sameAuthorization(existing, sub)) throw new ApiError("authorization_exists");
        set.status = 202;
        return authorizationView(existing);
      }

      const net = services.networks.find((n) => n.chainId === sub.chainId);
      if (!net) throw new ApiError("gasless_unavailable", `Paying by signed authorization is switched off on chain ${sub.chainId} here.`, "chainId");
      if (!deposit.settlementAddress) throw new ApiError("gasless_unavailable", undefined, "chainId");
      const terms = authorizationTerms(session, { settlementAddress: deposit.settlementAddress, requiredBaseUnits: deposit.requiredBaseUnits });
      const token: TokenOnNetwork = { chainId: net.chainId, rpcUrl: net.rpcUrl, token: getAddress(deposit.tokenAddress) };
      const answer = (row: AuthorizationRow) => {
        set.status = 202;
        return authorizationView(row);
      };

      // First, what happened: has this very authorization already paid the session, submitted by
      // someone else before it reached us? Then its record, `mined`, whatever would be refused below.
      const carried = await carriedOut(net.name, token, terms, sub, session.id);
      if (carried) return answer(carried);

      if (!net.gasless) throw new ApiError("gasless_unavailable", `Paying by signed authorization is switched off on ${net.name} here.`, "chainId");
      if (session.status !== "PENDING") {
        throw new ApiError("session_not_pending", `The payment session is ${session.status}; only a PENDING session can be paid.`);
      }
      if (tooLate(terms, BigInt(Math.floor(Date.now() / 1000)))) throw new ApiError("authorization_expired");
      const mismatch = termsMismatch(sub, terms);
      if (mismatch) {
        const param = mismatch === "window" && sub.validAfter !== terms.validAfter ? "validAfter" : MISMATCH[mismatch].param;
        throw new ApiError(MISMATCH[mismatch].code, undefined, param);
      }

      const read = await tokenDomain(token);
      if (!read.ok) {
        if (read.reason === "unreachable") throw new ApiError("network_unavailable", `${net.name} did not answer; retry shortly.`, undefined, { "retry-after": "5" });
        throw new ApiError("gasless_unavailable", `The session's token on ${net.name} has no EIP-3009.`, "chainId");
      }
      // A plain wallet's signature is checked here; a contract wallet's (EIP-1271) only the token can check, in the simulation.
      if (!(await signedByFrom(read.domain, terms, sub)) && !(await onChain(net.name, () => hasCode(token, sub.from)))) {
        throw new ApiError("authorization_signature_invalid", undefined, "signature");
      }
      const relayer: Address | undefined = relayerAddressOn(net, services.config.sweeps.relayerPrivateKey?.reveal());
      // What the payer view withholds is not taken either: the relayer could not submit it now.
      const can = relayer ? await relayerCapacity(net, relayer) : { ok: false as const, reason: "relayer_unfunded" as const, detail: "no relayer key" };
      if (!can.ok) {
        if (can.reason === "unreachable") throw new ApiError("network_unavailable", `${net.name} did not answer; retry shortly.`, undefined, { "retry-after": "5" });
        throw new ApiError("gasless_unavailable", `Paying by signed authorization is not offered on ${net.name} right now (${can.reason === "fee_above_ceiling" ? "its fees are above the relayer's ceiling" : "the relayer cannot pay for it"}); pay by a plain transfer.`, "chainId");
      }
      const verdict = await onChain(net.name, () => chainChecks(token, terms, sub, relayer));
      if (!verdict.ok && verdict.reason === "nonce_used") {
        // Not seen paying this session above (yet): a cancel, another authorization of the payer's
        // with this nonce, or a block the indexer has not stored — the session shows it if it paid.
        throw new ApiError(
          "authorization_nonce_used",
          `${verdict.detail} It has not been seen paying this payment session; if it did, the session shows the payment as soon as its block is indexed (GET /api/payment-sessions), and this request answers its record.`,
        );
      }
      // A signature the token refuses names the parameter, as one that does not recover to `from` does.
      if (!verdict.ok) throw new ApiError(VERDICT[verdict.reason], verdict.detail, verdict.reason === "signature_invalid" ? "signature" : undefined);

      const outcome = await recordAuthorization(services.database.db, session.id, token.token, terms, sub);
      if (outcome.kind === "not_pending") {
        throw new ApiError("session_not_pending", `The payment session is ${outcome.status}; only a PENDING session can be paid.`);
      }
      if (outcome.kind === "exists" && !sameAuthorization(outcome.row, sub)) throw new ApiError("authorization_exists");
      return answer(outcome.row);
    },
    {
      detail: doc({
        tag: TAG,
        summary: "Pay by a signed authorization (EIP-3009, no gas coin)",
        description: [
          "The payer signs the session's TransferWithAuthorization (the payer view's `networks[].gasless`: the token's EIP-712 domain and the message without `from`) with `eth_signTypedData_v4`, and sends it here with `from` and the signature. The money goes straight to the merchant's settlement address; the payer needs the stablecoin only, no gas coin.",
          "",
          "Checked before anything is recorded: the network offers it, the session is PENDING and has at least 30 s left, `to`, `value`, `validAfter`, `validBefore` and `nonce` are exactly the offer's, the signature is `from`'s, `from`'s nonce is unused and its balance covers the amount, and the exact transaction the relayer will send succeeds in a simulation. Nothing is sent on-chain by this request and a refusal costs no gas. One authorization per session: the same one again answers its record (202), a different one `authorization_exists`.",
          "",
          "Submitted by someone else first: anyone who saw the signature may send it to the token before this request arrives. So the service first looks whether this very authorization has already paid the session (the session's nonce used by `from`, the amount moved to the settlement address, as indexed): then it answers 202 with the record, `status` `mined`, `txHash` the transaction that paid — instead of `authorization_nonce_used`, `session_not_pending`, `authorization_expired` or any other refusal — and the session moves on by itself (FUNDED, SUCCEEDED) like any payment. Until the indexer has stored that block the payment is not seen yet and the refusal stands (`authorization_nonce_used`); follow the session (GET /api/payment-sessions), which shows the payment as soon as it is indexed.",
        ].join("\n"),
        auth: "sessionToken",
        body: AuthorizationBody,
        ok: { status: 202, schema: PaymentAuthorization, description: "Checked and recorded (`recorded`), or already carried out on-chain by another submitter (`mined`, with its `txHash`)." },
        errors: [
          ...TOKEN_ERRORS,
          ...BODY_ERRORS,
          "address_checksum_invalid",
          "gasless_unavailable",
          "session_not_pending",
          "authorization_expired",
          "authorization_recipient_mismatch",
          "authorization_value_mismatch",
          "authorization_window_mismatch",
          "authorization_nonce_mismatch",
          "authorization_signature_invalid",
          "authorization_nonce_used",
          "authorization_insufficient_balance",
          "authorization_rejected",
          "authorization_exists",
          "network_unavailable",
        ],
      }),
    },
  );
}
