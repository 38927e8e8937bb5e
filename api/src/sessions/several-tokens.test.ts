/**
 * Paying with any stablecoin the session accepts on its network, end to end on the real stack
 * (anvil with TestUSD, EIP-3009 like USDC, and TestUSDT, whose transfer returns nothing like
 * USDT's; the Ponder indexer; the service's runner and sweeper): every accepted stablecoin counts
 * at par and payments in two add up — an under- or over-payment is judged on the sum — and the
 * sweep moves each to the settlement address, exactly what was paid in each.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { getAddress, type Address } from "viem";
import { testUsdAbi } from "../../../shared/contracts/artifacts.ts";
import { mintTestUsd, predictedTestUsdtAddress } from "../../../shared/contracts/deploy.ts";
import { startLifecycleStack, type LifecycleStack } from "../../../testing/lifecycle.ts";
import { checkEventsAgainstDocument } from "../../../testing/documented-events.ts";
import { signIn, TEST_PASSWORD } from "../../../testing/dashboard.ts";
import { createUser } from "../dashboard/users.ts";
import { csvRecords } from "../../../testing/csv.ts";

const USD = (cents: number) => BigInt(cents) * 10_000n; // 6 decimals, both tokens
const USDT = predictedTestUsdtAddress();

let stack: LifecycleStack;
beforeAll(async () => {
  stack = await startLifecycleStack();
}, 60_000);
afterAll(async () => {
  await stack?.close();
});

const chain = () => stack.chains[0]!;
const sql = () => stack.svc.services.database.sql;
const TUSD = () => chain().token;

/** `amount` base units of `token` into the session's deposit address. */
async function pay(s: { networks: { depositAddress: string }[] }, token: Address, amount: bigint) {
  const c = chain();
  return mintTestUsd({ publicClient: c.publicClient, walletClient: c.walletClient, to: s.networks[0]!.depositAddress as Address, amount, token });
}
const balance = (token: Address, holder: string) =>
  chain().publicClient.readContract({ address: token, abi: testUsdAbi, functionName: "balanceOf", args: [holder as Address] }) as Promise<bigint>;
async function settlementOf(id: string): Promise<Address> {
  const [d] = await sql()`select settlement_address from app.session_deposits where session_id = ${id}`;
  return getAddress(d!.settlement_address as string);
}

/** Pays, waits for SUCCEEDED, and says what the settlement address got in each token. */
async function paidIn(amount: string, parts: [Address, bigint][]) {
  const s = await stack.create(amount);
  const settlement = await settlementOf(s.id);
  const before = await Promise.all([balance(TUSD(), settlement), balance(USDT, settlement)]);
  for (const [token, units] of parts) await pay(s, token, units);
  const done = await stack.waitFor(s.id, "SUCCEEDED", 30_000);
  const after = await Promise.all([balance(TUSD(), settlement), balance(USDT, settlement)]);
  const deposit = s.networks[0]!.depositAddress;
  expect([await balance(TUSD(), deposit), await balance(USDT, deposit)]).toEqual([0n, 0n]); // nothing left behind
  return { s, done, gained: { tusd: after[0]! - before[0]!, usdt: after[1]! - before[1]! } };
}

test("the session lists both stablecoins of its network", async () => {
  const s = await stack.create("1.00");
  const [d] = await sql()`select tokens from app.session_deposits where session_id = ${s.id}`;
  expect((d!.tokens as { symbol: string }[]).map((t) => t.symbol)).toEqual(["TUSD", "tUSDT"]);
});

test("paid in the USDT-like token only: SUCCEEDED, the settlement address receives exactly that", async () => {
  const { done, gained } = await paidIn("3.00", [[USDT, USD(300)]]);
  expect(gained).toEqual({ tusd: 0n, usdt: USD(300) });
  expect(done.history.find((h) => h.reason === "paid")!.detail).toMatchObject({ amount: "3000000", overpaid: "0", tokens: [{ token: getAddress(USDT), amount: "3000000" }] });
}, 45_000);

test("paid in TestUSD only: as before", async () => {
  const { gained } = await paidIn("2.00", [[TUSD(), USD(200)]]);
  expect(gained).toEqual({ tusd: USD(200), usdt: 0n });
}, 45_000);

