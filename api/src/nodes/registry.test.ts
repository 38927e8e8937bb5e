/**
 * The node registry as an operator meets it: processes that register and beat, `admin nodes`,
 * /readyz's summary, and a build older than its database refusing to start.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { resolve } from "node:path";
import postgres from "postgres";
import { DatabaseAhead, migrate } from "../db/migrate.ts";
import { createTestDatabase } from "../../../testing/database.ts";
import { startTestService, type TestService } from "../../../testing/service.ts";
import { isolatedEnv } from "../../../testing/indexer-stack.ts";
import { listNodes } from "./registry.ts";

const ROOT = resolve(import.meta.dir, "../../..");
let service: TestService;

beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await service.close();
});

function run(args: string[], databaseUrl: string) {
  return Bun.spawnSync(["bun", ...args], { cwd: ROOT, env: { ...process.env, ...isolatedEnv({ DATABASE_URL: databaseUrl }) }, stdout: "pipe", stderr: "pipe" });
}

test("a running API process is registered with its roles, host, build and beat; admin nodes shows it", async () => {
  const nodes = await listNodes(service.services.database.sql);
  const me = nodes.find((n) => n.id === service.services.presence.info.id);
  expect(me).toBeDefined();
  expect(me!.alive).toBe(true);
  expect(me!.roles).toContain("api");
  expect(me!.pid).toBe(process.pid);
  expect(me!.migration).toMatch(/^\d{4}_/);
  expect(me!.beatAgeMs).toBeLessThan(5000);

  const out = run(["run", "--silent", "admin", "nodes", "--json"], service.databaseUrl);
  expect(out.exitCode).toBe(0);
  const listed = JSON.parse(out.stdout.toString());
  expect(listed.nodes.map((n: { id: string }) => n.id)).toContain(me!.id);
  const human = run(["run", "--silent", "admin", "nodes"], service.databaseUrl).stdout.toString();
  expect(human).toContain(me!.id);
  expect(human).toContain("alive");
  expect(human).toContain("indexer: no node holds the indexer lease");
}, 30_000);

test("/readyz summarizes the registry: this node, live nodes by role, builds, who indexes", async () => {
  const { status, body } = await service.call("GET", "/readyz");
  expect(status).toBe(200);
  expect(body.nodes.self).toBe(service.services.presence.info.id);
  expect(body.nodes.alive).toBeGreaterThanOrEqual(1);
  expect(body.nodes.roles.api).toBeGreaterThanOrEqual(1);
  expect(body.nodes.versions).toEqual([`${service.services.presence.info.version} ${service.services.presence.info.migration}`]);
  expect(body.nodes.indexer).toBeNull();
  const sql = service.services.database.sql;
  await sql`insert into app.leases (name, holder, expires_at) values ('indexer', ${service.services.presence.info.id}, now() - interval '1 second')`;
  try {
    const again = await service.call("GET", "/readyz");
    expect(again.body.nodes.indexer).toMatchObject({ node: service.services.presence.info.id, leaseValid: false });
    expect(again.body.nodes.indexer.host).toBe(service.services.presence.info.host);
  } finally {
    await sql`delete from app.leases where name = 'indexer'`;
  }
});

test("a build older than the database refuses to start, saying why, and changes nothing", async () => {
  const tdb = await createTestDatabase();
  const sql = postgres(tdb.url, { max: 1, onnotice: () => {} });
  try {
    await migrate(sql);
    await sql`insert into app.__migrations (tag, hash) values ('9999_from_a_newer_build', 'x')`;
    await expect(migrate(sql)).rejects.toBeInstanceOf(DatabaseAhead);
    for (const entry of [["api/src/sessions/main.ts"], ["api/src/webhooks/main.ts"], ["run", "--silent", "admin", "key:list", "--merchant", "acct_x"]]) {
      const out = run(entry, tdb.url);
      expect(out.exitCode).not.toBe(0);
      const err = out.stderr.toString();
      expect(err).toContain("refusing to start: the database was migrated by a newer build");
      expect(err).toContain("9999_from_a_newer_build");
      expect(err).not.toContain("    at "); // a sentence for the operator, not a stack trace
    }
    // Nobody registered, nothing applied.
    expect((await sql`select count(*)::int as n from app.nodes`)[0]!.n).toBe(0);
  } finally {
    await sql.end();
    await tdb.drop();
  }
}, 60_000);
