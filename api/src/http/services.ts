import type { Config } from "../config.ts";
import type { Database } from "../db/client.ts";
import type { RateLimiter } from "./rate-limit.ts";
import type { Resolver } from "../webhooks/target.ts";
import type { NetworkConfig } from "../../../shared/chains/config.ts";
import type { Faucet } from "../sandbox/faucet.ts";
import type { NetworkReadiness } from "../onchain/network-status.ts";
import type { MetricsRegistry } from "./metrics.ts";
import type { Group } from "../db/group.ts";
import type { KeyLookup } from "../credentials/store.ts";
import type { KeyMemo } from "../credentials/key-memo.ts";
import type { CreateGroup } from "../sessions/create/group.ts";
import type { NodePresence } from "../nodes/presence.ts";
import type { MailMode } from "../mail/mode.ts";

/** What the HTTP layer needs from the rest of the process (built by server.ts, which owns the parts). */
export interface Services {
  config: Config;
  database: Database;
  limiter: RateLimiter;
  /** keyId → when its last_used_at was last written (see auth.ts). */
  keyTouchedAt: Map<string, number>;
  /** The service's encryption key (credentials/encryption-key.ts): seals webhook secrets, Idempotency-Key records and flash cookies (credentials/seal.ts). */
  encryptionKey: Buffer;
  /** DNS for webhook URLs (tests replace it). */
  resolver?: Resolver;
  /** Sandbox faucet: TestUSD and payments on the local test networks. */
  faucet: Faucet;
  /** Enabled networks of both environments (shared/chains), from the boot's chain config. */
  networks: NetworkConfig[];
  /** Which of them are ready (deposit factory deployed): sessions are offered only there. */
  readiness: NetworkReadiness;
  /** API-key lookups, grouped (credentials/store.ts apiKeyLookups): one per request but creates and retrieves that reuse one. */
  apiKeys: Group<string, KeyLookup | undefined>;
  /** Each key's last lookup, which creates and retrieves may reuse (credentials/key-memo.ts). */
  keyMemo: KeyMemo;
  /** Creates, written with group commit (sessions/create/group.ts). */
  creates: CreateGroup;
  /** This process in the node registry (nodes/presence.ts): the live API nodes the limiter divides by. */
  presence: NodePresence;
  /** Where mail goes (mail/mode.ts): "off" refuses what needs mail; "catcher" shows it in the sandbox Outbox. */
  mailMode: MailMode;
  /** GET /metrics (server.ts sets it once the HTTP front exists). */
  metrics?: MetricsRegistry;
}
