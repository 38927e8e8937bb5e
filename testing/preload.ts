/**
 * Loaded by `bun test` before any test file (bunfig.toml). Starts one real embedded
 * Postgres for the whole run, on a free port in a fresh temp directory, and publishes
 * its URL as PAYSESSION_TEST_PG_URL. Each test file then makes its own database with
 * `createTestDatabase()` (./database.ts), so files never see each other's rows.
 * When DATABASE_URL is set, that server is used instead and nothing is started.
 */
import { afterAll } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startEmbeddedPostgres, type EmbeddedDatabase } from "../api/src/db/embedded.ts";
import { freePort } from "./ports.ts";

let embedded: EmbeddedDatabase | undefined;
if (!process.env.PAYSESSION_TEST_PG_URL) {
  if (process.env.DATABASE_URL) {
    process.env.PAYSESSION_TEST_PG_URL = process.env.DATABASE_URL;
  } else {
    const dir = mkdtempSync(join(tmpdir(), "paysession-test-pg-"));
    embedded = await startEmbeddedPostgres({
      dataDir: join(dir, "pg"),
      port: await freePort(),
      persistent: false,
    });
    process.env.PAYSESSION_TEST_PG_URL = embedded.url;
  }
}

afterAll(async () => {
  await embedded?.stop();
});
