/**
 * TEST/BENCH helper for the payment lifecycle: real anvil chain(s) with TestUSD and the
 * factory, a real service (API, session runner, webhook worker, and the sweeper when it is
 * enabled) on its own database, and the real Ponder indexer writing into that database.
 */
import type { Address } from "viem";
import { eventually } from "./eventually.ts";
import { chainEnv, startTestChain, startTestIndexer, type TestChain } from "./indexer-stack.ts";
import type { IndexerProcess } from "../indexer/process.ts";
import { startTestService, type TestService } from "./service.ts";

export interface LifecycleStack {
  svc: TestService;
  chains: TestChain[];
  indexer: IndexerProcess;
  key: string;
  liveKey: string;
  /** POST /payment-sessions with the sandbox key. */
  create(amount: string, extra?: Record<string, unknown>): Promise<{ id: string; token: string; networks: { chainId: number; depositAddress: string }[] }>;
  /** A real on-chain payment: TestUSD minted into the session's deposit address on `chainId`. */
  pay(session: { networks: { chainId: number; depositAddress: string }[] }, baseUnits: bigint, chainId?: number): Promise<{ blockNumber: bigint; transactionHash: `0x${string}` }>;
  status(id: string): Promise<{ status: string; statusReason: string; history: { status: string; reason: string; detail: Record<string, unknown> }[] }>;
  /** Until the session has reached `status` (it may have moved on since); its current state. */
  waitFor(id: string, status: string, timeoutMs?: number): Promise<{ status: string; statusReason: string; history: { status: string; reason: string; detail: Record<string, unknown> }[] }>;
  close(): Promise<void>;
}

/**
 * `heartbeatSeconds`: the chains also mine an empty block this often, as `bun run dev`'s does
 * (default 1; 0: blocks only on demand, for tests that count blocks themselves — expiries
 * there are decided only after the test mines a block stamped after them).
 */
export async function startLifecycleStack(
  opts: { chains?: ("local" | "local2")[]; env?: Record<string, string>; heartbeatSeconds?: number } = {},
): Promise<LifecycleStack> {
  const chains: TestChain[] = [];
  for (const k of opts.chains ?? ["local"]) chains.push(await startTestChain(k, undefined, opts.heartbeatSeconds ?? 1));
  const env = {
    ...chainEnv(chains),
    SERVICE_RPC_URL_BASE: "", // sandbox chains only: no production network (and no relayer key) here
    SERVICE_SESSION_RUNNER: "true",
    SERVICE_SWEEPER: "true",
    SERVICE_SWEEP_POLL_MS: "50",
    SERVICE_RUNNER_POLL_MS: "20",
    SERVICE_INDEX_MODE: "full",
    ...(opts.env ?? {}),
  };
  const svc = await startTestService(env);
  const indexer = await startTestIndexer(svc.databaseUrl, chains, opts.env ?? {});
  const m = await svc.merchant("Lifecycle");
  const stack: LifecycleStack = {
    svc,
    chains,
    indexer,
    key: m.sandboxKey,
    liveKey: m.liveKey,
    async create(amount, extra = {}) {
      const r = await svc.call("POST", "/payment-sessions", { auth: m.sandboxKey, body: { amount, currency: "USD", ...extra } });
      if (r.status !== 201) throw new Error(`create failed: ${JSON.stringify(r.body)}`);
      return { id: r.body.paymentSessionId, token: r.body.paymentSessionToken, networks: r.body.networks };
    },
    async pay(session, baseUnits, chainId = chains[0]!.chain.chainId) {
      const chain = chains.find((c) => c.chain.chainId === chainId)!;
      const deposit = session.networks.find((n) => n.chainId === chainId)!;
      return chain.mint(deposit.depositAddress as Address, baseUnits);
    },
    async status(id) {
      return (await svc.call("GET", `/payment-sessions/${id}`, { auth: m.sandboxKey })).body;
    },
    async waitFor(id, status, timeoutMs = 15_000) {
      return eventually(async () => {
        const s = await stack.status(id);
        return s.history.some((h) => h.status === status) ? s : undefined;
      }, `${id} to be ${status}`, timeoutMs);
    },
    async close() {
      await stack.indexer.stop(); // the one running now (a test may have restarted it)
      await svc.close();
      for (const c of chains) await c.chain.stop();
    },
  };
  return stack;
}

