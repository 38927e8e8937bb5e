/** The sweeper inside a running service (server.ts): started with networks, stopped with the service. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { NetworkConfig } from "../../../shared/chains/config.ts";
import { predictDepositAddress, sessionSalt } from "../../../shared/contracts/addresses.ts";
import { startTestChain, type TestChain } from "../../../testing/chain.ts";
import { startTestService } from "../../../testing/service.ts";
import { queueSweep } from "../effects/sweep-queue.ts";

let chain: TestChain;
let network: NetworkConfig;

beforeAll(async () => {
  chain = await startTestChain();
  network = {
    key: "local", chainId: 31337, name: "Local test network", environment: "sandbox", rpcUrl: chain.anvil.rpcUrl,
    stablecoin: { symbol: "TestUSD", address: chain.token, decimals: 6, eip3009: true },
    stablecoins: [{ symbol: "TestUSD", address: chain.token, decimals: 6, eip3009: true }], confirmations: 1, confirmationsSource: "test",
    startBlock: null, blockTimeSeconds: 1, explorerUrl: null, factory: chain.factory, minSweepBaseUnits: 0n,
  };
});
afterAll(async () => {
  await chain?.stop();
});

test("the service runs the sweeper for its networks (dev relayer key on a sandbox network); SERVICE_SWEEPER=false does not", async () => {
  const off = await startTestService({ SERVICE_SWEEPER: "false" }, { networks: [network] });
  expect(off.sweeper).toBeUndefined();
  expect(await off.startSweeper([network])).toBeUndefined();
  await off.close();

  const none = await startTestService();
  expect(none.sweeper).toBeUndefined();
  await none.close();

  const svc = await startTestService({ SERVICE_SWEEPER: "true", SERVICE_SWEEP_POLL_MS: "50" }, { networks: [network] });
  try {
    expect(svc.sweeper).toBeDefined();
    const { merchant } = await svc.merchant();
    const sql = svc.services.database.sql;
    const settlement = privateKeyToAccount(generatePrivateKey()).address;
    const id = "ps_servicesweeptest0000001";
    const deposit = predictDepositAddress({ factory: chain.factory, settlement, sessionSalt: sessionSalt(id) });
    await sql`
      insert into app.payment_sessions (id, merchant_id, environment, status, status_reason, amount_minor, currency, expires_at, token_hash, token_expires_at)
      values (${id}, ${merchant.id}, 'sandbox', 'FUNDED', 'paid', 300, 'USD', now() + interval '1 hour', 'h_svc', now() + interval '2 hours')`;
    await chain.mint(deposit, 3_000_000n);
    const sweepId = await queueSweep(sql, { sessionId: id, chainId: 31337, depositAddress: deposit, settlementAddress: settlement, tokenAddress: chain.token, amount: 3_000_000n });
    const deadline = Date.now() + 10_000;
    let state = "";
    while (Date.now() < deadline) {
      const [r] = await sql`select state from app.sweeps where id = ${sweepId}`;
      state = r!.state as string;
      if (state === "confirmed" || state === "failed") break;
      await Bun.sleep(25);
    }
    expect(state).toBe("confirmed");
    expect(await chain.balanceOf(settlement)).toBe(3_000_000n);
  } finally {
    await svc.close();
  }
}, 30_000);
