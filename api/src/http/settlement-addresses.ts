/**
 * Settlement addresses (API key): where a merchant's funds go, per network of the key's
 * environment. A deposit address commits to its settlement address, so a change applies to
 * sessions created afterwards; sessions already created keep theirs. The rules are in
 * webhooks/settlement-addresses.ts, which the dashboard calls too.
 */
import { Elysia, t } from "elysia";
import { setSettlementAddress, settlementAddresses } from "../webhooks/settlement-addresses.ts";
import { readJsonBody } from "./body.ts";
import { changedBy, requireApiKey } from "./auth.ts";
import { AUTH_ERRORS, BODY_ERRORS, doc } from "./schemas.ts";
import { SettlementAddress, SettlementAddressBody, SettlementAddressList } from "./settlement-addresses.schemas.ts";
import type { Services } from "./services.ts";
import { validateBody } from "./validate.ts";

const TAG = "Settlement addresses (server, API key)";

export function settlementAddressRoutes(services: Services) {
  return new Elysia()
    .get(
      "/settlement-addresses",
      async ({ request }) => {
        const auth = await requireApiKey(services, request);
        return { data: await settlementAddresses(services, auth.merchant.id, auth.environment) };
      },
      {
        detail: doc({
          tag: TAG,
          summary: "List settlement addresses",
          description:
            "Where the funds of new sessions settle, per enabled network of this environment: the address you set, or (sandbox, `isDefault: true`) the server's default sandbox address; `address: null` on a production network without one (sessions are not offered there). Addresses in EIP-55 checksum form.",
          auth: "apiKey",
          scope: "settlement:read",
          ok: { status: 200, schema: SettlementAddressList, description: "The addresses." },
          errors: AUTH_ERRORS,
        }),
      },
    )
    .put(
      "/settlement-addresses/:chainId",
      async ({ request, params }) => {
        const auth = await requireApiKey(services, request);
        const body = validateBody(SettlementAddressBody, await readJsonBody(request));
        return setSettlementAddress(services, auth.merchant, auth.environment, changedBy(auth, request), { chainId: params.chainId, address: body.address });
      },
      {
        params: t.Object({ chainId: t.String({ description: "Chain id of an enabled network of the key's environment, e.g. 8453 (Base)." }) }),
        detail: doc({
          tag: TAG,
          summary: "Set the settlement address of a network",
          description:
            "Where swept funds of sessions created from now on go, on this network. Production sessions can be created only once at least one production network has one. Double-check it: funds swept to a wrong address cannot be recalled. Every change is recorded in the security history (dashboard, Settings) and announced to the environment's enabled webhook endpoints as a `settlement_address.updated` event.",
          auth: "apiKey",
          scope: "settlement:write",
          body: SettlementAddressBody,
          ok: { status: 200, schema: SettlementAddress, description: "Saved." },
          errors: [...AUTH_ERRORS, ...BODY_ERRORS, "address_checksum_invalid"],
        }),
      },
    );
}
