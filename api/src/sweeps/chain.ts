/**
 * One network's sweeping state, shared by its two halves (send.ts: claim, check, sign, record,
 * broadcast; watch.ts: follow unfinished transactions to their outcome): the relayer account,
 * the RPC client, the settings, what this process signed (to rebroadcast the same bytes) and
 * why sweeps wait, if they do. Small I/O helpers both halves use live here too; their
 * statements are named functions in statements/chain.ts.
 */
import type { Sql, TransactionSql } from "postgres";
import { ExecutionRevertedError, keccak256, type Address, type Hex, type PrivateKeyAccount, type PublicClient } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import type { SweepSettings } from "../config.ts";
import { publicClientFor } from "../../../shared/chains/check.ts";
import type { NetworkConfig } from "../../../shared/chains/config.ts";
import { predictedAuthorizationBatchAddress, predictedFactoryAddress } from "../../../shared/contracts/addresses.ts";
import { wakeSessions } from "../effects/wake.ts";
import { newSweepTransactionId } from "../effects/sweep-queue.ts";
import { nextNonce, retryDelayMs, type Fees } from "./plan.ts";
import { readMarketFees } from "../../../shared/chains/fees.ts";
import {
  attemptsOfSweeps,
  insertSignedTransaction,
  lastRecordedNonce,
  markBroadcastSent,
  recordBroadcastError,
  tryNonceLock,
  writeFailedAttempts,
} from "./statements/chain.ts";
import { errorChain, findInChain } from "../../../shared/error-chain.ts";
import { describeError, messageOf } from "../../../shared/describe-error.ts";

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
  /** Refunds' day's limit per merchant (config.refunds, minor units); refunds are sent on these networks too (send-refunds.ts). */
  /** Refunds and automatic returns (docs/refunds.md); absent: this sweeper sends none. */
  refunds?: { maxPerDayMinor: bigint; maxPerRefundMinor: bigint };
  /** Tests: how long a mismatch with the chain lasts before records are dropped (reconcile.ts). */
  reconcileGraceMs?: number;
}

/** A transaction signed and recorded, not yet broadcast. */
export interface SignedTx {
  raw: Hex;
  hash: Hex;
  nonce: bigint;
  txId: string;
  fees: Fees;
  gas: bigint;
}

/**
 * A failure as a sweep's attempt records it (app.sweeps.last_error, which the dashboard and the
 * API show): the outermost first line, at most 500 characters, as it always read.
 */
export const firstLine = (e: unknown) => describeError(e, { links: 1, firstLines: true, maxLength: 500, redact: false });

export function isRevert(e: unknown): boolean {
  if (findInChain(e, (x) => x instanceof ExecutionRevertedError)) return true;
  return errorChain(e).some((x) => /execution reverted|revert/i.test(messageOf(x)));
}


export class SweepChain {
  readonly account: PrivateKeyAccount;
  /** The relayer's address, lowercase, as stored. */
  readonly relayer: string;
  readonly client: PublicClient;
  readonly factory: Address;
  readonly sql: Sql;
  readonly s: SweepSettings;
  readonly random: () => number;
  /** Signed transactions of this process, by hash, to rebroadcast the very same bytes. */
  readonly signed = new Map<string, { raw: Hex; fees: Fees; gas: bigint }>();
  readonly lastBroadcastError = new Map<string, string>();
  /** Transaction id → when it was first seen out of step with the chain (reconcile.ts). */
  readonly reconcileSeen = new Map<string, number>();
  /** Transaction id → when its nonce was first seen spent with none of its receipts found. */
  readonly nonceSpentSeen = new Map<string, number>();
  /** Set once the factory's code was seen on this network (it cannot go away). */
  factoryPresent = false;
  /** AuthorizationBatch's code on this network: seen (for good), or missing as of `at`. */
  private batchSeen: { present: boolean; at: number } | undefined;
  /** Why sweeps on this network wait now (factory missing, guard, relayer balance), for the log and readiness. */
  waiting: string | undefined;
  /** Why authorization submissions on this network wait now (a reason code of gasless/submission.ts). */
  authorizationsWaiting: string | undefined;
  stopping = false;

  constructor(
    readonly opts: SweeperOptions,
    readonly net: NetworkConfig,
    key: Hex,
    readonly log: (line: string) => void,
  ) {
    this.account = privateKeyToAccount(key);
    this.relayer = this.account.address.toLowerCase();
    this.client = opts.clientFor ? opts.clientFor(net) : publicClientFor(net);
    this.factory = net.factory ?? predictedFactoryAddress();
    this.sql = opts.sql;
    this.s = opts.settings;
    this.random = opts.random ?? Math.random;
  }

  /**
   * AuthorizationBatch's address when it is deployed on this network (`bun run admin
   * factory:deploy` puts it there with the factory); undefined while it is not, looked for again
   * at most every 30 s. Without it authorizations go one per transaction.
   */
  async authorizationBatch(now = Date.now()): Promise<Address | undefined> {
    const address = predictedAuthorizationBatchAddress();
    if (this.batchSeen?.present) return address;
    if (this.batchSeen && now - this.batchSeen.at < 30_000) return undefined;
    const code = await this.client.getCode({ address });
    const present = code !== undefined && code !== "0x";
    if (!present && !this.batchSeen) this.log(`sweeper ${this.net.name}: no AuthorizationBatch at ${address}: authorizations go one per transaction (bun run admin factory:deploy --chain ${this.net.chainId} deploys it)`);
    this.batchSeen = { present, at: now };
    return present ? address : undefined;
  }

