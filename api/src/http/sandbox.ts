/**
 * Sandbox tools (sandbox API key only; with a production key they do not exist: 404). They
 * drive a session through its lifecycle with real on-chain transfers on the test network:
 *   POST /sandbox/faucet                              TestUSD to any address
 *   POST /sandbox/payment-sessions/{id}/pay           pay it from the faucet (amount and network optional)
 *   POST /sandbox/payment-sessions/{id}/fail-next-sweep
 *   POST /sandbox/payment-sessions/{id}/expire        expire it now
 *   POST /sandbox/payment-sessions/{id}/simulate-error
 */
import { Elysia } from "elysia";
import { getAddress, type Address } from "viem";
import { ApiError } from "../errors.ts";
import { isId } from "../../../shared/ids.ts";
import { parseAmount, minorToBaseUnits } from "../../../shared/money.ts";
import type { NetworkConfig } from "../../../shared/chains/config.ts";
import { publicMerchantId } from "../credentials/store.ts";
import { stepSession } from "../sessions/actor.ts";
import { depositsOfSession, findSession, loadMerchantView } from "../sessions/repository.ts";
import type { SessionRow } from "../sessions/views.ts";
import { hasFaucet } from "../sandbox/faucet.ts";
import { readJsonBody } from "./body.ts";
import { requireApiKey, type ApiKeyAuth } from "./auth.ts";
import { MerchantSession } from "./payment-sessions.schemas.ts";
import { FaucetBody, SandboxPayBody, SandboxTransfer, FailNextSweepResult } from "./sandbox.schemas.ts";
import { AUTH_ERRORS, BODY_ERRORS, doc, EmptyBody } from "./schemas.ts";
import type { Services } from "./services.ts";
import { addressParam, validateBody } from "./validate.ts";

const TAG = "Sandbox tools (sandbox API key)";

/** How long `expire` waits for the expiry to be decided before it answers with the session as it is. */
const EXPIRE_WAIT_MS = 10_000;

