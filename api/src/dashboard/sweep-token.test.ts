/**
 * A payment's page names the stablecoin its sweep moves: a session paid in the network's second
 * stablecoin (tUSDT beside TestUSD in the sandbox) shows its sweep in that token, not in the main
 * one. The sweep is written as the sweeper's queue writes it (app.sweeps), on a real Postgres.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestService, type TestService } from "../../../testing/service.ts";
import { merchantWithUser, signIn, type Browser } from "../../../testing/dashboard.ts";
import { newId } from "../../../shared/ids.ts";

let svc: TestService;
let a: Awaited<ReturnType<typeof merchantWithUser>>;
let asA: Browser;

beforeAll(async () => {
  svc = await startTestService({ SERVICE_WEBHOOK_WORKER: "false" });
  a = await merchantWithUser(svc, "sam@s.example");
  asA = await signIn(svc, "sam@s.example");
}, 60_000);
afterAll(() => svc.close());

test("a sweep of the second stablecoin is shown in that token", async () => {
  const s = await svc.call("POST", "/payment-sessions", { auth: a.sandboxKey, body: { amount: "3.00", currency: "USD" } });
  expect(s.status).toBe(201);
  const id = s.body.paymentSessionId as string;
  const net = s.body.networks[0] as { chainId: number; depositAddress: string; settlementAddress: string };
  const coins = svc.services.networks.find((n) => n.chainId === net.chainId)!.stablecoins;
  expect(coins.length).toBeGreaterThan(1);
  const second = coins[1]!;
  await svc.services.database.sql`
    insert into app.sweeps (id, session_id, chain_id, deposit_address, settlement_address, token_address, amount, state)
    values (${newId("sweep")}, ${id}, ${net.chainId}, ${net.depositAddress.toLowerCase()}, ${net.settlementAddress.toLowerCase()}, ${second.address.toLowerCase()}, 3000000, 'queued')`;
  const text = await (await asA.get(`/dashboard/sandbox/transactions/${id}`)).text();
  const sweep = text.slice(text.indexOf("<h3>Sweep</h3>"));
  expect(sweep).toContain(`3 ${second.symbol},`);
  expect(sweep.slice(0, sweep.indexOf("</ul>"))).not.toContain(coins[0]!.symbol + ",");
});