  /** Logs a reason to wait once, when it starts (and once when it ends). */
  setWaiting(reason: string | undefined): void {
    if (reason === this.waiting) return;
    if (reason) this.log(`sweeper ${this.net.name}: ${reason}`);
    else if (this.waiting) this.log(`sweeper ${this.net.name}: sweeping again (${this.waiting.split(":")[0]} is over)`);
    this.waiting = reason;
  }

  /** The same for authorization submissions, told once per reason (its detail moves with the balance and fees). */
  setAuthorizationsWaiting(reason: string | undefined, detail = ""): void {
    if (reason === this.authorizationsWaiting) return;
    if (reason) this.log(`sweeper ${this.net.name}: authorizations wait (${reason}): ${detail}`);
    else if (this.authorizationsWaiting) this.log(`sweeper ${this.net.name}: submitting authorizations again (${this.authorizationsWaiting} is over)`);
    this.authorizationsWaiting = reason;
  }

  /**
   * Takes the per-(chain, relayer) nonce lock for the rest of `tx` (false: another process holds
   * it, skip the round). Sweeps and authorizations take the same lock: one nonce sequence.
   */
  async lockNonces(tx: TransactionSql): Promise<boolean> {
    return tryNonceLock(tx, `paysession-sweeps:${this.net.chainId}:${this.relayer}`);
  }

  /**
   * Signs `call` with the next nonce — max(last live recorded + 1, the chain's pending count) —
   * and records it (`signed`, its hash and bytes) in `tx`, which holds lockNonces. The caller
   * binds what it carries to the returned id in the same transaction and, after the commit,
   * hands it to dispatch: nothing is broadcast that is not recorded first.
   */
  async recordSigned(tx: TransactionSql, kind: "sweep" | "authorization" | "refund", call: { to: Address; data: Hex }, gas: bigint, fees: Fees): Promise<SignedTx> {
    const last = await lastRecordedNonce(tx, this.net.chainId, this.relayer);
    const dbNext = last == null ? null : last + 1n;
    const pending = BigInt(await this.client.getTransactionCount({ address: this.account.address, blockTag: "pending" }));
    const nonce = nextNonce(dbNext, pending);
    const raw = await this.sign(nonce, call, gas, fees);
    const hash = keccak256(raw);
    const txId = newSweepTransactionId();
    await insertSignedTransaction(tx, { id: txId, kind, chainId: this.net.chainId, relayer: this.relayer, nonce, hash, maxFeePerGas: fees.maxFeePerGas, raw });
    return { raw, hash, nonce, txId, fees, gas };
  }

  /** After the commit that recorded it: remember the bytes, then broadcast (`what`: for the log line). */
  async dispatch(t: SignedTx, what: string): Promise<void> {
    this.signed.set(t.hash, { raw: t.raw, fees: t.fees, gas: t.gas });
    this.log(`sweeper ${this.net.name}: sending ${t.hash} (nonce ${t.nonce}, ${what})`);
    await this.opts.hooks?.beforeBroadcast?.({ hash: t.hash, nonce: t.nonce, replacement: false });
    await this.broadcast(t.txId, t.hash, t.raw);
  }

  async sign(nonce: bigint, call: { to: Address; data: Hex }, gas: bigint, fees: Fees): Promise<Hex> {
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
  async broadcast(txId: string, hash: Hex, raw: Hex): Promise<void> {
    try {
      await this.client.request({ method: "eth_sendRawTransaction", params: [raw] });
    } catch (e) {
      const msg = firstLine(e);
      if (!/already known|known transaction|already imported/i.test(msg)) {
        if (this.lastBroadcastError.get(hash) !== msg) {
          this.lastBroadcastError.set(hash, msg);
          this.log(`sweeper ${this.net.name}: broadcasting ${hash} failed (retried every poll): ${msg}`);
          await recordBroadcastError(this.sql, txId, msg);
        }
        return;
      }
    }
    await markBroadcastSent(this.sql, txId, hash);
  }

  marketFees(): Promise<Fees> {
    return readMarketFees(this.client);
  }

  /** A failed attempt per sweep (`counted`: attempts + 1 now; otherwise already counted at claim): queued again after a backoff, or `failed` once attempts reach the maximum. */
  async recordFailedAttempts(tx: TransactionSql, items: { id: string; error: string }[], counted: boolean, txId?: string): Promise<void> {
    if (items.length === 0) return;
    const rows = await attemptsOfSweeps(tx, items.map((i) => i.id));
    const attemptsOf = new Map(rows.map((r) => [r.id, r.attempts + (counted ? 1 : 0)]));
    const updates = items.map((i) => {
      const attempts = attemptsOf.get(i.id) ?? this.s.maxAttempts;
      const final = attempts >= this.s.maxAttempts;
      return { id: i.id, attempts, state: final ? "failed" : "queued", error: i.error, delay: final ? 0 : retryDelayMs(attempts, this.s.retryBaseMs, this.random()) };
    });
    const finals = await writeFailedAttempts(tx, updates, txId);
    await wakeSessions(tx, finals);
  }
}
