/**
 * Sandbox helpers of the payer's checkout (session token of a sandbox session only; with a
 * production token they do not exist: 404):
 *   POST /api/sandbox/faucet   test tokens — the one the payer picked of the session's, TestUSD or
 *                              TestUSDT — (and, on the local networks, a little gas coin) to the
 *                              payer's wallet, so a browser wallet can pay a sandbox session
 *   POST /api/sandbox/pay      pay the session from the sandbox test wallet (the faucet), so
 *                              anyone can walk the flow without a browser wallet
 * Both move real test tokens on the test network, so they are rate-limited per session on
 * top of the token's own limit (requests that would move tokens count; refused input does not): a page left open, or a script holding a token, cannot drain
 * anything or flood the chain. The bucket is kept in Postgres (payer-limit.ts): the same
 * three uses whichever API process each request reaches.
 */
import { Elysia } from "elysia";
import { getAddress, parseEther, type Address } from "viem";
import { ApiError } from "../errors.ts";
import type { NetworkConfig } from "../../../shared/chains/config.ts";
import { depositsOfSession } from "../sessions/repository.ts";
import { faucetMints, hasFaucet } from "../sandbox/faucet.ts";
import { tokenViews } from "../sessions/views.ts";
import { readJsonBody } from "./body.ts";
import { requireSessionToken, type SessionTokenAuth } from "./auth.ts";
import { takeSharedToken } from "./payer-limit.ts";
import { BODY_ERRORS, doc, TOKEN_ERRORS } from "./schemas.ts";
import { PayerFaucetBody, PayerPayBody, PayerSandboxTransfer } from "./public-sessions.schemas.ts";
import type { Services } from "./services.ts";
import { addressParam, validateBody } from "./validate.ts";

const TAG = "Payment session (browser, session token)";

/** Per session: 3 uses at once, then one every 20 s. */
export const PAYER_FAUCET_BURST = 3;
const PAYER_FAUCET_PER_SECOND = 1 / 20;
/** Test tokens given: the session's amount, and at least this many whole units. */
const FAUCET_MIN_UNITS = 100n;
/** Gas coin a local-network wallet is topped up to. */
const GAS_TOP_UP = parseEther("0.1");

