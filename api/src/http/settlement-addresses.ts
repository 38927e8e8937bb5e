/**
 * Settlement addresses (API key): where a merchant's funds go, per network of the key's
 * environment. A deposit address commits to its settlement address, so a change applies to
 * sessions created afterwards; sessions already created keep theirs.
 */
import { Elysia, t } from "elysia";
import { ApiError } from "../errors.ts";
import { parseSettlementAddress } from "../sessions/deposits.ts";
import { listSettlements, setSettlement } from "../sessions/settlements.ts";
import { readJsonBody } from "./body.ts";
import { requireApiKey } from "./auth.ts";
import { AUTH_ERRORS, BODY_ERRORS, doc, SettlementAddress, SettlementAddressBody, SettlementAddressList } from "./schemas.ts";
import type { Services } from "./services.ts";
import { validateBody } from "./validate.ts";

const TAG = "Settlement addresses (server, API key)";

export function settlementAddressRoutes(services: Services) {
  const { database } = services;
  return new Elysia()
    .get(
      "/settlement-addresses",
      async ({ request }) => {
        const auth = await requireApiKey(services, request);
        const rows = await listSettlements(database.db, auth.merchant.id, auth.environment);
        return { data: rows.map((r) => ({ ...r, updatedAt: r.updatedAt.toISOString() })) };
      },
      {
        detail: doc({
          tag: TAG,
          summary: "List settlement addresses",
          description: "The settlement address of each network of this environment that has one. In sandbox, networks without one settle to the server's default sandbox address.",
          auth: "apiKey",
          ok: { status: 200, schema: SettlementAddressList, description: "The addresses." },
          errors: AUTH_ERRORS,
        }),
      },
    )
    .put(
      "/settlement-addresses/:chainId",
      async ({ request, params }) => {
        const auth = await requireApiKey(services, request);
        const body = validateBody<{ address: string }>(SettlementAddressBody, await readJsonBody(request));
        const chainId = /^[0-9]{1,10}$/.test(params.chainId) ? Number(params.chainId) : NaN;
        const network = services.networks.find((n) => n.chainId === chainId && n.environment === auth.environment);
        if (!network) {
          const enabled = services.networks.filter((n) => n.environment === auth.environment).map((n) => `${n.chainId} (${n.name})`);
          throw new ApiError("parameter_invalid", `chainId must be a network enabled for ${auth.environment}: ${enabled.join(", ") || "none"}.`, "chainId");
        }
        const address = parseSettlementAddress(body.address);
        if (!address) throw new ApiError("parameter_invalid", "address must be a non-zero 0x-prefixed 20-byte address.", "address");
        const saved = await setSettlement(database.db, auth.merchant.id, auth.environment, chainId, address);
        return { ...saved, updatedAt: saved.updatedAt.toISOString() };
      },
      {
        params: t.Object({ chainId: t.String({ description: "Chain id of an enabled network of the key's environment, e.g. 8453 (Base)." }) }),
        detail: doc({
          tag: TAG,
          summary: "Set the settlement address of a network",
          description:
            "Where swept funds of sessions created from now on go, on this network. Production sessions can be created only once at least one production network has one. Double-check it: funds swept to a wrong address cannot be recalled.",
          auth: "apiKey",
          body: SettlementAddressBody,
          ok: { status: 200, schema: SettlementAddress, description: "Saved." },
          errors: [...AUTH_ERRORS, ...BODY_ERRORS],
        }),
      },
    );
}
