/**
 * The sweeper: carries out the queued rows of app.sweeps, one relayer transaction per batch,
 * and records each outcome. It never changes a session's status: it wakes the session actor
 * (wakeSessions) in the transaction that records a sweep `confirmed` or `failed`, and the actor
 * decides (FUNDED → SUCCEEDED, → ERROR sweep_failed, …).
 *
 * Per enabled network and relayer account, one loop. Any number of processes may run it (in
 * the API process, server.ts, or alone, sweeps/main.ts); the tables are the only shared state.
 *
 *   send    — in one database transaction holding a per-(chain, relayer) advisory lock (so
 *             nonces are handed out one at a time; a process that does not get it skips the
 *             round): claim due queued sweeps with FOR UPDATE SKIP LOCKED (none whose deposit
 *             already has a sweep in flight), fail the sandbox-forced ones at once, plan one
 *             sweep call (planBatch: one token, each deposit once), estimate gas, pick the nonce
 *             max(last recorded + 1, chain's pending nonce), sign, and record the transaction
 *             (`signed`, its hash in tx_hashes) with its sweeps `sending` and attempts + 1.
 *             Only after that commit is the transaction broadcast (then `sent`).
 *   watch   — every unfinished transaction of the relayer (whoever signed it: a process that
 *             died leaves them to the others): look up the receipt of every hash ever signed for
 *             its nonce; once one is mined and deep enough, record the outcome of each sweep
 *             (interpretReceipt). Not mined: rebroadcast the same signed bytes when this
 *             process has them and the node lost them; after SERVICE_SWEEP_STUCK_SECONDS without
 *             progress re-sign with the SAME nonce and fees + 25 % (the new hash is recorded
 *             before it is broadcast). A nonce the chain used for none of our hashes releases
 *             its sweeps, queued again without counting the attempt.
 *
 * Why nothing is sent twice: every hash is committed before it is broadcast, and a sweep stays
 * bound to one nonce until that nonce is spent on-chain. So whichever of a nonce's transactions
 * lands is found, and sweeps go to a new nonce only when the old one can no longer land (its
 * transaction reverted, or another transaction used the nonce). (Were that ever wrong, a second
 * sweep would still only move whatever is left at the deposit to the same settlement address.)
 */
