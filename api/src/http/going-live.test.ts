/**
 * Going live on main networks (issue #15), at the API: a server whose production networks are
 * real anvils standing in for Ethereum and Base (chain ids 1 and 8453, a 6-decimal token at the
 * canonical USDC addresses) and whose deposit factory is deployed by the operator's
 * `bun run admin factory:deploy`, run as a real process.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { resolve } from "node:path";
import { predictedAuthorizationBatchAddress, predictedFactoryAddress } from "../../../shared/contracts/addresses.ts";
import { predictedRefundVaultsAddress } from "../../../shared/contracts/refund-vaults.ts";
import { startMainnetStandIn, type MainnetStandIn } from "../../../testing/mainnet-standin.ts";
import { ANVIL_ACCOUNTS } from "../../../shared/devchain/index.ts";
import { startTestService, type TestService } from "../../../testing/service.ts";

const ROOT = resolve(import.meta.dir, "../../..");
const RELAYER_KEY = ANVIL_ACCOUNTS[1].privateKey; // funded on anvil
let ethereum: MainnetStandIn;
let base: MainnetStandIn;
let svc: TestService;
let liveKey: string;
let sandboxKey: string;

beforeAll(async () => {
  [ethereum, base] = await Promise.all([startMainnetStandIn("ethereum"), startMainnetStandIn("base")]);
  svc = await startTestService(
    { SERVICE_RPC_URL_LOCAL: "", SERVICE_RPC_URL_ETHEREUM: ethereum.rpcUrl, SERVICE_RPC_URL_BASE: base.rpcUrl, SERVICE_INDEX_MODE: "bounded", SERVICE_RELAYER_PRIVATE_KEY: RELAYER_KEY },
    { readiness: undefined }, // probed for real
  );
  const m = await svc.merchant("Going live");
  liveKey = m.liveKey;
  sandboxKey = m.sandboxKey;
}, 60_000);
afterAll(async () => {
  await svc?.close();
  await ethereum?.stop();
  await base?.stop();
});

function admin(args: string[], env: Record<string, string> = {}) {
  const child = Bun.spawnSync(["bun", "run", "admin", ...args], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: "", SERVICE_RPC_URL_LOCAL: "", SERVICE_RPC_URL_ETHEREUM: ethereum.rpcUrl, SERVICE_RPC_URL_BASE: base.rpcUrl, SERVICE_RELAYER_PRIVATE_KEY: RELAYER_KEY, ...env },
  });
  return { code: child.exitCode, out: child.stdout.toString(), err: child.stderr.toString() };
}
const create = () => svc.call("POST", "/payment-sessions", { auth: liveKey, body: { amount: "5.00", currency: "USD" } });

test("a sandbox key's faucet on a production-only server answers network_unavailable, like session create", async () => {
  const faucet = await svc.call("POST", "/sandbox/faucet", { auth: sandboxKey, body: { address: "0x00000000000000000000000000000000000000a1" } });
  expect(faucet.status).toBe(503);
  expect(faucet.body.error.code).toBe("network_unavailable");
  const created = await svc.call("POST", "/payment-sessions", { auth: sandboxKey, body: { amount: "5.00", currency: "USD" } });
  expect(created.status).toBe(503);
  expect(created.body.error.code).toBe("network_unavailable");
});

test("no factory anywhere: no deposit address is handed out (503), /readyz says why; one network deployed: offered there only", async () => {
  const refused = await create();
  expect(refused.status).toBe(503);
  expect(refused.body.error.code).toBe("network_unavailable");
  expect(refused.body.error.message).toContain("Base (chain 8453)");
  expect(refused.body.error.message).toContain("deposit factory");
  const ready = await svc.call("GET", "/readyz");
  expect(ready.status).toBe(200);
  expect(ready.body.status).toBe("degraded");
  const baseView = ready.body.networks.find((n: { chainId: number }) => n.chainId === 8453);
  expect(baseView).toMatchObject({ ready: false, rpcReachable: true, chainIdSeen: 8453, factory: { present: false }, stablecoin: { present: true, decimals: 6 }, relayer: { low: false } });
  expect(baseView.problems.join()).toContain("factory:deploy --chain 8453");
  expect(JSON.stringify(ready.body)).not.toContain(base.rpcUrl);

  // The operator's step, as a real process: address, transaction, cost; idempotent.
  const first = admin(["factory:deploy", "--chain", "8453"]);
  expect(first.code).toBe(0);
  const refundVaults = predictedRefundVaultsAddress(ANVIL_ACCOUNTS[1].address);
  expect(first.out).toContain(`deployed the deposit factory at ${predictedFactoryAddress()} and AuthorizationBatch at ${predictedAuthorizationBatchAddress()} and RefundVaults at ${refundVaults}`);
  expect(first.out.match(/transaction 0x[0-9a-f]{64} in block \d+ \(\d+ gas at [0-9.]+ gwei\)/g)).toHaveLength(3);
  expect(first.out).toMatch(/cost [0-9.]+ ETH in all \(\d+ gas\), paid by the relayer 0x/);
  expect(await base.rpc("eth_getCode", [predictedAuthorizationBatchAddress(), "latest"])).not.toBe("0x");
  expect(await base.rpc("eth_getCode", [refundVaults, "latest"])).not.toBe("0x"); // refunds can be paid here from now on
  const again = admin(["factory:deploy", "--chain", "8453", "--json"]);
  expect(again.code).toBe(0);
  expect(JSON.parse(again.out)).toEqual({ chainId: 8453, factory: predictedFactoryAddress(), batch: predictedAuthorizationBatchAddress(), refundVaults, deployed: false });

  // Offered on Base within a second, no restart; Ethereum (no factory) is left out.
  await Bun.sleep(1100);
  const ok = await create();
  expect(ok.status).toBe(201);
  expect(ok.body.networks.map((n: { chainId: number }) => n.chainId)).toEqual([8453]);
}, 60_000);

test("factory:deploy refuses a chain id it does not know, a network not configured, and a wrong RPC", async () => {
  const unknown = admin(["factory:deploy", "--chain", "5"]);
  expect(unknown.code).toBe(2);
  expect(unknown.err).toContain("--chain 5: not a chain id this service knows");
  const disabled = admin(["factory:deploy", "--chain", "84532"]);
  expect(disabled.code).toBe(2);
  expect(disabled.err).toContain("SERVICE_RPC_URL_BASE_SEPOLIA");
  const wrongRpc = admin(["factory:deploy", "--chain", "1"], { SERVICE_RPC_URL_ETHEREUM: base.rpcUrl });
  expect(wrongRpc.code).toBe(2);
  expect(wrongRpc.err).toContain("serves chain id 8453, not 1");
  expect(await ethereum.rpc("eth_getCode", [predictedFactoryAddress(), "latest"])).toBe("0x");
}, 30_000);
