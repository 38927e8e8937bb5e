/**
 * Sandbox tools against a real local network, indexer, runner and sweeper: a paid session
 * runs through the whole lifecycle by itself, as the spec requires of sandbox.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { erc20Abi } from "viem";
import { devFaucetAccount } from "../../../shared/contracts/deploy.ts";
import { testUsdAbi } from "../../../shared/contracts/artifacts.ts";
import { eventually } from "../../../testing/eventually.ts";
import { startLifecycleStack, type LifecycleStack } from "../../../testing/lifecycle.ts";

let stack: LifecycleStack;
beforeAll(async () => {
  stack = await startLifecycleStack();
}, 60_000);
afterAll(async () => {
  await stack?.close();
});

const call = (path: string, body: unknown = {}, auth = stack.key) => stack.svc.call("POST", path, { auth, body });
const balance = (address: string) =>
  stack.chains[0]!.publicClient.readContract({ address: stack.chains[0]!.token, abi: erc20Abi, functionName: "balanceOf", args: [address as `0x${string}`] });

describe("sandbox tools", () => {
  test("faucet: TestUSD to any address", async () => {
    const to = "0x00000000000000000000000000000000000000a1";
    const r = await call("/sandbox/faucet", { address: to, amount: "25.00" });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ chainId: 31337, amountBaseUnits: "25000000" });
    expect(await balance(to)).toBe(25_000_000n);
  });

  test("fund the refund balance: test tokens minted to the merchant's refund vault, the address GET /refund-balances shows", async () => {
    const before = (await stack.svc.call("GET", "/refund-balances", { auth: stack.key })).body.data[0];
    const r = await call("/sandbox/refund-balances/fund", { amount: "40.00" });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ chainId: 31337, amountBaseUnits: "40000000", address: before.address, tokenAddress: stack.chains[0]!.token });
    expect(await balance(before.address)).toBe(40_000_000n);
    const after = (await stack.svc.call("GET", "/refund-balances", { auth: stack.key })).body.data[0];
    expect(after.tokens[0]).toMatchObject({ balance: "40.00" });
    // Another merchant's call funds its own vault, never this one.
    const other = await stack.svc.merchant("Other refunds");
    const theirs = await call("/sandbox/refund-balances/fund", { amount: "1.00" }, other.sandboxKey);
    expect(theirs.body.address).not.toBe(before.address);
    expect(await balance(before.address)).toBe(40_000_000n);
    // Bad input is a 4xx and mints nothing; a production key has no such tool.
    expect((await call("/sandbox/refund-balances/fund", { amount: "0.00" })).body.error.code).toBe("amount_invalid");
    expect((await call("/sandbox/refund-balances/fund", { token: "0x00000000000000000000000000000000000000a1" })).body.error.code).toBe("faucet_unavailable");
    expect((await call("/sandbox/refund-balances/fund", { chainId: 1 })).body.error.code).toBe("parameter_invalid");
    expect((await call("/sandbox/refund-balances/fund", {}, stack.liveKey)).status).toBe(404);
    expect(await balance(before.address)).toBe(40_000_000n);
  });

  test("pay from the faucet: the session runs to SUCCEEDED by itself", async () => {
    const s = await stack.create("7.25");
    const r = await call(`/sandbox/payment-sessions/${s.id}/pay`);
    expect(r.status).toBe(200);
    expect(r.body.amountBaseUnits).toBe("7250000");
    const done = await stack.waitFor(s.id, "SUCCEEDED");
    expect(done.history.map((h) => h.status)).toEqual(["PENDING", "FUNDED", "SUCCEEDED"]);
    expect((done.history[1]!.detail.txHashes as string[])[0]).toBe(r.body.txHash);
  });

  test("over-pay, under-pay then expire", async () => {
    const over = await stack.create("1.00");
    await call(`/sandbox/payment-sessions/${over.id}/pay`, { amount: "1.50" });
    expect((await stack.waitFor(over.id, "FUNDED")).history[1]!.reason).toBe("overpaid");
    const under = await stack.create("2.00");
    await call(`/sandbox/payment-sessions/${under.id}/pay`, { amount: "0.75" });
    await eventually(async () => ((await balance(under.networks[0]!.depositAddress)) === 750_000n ? true : undefined), "partial payment");
    await eventually(async () => {
      const rows = await stack.svc.services.database.sql`select 1 from indexer.transfers where "to" = ${under.networks[0]!.depositAddress.toLowerCase()}`;
      return rows.length ? true : undefined;
    }, "partial payment indexed");
    const expired = await call(`/sandbox/payment-sessions/${under.id}/expire`);
    expect(expired.status).toBe(200);
    expect(expired.body.status).toBe("ERROR");
    expect(expired.body.statusReason).toBe("underpaid");
  });

  test("expire with nothing paid → CANCELED expired", async () => {
    const s = await stack.create("1.00");
    const r = await call(`/sandbox/payment-sessions/${s.id}/expire`);
    expect(r.body).toMatchObject({ status: "CANCELED", statusReason: "expired" });
  });

  test("fail the next sweep → ERROR sweep_failed", async () => {
    const s = await stack.create("1.00");
    expect((await call(`/sandbox/payment-sessions/${s.id}/fail-next-sweep`)).body).toEqual({ paymentSessionId: s.id, failNextSweep: true });
    await call(`/sandbox/payment-sessions/${s.id}/pay`);
    const e = await stack.waitFor(s.id, "ERROR");
    // Status changes only: the funds are still swept in a later round, reported as funds_settled.
    expect(e.history.filter((h) => h.reason !== "funds_settled").map((h) => [h.status, h.reason])).toEqual([
      ["PENDING", "created"],
      ["FUNDED", "paid"],
      ["ERROR", "sweep_failed"],
    ]);
  });

  test("simulate an error on a PENDING session; twice is 409", async () => {
    const s = await stack.create("1.00");
    const r = await call(`/sandbox/payment-sessions/${s.id}/simulate-error`);
    expect(r.body).toMatchObject({ status: "ERROR", statusReason: "simulated" });
    const again = await call(`/sandbox/payment-sessions/${s.id}/simulate-error`);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("session_not_pending");
  });

  test("with a production key the tools do not exist; bad input is a 4xx", async () => {
    const live = await call("/sandbox/faucet", { address: "0x00000000000000000000000000000000000000a1" }, stack.liveKey);
    expect(live.status).toBe(404);
    expect(live.body.error.code).toBe("route_not_found");
    const s = await stack.create("1.00");
    for (const [path, body, param] of [
      ["/sandbox/faucet", { address: "nope" }, "address"],
      ["/sandbox/faucet", { address: "0x00000000000000000000000000000000000000a1", amount: "1" }, "amount"],
      ["/sandbox/faucet", { address: "0x00000000000000000000000000000000000000a1", chainId: 1 }, "chainId"],
      [`/sandbox/payment-sessions/${s.id}/pay`, { amount: "-1.00" }, "amount"],
      [`/sandbox/payment-sessions/${s.id}/pay`, { chainId: 8453 }, "chainId"],
      [`/sandbox/payment-sessions/${s.id}/expire`, { now: true }, "now"],
      ["/sandbox/payment-sessions/ps_nope/pay", {}, "id"],
    ] as const) {
      const r = await call(path, body);
      expect({ path, status: Math.floor(r.status / 100), param: r.body.error?.param }).toEqual({ path, status: 4, param });
    }
    expect((await stack.status(s.id)).status).toBe("PENDING");
  });
});

test("200 sessions paid at once all reach SUCCEEDED, each swept once", async () => {
  const sessions = await Promise.all(Array.from({ length: 200 }, () => stack.create("1.00")));
  // Twenty payments a block, as on a busy chain (a block per payment would measure the indexer).
  const chain = stack.chains[0]!;
  await chain.rpc("evm_setAutomine", [false]);
  for (let i = 0; i < sessions.length; i++) {
    await chain.walletClient.writeContract({
      account: devFaucetAccount(),
      chain: chain.walletClient.chain,
      address: chain.token,
      abi: testUsdAbi,
      functionName: "mint",
      args: [sessions[i]!.networks[0]!.depositAddress as `0x${string}`, 1_000_000n],
    });
    if (i % 20 === 19) await chain.rpc("anvil_mine", ["0x1"]);
  }
  await chain.rpc("evm_setAutomine", [true]);
  for (const s of sessions) await stack.waitFor(s.id, "SUCCEEDED", 60_000);
  const sql = stack.svc.services.database.sql;
  const ids = sessions.map((s) => s.id);
  const [row] = await sql`
    select count(*)::int as sweeps, count(distinct transaction_id)::int as txs, count(*) filter (where state = 'confirmed')::int as confirmed
      from app.sweeps where session_id in ${sql(ids)}`;
  expect(row!.sweeps).toBe(200);
  expect(row!.confirmed).toBe(200);
  // Batched: far fewer transactions than sweeps.
  expect(row!.txs).toBeLessThan(200);
}, 120_000);