let halfAndHalf = "";
test("paid half in each: they add up to the amount, SUCCEEDED, and each token reaches the settlement address exactly", async () => {
  const { s, done, gained } = await paidIn("5.00", [[TUSD(), USD(250)], [USDT, USD(250)]]);
  halfAndHalf = s.id;
  expect(gained).toEqual({ tusd: USD(250), usdt: USD(250) });
  const paid = done.history.find((h) => h.reason === "paid")!.detail as { amount: string; tokens: { token: string; amount: string }[] };
  expect(paid.amount).toBe("5000000");
  expect(paid.tokens.sort((a, b) => a.token.localeCompare(b.token))).toEqual(
    [{ token: getAddress(TUSD()), amount: "2500000" }, { token: getAddress(USDT), amount: "2500000" }].sort((a, b) => a.token.localeCompare(b.token)),
  );
}, 45_000);

test("over-paid across the two: judged on the sum (overpaid by what the sum exceeds), all of it swept", async () => {
  const { done, gained } = await paidIn("4.00", [[TUSD(), USD(300)], [USDT, USD(150)]]);
  expect(done.history.find((h) => h.status === "FUNDED")).toMatchObject({ reason: "overpaid", detail: { amount: "4500000", overpaid: "500000" } });
  expect(gained).toEqual({ tusd: USD(300), usdt: USD(150) });
}, 45_000);

test("under-paid across the two: neither alone nor both together reach the amount; at expiry ERROR underpaid on the sum, swept all the same", async () => {
  const s = await stack.create("6.00", { expiresInSeconds: 60 });
  const settlement = await settlementOf(s.id);
  const before = await Promise.all([balance(TUSD(), settlement), balance(USDT, settlement)]);
  await pay(s, TUSD(), USD(200));
  await pay(s, USDT, USD(300));
  // Still short of 6.00 in total: it stays PENDING until it expires (brought forward here).
  await Bun.sleep(1500);
  expect((await stack.svc.call("GET", `/payment-sessions/${s.id}`, { auth: stack.key })).body.status).toBe("PENDING");
  await sql()`update app.payment_sessions set expires_at = now() - interval '1 second', wake_at = now() where id = ${s.id}`;
  const e = await stack.waitFor(s.id, "ERROR", 30_000);
  expect(e.statusReason).toBe("underpaid");
  expect(e.history.find((h) => h.reason === "underpaid")!.detail).toMatchObject({ amount: "5000000", shortBy: "1000000" });
  // The partial payment is the merchant's: both tokens swept.
  for (let i = 0; i < 200; i++) {
    const got = [(await balance(TUSD(), settlement)) - before[0]!, (await balance(USDT, settlement)) - before[1]!];
    if (got[0] === USD(200) && got[1] === USD(300)) break;
    await Bun.sleep(100);
  }
  expect([(await balance(TUSD(), settlement)) - before[0]!, (await balance(USDT, settlement)) - before[1]!]).toEqual([USD(200), USD(300)]);
}, 60_000);

test("the merchant sees each payment's token: the payer view, the dashboard's CSV", async () => {
  const [owner] = await sql()`select merchant_id from app.payment_sessions where id = ${halfAndHalf}`;
  await createUser(stack.svc.services.database.db, owner!.merchant_id as string, "tokens@shop.example", TEST_PASSWORD);
  const me = await signIn(stack.svc, "tokens@shop.example");
  const [cells] = csvRecords(await (await me.get(`/dashboard/sandbox/transactions.csv?q=${halfAndHalf}`)).text());
  expect(cells!.payment_token!.split(";").sort()).toEqual(["TUSD", "tUSDT"]);
  // The transaction's page: each payment in with its own stablecoin.
  const page = await (await me.get(`/dashboard/sandbox/transactions/${halfAndHalf}`)).text();
  const paymentsIn = [...page.matchAll(/<tr[^>]*><td>Payment in<\/td><td>[^<]*<\/td><td class="num">([^<]*)<\/td>/g)].map((m) => m[1]!.trim()).sort();
  expect(paymentsIn).toEqual(["2.5 TUSD", "2.5 tUSDT"]);
  const view = await stack.svc.call("GET", `/payment-sessions/${halfAndHalf}`, { auth: stack.key });
  expect(view.body.networks[0].tokens.map((x: { tokenSymbol: string; amountBaseUnits: string }) => [x.tokenSymbol, x.amountBaseUnits])).toEqual([
    ["TUSD", "5000000"],
    ["tUSDT", "5000000"],
  ]);
}, 30_000);

test("every event these tests produced matches the document's schema for its reason", async () => {
  const checked = await checkEventsAgainstDocument(stack.svc, stack.key);
  expect(checked.problems).toEqual([]);
  expect([...checked.reasons]).toEqual(expect.arrayContaining(["created", "paid", "overpaid", "swept", "underpaid"]));
}, 30_000);
