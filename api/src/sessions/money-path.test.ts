/**
 * The money path as outsiders use it (issue: money-path hardening), end to end on the real
 * stack — anvil making a block a second as `bun run dev`'s does, the Ponder indexer, the
 * service's runner and sweeper:
 *   - a stranger calls the open `sweep` for a paid deposit: the session settles on the money at
 *     the settlement address, and our relayer pays for nothing (or at most one transaction);
 *   - payments in the last fraction of a second while neighbouring sessions expire all count;
 *   - a Transfer of value 0 is no payment; dust after a terminal state waits for the minimum;
 *   - money that moves without a transition (a second network, late funds, their sweep) is
 *     reported as an event with its webhook and shows in the session's history.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { getAddress, type Address } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { buildSweepCall, sessionSalt } from "../../../shared/contracts/addresses.ts";
import { testUsdAbi } from "../../../shared/contracts/artifacts.ts";
import { devFaucetAccount } from "../../../shared/contracts/deploy.ts";
import { ANVIL_ACCOUNTS } from "../../../shared/devchain/index.ts";
import { eventually } from "../../../testing/eventually.ts";
import { startLifecycleStack, type LifecycleStack } from "../../../testing/lifecycle.ts";
import { checkEventsAgainstDocument } from "../../../testing/documented-events.ts";

const USD = (cents: number) => BigInt(cents) * 10_000n; // 6 decimals
const stranger = privateKeyToAccount(ANVIL_ACCOUNTS[1].privateKey);

let stack: LifecycleStack;
beforeAll(async () => {
  // The indexer polls at the operator's default for the local network (500 ms), not a test's 100 ms:
  // how late a payment is stored is what the expiry rule must survive.
  stack = await startLifecycleStack({ chains: ["local", "local2"], env: { SERVICE_INDEXER_POLLING_MS: "500" } });
}, 60_000);
afterAll(async () => {
  await stack?.close();
});

const sql = () => stack.svc.services.database.sql;
const chain = () => stack.chains[0]!;

async function settlementOf(sessionId: string, chainId = 31337): Promise<Address> {
  const [d] = await sql()`select settlement_address from app.session_deposits where session_id = ${sessionId} and chain_id = ${chainId}`;
  return getAddress(d!.settlement_address as string);
}

/** Base units of TestUSD at an address. */
const balanceOf = (address: string, c = chain()) =>
  c.publicClient.readContract({ address: c.token, abi: testUsdAbi, functionName: "balanceOf", args: [address as Address] }) as Promise<bigint>;

/** Relayer transactions spent on a session: every sweep attempt sent for it. */
async function relayerAttempts(sessionId: string): Promise<number> {
  const [r] = await sql()`select coalesce(sum(attempts), 0)::int as n from app.sweeps where session_id = ${sessionId}`;
  return r!.n as number;
}

