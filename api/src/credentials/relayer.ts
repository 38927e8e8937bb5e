/**
 * The relayer key: the account that signs sweep, authorization and refund transactions and pays
 * their gas. It can never redirect a payment (a sweep only ever pays a deposit's own settlement
 * address, an authorization only its signed recipient); it is also the operator of the refund
 * vaults, so a stolen key can spend what merchants funded there (docs/refunds.md) — and nothing
 * else beyond its gas money. Here, below the sweeper, because the refunds and the API's faces
 * name it too.
 *
 * SERVICE_RELAYER_PRIVATE_KEY, when set, signs on every enabled network. Unset, sandbox networks
 * use the public dev key (anvil's account #2, funded on every anvil) and a production network
 * refuses to start.
 */
import { getAddress, type Address, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import type { NetworkConfig } from "../../../shared/chains/config.ts";
import { DEV_RELAYER_ACCOUNT } from "../../../shared/devchain/index.ts";

/** anvil's account #2 (0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC): public, for sandbox networks only. */
export const DEV_RELAYER_PRIVATE_KEY: Hex = DEV_RELAYER_ACCOUNT.privateKey;
export const DEV_RELAYER_ADDRESS = DEV_RELAYER_ACCOUNT.address;

export function isPrivateKey(raw: string): raw is Hex {
  return /^0x[0-9a-fA-F]{64}$/.test(raw) && !/^0x0{64}$/.test(raw);
}

/** Problems with the relayer key for these networks (empty: fine). Never repeats the key. */
export function relayerKeyProblems(networks: readonly Pick<NetworkConfig, "environment" | "name">[], key: Hex | undefined): string[] {
  if (key) return [];
  const prod = networks.filter((n) => n.environment === "production").map((n) => n.name);
  return prod.length === 0
    ? []
    : [`SERVICE_RELAYER_PRIVATE_KEY is required when a production network is enabled (${prod.join(", ")}): it signs the sweep transactions and pays their gas`];
}

/** chainId → the key that signs there. Throws (without the key in the message) when a production network has none. */
export function relayerKeysFor(networks: readonly NetworkConfig[], key: Hex | undefined): Record<number, Hex> {
  const problems = relayerKeyProblems(networks, key);
  if (problems.length) throw new Error(problems.join("; "));
  return Object.fromEntries(networks.map((n) => [n.chainId, key ?? DEV_RELAYER_PRIVATE_KEY]));
}

export function relayerAddress(key: Hex): string {
  return privateKeyToAccount(key).address.toLowerCase();
}

/** The relayer's address on a network: the configured key's, or on sandbox the dev key's; none on production without a key. */
export function relayerAddressOn(net: Pick<NetworkConfig, "environment">, key: Hex | undefined): Address | undefined {
  if (key) return getAddress(relayerAddress(key));
  return net.environment === "sandbox" ? DEV_RELAYER_ADDRESS : undefined;
}