export function payerSandboxRoutes(services: Services) {
  async function sandboxPayer(request: Request): Promise<SessionTokenAuth> {
    const auth = await requireSessionToken(services, request);
    if (auth.environment !== "sandbox") {
      throw new ApiError("route_not_found", `No endpoint ${request.method} ${new URL(request.url).pathname}: the sandbox helpers exist only for sandbox sessions.`);
    }
    return auth;
  }

  /** Counts one use of the helpers by this session: only requests that would move tokens. */
  async function takeOne(auth: SessionTokenAuth) {
    const verdict = await takeSharedToken(services.database.sql, `payer-sandbox:${auth.session.id}`, PAYER_FAUCET_PER_SECOND, PAYER_FAUCET_BURST);
    if (!verdict.ok) {
      throw new ApiError("rate_limited", "Test tokens are limited per payment session. Retry after the time in Retry-After.", undefined, {
        "retry-after": String(verdict.retryAfterSeconds),
      });
    }
  }

  /** The test network did not answer (or refused): a 503 the page can retry, never a 500. */
  async function onChain<T>(net: NetworkConfig, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (e) {
      throw new ApiError("network_unavailable", `${net.name} did not answer; retry shortly.`, undefined, { "retry-after": "5" }, { cause: e });
    }
  }

  /** The session's network to use: the one asked for, else the first with a faucet. */
  async function sessionNetwork(auth: SessionTokenAuth, chainId: number | undefined) {
    const deposits = await depositsOfSession(services.database.db, auth.session.id);
    const nets = services.networks.filter((n) => n.environment === "sandbox" && deposits.some((d) => d.chainId === n.chainId));
    const net: NetworkConfig | undefined = chainId === undefined ? nets.find(hasFaucet) ?? nets[0] : nets.find((n) => n.chainId === chainId);
    if (!net) throw new ApiError("parameter_invalid", `chainId must be one of the session's networks: ${nets.map((n) => n.chainId).join(", ") || "none"}.`, "chainId");
    if (!hasFaucet(net)) throw new ApiError("faucet_unavailable", `${net.name} has no faucet here: its test stablecoin is not ours to mint.`, "chainId");
    const deposit = deposits.find((d) => d.chainId === net.chainId)!;
    return { net, deposit };
  }

  /**
   * The stablecoin to mint: the one asked for, which must be one the session accepts on that
   * network, else the main one; with the session's amount in its own base units.
   */
  function faucetToken(net: NetworkConfig, deposit: Awaited<ReturnType<typeof sessionNetwork>>["deposit"], asked: Address | undefined) {
    const tokens = tokenViews(deposit);
    const token = asked === undefined ? tokens[0] : tokens.find((t) => t.tokenAddress.toLowerCase() === asked.toLowerCase());
    if (!token) {
      const accepted = tokens.map((t) => `${t.tokenSymbol} ${t.tokenAddress}`).join(", ");
      throw new ApiError("parameter_invalid", `tokenAddress must be one of the session's stablecoins on ${net.name}: ${accepted}.`, "tokenAddress");
    }
    if (!faucetMints(net, token.tokenAddress)) throw new ApiError("faucet_unavailable", `${token.tokenSymbol} on ${net.name} is not ours to mint.`, "tokenAddress");
    return token;
  }

  return new Elysia()
    .post(
      "/api/sandbox/faucet",
      async ({ request }) => {
        const auth = await sandboxPayer(request);
        const body = validateBody(PayerFaucetBody, await readJsonBody(request));
        const to = addressParam(body.address, "address");
        const asked = body.tokenAddress === undefined ? undefined : addressParam(body.tokenAddress, "tokenAddress");
        const { net, deposit } = await sessionNetwork(auth, body.chainId);
        const token = faucetToken(net, deposit, asked);
        const floor = FAUCET_MIN_UNITS * 10n ** BigInt(token.decimals);
        const required = BigInt(token.amountBaseUnits);
        const amount = required > floor ? required : floor;
        await takeOne(auth);
        const gas = await onChain(net, () => services.faucet.topUpGas(net, to, GAS_TOP_UP));
        const txHash = await onChain(net, () => services.faucet.mint(net, to, amount, getAddress(token.tokenAddress)));
        return { chainId: net.chainId, tokenAddress: token.tokenAddress, txHash, amountBaseUnits: amount.toString(), gasTopUpWei: gas.toString() };
      },
      {
        detail: doc({
          tag: TAG,
          summary: "Get test tokens (sandbox checkout)",
          description:
            "Mints a test stablecoin to the payer's `address` on one of the session's sandbox networks — `tokenAddress`, one the session accepts there (TestUSD or TestUSDT), default the main one — the session's amount in that token, at least 100.00, and on the local networks tops its gas coin up to 0.1. Sandbox sessions only; limited to 3 calls per session, then one every 20 s (429 `rate_limited`).",
          auth: "sessionToken",
          body: PayerFaucetBody,
          ok: { status: 200, schema: PayerSandboxTransfer, description: "Minted (the transaction is mined)." },
          errors: [...TOKEN_ERRORS, ...BODY_ERRORS, "address_checksum_invalid", "faucet_unavailable", "route_not_found", "network_unavailable"],
        }),
      },
    )
    .post(
      "/api/sandbox/pay",
      async ({ request }) => {
        const auth = await sandboxPayer(request);
        const body = validateBody(PayerPayBody, await readJsonBody(request));
        if (auth.session.status !== "PENDING") {
          throw new ApiError("session_not_pending", `The payment session is ${auth.session.status}; only a PENDING session can be paid.`);
        }
        const { net, deposit } = await sessionNetwork(auth, body.chainId);
        const amount = BigInt(deposit.requiredBaseUnits);
        await takeOne(auth);
        const txHash = await onChain(net, () => services.faucet.pay(net, getAddress(deposit.address) as Address, amount));
        return { chainId: net.chainId, txHash, amountBaseUnits: amount.toString() };
      },
      {
        detail: doc({
          tag: TAG,
          summary: "Pay with the sandbox test wallet",
          description:
            "A real transfer of exactly the session's amount from the sandbox test wallet (the faucet) to the session's deposit address on one of its sandbox networks. The session then runs FUNDED → SUCCEEDED by itself. Sandbox sessions only, while PENDING; rate-limited with the faucet.",
          auth: "sessionToken",
          body: PayerPayBody,
          ok: { status: 200, schema: PayerSandboxTransfer, description: "Paid (the transaction is mined)." },
          errors: [...TOKEN_ERRORS, ...BODY_ERRORS, "faucet_unavailable", "session_not_pending", "route_not_found", "network_unavailable"],
        }),
      },
    );
}