export function sandboxRoutes(services: Services) {
  const { database } = services;

  async function sandboxAuth(request: Request): Promise<ApiKeyAuth> {
    const auth = await requireApiKey(services, request);
    if (auth.environment !== "sandbox") {
      throw new ApiError("route_not_found", `No endpoint ${request.method} ${new URL(request.url).pathname}: sandbox tools exist only for sandbox keys.`);
    }
    return auth;
  }

  async function ownSession(auth: ApiKeyAuth, id: string): Promise<SessionRow> {
    const row = isId("paymentSession", id) ? await findSession(database.db, auth.merchant.id, "sandbox", id) : undefined;
    if (!row) throw new ApiError("resource_not_found", `No payment session ${JSON.stringify(id.slice(0, 64))} in this account's sandbox.`, "id");
    return row;
  }

  function faucetNetwork(chainId: number | undefined, allowed: (n: NetworkConfig) => boolean): NetworkConfig {
    // No sandbox network at all (e.g. `bun run start` with production networks only): the same
    // answer as a session create, not a complaint about chainId.
    if (!services.networks.some((n) => n.environment === "sandbox")) {
      throw new ApiError("network_unavailable", "No network is enabled for sandbox on this server.");
    }
    const candidates = services.networks.filter((n) => n.environment === "sandbox" && allowed(n));
    const net = chainId === undefined ? candidates.find(hasFaucet) ?? candidates[0] : candidates.find((n) => n.chainId === chainId);
    if (!net) throw new ApiError("parameter_invalid", `chainId must be one of: ${candidates.map((n) => n.chainId).join(", ") || "none"}.`, "chainId");
    if (!hasFaucet(net)) throw new ApiError("faucet_unavailable", `${net.name} has no faucet here: its test stablecoin is not ours to mint.`, "chainId");
    return net;
  }

  function baseUnits(amount: string | undefined, decimals: number, fallback: bigint): bigint {
    if (amount === undefined) return fallback;
    const p = parseAmount(amount);
    if (!p.ok) throw new ApiError("amount_invalid", undefined, "amount");
    return minorToBaseUnits(p.minor, decimals);
  }

  async function view(auth: ApiKeyAuth, id: string) {
    return loadMerchantView(database.db, await ownSession(auth, id), publicMerchantId(auth.merchant, "sandbox"));
  }

  const sessionErrors = [...AUTH_ERRORS, ...BODY_ERRORS, "resource_not_found" as const, "route_not_found" as const];

  return new Elysia()
    .post(
      "/sandbox/faucet",
      async ({ request }) => {
        await sandboxAuth(request);
        const body = validateBody<{ address: string; amount?: string; chainId?: number }>(FaucetBody, await readJsonBody(request));
        const to = addressParam(body.address, "address");
        const net = faucetNetwork(body.chainId, () => true);
        const amount = baseUnits(body.amount ?? "100.00", net.stablecoin.decimals, 0n);
        const txHash = await services.faucet.mint(net, to, amount);
        return { chainId: net.chainId, txHash, amountBaseUnits: amount.toString() };
      },
      {
        detail: doc({
          tag: TAG,
          summary: "Get test stablecoin",
          description: 'Mints TestUSD (default "100.00") to `address` on a sandbox network with a faucet (default: the local test network).',
          auth: "apiKey",
          body: FaucetBody,
          ok: { status: 200, schema: SandboxTransfer, description: "Minted (the transaction is mined)." },
          errors: [...AUTH_ERRORS, ...BODY_ERRORS, "address_checksum_invalid", "amount_invalid", "faucet_unavailable", "route_not_found", "network_unavailable"],
        }),
      },
    )
    .post(
      "/sandbox/payment-sessions/:id/pay",
      async ({ request, params }) => {
        const auth = await sandboxAuth(request);
        const body = validateBody<{ amount?: string; chainId?: number }>(SandboxPayBody, await readJsonBody(request));
        const row = await ownSession(auth, params.id);
        const deposits = await depositsOfSession(database.db, row.id);
        const net = faucetNetwork(body.chainId, (n) => deposits.some((d) => d.chainId === n.chainId));
        const deposit = deposits.find((d) => d.chainId === net.chainId)!;
        const amount = baseUnits(body.amount, deposit.decimals, BigInt(deposit.requiredBaseUnits));
        const txHash = await services.faucet.pay(net, getAddress(deposit.address) as Address, amount);
        return { chainId: net.chainId, txHash, amountBaseUnits: amount.toString() };
      },
      {
        detail: doc({
          tag: TAG,
          summary: "Pay a session from the faucet",
          description:
            "A real on-chain TestUSD transfer from the faucet to the session's deposit address. `amount` (default: the session amount) lets you over- or under-pay; `chainId` picks the network. The session then moves on by itself: FUNDED, swept, SUCCEEDED.",
          auth: "apiKey",
          body: SandboxPayBody,
          ok: { status: 200, schema: SandboxTransfer, description: "Paid (the transaction is mined)." },
          errors: [...sessionErrors, "amount_invalid", "faucet_unavailable"],
        }),
      },
    )
    .post(
      "/sandbox/payment-sessions/:id/fail-next-sweep",
      async ({ request, params }) => {
        const auth = await sandboxAuth(request);
        validateBody(EmptyBody, await readJsonBody(request));
        const row = await ownSession(auth, params.id);
        // Only a session that can still be swept for its payment: arming a finished one would
        // fail the sweep of a late payment instead (paid_after_cancel), which is not what was asked.
        const armed = await database.sql`
          update app.payment_sessions set force_sweep_failure = true
           where id = ${row.id} and status in ('PENDING', 'FUNDED') returning id`;
        if (armed.length === 0) {
          const [now] = await database.sql`select status from app.payment_sessions where id = ${row.id}`;
          throw new ApiError("session_finished", `The payment session is ${now?.status ?? row.status}; only a PENDING or FUNDED session has a sweep to fail.`);
        }
        return { paymentSessionId: row.id, failNextSweep: true };
      },
      {
        detail: doc({
          tag: TAG,
          summary: "Make the session's next sweep fail",
          description: "Its next sweep fails past its retries: a FUNDED session goes to ERROR (`sweep_failed`). Its funds are swept in a later round all the same. Only a PENDING or FUNDED session (otherwise 409 `session_finished`).",
          auth: "apiKey",
          body: EmptyBody,
          ok: { status: 200, schema: FailNextSweepResult, description: "Armed." },
          errors: [...sessionErrors, "session_finished"],
        }),
      },
    )
    .post(
      "/sandbox/payment-sessions/:id/expire",
      async ({ request, params }) => {
        const auth = await sandboxAuth(request);
        validateBody(EmptyBody, await readJsonBody(request));
        const row = await ownSession(auth, params.id);
        await database.sql`update app.payment_sessions set expires_at = least(expires_at, now()) where id = ${row.id} and status = 'PENDING'`;
        // An expiry is decided once the indexer has stored a block stamped after it (an on-time
        // payment may still be in the newest block): answer when it is, or after EXPIRE_WAIT_MS.
        // Within the request's own deadline (SERVICE_REQUEST_TIMEOUT_MS), with a second to answer:
        // a wait past it would turn the answer into a 503.
        const until = Date.now() + Math.max(0, Math.min(EXPIRE_WAIT_MS, services.config.requestTimeoutMs - 1000));
        for (;;) {
          const r = await stepSession(database.sql, row.id, {}, { networks: services.networks });
          if (!r.found || r.status !== "PENDING" || Date.now() >= until) break;
          await Bun.sleep(100);
        }
        return view(auth, row.id);
      },
      {
        detail: doc({
          tag: TAG,
          summary: "Expire the session now",
          description:
            "A PENDING session expires now: CANCELED (`expired`), or ERROR (`underpaid`) when a partial payment is confirmed. The expiry is decided once the indexer has stored a block stamped after it (the local network makes one every second); the answer waits up to 10 s for that (less when SERVICE_REQUEST_TIMEOUT_MS is shorter: a second before it), then shows the session as it is. A payment still confirming is waited for; the answer then shows the session still PENDING, and its webhook follows.",
          auth: "apiKey",
          body: EmptyBody,
          ok: { status: 200, schema: MerchantSession, description: "The session after its expiry." },
          errors: sessionErrors,
        }),
      },
    )
    .post(
      "/sandbox/payment-sessions/:id/simulate-error",
      async ({ request, params }) => {
        const auth = await sandboxAuth(request);
        validateBody(EmptyBody, await readJsonBody(request));
        const row = await ownSession(auth, params.id);
        const r = await stepSession(database.sql, row.id, { simulateError: true }, { networks: services.networks });
        if (r.decision?.transition?.reason !== "simulated") {
          throw new ApiError("session_not_pending", `The payment session is ${r.status}; only a PENDING session can be sent to ERROR.`);
        }
        return view(auth, row.id);
      },
      {
        detail: doc({
          tag: TAG,
          summary: "Send a PENDING session to ERROR",
          description: "ERROR with reason `simulated`, with its webhook, so a handler's error path can be tried.",
          auth: "apiKey",
          body: EmptyBody,
          ok: { status: 200, schema: MerchantSession, description: "The session in ERROR." },
          errors: [...sessionErrors, "session_not_pending"],
        }),
      },
    );
}
