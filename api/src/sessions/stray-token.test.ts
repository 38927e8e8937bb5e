/**
 * A stablecoin the session does not accept, sent to its deposit address by mistake, on the real
 * stack: the operator narrowed the local network to TestUSD (SERVICE_STABLECOINS_LOCAL=TUSD), so
 * TestUSDT — still a preset stablecoin of the network, watched by the indexer — is not accepted.
 * It is reported (`funds_received`, `accepted: false`, its token), never counted toward the
 * payment, and swept to the merchant's settlement address all the same: never lost.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { getAddress, type Address } from "viem";
import { testUsdAbi } from "../../../shared/contracts/artifacts.ts";
import { mintTestUsd, predictedTestUsdtAddress } from "../../../shared/contracts/deploy.ts";
import { eventually } from "../../../testing/eventually.ts";
import { startLifecycleStack, type LifecycleStack } from "../../../testing/lifecycle.ts";
import { checkEventsAgainstDocument } from "../../../testing/documented-events.ts";

const USDT = predictedTestUsdtAddress();

let stack: LifecycleStack;
beforeAll(async () => {
  stack = await startLifecycleStack({ env: { SERVICE_STABLECOINS_LOCAL: "TUSD" } });
}, 60_000);
afterAll(async () => {
  await stack?.close();
});

const chain = () => stack.chains[0]!;
const sql = () => stack.svc.services.database.sql;
const balance = (token: Address, holder: string) =>
  chain().publicClient.readContract({ address: token, abi: testUsdAbi, functionName: "balanceOf", args: [holder as Address] }) as Promise<bigint>;

test("sent in a token the session does not accept: reported with its token, not counted, swept to the settlement address; the payment in TestUSD still settles the session", async () => {
  const s = await stack.create("2.00");
  const view = (await stack.svc.call("GET", `/payment-sessions/${s.id}`, { auth: stack.key })).body;
  expect(view.networks[0].tokens.map((t: { tokenSymbol: string }) => t.tokenSymbol)).toEqual(["TUSD"]);
  const deposit = s.networks[0]!.depositAddress as Address;
  const settlement = getAddress(view.networks[0].settlementAddress);
  const before = await balance(USDT, settlement);
  const c = chain();
  const stray = await mintTestUsd({ publicClient: c.publicClient, walletClient: c.walletClient, to: deposit, amount: 2_000_000n, token: USDT });

  // Reported once, while PENDING: its token, not accepted, its own base units.
  const reported = await eventually(async () => {
    const v = (await stack.svc.call("GET", `/payment-sessions/${s.id}`, { auth: stack.key })).body;
    return v.history.find((h: { reason: string }) => h.reason === "funds_received");
  }, "the stray payment reported", 20_000);
  expect(reported).toMatchObject({
    status: "PENDING",
    detail: { txHash: stray.transactionHash, amountBaseUnits: "2000000", token: getAddress(USDT), accepted: false, method: "transfer" },
  });
  // Swept to the merchant: never lost.
  await eventually(async () => ((await balance(USDT, settlement)) - before === 2_000_000n ? true : undefined), "the stray token swept", 20_000);
  expect(await balance(USDT, deposit)).toBe(0n);
  // Not counted: 2.00 of it did not pay the 2.00 session.
  expect((await stack.svc.call("GET", `/payment-sessions/${s.id}`, { auth: stack.key })).body.status).toBe("PENDING");

  // Paid in the accepted token: SUCCEEDED, and the stray reported once only.
  await stack.pay(s, 2_000_000n);
  const done = await stack.waitFor(s.id, "SUCCEEDED", 30_000);
  expect(done.history.filter((h) => h.reason === "funds_received" && (h.detail as { accepted?: boolean }).accepted === false)).toHaveLength(1);
  const [ledger] = await sql()`select token_address, amount::text from app.session_funds where session_id = ${s.id} and tx_hash = ${stray.transactionHash.toLowerCase()}`;
  expect(ledger).toMatchObject({ token_address: USDT.toLowerCase(), amount: "2000000" });
}, 60_000);

test("every event this test produced matches the document's schema for its reason", async () => {
  const checked = await checkEventsAgainstDocument(stack.svc, stack.key);
  expect(checked.problems).toEqual([]);
}, 30_000);
