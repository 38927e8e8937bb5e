import { afterAll, beforeAll, expect, test } from "bun:test";
import { freePort } from "../../testing/ports.ts";
import { startDevChain, type DevChain } from "../devchain/index.ts";
import { localClients } from "../devchain/clients.ts";
import { deployThrowawayToken } from "../../testing/throwaway-token.ts";
import { ensureDeployed } from "../contracts/deploy.ts";
import { getAddress } from "viem";
import { checkNetworks, ChainCheckError } from "./check.ts";
import { loadChainsConfig } from "./config.ts";
import { messageOf } from "../describe-error.ts";

let chain: DevChain;
let testUsd: string;
let token18: string;

beforeAll(async () => {
  chain = await startDevChain({ port: await freePort(), chainId: 31337 });
  const { publicClient, walletClient } = localClients(chain.rpcUrl, 31337);
  testUsd = (await ensureDeployed({ publicClient, walletClient })).token;
  token18 = getAddress(await deployThrowawayToken(publicClient, walletClient, 18));
});
afterAll(() => chain?.stop());

const config = (token: string, key = "LOCAL") =>
  loadChainsConfig({ [`SERVICE_RPC_URL_${key}`]: chain.rpcUrl, [`SERVICE_STABLECOIN_ADDRESS_${key}`]: token });

test("the local preset's TestUSD (6 decimals) on the right chain passes", async () => {
  await checkNetworks(loadChainsConfig({ SERVICE_RPC_URL_LOCAL: chain.rpcUrl }).networks);
});

test("a decimals mismatch is refused with a clear message", async () => {
  const err = await checkNetworks(config(token18).networks).then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(ChainCheckError);
  expect(messageOf(err)).toContain(`stablecoin ${token18} reports decimals() = 18, but TUSD here must have 6; refusing to start`);
});

test("an address with no token and an RPC URL serving another chain are refused", async () => {
  const noCode = "0x000000000000000000000000000000000000dEaD";
  let err = await checkNetworks(config(noCode).networks).then(() => null, (e: unknown) => e);
  expect(messageOf(err)).toContain(`could not read decimals() of the stablecoin ${noCode}`);
  err = await checkNetworks(config(testUsd, "LOCAL2").networks).then(() => null, (e: unknown) => e);
  expect(messageOf(err)).toContain("SERVICE_RPC_URL_LOCAL2 serves chain id 31337, expected 31338");
});
