/**
 * The webhook delivery worker on its own: `bun api/src/webhooks/main.ts`. The API process
 * runs one too unless SERVICE_WEBHOOK_WORKER=false; any number may run side by side (they
 * share the work through the table). Uses DATABASE_URL, or the embedded Postgres of the
 * data dir when `bun run dev` has it running. Needs the same SERVICE_ENCRYPTION_KEY (or
 * data dir) as the API, to open the endpoints' secrets. Stops cleanly on SIGINT/SIGTERM.
 */
import { ConfigError, databaseUrlOf, loadConfig } from "../config.ts";
import { connect } from "../db/client.ts";
import { joinAsNode } from "../nodes/join.ts";
import { resolveEncryptionKey } from "../credentials/encryption-key.ts";
import { WebhookWorker } from "./worker.ts";
import { stopOnSignals } from "../shutdown.ts";
import { findInChain } from "../../../shared/error-chain.ts";

const log = (line: string) => console.log(`[paysession-webhooks] ${line}`);

let config;
try {
  config = loadConfig();
} catch (err) {
  const bad = findInChain(err, (x) => x instanceof ConfigError);
  if (!bad) throw err;
  console.error(bad.message);
  process.exit(1);
}

const url = databaseUrlOf(config);
const database = connect(url, { max: Math.min(config.dbPoolSize, 10) });
const presence = await joinAsNode(database.sql, ["webhooks"], log);
const { key } = resolveEncryptionKey(config.encryptionKey, config.dataDir);
const worker = new WebhookWorker({ sql: database.sql, encryptionKey: key, settings: config.webhooks, log });
await worker.start();
log(`delivering webhooks (concurrency ${config.webhooks.concurrency}, ${config.webhooks.endpointConcurrency} per endpoint)`);

stopOnSignals(log, async () => {
  await worker.stop();
  await presence.stop();
  await database.close();
});
