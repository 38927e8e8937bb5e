/**
 * Two indexer nodes (`bun run indexer`) on one database, as an operator runs them on two hosts:
 * each runs its own Ponder into its own schema, the service reads (the views schema `indexer`)
 * the seat holder's; the holder killed outright, the standby — already running and caught up —
 * takes the seat and the views follow its schema, the next transfer seen through them; a node
 * that loses its lease stops following but goes on indexing; a Ponder whose node died does not
 * outlive it.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import postgres from "postgres";
import { privateKeyToAccount, generatePrivateKey } from "viem/accounts";
import { createTestDatabase } from "../../../testing/database.ts";
import { chainEnv, isolatedEnv, startTestChain, type TestChain } from "../../../testing/indexer-stack.ts";
import { freePort } from "../../../testing/ports.ts";
import { eventually } from "../../../testing/eventually.ts";
import { migrate } from "../db/migrate.ts";
import { startIndexer } from "../../../indexer/process.ts";
import { viewsFollow } from "../../../indexer/views.ts";

const ROOT = resolve(import.meta.dir, "../../..");
let chain: TestChain;
let db: Awaited<ReturnType<typeof createTestDatabase>>;
let sql: postgres.Sql;
const dir = mkdtempSync(join(tmpdir(), "paysession-seat-"));
const nodes: ReturnType<typeof Bun.spawn>[] = [];

beforeAll(async () => {
  chain = await startTestChain("local");
  db = await createTestDatabase();
  sql = postgres(db.url, { max: 2, onnotice: () => {} });
  await migrate(sql);
});
afterAll(async () => {
  for (const n of nodes) {
    try {
      process.kill(-n.pid, "SIGKILL");
    } catch {
      // gone already
    }
  }
  await sql.end();
  await db.drop();
  await chain.chain.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function startNode(name: string, extra: Record<string, string> = {}, databaseUrl = db.url) {
  const env = isolatedEnv({
    ...chainEnv([chain]),
    DATABASE_URL: databaseUrl,
    SERVICE_INDEX_MODE: "full",
    SERVICE_INDEXER_POLLING_MS: "100",
    SERVICE_WS_URL_LOCAL: "off",
    SERVICE_INDEXER_PORT: String(await freePort()),
    SERVICE_DATA_DIR: join(dir, name),
    ...extra,
  });
  const proc = Bun.spawn(["bun", "api/src/nodes/indexer-main.ts"], {
    cwd: ROOT,
    env: { ...process.env, ...env } as Record<string, string>,
    stdout: process.env.SEAT_TEST_LOGS ? "inherit" : "ignore",
    stderr: process.env.SEAT_TEST_LOGS ? "inherit" : "ignore",
    detached: true,
  });
  nodes.push(proc);
  return proc;
}

async function holder(): Promise<{ node: string; pid: number; valid: boolean } | undefined> {
  const [row] = await sql`select l.holder as node, n.pid, l.expires_at > now() as valid from app.leases l join app.nodes n on n.id = l.holder where l.name = 'indexer'`;
  return row ? { node: String(row.node), pid: Number(row.pid), valid: Boolean(row.valid) } : undefined;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const childrenOf = (pid: number) =>
  Bun.spawnSync(["pgrep", "-P", String(pid)]).stdout.toString().split("\n").filter(Boolean).map(Number);

async function payAndWaitIndexed(timeoutMs: number): Promise<{ txHash: string; ms: number }> {
  const t0 = Date.now();
  const to = privateKeyToAccount(generatePrivateKey()).address;
  const { transactionHash } = await chain.mint(to, 1_000_000n);
  await eventually(
    async () => (await sql`select 1 from indexer.transfers where tx_hash = ${transactionHash}`.catch(() => [])).length === 1,
    `transfer ${transactionHash} indexed`,
    timeoutMs,
  );
  return { txHash: transactionHash, ms: Date.now() - t0 };
}

/** How many rows `schema`.transfers has of `txHash` (0 while the table is not there). */
async function rowsIn(schema: string, txHash: string, on = sql): Promise<number> {
  const rows = await on.unsafe(`select count(*)::int as n from "${schema}".transfers where tx_hash = $1`, [txHash]).catch(() => [{ n: 0 }]);
  return Number(rows[0]!.n);
}

