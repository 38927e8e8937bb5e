/**
 * Settlement addresses as both doors read and set them: the API's routes
 * (http/settlement-addresses.ts) and the dashboard's Settlement page call these functions. A
 * change is for a network enabled in the environment, to a checked non-zero address; it is
 * committed with its security-history line and its `settlement_address.updated` event
 * (webhooks/account-announcement.ts), naming `by`.
 */
import { ApiError } from "../errors.ts";
import type { Environment } from "../../../shared/environment.ts";
import type { NetworkConfig } from "../../../shared/chains/config.ts";
import type { Config } from "../config.ts";
import type { Database } from "../db/client.ts";
import type { Merchant } from "../credentials/store.ts";
import { changedByName, type ChangedBy } from "../credentials/security-history.ts";
import { addressParam } from "../sessions/address-param.ts";
import { listSettlements } from "../sessions/settlements.ts";
import { checksummed } from "../sessions/views.ts";
import { changeSettlementAddress } from "./account-announcement.ts";

/** The parts of the process these functions use (the HTTP layer's Services has them). */
export interface SettlementServices {
  database: Pick<Database, "db">;
  networks: NetworkConfig[];
  config: Pick<Config, "sandboxSettlementAddress">;
}

export interface SettlementAddressView {
  chainId: number;
  network: string;
  /** EIP-55; null on a production network without one (sessions are not offered there). */
  address: string | null;
  /** The server's default sandbox address, not one the merchant set. */
  isDefault: boolean;
  updatedAt: string | null;
}

export interface SetSettlementInput {
  /** The chain id as the path gave it: checked here against the environment's networks. */
  chainId: string;
  address: string;
}

/** Every enabled network of the environment with the address its new sessions settle to, then any set for a network not enabled here. */
export async function settlementAddresses(services: SettlementServices, merchantId: string, environment: Environment): Promise<SettlementAddressView[]> {
  const rows = new Map((await listSettlements(services.database.db, merchantId, environment)).map((r) => [r.chainId, r]));
  const fallback = environment === "sandbox" ? services.config.sandboxSettlementAddress : null;
  const data: SettlementAddressView[] = services.networks
    .filter((n) => n.environment === environment)
    .sort((x, y) => x.chainId - y.chainId)
    .map((n) => {
      const own = rows.get(n.chainId);
      rows.delete(n.chainId);
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
  return data;
}

/**
 * Where money goes is the most sensitive setting: the change, its line in the security history
 * and its event (outbox rows) commit together, for a key and for the dashboard (which asks for
 * the person's password before it calls this) alike.
 */
export async function setSettlementAddress(
  services: SettlementServices,
  merchant: Merchant,
  environment: Environment,
  by: ChangedBy,
  input: SetSettlementInput,
): Promise<SettlementAddressView> {
  const chainId = /^[0-9]{1,10}$/.test(input.chainId) ? Number(input.chainId) : NaN;
  const network = services.networks.find((n) => n.chainId === chainId && n.environment === environment);
  if (!network) {
    const enabled = services.networks.filter((n) => n.environment === environment).map((n) => `${n.chainId} (${n.name})`);
    throw new ApiError("parameter_invalid", `chainId must be a network enabled for ${environment}: ${enabled.join(", ") || "none"}.`, "chainId");
  }
  const address = addressParam(input.address, "address", { nonZero: true });
  const { saved } = await changeSettlementAddress(services.database, {
    merchant,
    environment,
    chainId,
    network: network.name,
    address,
    actor: by.actor,
    changedBy: changedByName(by),
    detail: by.detail,
  });
  return { chainId, network: network.name, address: checksummed(saved.address), isDefault: false, updatedAt: saved.updatedAt.toISOString() };
}
