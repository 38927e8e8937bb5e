/**
 * The x402 facilitator's routes (docs/x402.md): GET /x402/supported, POST /x402/verify, POST
 * /x402/settle, for a resource server holding a merchant's API key (scope `facilitator:settle`),
 * which @x402/core's HTTPFacilitatorClient sends with `createAuthHeaders`. A route only adapts
 * HTTP: the key, the body's shape, the answer; what is checked and done is x402/facilitator.ts.
 *
 * A payment that fails a check is answered 200 in x402's own shape (`isValid: false` with its
 * `invalidReason`, or `success: false` with its `errorReason`), as x402 clients expect; only what
 * is not a payment request at all (no key, a body of another shape) or a network that did not
 * answer is an error of the catalogue.
 */
import { Elysia } from "elysia";
import { settlePayment, supported, verifyAnswer, verifyPayment } from "../x402/facilitator.ts";
import { readJsonBody } from "./body.ts";
import { apiKeyInHand, requireApiKey } from "./auth.ts";
import { AUTH_ERRORS, BODY_ERRORS, doc } from "./schemas.ts";
import type { Services } from "./services.ts";
import { validateBody } from "./validate.ts";
import { FacilitatorBody, FacilitatorBodyDoc, SettleResponse, SupportedResponse, VerifyResponse } from "./x402.schemas.ts";

const TAG = "x402 facilitator (server, API key)";

export function x402Routes(services: Services) {
  return new Elysia()
    .get(
      "/x402/supported",
      async ({ request }) => {
        const auth = await requireApiKey(services, request);
        return supported(services, auth);
      },
      {
        detail: doc({
          tag: TAG,
          summary: "What this facilitator settles (x402)",
          description:
            "x402's SupportedResponse for the key's environment: `exact` (EIP-3009) on each network paying by authorization (`eip155:<chainId>`), with this account's `payTo` there and the stablecoins with their EIP-712 `name` and `version`; the relayer under `signers`.",
          auth: "apiKey",
          scope: "facilitator:settle",
          ok: { status: 200, schema: SupportedResponse, description: "The kinds." },
          errors: [...AUTH_ERRORS],
        }),
      },
    )
    .post(
      "/x402/verify",
      async ({ request }) => {
        const auth = await requireApiKey(services, request);
        const body = validateBody(FacilitatorBody, await readJsonBody(request));
        return verifyAnswer(await verifyPayment(services, auth, body));
      },
      {
        detail: doc({
          tag: TAG,
          summary: "Verify an x402 payment",
          description: [
            "Checks an x402 payment (`exact`, version 2) against its requirements, writing and sending nothing: network, asset and its EIP-712 `name`/`version` in `extra`, `payTo` this account's settlement address there, window, amount (whole cents), signature, nonce unused, balance, and the relayer's call simulated. A failing payment is 200 `{ isValid: false, invalidReason, invalidMessage }` (reasons: docs/x402.md).",
          ].join("\n"),
          auth: "apiKey",
          scope: "facilitator:settle",
          body: FacilitatorBodyDoc,
          ok: { status: 200, schema: VerifyResponse, description: "Valid, or not with its reason." },
          errors: [...AUTH_ERRORS, ...BODY_ERRORS, "pay_to_other_account", "network_unavailable"],
        }),
      },
    )
    .post(
      "/x402/settle",
      async ({ request }) => {
        // The key as last looked up: the create's own statement checks it (sessions/create/create.ts).
        const caller = await apiKeyInHand(services, request);
        let body;
        try {
          body = validateBody(FacilitatorBody, await readJsonBody(request));
        } catch (e) {
          if (caller.reused) await caller.lookAgain();
          throw e;
        }
        return settlePayment(services, { key: caller.auth, reused: caller.reused, lookAgain: caller.lookAgain }, body);
      },
      {
        detail: doc({
          tag: TAG,
          summary: "Settle an x402 payment",
          description: [
            "Verifies again, records the payment as a payment session (amount at par in USD, `referenceId` the resource URL, `metadata` `x402_*`) whose authorization the relayer submits, and waits for the receipt (up to 60 s): `success`, `transaction`, `payer`, `extra.paymentSessionId`. The session runs to SUCCEEDED with its webhooks. A replay is `invalid_exact_evm_nonce_already_used`; a failure 200 `{ success: false, errorReason }` (`settlement_pending`: not mined within the wait; the session shows it when it lands).",
          ].join("\n"),
          auth: "apiKey",
          scope: "facilitator:settle",
          body: FacilitatorBodyDoc,
          ok: { status: 200, schema: SettleResponse, description: "Settled, or not with its reason." },
          errors: [...AUTH_ERRORS, ...BODY_ERRORS, "settlement_address_missing", "pay_to_other_account", "network_unavailable", "service_unavailable"],
        }),
      },
    );
}
