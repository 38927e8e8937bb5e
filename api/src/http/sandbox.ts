/**
 * Sandbox tools (sandbox API key only; with a production key they do not exist: 404). They
 * drive a session through its lifecycle with real on-chain transfers on the test network:
 *   POST /sandbox/faucet                              TestUSD to any address
 *   POST /sandbox/refund-balances/fund                test tokens to your own refund balance
 *   POST /sandbox/payment-sessions/{id}/pay           pay it from the faucet (amount and network optional)
 *   POST /sandbox/payment-sessions/{id}/fail-next-sweep
 *   POST /sandbox/payment-sessions/{id}/expire        expire it now
 *   POST /sandbox/payment-sessions/{id}/simulate-error
 */
import { Elysia } from "elysia";
import { ApiError } from "../errors.ts";
import { fundRefundBalance } from "../refunds/sandbox-fund.ts";
import { expireSandboxSession, failNextSweep, mintFromFaucet, paySandboxSession, simulateSandboxError } from "../sessions/sandbox-tools.ts";
import { readJsonBody } from "./body.ts";
import { requireApiKey, type ApiKeyAuth } from "./auth.ts";
import { MerchantSession } from "./payment-sessions.schemas.ts";
import { FaucetBody, FundedRefundBalance, FundRefundBalanceBody, SandboxPayBody, SandboxTransfer, FailNextSweepResult } from "./sandbox.schemas.ts";
import { AUTH_ERRORS, BODY_ERRORS, doc, EmptyBody } from "./schemas.ts";
import type { Services } from "./services.ts";
import { validateBody } from "./validate.ts";

const TAG = "Sandbox tools (sandbox API key)";

/** The routes adapt HTTP to the tools the dashboard's buttons call too (sessions/sandbox-tools.ts). */
export function sandboxRoutes(services: Services) {
  async function sandboxAuth(request: Request): Promise<ApiKeyAuth> {
    const auth = await requireApiKey(services, request);
    if (auth.environment !== "sandbox") {
      throw new ApiError("route_not_found", `No endpoint ${request.method} ${new URL(request.url).pathname}: sandbox tools exist only for sandbox keys.`);
    }
    return auth;
  }

  const sessionErrors = [...AUTH_ERRORS, ...BODY_ERRORS, "resource_not_found" as const, "route_not_found" as const];

  return new Elysia()
    .post(
      "/sandbox/faucet",
      async ({ request }) => {
        await sandboxAuth(request);
        return mintFromFaucet(services, validateBody(FaucetBody, await readJsonBody(request)));
      },
      {
        detail: doc({
          tag: TAG,
          summary: "Get test stablecoin",
          description: 'Mints TestUSD (default "100.00") to `address` on a sandbox network with a faucet (default: the local test network).',
          auth: "apiKey",
          scope: "sandbox:write",
          body: FaucetBody,
          ok: { status: 200, schema: SandboxTransfer, description: "Minted (the transaction is mined)." },
          errors: [...AUTH_ERRORS, ...BODY_ERRORS, "address_checksum_invalid", "amount_invalid", "faucet_unavailable", "route_not_found", "network_unavailable"],
        }),
      },
    )
    .post(
      "/sandbox/refund-balances/fund",
      async ({ request }) => {
        const auth = await sandboxAuth(request);
        return fundRefundBalance(services, auth.merchant, validateBody(FundRefundBalanceBody, await readJsonBody(request)));
      },
      {
        detail: doc({
          tag: TAG,
          summary: "Fund your refund balance from the faucet",
          description:
            'Mints test stablecoin (default "100.00" TestUSD; `token` may name TestUSDT) straight to your sandbox refund balance on a network with a faucet (default: the local test network), so that sandbox refunds have money to go out with (docs/refunds.md). The dashboard\'s "Fund from faucet" button does the same.',
          auth: "apiKey",
          scope: "sandbox:write",
          body: FundRefundBalanceBody,
          ok: { status: 200, schema: FundedRefundBalance, description: "Minted (the transaction is mined)." },
          errors: [...AUTH_ERRORS, ...BODY_ERRORS, "address_checksum_invalid", "amount_invalid", "faucet_unavailable", "parameter_invalid", "route_not_found", "network_unavailable"],
        }),
      },
    )
    .post(
      "/sandbox/payment-sessions/:id/pay",
      async ({ request, params }) => {
        const auth = await sandboxAuth(request);
        return paySandboxSession(services, auth.merchant, params.id, validateBody(SandboxPayBody, await readJsonBody(request)));
      },
      {
        detail: doc({
          tag: TAG,
          summary: "Pay a session from the faucet",
          description:
            "A real on-chain TestUSD transfer from the faucet to the session's deposit address. `amount` (default: the session amount) lets you over- or under-pay; `chainId` picks the network. The session then moves on by itself: FUNDED, swept, SUCCEEDED.",
          auth: "apiKey",
          scope: "sandbox:write",
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
        return failNextSweep(services, auth.merchant, params.id);
      },
      {
        detail: doc({
          tag: TAG,
          summary: "Make the session's next sweep fail",
          description: "Its next sweep fails past its retries: a FUNDED session goes to ERROR (`sweep_failed`). Its funds are swept in a later round all the same. Only a PENDING or FUNDED session (otherwise 409 `session_finished`).",
          auth: "apiKey",
          scope: "sandbox:write",
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
        return expireSandboxSession(services, auth.merchant, params.id);
      },
      {
        detail: doc({
          tag: TAG,
          summary: "Expire the session now",
          description:
            "A PENDING session expires now: CANCELED (`expired`), or ERROR (`underpaid`) when a partial payment is confirmed. The expiry is decided once the indexer has stored a block stamped after it (the local network makes one every second); the answer waits up to 10 s for that (less when SERVICE_REQUEST_TIMEOUT_MS is shorter: a second before it), then shows the session as it is. A payment still confirming is waited for; the answer then shows the session still PENDING, and its webhook follows.",
          auth: "apiKey",
          scope: "sandbox:write",
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
        return simulateSandboxError(services, auth.merchant, params.id);
      },
      {
        detail: doc({
          tag: TAG,
          summary: "Send a PENDING session to ERROR",
          description: "ERROR with reason `simulated`, with its webhook, so a handler's error path can be tried.",
          auth: "apiKey",
          scope: "sandbox:write",
          body: EmptyBody,
          ok: { status: 200, schema: MerchantSession, description: "The session in ERROR." },
          errors: [...sessionErrors, "session_not_pending"],
        }),
      },
    );
}
