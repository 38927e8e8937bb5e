/**
 * A runner killed with SIGKILL in the middle of its work and started again loses no
 * transition and repeats none: state, event and effects are one transaction.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { resolve } from "node:path";
import { chainEnv, isolatedEnv } from "../../../testing/indexer-stack.ts";
import { startLifecycleStack, type LifecycleStack } from "../../../testing/lifecycle.ts";

let stack: LifecycleStack;
beforeAll(async () => {
  // No runner in the API process: the only runner is the standalone one we kill.
  stack = await startLifecycleStack({ env: { SERVICE_SESSION_RUNNER: "false", SERVICE_SWEEPER: "false" } });
}, 60_000);
afterAll(async () => {
  await stack?.close();
});

function startRunner() {
  return Bun.spawn(["bun", resolve(import.meta.dir, "main.ts")], {
    env: { ...process.env, ...isolatedEnv({ DATABASE_URL: stack.svc.databaseUrl, SERVICE_RUNNER_POLL_MS: "20", SERVICE_RUNNER_CONCURRENCY: "4", ...chainEnv(stack.chains) }) } as Record<string, string>,
    stdout: "ignore",
    stderr: "inherit",
  });
}

test("SIGKILL mid-flight, restart: every session FUNDED once, no lost or repeated transition", async () => {
  const N = 80;
  const sessions = await Promise.all(Array.from({ length: N }, () => stack.create("1.00")));
  for (const s of sessions) await stack.pay(s, 1_000_000n);
  const sql = stack.svc.services.database.sql;
  const ids = sessions.map((s) => s.id);
  const funded = async () => (await sql`select count(*)::int as n from app.payment_sessions where id in ${sql(ids)} and status = 'FUNDED'`)[0]!.n as number;

  const first = startRunner();
  const deadline = Date.now() + 20_000;
  while ((await funded()) < 3 && Date.now() < deadline) await Bun.sleep(2);
  first.kill("SIGKILL");
  await first.exited;
  const atKill = await funded();
  // The kill came in the middle of the work: some sessions done, others not yet.
  expect(atKill).toBeGreaterThanOrEqual(3);
  expect(atKill).toBeLessThan(N);

  const second = startRunner();
  try {
    for (const s of sessions) await stack.waitFor(s.id, "FUNDED", 20_000);
  } finally {
    second.kill("SIGTERM");
    await second.exited;
  }
  const counts = await sql`select session_id, count(*)::int as n, array_agg(status order by sequence) as statuses from app.session_events where session_id in ${sql(ids)} group by session_id`;
  expect(counts.length).toBe(N);
  for (const c of counts) expect(c.statuses).toEqual(["PENDING", "FUNDED"]);
  const sweeps = await sql`select session_id, count(*)::int as n from app.sweeps where session_id in ${sql(ids)} group by session_id`;
  expect(sweeps.length).toBe(N);
  for (const w of sweeps) expect(w.n).toBe(1);
}, 60_000);
