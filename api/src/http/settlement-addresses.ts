/**
 * Settlement addresses (API key): where a merchant's funds go, per network of the key's
 * environment. A deposit address commits to its settlement address, so a change applies to
 * sessions created afterwards; sessions already created keep theirs.
 */
import { Elysia, t } from "elysia";
import { ApiError } from "../errors.ts";
import { listSettlements } from "../sessions/settlements.ts";
import { checksummed } from "../sessions/views.ts";
import { readJsonBody } from "./body.ts";
import { changedBy, requireApiKey } from "./auth.ts";
import { changeSettlementAddress } from "../webhooks/account-announcement.ts";
import { AUTH_ERRORS, BODY_ERRORS, doc } from "./schemas.ts";
import { SettlementAddress, SettlementAddressBody, SettlementAddressList } from "./settlement-addresses.schemas.ts";
import type { Services } from "./services.ts";
import { addressParam, validateBody } from "./validate.ts";

const TAG = "Settlement addresses (server, API key)";

export function settlementAddressRoutes(services: Services) {
  const { database } = services;
  return new Elysia()
    .get(
      "/settlement-addresses",
      async ({ request }) => {
        const auth = await requireApiKey(services, request);
        const rows = new Map((await listSettlements(database.db, auth.merchant.id, auth.environment)).map((r) => [r.chainId, r]));
        // Every enabled network of the environment, with the address its new sessions settle to.
        const data = services.networks
          .filter((n) => n.environment === auth.environment)
          .sort((x, y) => x.chainId - y.chainId)
          .map((n) => {
            const own = rows.get(n.chainId);
            rows.delete(n.chainId);
            const fallback = auth.environment === "sandbox" ? services.config.sandboxSettlementAddress : null;
            return {
              chainId: n.chainId,
              network: n.name,
              address: own ? checksummed(own.address) : fallback ? checksummed(fallback) : null,
              isDefault: !own && fallback !== null,
              updatedAt: own ? own.updatedAt.toISOString() : null,
            };
          });
        // Set for a network this server does not enable (now): shown, so nothing is hidden.
        for (const r of rows.values()) {
          data.push({ chainId: r.chainId, network: `chain ${r.chainId} (not enabled here)`, address: checksummed(r.address), isDefault: false, updatedAt: r.updatedAt.toISOString() });
        }
        return { data };
      },
      {
        detail: doc({
          tag: TAG,
          summary: "List settlement addresses",
          description:
            "Where the funds of new sessions settle, per enabled network of this environment: the address you set, or (sandbox, `isDefault: true`) the server's default sandbox address; `address: null` on a production network without one (sessions are not offered there). Addresses in EIP-55 checksum form.",
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
        const address = addressParam(body.address, "address", { nonZero: true });
        // Where money goes is the most sensitive setting: the change, its line in the security
        // history and its `settlement_address.updated` event (outbox rows) commit together, for
        // a key and for the dashboard (which calls this route after its password check, naming
        // the person: auth.person) alike.
        const by = changedBy(auth, request);
        const { saved } = await changeSettlementAddress(database, {
          merchant: auth.merchant,
          environment: auth.environment,
          chainId,
          network: network.name,
          address,
          actor: by.actor,
          changedBy: auth.person?.email ?? `API key ${auth.key.prefix}…`,
          detail: by.detail,
        });
        return { chainId, network: network.name, address: checksummed(saved.address), isDefault: false, updatedAt: saved.updatedAt.toISOString() };
      },
      {
        params: t.Object({ chainId: t.String({ description: "Chain id of an enabled network of the key's environment, e.g. 8453 (Base)." }) }),
        detail: doc({
          tag: TAG,
          summary: "Set the settlement address of a network",
          description:
            "Where swept funds of sessions created from now on go, on this network. Production sessions can be created only once at least one production network has one. Double-check it: funds swept to a wrong address cannot be recalled. Every change is recorded in the security history (dashboard, Settings) and announced to the environment's enabled webhook endpoints as a `settlement_address.updated` event.",
          auth: "apiKey",
          body: SettlementAddressBody,
          ok: { status: 200, schema: SettlementAddress, description: "Saved." },
          errors: [...AUTH_ERRORS, ...BODY_ERRORS, "address_checksum_invalid"],
        }),
      },
    );
}
