/**
 * The payment lifecycle end to end: real anvil, real Ponder indexer, real Postgres, the
 * service's own session runner and sweeper. One test per row of the state table.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eventually } from "../../../testing/eventually.ts";
import { startLifecycleStack, type LifecycleStack } from "../../../testing/lifecycle.ts";
import { checkEventsAgainstDocument } from "../../../testing/documented-events.ts";
import { SessionRunner } from "./runner.ts";

const USD = (cents: number) => BigInt(cents) * 10_000n; // 6 decimals

let stack: LifecycleStack;
beforeAll(async () => {
  stack = await startLifecycleStack({ chains: ["local", "local2"] });
}, 60_000);
afterAll(async () => {
  await stack?.close();
});

const fundedStep = (s: { history: { status: string; reason: string; detail: Record<string, unknown> }[] }) => s.history.find((h) => h.status === "FUNDED")!;

const balanceOf = (address: string) =>
  stack.chains[0]!.publicClient.readContract({
    address: stack.chains[0]!.token,
    abi: [{ type: "function", name: "balanceOf", stateMutability: "view", inputs: [{ type: "address" }], outputs: [{ type: "uint256" }] }] as const,
    functionName: "balanceOf",
    args: [address as `0x${string}`],
  });

describe("PENDING → FUNDED → SUCCEEDED", () => {
  test("exact payment: funded, swept to the settlement address, succeeded", async () => {
    const s = await stack.create("12.34");
    const settlement = (await stack.svc.services.database.sql`select settlement_address from app.session_deposits where session_id = ${s.id} and chain_id = 31337`)[0]!
      .settlement_address as string;
    const before = await balanceOf(settlement);
    const receipt = await stack.pay(s, USD(1234));
    const done = await stack.waitFor(s.id, "SUCCEEDED");
    expect(done.history.map((h) => h.status)).toEqual(["PENDING", "FUNDED", "SUCCEEDED"]);
    expect(fundedStep(done)).toMatchObject({ reason: "paid", detail: { chainId: 31337, amount: "12340000", overpaid: "0" } });
    expect(fundedStep(done).detail.txHashes).toEqual([receipt.transactionHash]);
    expect(done.history.at(-1)).toMatchObject({ reason: "swept", detail: { chainId: 31337 } });
    expect(String(done.history.at(-1)!.detail.sweepTxHash)).toMatch(/^0x[0-9a-f]{64}$/);
    expect((await balanceOf(settlement)) - before).toBe(USD(1234));
    expect(await balanceOf(s.networks[0]!.depositAddress)).toBe(0n);
  });

  test("funds arriving after SUCCEEDED are swept too and recorded", async () => {
    const s = await stack.create("1.00");
    await stack.pay(s, USD(100));
    await stack.waitFor(s.id, "SUCCEEDED");
    await stack.pay(s, USD(50));
    const sql = stack.svc.services.database.sql;
    await eventually(async () => {
      const rows = await sql`select swept_amount::text from app.sweeps where session_id = ${s.id} and state = 'confirmed' order by created_at`;
      return rows.length === 2 ? rows : undefined;
    }, "the late payment swept");
    expect(await balanceOf(s.networks[0]!.depositAddress)).toBe(0n);
    expect((await stack.status(s.id)).status).toBe("SUCCEEDED");
  });

  test("a forced sweep failure (sandbox) → ERROR sweep_failed; the funds are still swept after", async () => {
    const s = await stack.create("1.00");
    await stack.svc.services.database.sql`update app.payment_sessions set force_sweep_failure = true where id = ${s.id}`;
    await stack.pay(s, USD(100));
    const e = await stack.waitFor(s.id, "ERROR");
    expect(e.statusReason).toBe("sweep_failed");
    await eventually(async () => ((await balanceOf(s.networks[0]!.depositAddress)) === 0n ? true : undefined), "the funds swept in a later round");
  });

  test("over-payment keeps the surplus", async () => {
    const s = await stack.create("5.00");
    await stack.pay(s, USD(600));
    const funded = await stack.waitFor(s.id, "FUNDED");
    expect(fundedStep(funded).reason).toBe("overpaid");
    expect(fundedStep(funded).detail.overpaid).toBe("1000000");
  });

  test("partial payments that add up", async () => {
    const s = await stack.create("3.00");
    await stack.pay(s, USD(100));
    await Bun.sleep(300);
    expect((await stack.status(s.id)).status).toBe("PENDING");
    await stack.pay(s, USD(200));
    const funded = await stack.waitFor(s.id, "FUNDED");
    expect((fundedStep(funded).detail.txHashes as string[]).length).toBe(2);
  });

  test("on the second network", async () => {
    const s = await stack.create("2.00");
    expect(s.networks.map((n) => n.chainId)).toEqual([31337, 31338]);
    await stack.pay(s, USD(200), 31338);
    const funded = await stack.waitFor(s.id, "SUCCEEDED");
    expect(fundedStep(funded).detail.chainId).toBe(31338);
  });

  test("halves on two networks do not fund", async () => {
    const s = await stack.create("2.00");
    await stack.pay(s, USD(100), 31337);
    await stack.pay(s, USD(100), 31338);
    await Bun.sleep(600);
    expect((await stack.status(s.id)).status).toBe("PENDING");
  });
});

describe("expiry and cancel", () => {
  const expireNow = async (id: string) => {
    await stack.svc.services.database.sql`update app.payment_sessions set expires_at = now(), wake_at = now() where id = ${id}`;
  };

  test("expiry with nothing received → CANCELED expired", async () => {
    const s = await stack.create("1.00");
    await expireNow(s.id);
    expect((await stack.waitFor(s.id, "CANCELED")).statusReason).toBe("expired");
  });

  test("expiry with a confirmed partial amount → ERROR underpaid", async () => {
    const s = await stack.create("4.00");
    await stack.pay(s, USD(150));
    await eventually(async () => {
      const rows = await stack.svc.services.database.sql`select 1 from indexer.transfers where "to" = ${s.networks[0]!.depositAddress.toLowerCase()}`;
      return rows.length ? true : undefined;
    }, "the partial payment indexed");
    await expireNow(s.id);
    const e = await stack.waitFor(s.id, "ERROR");
    expect(e.statusReason).toBe("underpaid");
    expect(e.history.find((h) => h.reason === "underpaid")!.detail.shortBy).toBe("2500000");
    // The partial amount is the merchant's: swept all the same.
    await eventually(async () => ((await balanceOf(s.networks[0]!.depositAddress)) === 0n ? true : undefined), "the partial amount swept");
  });

  test("merchant cancel is refused once the payment is in", async () => {
    const s = await stack.create("1.00");
    await stack.pay(s, USD(100));
    await stack.waitFor(s.id, "FUNDED");
    const r = await stack.svc.call("POST", `/payment-sessions/${s.id}/cancel`, { auth: stack.key });
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe("session_not_cancelable");
  });

  test("funds after cancel → ERROR paid_after_cancel", async () => {
    const s = await stack.create("1.00");
    expect((await stack.svc.call("POST", "/api/payment-sessions/cancel", { auth: s.token })).status).toBe(200);
    await stack.pay(s, USD(100));
    const e = await stack.waitFor(s.id, "ERROR");
    expect(e.statusReason).toBe("paid_after_cancel");
    // Status changes (the sweep of the late funds follows as a funds_settled event).
    expect(e.history.filter((h) => !h.reason.startsWith("funds_")).map((h) => h.status)).toEqual(["PENDING", "CANCELED", "ERROR"]);
  });
});

test("two runners at once never double-process: each session gets exactly its transitions", async () => {
  const extra = new SessionRunner(stack.svc.services.database.sql, stack.svc.services.networks, { pollMs: 10, concurrency: 8 });
  await extra.start();
  try {
    const sessions = await Promise.all(Array.from({ length: 20 }, () => stack.create("1.00")));
    for (const s of sessions) await stack.pay(s, USD(100));
    for (const s of sessions) await stack.waitFor(s.id, "SUCCEEDED");
    const ids = sessions.map((s) => s.id);
    const sql = stack.svc.services.database.sql;
    const counts = await sql`select session_id, array_agg(status order by sequence) as statuses from app.session_events where session_id in ${sql(ids)} group by session_id`;
    expect(counts.length).toBe(20);
    for (const c of counts) expect(c.statuses).toEqual(["PENDING", "FUNDED", "SUCCEEDED"]);
    const sweeps = await sql`select count(*)::int as n from app.sweeps where session_id in ${sql(ids)}`;
    expect(sweeps[0]!.n).toBe(20);
    expect(extra.stats.errors).toBe(0);
  } finally {
    await extra.stop();
  }
}, 60_000);

test("every event these tests produced matches the document's schema for its reason", async () => {
  const checked = await checkEventsAgainstDocument(stack.svc, stack.key);
  expect(checked.problems).toEqual([]);
  expect([...checked.reasons]).toEqual(expect.arrayContaining(["created", "paid", "overpaid", "swept", "sweep_failed", "expired", "underpaid", "canceled_by_payer", "paid_after_cancel"]));
}, 30_000);