describe("a stranger sweeps the deposit", () => {
  test("paid, then swept by another account before our relayer: SUCCEEDED on the stranger's transfer, at most one relayer transaction", async () => {
    const s = await stack.create("4.00");
    const settlement = await settlementOf(s.id);
    const before = await balanceOf(settlement);
    // The payment, then at once the stranger's sweep (the next block), before our stack reacts or
    // while it does. (No automine toggling here: it would stop the chain's heartbeat blocks.)
    const payHash = await chain().walletClient.writeContract({
      account: devFaucetAccount(),
      chain: chain().walletClient.chain,
      address: chain().token,
      abi: testUsdAbi,
      functionName: "mint",
      args: [s.networks[0]!.depositAddress as Address, USD(400)],
    });
    const call = buildSweepCall({ deposits: [{ settlement, sessionSalt: sessionSalt(s.id) }], tokens: [chain().token] });
    const sweepHash = await chain().walletClient.sendTransaction({
      account: stranger,
      chain: chain().walletClient.chain,
      to: call.to,
      data: call.data,
    });
    const paid = await chain().publicClient.waitForTransactionReceipt({ hash: payHash });
    const swept = await chain().publicClient.waitForTransactionReceipt({ hash: sweepHash });
    expect(swept.status).toBe("success");
    // Precondition: the stranger's sweep came after the payment (it moved the money).
    expect(swept.blockNumber > paid.blockNumber || (swept.blockNumber === paid.blockNumber && swept.transactionIndex > paid.transactionIndex)).toBe(true);

    const done = await stack.waitFor(s.id, "SUCCEEDED", 20_000);
    expect(done.history.map((h) => h.reason)).toEqual(["created", "paid", "swept"]);
    expect(done.history.at(-1)).toMatchObject({ reason: "swept", detail: { chainId: 31337, sweepTxHash: sweepHash } });
    expect((await balanceOf(settlement)) - before).toBe(USD(400));
    // Our relayer never loops: give it time to misbehave, then count what it sent.
    await Bun.sleep(2_000);
    expect(await relayerAttempts(s.id)).toBeLessThanOrEqual(1);
    const rounds = await sql()`select state, last_error from app.sweeps where session_id = ${s.id}`;
    expect(rounds.length).toBe(1);
    expect(rounds[0]!.state).toBe("confirmed");
  }, 40_000);

  test("a stranger sweeps after SUCCEEDED funds arrived late: no new relayer transaction either", async () => {
    const s = await stack.create("1.00");
    await stack.pay(s, USD(100));
    await stack.waitFor(s.id, "SUCCEEDED");
    const spent = await relayerAttempts(s.id);
    const settlement = await settlementOf(s.id);
    const call = buildSweepCall({ deposits: [{ settlement, sessionSalt: sessionSalt(s.id) }], tokens: [chain().token] });
    // Late funds, and at once the stranger's sweep of them.
    await stack.pay(s, USD(30));
    const sweepHash = await chain().walletClient.sendTransaction({ account: stranger, chain: chain().walletClient.chain, to: call.to, data: call.data });
    await chain().publicClient.waitForTransactionReceipt({ hash: sweepHash });
    expect(await balanceOf(s.networks[0]!.depositAddress)).toBe(0n);
    // The late payment and its (stranger's) sweep are both reported; our relayer sent at most one more.
    const history = await eventually(async () => {
      const h = (await stack.status(s.id)).history;
      return h.some((e) => e.reason === "funds_settled") ? h : undefined;
    }, "the late funds reported settled", 20_000);
    expect(history.filter((e) => e.reason === "funds_received")).toHaveLength(1);
    await Bun.sleep(1_500);
    expect((await relayerAttempts(s.id)) - spent).toBeLessThanOrEqual(1);
    expect((await stack.status(s.id)).status).toBe("SUCCEEDED");
  }, 40_000);
});

describe("expiry decided on what the indexer stored", () => {
  test("payments 200 ms before their expiry count while neighbours expire 600 ms earlier, in a steady stream", async () => {
    const pairs: { paid: string; idle: string; expiresAt: number; pay: Promise<unknown> }[] = [];
    const created = await Promise.all(Array.from({ length: 16 }, () => stack.create("1.00")));
    const t0 = Date.now() + 3_000;
    for (let k = 0; k < 8; k++) {
      const paid = created[2 * k]!;
      const idle = created[2 * k + 1]!;
      const expiresAt = t0 + k * 700;
      await sql()`update app.payment_sessions set expires_at = ${new Date(expiresAt - 600).toISOString()}::timestamptz, wake_at = ${new Date(expiresAt - 600).toISOString()}::timestamptz where id = ${idle.id}`;
      await sql()`update app.payment_sessions set expires_at = ${new Date(expiresAt).toISOString()}::timestamptz, wake_at = ${new Date(expiresAt).toISOString()}::timestamptz where id = ${paid.id}`;
      const pay = (async () => {
        await Bun.sleep(Math.max(0, expiresAt - 200 - Date.now()));
        const r = await stack.pay(paid, USD(100));
        const block = await chain().publicClient.getBlock({ blockNumber: r.blockNumber });
        return Number(block.timestamp) * 1000 <= expiresAt;
      })();
      pairs.push({ paid: paid.id, idle: idle.id, expiresAt, pay });
    }
    const onTime = await Promise.all(pairs.map((p) => p.pay));
    for (const p of pairs) {
      const idle = await stack.waitFor(p.idle, "CANCELED", 20_000);
      expect(idle.statusReason).toBe("expired");
    }
    for (const [i, p] of pairs.entries()) {
      if (!onTime[i]) continue; // mined late on a slow machine: not the case this test is about
      const s = await stack.waitFor(p.paid, "FUNDED", 20_000);
      expect(s.history.map((h) => h.status)).not.toContain("CANCELED");
    }
    expect(onTime.filter(Boolean).length).toBeGreaterThanOrEqual(6);
  }, 60_000);
});