import type { Sql, TransactionSql } from "postgres";
import {
  BaseError,
  ExecutionRevertedError,
  keccak256,
  type Address,
  type Hex,
  type PrivateKeyAccount,
  type PublicClient,
  type TransactionReceipt,
  TransactionReceiptNotFoundError,
  zeroAddress,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import type { SweepSettings } from "../config.ts";
import { publicClientFor } from "../../../shared/chains/check.ts";
import type { NetworkConfig } from "../../../shared/chains/config.ts";
import { predictedFactoryAddress } from "../../../shared/contracts/addresses.ts";
import { wakeSessions } from "../effects/wake.ts";
import {
  bumpFees,
  interpretReceipt,
  isConfirmed,
  marketFees,
  nextNonce,
  planBatch,
  retryDelayMs,
  withGasMargin,
  type BatchPlan,
  type Fees,
  type SweepRow,
} from "./plan.ts";
import { relayerVerdict, sessionOverBudget } from "./guard.ts";
import { reconcileWithChain } from "./reconcile.ts";
import { Pump } from "../pump.ts";
import { newSweepTransactionId, SWEEP_CHANNEL } from "../effects/sweep-queue.ts";
import { asJson } from "../db/client.ts";

export const FORCED_FAILURE_ERROR = "simulated sweep failure (sandbox)";
/** Unfinished transactions per relayer and chain before new batches wait. */
const MAX_IN_FLIGHT = 16;
const FEE_BUMP_PERCENT = 25;
/**
 * How long a spent nonce with none of our receipts is looked at again before its sweeps are
 * released (queued again). Were it ours after all, the released sweeps would find their
 * deposits empty and send nothing (sendDue), so this only spares needless rounds.
 */
const NONCE_SPENT_GRACE_MS = 3_000;

export interface SweeperHooks {
  /** Tests: runs after a transaction is recorded, before it is broadcast; throwing simulates a crash there. */
  beforeBroadcast?: (tx: { hash: Hex; nonce: bigint; replacement: boolean }) => void | Promise<void>;
}

export interface SweeperOptions {
  sql: Sql;
  networks: readonly NetworkConfig[];
  /** chainId → the relayer's private key there (relayerKeysFor in relayer.ts). */
  relayerKeys: Record<number, Hex>;
  settings: SweepSettings;
  log?: (line: string) => void;
  random?: () => number;
  /** A viem client per network (default: publicClientFor). */
  clientFor?: (net: NetworkConfig) => PublicClient;
  hooks?: SweeperHooks;
  /** Tests: how long a mismatch with the chain lasts before records are dropped (reconcile.ts). */
  reconcileGraceMs?: number;
}

export interface Sweeper {
  /** Look at the tables and chains now. */
  wake(): void;
  /** Stops after the step in progress; whatever is unfinished is picked up by the next sweeper. */
  stop(): Promise<void>;
}

export async function startSweeper(opts: SweeperOptions): Promise<Sweeper> {
  const log = opts.log ?? (() => {});
  const chains = opts.networks.map((net) => {
    const key = opts.relayerKeys[net.chainId];
    if (!key) throw new Error(`no relayer key for ${net.name} (chain ${net.chainId})`);
    return new ChainSweeper(opts, net, key, log);
  });
  const listener = await opts.sql.listen(
    SWEEP_CHANNEL,
    () => chains.forEach((c) => c.wake()),
    () => chains.forEach((c) => c.wake()),
  );
  for (const c of chains) {
    log(`sweeper: ${c.net.name} (chain ${c.net.chainId}) from relayer ${c.account.address}`);
    c.wake();
  }
  let stopped = false;
  return {
    wake: () => chains.forEach((c) => c.wake()),
    async stop() {
      if (stopped) return;
      stopped = true;
      const stopping = Promise.all(chains.map((c) => c.stop())); // each stops claiming at once
      await listener.unlisten().catch(() => {});
      await stopping;
    },
  };
}

interface TxRow {
  id: string;
  nonce: bigint;
  state: string;
  tx_hashes: string[] | string;
  tx_hash: string | null;
  /** The signed bytes of tx_hash, kept so that any process can broadcast them again. */
  raw_tx: string | null;
  max_fee_per_gas: string | null;
  age_ms: number;
}

interface ClaimedRow extends SweepRow {
  forceFailure: boolean;
  /** Attempts of every sweep of this session on this network: the transactions it already cost. */
  sessionAttempts: number;
}

const erc20BalanceAbi = [
  { type: "function", name: "balanceOf", stateMutability: "view", inputs: [{ name: "a", type: "address" }], outputs: [{ name: "", type: "uint256" }] },
] as const;

const firstLine = (e: unknown) => String((e as Error)?.message ?? e).split("\n")[0]!.slice(0, 500);

class ChainSweeper {
  readonly account: PrivateKeyAccount;
  private readonly relayer: string;
  private readonly client: PublicClient;
  private readonly factory: Address;
  private readonly sql: Sql;
  private readonly s: SweepSettings;
  private readonly random: () => number;
  /** Signed transactions of this process, by hash, to rebroadcast the very same bytes. */
  private readonly signed = new Map<string, { raw: Hex; fees: Fees; gas: bigint }>();
  private readonly lastBroadcastError = new Map<string, string>();
  /** Transaction id → when it was first seen out of step with the chain (reconcile.ts). */
  private readonly reconcileSeen = new Map<string, number>();
  /** Transaction id → when its nonce was first seen spent with none of its receipts found. */
  private readonly nonceSpentSeen = new Map<string, number>();
  private stopping = false;
  private readonly pump: Pump;
  /** Set once the factory's code was seen on this network (it cannot go away). */
  private factoryPresent = false;
  /** Why sweeps on this network wait now (factory missing, guard, relayer balance), for the log and readiness. */
  private waiting: string | undefined;

  constructor(
    private readonly opts: SweeperOptions,
    readonly net: NetworkConfig,
    key: Hex,
    private readonly log: (line: string) => void,
  ) {
    this.account = privateKeyToAccount(key);
    this.relayer = this.account.address.toLowerCase();
    this.client = opts.clientFor ? opts.clientFor(net) : publicClientFor(net);
    this.factory = net.factory ?? predictedFactoryAddress();
    this.sql = opts.sql;
    this.s = opts.settings;
    this.random = opts.random ?? Math.random;
    this.pump = new Pump(() => this.pass(), { name: `sweeper ${net.name}`, pollMs: this.s.pollMs, log });
  }

  wake(): void {
    this.pump.wake();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.pump.stop();
  }

  /**
   * One pass: follow the unfinished transactions, then send what is due. Returns when to look
   * again: at once after a send (more may be due), the poll interval while transactions are
   * open, else when the next queued sweep falls due.
   */
  private async pass(): Promise<number | undefined> {
    if (this.stopping) return undefined;
    const open = await this.watch();
    if (this.stopping) return undefined;
    const sent = open < MAX_IN_FLIGHT ? await this.sendDue() : 0;
    if (sent > 0) return 0;
    if (open > 0) return this.s.pollMs;
    const [next] = await this.sql`
      select (extract(epoch from (min(next_attempt_at) - now())) * 1000)::float8 as ms
        from app.sweeps where chain_id = ${this.net.chainId} and state = 'queued'`;
    const ms = next?.ms == null ? this.s.pollMs : Number(next.ms);
    // Due but not claimable (its deposit is in flight, or another process holds the nonce
    // lock): look again after a short pause rather than spin.
    return ms <= 0 ? Math.min(this.s.pollMs, 100) : Math.max(5, ms);
  }

  // ---------------------------------------------------------------- send

  /** Claims, plans, signs, records and broadcasts one batch. Returns how many sweeps it handled. */
  private async sendDue(): Promise<number> {
    const [due] = await this.sql`
      select 1 as one from app.sweeps
       where chain_id = ${this.net.chainId} and state = 'queued' and next_attempt_at <= now() limit 1`;
    if (!due) return 0;
    // Nothing is sent while the network cannot take a sweep or the relayer has spent its
    // budget: the due sweeps wait, with the reason recorded on each (and logged once).
    const blocked = (await this.factoryMissing()) ?? (await this.overSpent());
    if (blocked) {
      await this.deferDue(blocked.reason, blocked.waitMs);
      return 0;
    }
    this.setWaiting(undefined);
    const fees = await this.marketFees();
    let toSend: { raw: Hex; hash: Hex; nonce: bigint; txId: string; fees: Fees; gas: bigint } | undefined;
    const handled = await this.sql.begin(async (tx) => {
      const [lock] = await tx`select pg_try_advisory_xact_lock(hashtext(${`paysession-sweeps:${this.net.chainId}:${this.relayer}`})) as ok`;
      if (!lock?.ok) return 0;
      const rows = await tx`
        select s.id, s.session_id, s.deposit_address, s.settlement_address, s.token_address, s.attempts,
               p.force_sweep_failure,
               (select coalesce(sum(o.attempts), 0) from app.sweeps o where o.session_id = s.session_id and o.chain_id = s.chain_id)::int as session_attempts
          from app.sweeps s join app.payment_sessions p on p.id = s.session_id
         where s.chain_id = ${this.net.chainId} and s.state = 'queued' and s.next_attempt_at <= now()
           and not exists (select 1 from app.sweeps o
                            where o.chain_id = s.chain_id and o.deposit_address = s.deposit_address and o.state = 'sending')
         order by s.next_attempt_at, s.created_at, s.id
         limit ${this.s.batchSize}
         for update of s skip locked`;
      if (rows.length === 0) return 0;
      const claimed: ClaimedRow[] = rows.map((r) => ({
        id: r.id as string,
        sessionId: r.session_id as string,
        depositAddress: r.deposit_address as string,
        settlementAddress: r.settlement_address as string,
        tokenAddress: r.token_address as string,
        attempts: Number(r.attempts),
        forceFailure: r.force_sweep_failure === true || r.force_sweep_failure === "t",
        sessionAttempts: Number(r.session_attempts),
      }));

      // Sandbox: "force the next sweep of this session to fail" — nothing is sent.
      const forced = claimed.filter((r) => r.forceFailure);
      if (forced.length > 0) {
        const sessions = [...new Set(forced.map((r) => r.sessionId))];
        await tx`
          update app.sweeps set state = 'failed', attempts = ${this.s.maxAttempts}, last_error = ${FORCED_FAILURE_ERROR}, updated_at = now()
           where id in ${tx(forced.map((r) => r.id))}`;
        await tx`update app.payment_sessions set force_sweep_failure = false where id in ${tx(sessions)}`;
        await wakeSessions(tx, sessions);
        this.log(`sweeper ${this.net.name}: forced failure of ${forced.length} sweep(s) (sandbox)`);
      }
      // The per-session budget: a session that already cost this many transactions gets no more.
      const overBudget = claimed.flatMap((r) => {
        const reason = r.forceFailure ? undefined : sessionOverBudget(r.sessionAttempts, this.s);
        return reason ? [{ id: r.id, sessionId: r.sessionId, error: reason }] : [];
      });
      if (overBudget.length > 0) {
        await tx`
          update app.sweeps set state = 'failed', last_error = ${overBudget[0]!.error}, updated_at = now()
           where id in ${tx(overBudget.map((r) => r.id))}`;
        await wakeSessions(tx, [...new Set(overBudget.map((r) => r.sessionId))]);
        this.log(`sweeper ${this.net.name}: ${overBudget.length} sweep(s) stopped by the relayer-spend guard (per-session limit ${this.s.maxTxPerSession})`);
      }
      const stopped = new Set(overBudget.map((r) => r.id));
      const rest = claimed.filter((r) => !r.forceFailure && !stopped.has(r.id));
      const settledEarly = forced.length + overBudget.length;
      if (rest.length === 0) return settledEarly;

      let plan = planBatch(rest, this.factory);
      if (plan.mismatched.length > 0) {
        await this.recordFailedAttempts(tx, plan.mismatched.map((m) => ({ id: m.id, error: m.error })), true);
      }
      if (!plan.call) return settledEarly + plan.mismatched.length;

      // Never pay for a sweep of an empty deposit: someone else may have swept it (the factory's
      // sweep is open to anyone). Its rounds are done, having moved nothing; the session settles
      // on the outflow the indexer sees, whoever sent it.
      const empty = await this.emptyDeposits(plan);
      if (empty.length > 0) {
        const ids = plan.deposits.filter((d) => empty.includes(d.depositAddress.toLowerCase())).flatMap((d) => d.sweepIds);
        const done = await tx`
          update app.sweeps set state = 'confirmed', swept_amount = 0, transaction_id = null, updated_at = now(),
                 last_error = 'nothing to sweep: the deposit was already empty (swept by another transaction)'
           where id in ${tx(ids)} returning session_id`;
        await wakeSessions(tx, [...new Set(done.map((r) => r.session_id as string))]);
        this.log(`sweeper ${this.net.name}: ${ids.length} sweep(s) found their deposit already empty; nothing sent for them`);
        plan = planBatch(rest.filter((r) => !ids.includes(r.id) && !plan.mismatched.some((m) => m.id === r.id)), this.factory);
        if (!plan.call) return settledEarly + plan.mismatched.length + ids.length;
      }
      const sweepIds = plan.deposits.flatMap((d) => d.sweepIds);

      let gas: bigint;
      try {
        gas = withGasMargin(await this.client.estimateGas({ account: this.account.address as Address, to: plan.call.to, data: plan.call.data }));
      } catch (e) {
        if (!isRevert(e)) throw e; // an RPC problem: roll back, the sweeps stay due
        await this.recordFailedAttempts(tx, sweepIds.map((id) => ({ id, error: `gas estimation reverted: ${firstLine(e)}` })), true);
        return settledEarly + plan.mismatched.length + sweepIds.length;
      }
      // A relayer that cannot pay for the transaction makes the sweeps wait instead of fail.
      const balance = await this.client.getBalance({ address: this.account.address });
      const cost = gas * fees.maxFeePerGas;
      if (balance < cost) {
        const reason = `waiting: the relayer ${this.account.address} holds ${balance} wei on ${this.net.name}, a sweep may cost ${cost}; fund it`;
        await tx`
          update app.sweeps set next_attempt_at = now() + interval '30 seconds', last_error = ${reason}, updated_at = now()
           where id in ${tx(sweepIds)}`;
        this.setWaiting(reason);
        return 0;
      }
      const [last] = await tx`
        select max(nonce) as n from app.sweep_transactions
         where chain_id = ${this.net.chainId} and relayer = ${this.relayer} and state <> 'dropped'`;
      const dbNext = last?.n == null ? null : BigInt(last.n as string | bigint) + 1n;
      const pending = BigInt(await this.client.getTransactionCount({ address: this.account.address, blockTag: "pending" }));
      const nonce = nextNonce(dbNext, pending);
      const raw = await this.sign(nonce, plan.call, gas, fees);
      const hash = keccak256(raw);
      const txId = newSweepTransactionId();
      await tx`
        insert into app.sweep_transactions (id, chain_id, relayer, nonce, tx_hash, tx_hashes, state, max_fee_per_gas, raw_tx, sent_at)
        values (${txId}, ${this.net.chainId}, ${this.relayer}, ${nonce.toString()}::bigint, ${hash},
                ${JSON.stringify([hash])}::jsonb, 'signed', ${fees.maxFeePerGas.toString()}::numeric, ${raw}, now())`;
      await tx`
        update app.sweeps set state = 'sending', attempts = attempts + 1, transaction_id = ${txId}, last_error = null, updated_at = now()
         where id in ${tx(sweepIds)}`;
      toSend = { raw, hash, nonce, txId, fees, gas };
      return settledEarly + plan.mismatched.length + sweepIds.length;
    });
    if (toSend) {
      const t = toSend as { raw: Hex; hash: Hex; nonce: bigint; txId: string; fees: Fees; gas: bigint };
      this.signed.set(t.hash, { raw: t.raw, fees: t.fees, gas: t.gas });
      this.log(`sweeper ${this.net.name}: sending ${t.hash} (nonce ${t.nonce}, ${handled} sweep(s))`);
      await this.opts.hooks?.beforeBroadcast?.({ hash: t.hash, nonce: t.nonce, replacement: false });
      await this.broadcast(t.txId, t.hash, t.raw);
    }
    return handled;
  }

  /** Why nothing can be swept on this network now: the deposit factory has no code there. Checked until it has. */
  private async factoryMissing(): Promise<{ reason: string; waitMs: number } | undefined> {
    if (this.factoryPresent) return undefined;
    const code = await this.client.getCode({ address: this.factory });
    if (code && code !== "0x") {
      this.factoryPresent = true;
      return undefined;
    }
    return {
      reason: `waiting: the deposit factory ${this.factory} is not deployed on ${this.net.name} (bun run admin factory:deploy --chain ${this.net.chainId})`,
      waitMs: 30_000,
    };
  }

  /** The relayer-spend guard's verdict on this network (guard.ts). */
  private async overSpent(): Promise<{ reason: string; waitMs: number } | undefined> {
    const [c] = await this.sql`
      select count(*) filter (where created_at > now() - interval '1 minute')::int as minute,
             count(*)::int as hour
        from app.sweep_transactions
       where chain_id = ${this.net.chainId} and relayer = ${this.relayer} and created_at > now() - interval '1 hour'`;
    const verdict = relayerVerdict({ lastMinute: Number(c?.minute ?? 0), lastHour: Number(c?.hour ?? 0) }, this.s);
    return verdict.ok ? undefined : { reason: verdict.reason, waitMs: verdict.waitMs };
  }

  /** Due sweeps wait `waitMs` with `reason` recorded on them; nothing counts as an attempt. */
  private async deferDue(reason: string, waitMs: number): Promise<void> {
    await this.sql`
      update app.sweeps set next_attempt_at = now() + ${waitMs} * interval '1 millisecond', last_error = ${reason}, updated_at = now()
       where chain_id = ${this.net.chainId} and state = 'queued' and next_attempt_at <= now()`;
    this.setWaiting(reason);
  }

  /** Logs a reason to wait once, when it starts (and once when it ends). */
  private setWaiting(reason: string | undefined): void {
    if (reason === this.waiting) return;
    if (reason) this.log(`sweeper ${this.net.name}: ${reason}`);
    else if (this.waiting) this.log(`sweeper ${this.net.name}: sweeping again (${this.waiting.split(":")[0]} is over)`);
    this.waiting = reason;
  }

  /** What this sweeper waits for on its network, if anything (readiness output). */
  waitingFor(): string | undefined {
    return this.waiting;
  }

  /** The planned deposits that hold none of the batch's token (native coin, for a native-only recovery). */
  private async emptyDeposits(plan: BatchPlan): Promise<string[]> {
    const balances = await Promise.all(
      plan.deposits.map((d) =>
        plan.token === zeroAddress
          ? this.client.getBalance({ address: d.depositAddress })
          : this.client.readContract({ address: plan.token, abi: erc20BalanceAbi, functionName: "balanceOf", args: [d.depositAddress] }),
      ),
    );
    return plan.deposits.filter((_, i) => balances[i] === 0n).map((d) => d.depositAddress.toLowerCase());
  }

  private async sign(nonce: bigint, call: { to: Address; data: Hex }, gas: bigint, fees: Fees): Promise<Hex> {
    return this.account.signTransaction({
      type: "eip1559",
      chainId: this.net.chainId,
      nonce: Number(nonce),
      to: call.to,
      data: call.data,
      value: 0n,
      gas,
      maxFeePerGas: fees.maxFeePerGas,
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    });
  }

  /** Sends signed bytes; `signed` → `sent` when the node took them. Refusals are kept in last_error (the watch loop retries). */
  private async broadcast(txId: string, hash: Hex, raw: Hex): Promise<void> {
    try {
      await this.client.request({ method: "eth_sendRawTransaction", params: [raw] });
    } catch (e) {
      const msg = firstLine(e);
      if (!/already known|known transaction|already imported/i.test(msg)) {
        if (this.lastBroadcastError.get(hash) !== msg) {
          this.lastBroadcastError.set(hash, msg);
          this.log(`sweeper ${this.net.name}: broadcasting ${hash} failed (retried every poll): ${msg}`);
          await this.sql`update app.sweep_transactions set last_error = ${msg} where id = ${txId}`;
        }
        return;
      }
    }
    await this.sql`update app.sweep_transactions set state = 'sent', last_error = null where id = ${txId} and state = 'signed' and tx_hash = ${hash}`;
  }

  private async marketFees(): Promise<Fees> {
    const block = await this.client.getBlock({ blockTag: "latest" });
    let tip: bigint;
    try {
      tip = BigInt(await this.client.request({ method: "eth_maxPriorityFeePerGas" }));
    } catch {
      const gasPrice = await this.client.getGasPrice();
      tip = gasPrice > (block.baseFeePerGas ?? 0n) ? gasPrice - (block.baseFeePerGas ?? 0n) : 1n;
    }
    return marketFees(block.baseFeePerGas ?? 0n, tip);
  }

  /** A failed attempt per sweep (`counted`: attempts + 1 now; otherwise already counted at claim): queued again after a backoff, or `failed` once attempts reach the maximum. */
  private async recordFailedAttempts(tx: TransactionSql, items: { id: string; error: string }[], counted: boolean, txId?: string): Promise<void> {
    if (items.length === 0) return;
    const rows = await tx`
      select id, attempts from app.sweeps where id in ${tx(items.map((i) => i.id))}`;
    const attemptsOf = new Map(rows.map((r) => [r.id as string, Number(r.attempts) + (counted ? 1 : 0)]));
    const updates = items.map((i) => {
      const attempts = attemptsOf.get(i.id) ?? this.s.maxAttempts;
      const final = attempts >= this.s.maxAttempts;
      return { id: i.id, attempts, state: final ? "failed" : "queued", error: i.error, delay: final ? 0 : retryDelayMs(attempts, this.s.retryBaseMs, this.random()) };
    });
    const done = await tx`
      with r as (select * from jsonb_to_recordset(${JSON.stringify(updates)}::jsonb) as r(id text, attempts int, state text, error text, delay float8))
      update app.sweeps s
         set state = r.state, attempts = r.attempts, last_error = r.error, updated_at = now(),
             next_attempt_at = case when r.state = 'queued' then now() + r.delay * interval '1 millisecond' else s.next_attempt_at end
        from r
       where s.id = r.id and (${txId ?? null}::text is null or (s.state = 'sending' and s.transaction_id = ${txId ?? null}::text))
      returning s.session_id, s.state`;
    const finals = [...new Set(done.filter((d) => d.state === "failed").map((d) => d.session_id as string))];
    await wakeSessions(tx, finals);
  }

  // ---------------------------------------------------------------- watch

  /** Advances every unfinished transaction of this relayer. Returns how many are still open. */
  private async watch(): Promise<number> {
    // The chain first: records it no longer backs are dropped and their sweeps queued again.
    await reconcileWithChain({
      sql: this.sql,
      client: this.client,
      chainId: this.net.chainId,
      relayer: this.relayer,
      relayerAddress: this.account.address,
      log: this.log,
      firstSeen: this.reconcileSeen,
      ...(this.opts.reconcileGraceMs !== undefined ? { graceMs: this.opts.reconcileGraceMs } : {}),
    });
    const open = (await this.sql`
      select id, nonce, state, tx_hashes, tx_hash, raw_tx, max_fee_per_gas::text as max_fee_per_gas,
             (extract(epoch from (now() - coalesce(sent_at, created_at))) * 1000)::float8 as age_ms
        from app.sweep_transactions
       where chain_id = ${this.net.chainId} and relayer = ${this.relayer} and state in ('signed', 'sent')
       order by nonce`) as unknown as TxRow[];
    let still = 0;
    for (const row of open) {
      if (this.stopping) break;
      if (!(await this.advance({ ...row, nonce: BigInt(row.nonce), age_ms: Number(row.age_ms) }))) still++;
    }
    return still;
  }

  /**
   * The receipt of whichever of a nonce's hashes was mined; null when none is. Only "no such
   * receipt" means not mined: any other RPC error is thrown (the pass is retried), so an
   * unreachable node is never read as a transaction that vanished.
   */
  private async receiptOf(hashes: readonly string[]): Promise<TransactionReceipt | null> {
    for (const hash of [...hashes].reverse()) {
      try {
        return await this.client.getTransactionReceipt({ hash: hash as Hex });
      } catch (e) {
        if (!(e instanceof TransactionReceiptNotFoundError)) throw e;
      }
    }
    return null;
  }

  /** One look at one unfinished transaction. Returns true when it is finished. */
  private async advance(row: TxRow): Promise<boolean> {
    const hashes = asJson<string[]>(row.tx_hashes);
    const receipt = await this.receiptOf(hashes);
    if (receipt) {
      const head = await this.client.getBlockNumber({ cacheTime: 0 });
      if (!isConfirmed(receipt.blockNumber, head, this.net.confirmations)) return false;
      await this.recordMined(row, receipt);
      return true;
    }
    const spent = BigInt(await this.client.getTransactionCount({ address: this.account.address, blockTag: "latest" }));
    if (spent > row.nonce) {
      // The nonce is used. By one of ours whose receipt is not served yet (a node may count a
      // block's nonces a moment before it serves its receipts)? Give it a few passes first.
      if (await this.receiptOf(hashes)) return false;
      const firstSeen = this.nonceSpentSeen.get(row.id) ?? Date.now();
      this.nonceSpentSeen.set(row.id, firstSeen);
      if (Date.now() - firstSeen < NONCE_SPENT_GRACE_MS) return false;
      this.nonceSpentSeen.delete(row.id);
      await this.releaseNonce(row);
      return true;
    }
    this.nonceSpentSeen.delete(row.id);
    const newest = hashes[hashes.length - 1] as Hex | undefined;
    const known = newest ? await this.client.getTransaction({ hash: newest }).catch(() => null) : null;
    const mine = newest ? this.signed.get(newest) : undefined;
    // The node lost it (or never got it, or this process restarted): the very same bytes again.
    const raw = mine?.raw ?? (row.raw_tx && row.tx_hash === newest ? (row.raw_tx as Hex) : undefined);
    if (!known && raw && newest) await this.broadcast(row.id, newest, raw);
    else if (known && row.state === "signed" && newest) {
      await this.sql`update app.sweep_transactions set state = 'sent', last_error = null where id = ${row.id} and state = 'signed' and tx_hash = ${newest}`;
    }
    if (row.age_ms >= this.s.stuckMs) await this.replace(row, newest, known, mine);
    return false;
  }

  /** Re-signs a stuck (or lost) transaction with the same nonce, same sweeps and higher fees. */
  private async replace(
    row: TxRow,
    newest: Hex | undefined,
    known: { input: Hex; gas: bigint; maxFeePerGas?: bigint; maxPriorityFeePerGas?: bigint } | null,
    mine: { raw: Hex; fees: Fees; gas: bigint } | undefined,
  ): Promise<void> {
    const sweeps = await this.sweepsOf(row.id);
    let data: Hex | undefined = known?.input;
    let to: Address = this.factory;
    if (!data) {
      const plan = planBatch(sweeps.map((s) => ({ ...s, attempts: 0 })), this.factory);
      if (!plan.call) {
        this.log(`sweeper ${this.net.name}: transaction ${row.id} (nonce ${row.nonce}) has no sweeps left to re-sign`);
        return;
      }
      data = plan.call.data;
      to = plan.call.to;
    }
    let gas = known?.gas ?? mine?.gas;
    if (gas === undefined) {
      gas = await this.client
        .estimateGas({ account: this.account.address as Address, to, data })
        .then(withGasMargin)
        .catch(() => 150_000n + 80_000n * BigInt(Math.max(1, sweeps.length)));
    }
    const previous: Fees = {
      maxFeePerGas: known?.maxFeePerGas ?? mine?.fees.maxFeePerGas ?? BigInt(row.max_fee_per_gas ?? "0"),
      maxPriorityFeePerGas: known?.maxPriorityFeePerGas ?? mine?.fees.maxPriorityFeePerGas ?? 0n,
    };
    const fees = bumpFees(previous, await this.marketFees(), FEE_BUMP_PERCENT);
    const raw = await this.sign(row.nonce, { to, data }, gas, fees);
    const hash = keccak256(raw);
    // Recorded before it is broadcast, and only if nobody replaced it meanwhile.
    const updated = await this.sql`
      update app.sweep_transactions
         set tx_hash = ${hash}, tx_hashes = tx_hashes || ${JSON.stringify([hash])}::jsonb, state = 'signed', raw_tx = ${raw},
             max_fee_per_gas = ${fees.maxFeePerGas.toString()}::numeric, sent_at = now()
       where id = ${row.id} and state in ('signed', 'sent') and tx_hash is not distinct from ${newest ?? null}::text
      returning id`;
    if (updated.length === 0) return;
    this.signed.set(hash, { raw, fees, gas });
    this.log(
      `sweeper ${this.net.name}: nonce ${row.nonce} not mined after ${Math.round(row.age_ms / 1000)} s: replaced ${newest ?? "-"} by ${hash} (max fee ${previous.maxFeePerGas} → ${fees.maxFeePerGas})`,
    );
    await this.opts.hooks?.beforeBroadcast?.({ hash, nonce: row.nonce, replacement: true });
    await this.broadcast(row.id, hash, raw);
  }

  private async sweepsOf(txId: string) {
    const rows = await this.sql`
      select id, session_id, deposit_address, settlement_address, token_address
        from app.sweeps where transaction_id = ${txId} and state = 'sending'
       order by created_at, id`;
    return rows.map((r) => ({
      id: r.id as string,
      sessionId: r.session_id as string,
      depositAddress: r.deposit_address as string,
      settlementAddress: r.settlement_address as string,
      tokenAddress: r.token_address as string,
    }));
  }

  /** A mined (and confirmed) transaction: the outcome of each of its sweeps, in one database transaction. */
  private async recordMined(row: TxRow, receipt: TransactionReceipt): Promise<void> {
    const sweeps = await this.sweepsOf(row.id);
    const outcomes = interpretReceipt(receipt, sweeps, this.factory);
    const recorded = await this.sql.begin(async (tx) => {
      const done = await tx`
        update app.sweep_transactions
           set state = 'mined', tx_hash = ${receipt.transactionHash}, block_number = ${receipt.blockNumber.toString()}::bigint,
               gas_used = ${receipt.gasUsed.toString()}::bigint, mined_at = now(),
               last_error = ${receipt.status === "success" ? null : "reverted"}
         where id = ${row.id} and state in ('signed', 'sent')
        returning id`;
      if (done.length === 0) return false; // recorded already (by another sweeper, or an earlier pass)
      const confirmed = outcomes.flatMap((o) => (o.outcome === "confirmed" ? [{ id: o.id, swept: o.sweptAmount.toString() }] : []));
      if (confirmed.length > 0) {
        const rows = await tx`
          with r as (select * from jsonb_to_recordset(${JSON.stringify(confirmed)}::jsonb) as r(id text, swept text))
          update app.sweeps s set state = 'confirmed', swept_amount = r.swept::numeric, last_error = null, updated_at = now()
            from r where s.id = r.id and s.state = 'sending' and s.transaction_id = ${row.id}
          returning s.session_id`;
        await wakeSessions(tx, [...new Set(rows.map((r) => r.session_id as string))]);
      }
      const failed = outcomes.flatMap((o) => (o.outcome === "failed" ? [{ id: o.id, error: o.error }] : []));
      await this.recordFailedAttempts(tx, failed, false, row.id);
      return true;
    });
    if (!recorded) return;
    const nConfirmed = outcomes.filter((o) => o.outcome === "confirmed").length;
    this.log(
      `sweeper ${this.net.name}: ${receipt.transactionHash} mined in block ${receipt.blockNumber} (gas ${receipt.gasUsed}): ${nConfirmed} confirmed, ${outcomes.length - nConfirmed} failed`,
    );
  }

  /** The nonce was used by a transaction that is none of ours: its sweeps were never attempted, queue them again. */
  private async releaseNonce(row: TxRow): Promise<void> {
    await this.sql.begin(async (tx) => {
      const done = await tx`
        update app.sweep_transactions set state = 'failed', last_error = 'nonce used by another transaction of the relayer'
         where id = ${row.id} and state in ('signed', 'sent') returning id`;
      if (done.length === 0) return;
      await tx`
        update app.sweeps set state = 'queued', attempts = greatest(attempts - 1, 0), next_attempt_at = now(), updated_at = now()
         where transaction_id = ${row.id} and state = 'sending'`;
    });
    this.log(`sweeper ${this.net.name}: nonce ${row.nonce} was used by another transaction; its sweeps are queued again`);
  }
}

function isRevert(e: unknown): boolean {
  if (e instanceof BaseError) {
    if (e.walk((x) => x instanceof ExecutionRevertedError)) return true;
  }
  return /execution reverted|revert/i.test(String((e as Error)?.message ?? e));
}