test("warm standby: its Ponder runs and is caught up before the holder is killed; then the service's reads follow its schema", async () => {
  const a = await startNode("a");
  const first = await eventually(async () => (await holder())?.pid === a.pid && (await holder()), "node a holding the lease", 60_000);
  const b = await startNode("b", { SERVICE_INDEXER: "standby" });
  await eventually(async () => (await sql`select 1 from app.nodes where pid = ${b.pid} and indexer = 'standby'`).length === 1, "node b registered as standby", 60_000);
  const before = await payAndWaitIndexed(30_000);

  // Before the kill: the standby runs a Ponder of its own, into a schema of its own, and that
  // index already holds the payment just made (caught up, not started at the takeover).
  const ponderOfB = childrenOf(b.pid);
  expect(ponderOfB.length).toBeGreaterThan(0);
  const aSchema = await viewsFollow(sql);
  expect(aSchema).not.toBeNull();
  const bSchemas = (await sql`select nspname from pg_namespace where nspname like 'indexer\\_%' and nspname <> ${aSchema!} and nspname <> 'indexer_meta'`).map((r) => String(r.nspname));
  expect(bSchemas.length).toBe(1);
  const bSchema = bSchemas[0]!;
  await eventually(async () => (await rowsIn(bSchema, before.txHash)) === 1, "the standby's own index caught up", 30_000);

  // a's node process dies at once (not its process group): its Ponder must not outlive it.
  const ponderOfA = childrenOf(a.pid);
  expect(ponderOfA.length).toBeGreaterThan(0);
  process.kill(a.pid, "SIGKILL");
  await eventually(() => ponderOfA.every((pid) => !alive(pid)), "a's orphaned Ponder gone", 5000);

  // b takes the seat; the service's reads (schema `indexer`) now resolve to b's schema, and a
  // payment made after the kill is seen through them — by the Ponder b ran before the kill.
  await eventually(async () => (await holder())?.pid === b.pid, "b holding the seat", 30_000);
  await eventually(async () => (await viewsFollow(sql)) === bSchema, "the views following b's schema", 10_000);
  const paid = await payAndWaitIndexed(30_000);
  expect(await rowsIn(bSchema, paid.txHash)).toBe(1);
  expect(childrenOf(b.pid)).toEqual(ponderOfB);
  expect(ponderOfB.every(alive)).toBe(true);
  const now = await holder();
  expect(now?.node).not.toBe(first && first.node);
  // The first transfer is there once, through the views too.
  const rows = await sql`select count(*)::int as n from indexer.transfers where tx_hash = ${before.txHash}`;
  expect(rows[0]!.n).toBe(1);
}, 150_000);

test("a node that loses the seat stops following at once but goes on indexing; a holder gone silent is ended once its lease expires", async () => {
  const h = (await holder())!;
  const ponder = childrenOf(h.pid);
  expect(ponder.length).toBeGreaterThan(0);
  const followed = await viewsFollow(sql);
  // Another node takes the seat, as if ours had been cut off past its lease: it takes the lease,
  // then the lock (which ours lets go when it sees the lease is not its own any more)…
  const thief = postgres(db.url, { max: 1, onnotice: () => {} });
  try {
    await sql`update app.leases set holder = 'node_thief', expires_at = now() + interval '4 seconds' where name = 'indexer'`;
    const [{ pid: thiefPid }] = (await thief`select pg_backend_pid() as pid`) as unknown as [{ pid: number }];
    const locked = thief`select pg_advisory_lock(7301552020::bigint)`.then(() => Date.now());
    await eventually(async () => (await sql`select 1 from app.nodes where pid = ${h.pid} and indexer = 'standby'`).length === 1, "back to standby", 5000);
    await locked;
    // The views are the thief's to switch now: ours does not touch them, and its Ponder goes on.
    await sql`drop view indexer.chain_heads`;
    await Bun.sleep(2500);
    expect(await viewsFollow(sql)).toBeNull();
    expect(ponder.every(alive)).toBe(true);
    // …then goes silent (its connection stays open, its lease runs out): ours ends that session, takes the seat, and follows again.
    await eventually(async () => (await holder())?.pid === h.pid, "the seat taken again", 30_000);
    expect((await sql`select 1 from pg_stat_activity where pid = ${thiefPid}`).length).toBe(0);
    await eventually(async () => (await viewsFollow(sql)) === followed, "the views following it again", 10_000);
    await payAndWaitIndexed(45_000);
  } finally {
    await thief.end({ timeout: 1 }).catch(() => {});
  }
}, 120_000);