describe("value 0 and dust", () => {
  test("a Transfer of value 0 into a deposit is no payment: the session can still be canceled", async () => {
    const s = await stack.create("2.00");
    const hash = await chain().walletClient.writeContract({
      account: stranger,
      chain: chain().walletClient.chain,
      address: chain().token,
      abi: testUsdAbi,
      functionName: "transfer",
      args: [s.networks[0]!.depositAddress as Address, 0n],
    });
    await chain().publicClient.waitForTransactionReceipt({ hash });
    await eventually(async () => {
      const rows = await sql()`select 1 from indexer.transfers where tx_hash = ${hash}`;
      return rows.length ? true : undefined;
    }, "the zero transfer indexed");
    const cancel = await stack.svc.call("POST", `/payment-sessions/${s.id}/cancel`, { auth: stack.key });
    expect(cancel.status).toBe(200);
    expect(cancel.body).toMatchObject({ status: "CANCELED", statusReason: "canceled_by_merchant" });
    await Bun.sleep(500);
    expect((await stack.status(s.id)).status).toBe("CANCELED"); // and no paid_after_cancel
  });

  test("dust after SUCCEEDED below the network's minimum (0.01) waits, reported; more funds are swept with it", async () => {
    const s = await stack.create("1.00");
    await stack.pay(s, USD(100));
    await stack.waitFor(s.id, "SUCCEEDED");
    await stack.pay(s, 9_999n); // 0.009999 < 0.01
    await eventually(async () => ((await stack.status(s.id)).history.some((h) => h.reason === "funds_received") ? true : undefined), "dust reported");
    await Bun.sleep(1_000);
    const rounds = await sql()`select count(*)::int as n from app.sweeps where session_id = ${s.id}`;
    expect(rounds[0]!.n).toBe(1); // only the payment's sweep
    expect(await balanceOf(s.networks[0]!.depositAddress)).toBe(9_999n);
    await stack.pay(s, 1n); // now 0.01: swept, both together
    await eventually(async () => ((await balanceOf(s.networks[0]!.depositAddress)) === 0n ? true : undefined), "the dust swept with the rest");
    const h = await eventually(async () => {
      const hist = (await stack.status(s.id)).history;
      return hist.some((e) => e.reason === "funds_settled") ? hist : undefined;
    }, "the sweep of the extra funds reported");
    const settled = h.find((e) => e.reason === "funds_settled")!;
    expect(settled).toMatchObject({ status: "SUCCEEDED", previousStatus: "SUCCEEDED", detail: { chainId: 31337, amountBaseUnits: "10000" } });
    expect(h.filter((e) => e.reason === "funds_received").map((e) => e.detail.amountBaseUnits)).toEqual(["9999", "1"]);
  }, 30_000);
});

describe("money without a transition is reported", () => {
  test("a second payment on the other network after FUNDED: a funds_received event and webhook, then swept", async () => {
    const received: { type: string; data: { reason: string; detail: Record<string, unknown>; sequence: number } }[] = [];
    const server = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      async fetch(req) {
        received.push(JSON.parse(await req.text()));
        return new Response("ok");
      },
    });
    try {
      const ep = await stack.svc.call("POST", "/webhook-endpoints", { auth: stack.key, body: { url: `http://127.0.0.1:${server.port}/hook` } });
      expect(ep.status).toBe(201);
      const s = await stack.create("2.00");
      await stack.pay(s, USD(200), 31337);
      await stack.waitFor(s.id, "SUCCEEDED");
      await stack.pay(s, USD(200), 31338);
      const ev = await eventually(
        async () => received.find((e) => e.type === "payment_session.funds_received" && e.data.detail.chainId === 31338),
        "the funds_received webhook",
        20_000,
      );
      expect(ev.data).toMatchObject({ reason: "funds_received", detail: { amountBaseUnits: "2000000", onTime: true } });
      const other = stack.chains[1]!;
      await eventually(async () => ((await balanceOf(s.networks.find((n) => n.chainId === 31338)!.depositAddress, other)) === 0n ? true : undefined), "swept on the other network");
      const settled = await eventually(
        async () => received.find((e) => e.type === "payment_session.funds_settled" && e.data.detail.chainId === 31338),
        "the funds_settled webhook",
        20_000,
      );
      // One sequence per session: the money events come after the status changes, in order.
      const seqs = received.filter((e) => e.data.sequence !== undefined && (e as { data: { paymentSessionId?: string } }).data.paymentSessionId === s.id).map((e) => e.data.sequence);
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      expect(settled.data.sequence).toBeGreaterThan(ev.data.sequence);
      const history = (await stack.status(s.id)).history;
      expect(history.map((h) => h.reason)).toEqual(["created", "paid", "swept", "funds_received", "funds_settled"]);
    } finally {
      server.stop(true);
    }
  }, 40_000);
});

test("every event these tests produced matches the document's schema for its reason", async () => {
  const checked = await checkEventsAgainstDocument(stack.svc, stack.key);
  expect(checked.problems).toEqual([]);
  expect([...checked.reasons]).toEqual(expect.arrayContaining(["created", "paid", "swept", "funds_received", "funds_settled"]));
}, 30_000);
