/**
 * The payment lifecycle end to end: real anvil, real Ponder indexer, real Postgres, the
 * service's own session runner. One test per row of the state table that needs no sweep
 * (the sweep rows are in sweeps.lifecycle.test.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eventually, startLifecycleStack, type LifecycleStack } from "../testing/lifecycle.ts";
import { SessionRunner } from "./runner.ts";

const USD = (cents: number) => BigInt(cents) * 10_000n; // 6 decimals

let stack: LifecycleStack;
beforeAll(async () => {
  stack = await startLifecycleStack({ chains: ["local", "local2"] });
}, 60_000);
afterAll(async () => {
  await stack?.close();
});

describe("PENDING → FUNDED", () => {
  test("exact payment", async () => {
    const s = await stack.create("12.34");
    const receipt = await stack.pay(s, USD(1234));
    const funded = await stack.waitFor(s.id, "FUNDED");
    expect(funded.statusReason).toBe("paid");
    const last = funded.history.at(-1)!;
    expect(last).toMatchObject({ status: "FUNDED", reason: "paid", detail: { chainId: 31337, amount: "12340000", overpaid: "0" } });
    expect(last.detail.txHashes).toEqual([receipt.transactionHash]);
  });

  test("over-payment keeps the surplus", async () => {
    const s = await stack.create("5.00");
    await stack.pay(s, USD(600));
    const funded = await stack.waitFor(s.id, "FUNDED");
    expect(funded.statusReason).toBe("overpaid");
    expect(funded.history.at(-1)!.detail.overpaid).toBe("1000000");
  });

  test("partial payments that add up", async () => {
    const s = await stack.create("3.00");
    await stack.pay(s, USD(100));
    await Bun.sleep(300);
    expect((await stack.status(s.id)).status).toBe("PENDING");
    await stack.pay(s, USD(200));
    const funded = await stack.waitFor(s.id, "FUNDED");
    expect((funded.history.at(-1)!.detail.txHashes as string[]).length).toBe(2);
  });

  test("on the second network", async () => {
    const s = await stack.create("2.00");
    expect(s.networks.map((n) => n.chainId)).toEqual([31337, 31338]);
    await stack.pay(s, USD(200), 31338);
    const funded = await stack.waitFor(s.id, "FUNDED");
    expect(funded.history.at(-1)!.detail.chainId).toBe(31338);
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
      const rows = await stack.svc.services.database.sql`select 1 from indexer.transfers where "to" = ${s.networks[0]!.depositAddress}`;
      return rows.length ? true : undefined;
    }, "the partial payment indexed");
    await expireNow(s.id);
    const e = await stack.waitFor(s.id, "ERROR");
    expect(e.statusReason).toBe("underpaid");
    expect(e.history.at(-1)!.detail.shortBy).toBe("2500000");
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
    expect(e.history.map((h) => h.status)).toEqual(["PENDING", "CANCELED", "ERROR"]);
  });
});

test("two runners at once never double-process: each session gets exactly its transitions", async () => {
  const extra = new SessionRunner(stack.svc.services.database.sql, stack.svc.services.networks, { pollMs: 10, concurrency: 8 });
  await extra.start();
  try {
    const sessions = await Promise.all(Array.from({ length: 20 }, () => stack.create("1.00")));
    for (const s of sessions) await stack.pay(s, USD(100));
    for (const s of sessions) await stack.waitFor(s.id, "FUNDED");
    const ids = sessions.map((s) => s.id);
    const sql = stack.svc.services.database.sql;
    const counts = await sql`select session_id, count(*)::int as n, max(sequence) as top from app.session_events where session_id in ${sql(ids)} group by session_id`;
    expect(counts.length).toBe(20);
    for (const c of counts) expect([c.n, c.top]).toEqual([2, 2]);
    expect(extra.stats.errors).toBe(0);
  } finally {
    await extra.stop();
  }
}, 60_000);
