/**
 * Three API processes on one database, a key hammered through them in turn (as a round-robin
 * load balancer spreads it): the service admits the documented limit once, not three times; a
 * node stopped or gone silent leaves the registry and the others' shares grow back.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { loadConfig } from "../config.ts";
import { startService, type RunningService } from "../server.ts";
import { startTestService, TEST_CHAIN_ENV, type TestService } from "../../../testing/service.ts";
import { NetworkReadiness } from "../onchain/network-status.ts";
import { loadChainsConfig } from "../../../shared/chains/config.ts";
import { eventually } from "../../../testing/eventually.ts";
import { hammerFromChild } from "../../../testing/limit-hammer.ts";

const PER_SECOND = 20;
const BURST = 20;
const LIMITS = { SERVICE_RATE_LIMIT_PER_SECOND: String(PER_SECOND), SERVICE_RATE_LIMIT_BURST: String(BURST), SERVICE_WEBHOOK_WORKER: "false" };

let first: TestService;
const others: RunningService[] = [];
let key: string;

async function another(): Promise<RunningService> {
  const config = loadConfig({ ...TEST_CHAIN_ENV, ...LIMITS, SERVICE_PORT: "0", SERVICE_ENCRYPTION_KEY: first.config.encryptionKey!.toString("base64"), DATABASE_URL: first.databaseUrl });
  const networks = loadChainsConfig(TEST_CHAIN_ENV).networks;
  const s = await startService(config, () => {}, { networks, readiness: NetworkReadiness.trusted(networks) });
  others.push(s);
  return s;
}

beforeAll(async () => {
  first = await startTestService(LIMITS);
  await another();
  await another();
  ({ sandboxKey: key } = await first.merchant());
});
afterAll(async () => {
  for (const s of others) await s.stop().catch(() => {});
  await first.close();
});

/** Requests at `rate`/s for `ms`, round-robin over `urls`, from a process of its own (a client the services' loop does not hold up). */
const hammer = (urls: string[], ms: number, rate = 120) => hammerFromChild({ urls, path: "/payment-sessions?limit=1", key, rate, ms });

test("three API processes hold one key at its documented limit (±10 %), not three times it", async () => {
  const urls = [first.url, ...others.map((s) => s.url)];
  // Every process has seen the other two beat.
  await eventually(() => [first, ...others].every((s) => s.services.presence.apiNodes === 3), "every process counting three API nodes");
  const { admitted, refused, seconds, odd } = await hammer(urls, 4000);
  const expected = BURST + PER_SECOND * seconds;
  expect(odd).toEqual({});
  expect(refused).toBeGreaterThan(0);
  // Each process admits whole requests from its fraction of the bucket (20 ÷ 3 = 6.67 tokens): at
  // the end of a run each may hold back less than one, so the floor allows one token per process.
  expect(admitted).toBeGreaterThanOrEqual(Math.floor(expected * 0.9) - 3);
  expect(admitted).toBeLessThanOrEqual(Math.ceil(expected * 1.1));
}, 30_000);

test("a node that stops, or dies without a word, leaves the registry: the others' shares grow back", async () => {
  const [b, c] = others as [RunningService, RunningService];
  await c.stop(); // a clean stop deletes its row at once
  others.pop();
  await eventually(() => [first, b].every((s) => s.services.presence.apiNodes === 2), "two API nodes counted after a clean stop");
  // A third API node that then dies without a word (SIGKILL, its host gone): its row stays and ages.
  const sql = first.services.database.sql;
  await sql`insert into app.nodes (id, roles, host, pid, version, migration) values ('node_silent', ${sql.array(["api"])}, 'elsewhere', 1, '0', 'x')`;
  await eventually(() => [first, b].every((s) => s.services.presence.apiNodes === 3), "the newcomer counted");
  await sql`update app.nodes set heartbeat_at = now() - interval '8 seconds' where id = 'node_silent'`;
  await eventually(() => [first, b].every((s) => s.services.presence.apiNodes === 2), "the silent node no longer counted");
  // Two left: together they admit the whole limit again, not two thirds of it.
  await Bun.sleep(1000 * (BURST / PER_SECOND)); // buckets full again
  const { admitted, seconds } = await hammer([first.url, b.url], 3000);
  const expected = BURST + PER_SECOND * seconds;
  // Each process admits whole requests from its fraction of the bucket (20 ÷ 3 = 6.67 tokens): at
  // the end of a run each may hold back less than one, so the floor allows one token per process.
  expect(admitted).toBeGreaterThanOrEqual(Math.floor(expected * 0.9) - 3);
  expect(admitted).toBeLessThanOrEqual(Math.ceil(expected * 1.1));
}, 30_000);
