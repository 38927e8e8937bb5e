import { expect, test } from "bun:test";
import { privateKeyToAccount } from "viem/accounts";
import type { NetworkConfig } from "../../../shared/chains/config.ts";
import { DEV_RELAYER_ADDRESS, DEV_RELAYER_PRIVATE_KEY, isPrivateKey, relayerKeyProblems, relayerKeysFor } from "./relayer.ts";

const net = (chainId: number, environment: "sandbox" | "production") => ({ chainId, environment, name: `net ${chainId}` }) as NetworkConfig;

test("the dev relayer key is anvil's account #2 (funded on every anvil)", () => {
  expect(DEV_RELAYER_ADDRESS).toBe("0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC");
  expect(privateKeyToAccount(DEV_RELAYER_PRIVATE_KEY).address).toBe(DEV_RELAYER_ADDRESS);
});

test("sandbox networks default to the dev key; a production network needs SERVICE_RELAYER_PRIVATE_KEY", () => {
  expect(relayerKeysFor([net(31337, "sandbox")], undefined)).toEqual({ 31337: DEV_RELAYER_PRIVATE_KEY });
  const key = `0x${"12".repeat(32)}` as const;
  expect(relayerKeysFor([net(31337, "sandbox"), net(8453, "production")], key)).toEqual({ 31337: key, 8453: key });
  expect(relayerKeyProblems([net(8453, "production")], undefined)[0]).toContain("SERVICE_RELAYER_PRIVATE_KEY is required");
  expect(() => relayerKeysFor([net(8453, "production")], undefined)).toThrow(/required/);
  expect(relayerKeyProblems([], undefined)).toEqual([]);
  expect(isPrivateKey(key)).toBe(true);
  expect(isPrivateKey("0x12")).toBe(false);
  expect(isPrivateKey(`0x${"0".repeat(64)}`)).toBe(false);
});