test("a clean stop releases the lease at once", async () => {
  const h = (await holder())!;
  process.kill(h.pid, "SIGTERM");
  await eventually(async () => (await sql`select 1 from app.leases where name = 'indexer'`).length === 0, "lease released", 20_000);
  await eventually(() => !alive(h.pid), "node exited", 20_000);
}, 60_000);

test("a start aborted (the seat lost meanwhile) stops where it is: no Ponder left running, the start rejected", async () => {
  const port = await freePort();
  const abort = new AbortController();
  const start = startIndexer({
    databaseUrl: db.url,
    port,
    env: isolatedEnv({ ...chainEnv([chain]), SERVICE_INDEX_MODE: "full", SERVICE_INDEXER_POLLING_MS: "100", SERVICE_WS_URL_LOCAL: "off" }),
    clearStaleLock: true,
    signal: abort.signal,
  });
  // Abort once its Ponder is spawned (the child's command line names our port).
  const ponderPids = () => Bun.spawnSync(["pgrep", "-f", `ponder-child.ts start .*--port ${port} `]).stdout.toString().split("\n").filter(Boolean).map(Number);
  await eventually(() => ponderPids().length > 0, "Ponder spawned", 30_000);
  abort.abort();
  await expect(start).rejects.toThrow();
  await eventually(() => ponderPids().length === 0, "the spawned Ponder gone", 5000);
}, 60_000);

test("an index of an older build (schema indexer itself) is moved to the first holder's schema and resumed there, not built again", async () => {
  const old = await createTestDatabase();
  const oldSql = postgres(old.url, { max: 1, onnotice: () => {} });
  try {
    await migrate(oldSql);
    // The older build: one Ponder writing schema `indexer` itself.
    const legacy = await startIndexer({
      databaseUrl: old.url,
      port: await freePort(),
      env: isolatedEnv({ ...chainEnv([chain]), SERVICE_INDEX_MODE: "full", SERVICE_INDEXER_POLLING_MS: "100", SERVICE_WS_URL_LOCAL: "off" }),
    });
    await legacy.waitUntilReady();
    const to = privateKeyToAccount(generatePrivateKey()).address;
    const { transactionHash } = await chain.mint(to, 1_000_000n);
    await eventually(async () => (await oldSql`select 1 from indexer.transfers where tx_hash = ${transactionHash}`).length === 1, "indexed by the older build", 30_000);
    await legacy.stop();
    const [{ oid }] = (await oldSql`select 'indexer.transfers'::regclass::oid::int as oid`) as unknown as [{ oid: number }];

    const node = await startNode("legacy", {}, old.url);
    await eventually(async () => (await viewsFollow(oldSql)) === "indexer_1", "the views following indexer_1", 60_000);
    // The same table, resumed (Ponder's crash recovery in the renamed schema), not a new index built again.
    expect((await oldSql`select 'indexer_1.transfers'::regclass::oid::int as oid`)[0]!.oid).toBe(oid);
    // Its unfinalized blocks reverted by the crash recovery and indexed again: the row comes back, once.
    await eventually(async () => (await rowsIn("indexer_1", transactionHash, oldSql)) === 1, "the older build's transfer in indexer_1", 30_000);
    expect((await oldSql`select count(*)::int as n from indexer.transfers where tx_hash = ${transactionHash}`)[0]!.n).toBe(1);
    process.kill(node.pid, "SIGTERM");
    await eventually(() => !alive(node.pid), "node exited", 20_000);
  } finally {
    await oldSql.end();
    await old.drop();
  }
}, 120_000);
