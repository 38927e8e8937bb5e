/**
 * The delivery worker. Any number may run, in the API process (server.ts) or on their
 * own (webhooks/main.ts); the table is the only shared state.
 *
 *   claim   — one statement takes due rows (`pending` whose next_attempt_at has come, or
 *             `sending` whose lease ran out because a process died mid-delivery) with
 *             FOR UPDATE SKIP LOCKED, at most `endpointConcurrency` per endpoint per claim,
 *             none of an endpoint whose slots are full with as many claimed jobs again
 *             waiting here (so a freed slot finds its next job at hand); each becomes `sending`,
 *             attempts + 1 (the claim's fencing token), next_attempt_at = now + lease.
 *             Only heads of the per-(endpoint, session) queues are ever pending (outbox.ts),
 *             so the order per session holds whatever the concurrency. A delivery is of a
 *             session event, of an account event (account_event_id: a settlement change) or
 *             of a refund's event (refund_event_id: ordered with its session's events); the
 *             claim builds the body, and everything after it is the same for all.
 *   send    — sender.ts, within the overall and per-endpoint bounds of this process, so a
 *             slow endpoint holds at most its own slots and others keep flowing.
 *   record  — results are written in batches, one transaction each: the attempts, the
 *             new state of each delivery (fenced by its claim number), 410 → endpoint
 *             disabled, and the next waiting delivery of each finished queue made pending.
 *             A result not yet recorded when the process dies is simply sent again once
 *             its lease expires: at least once, never lost.
 *   wake-up — LISTEN (the writers NOTIFY in their transaction), after each batch, and a
 *             timer set to the earliest next_attempt_at (capped at pollMs). The timer is
 *             only a hint: the durable schedule is next_attempt_at in the table.
 *
 * Each statement is a file of its own under statements/ (claim, record, disable the gone
 * endpoints, release the next heads, next due); what an attempt's result means for its
 * delivery is the pure rule in outcome.ts.
 */
import type { Sql } from "postgres";
import type { WebhookSettings } from "../config.ts";
import type { Environment } from "../../../shared/environment.ts";
import { newId } from "../../../shared/ids.ts";
import { WEBHOOK_CHANNEL } from "../effects/webhook-outbox.ts";
import { buildAccountEvent, buildEvent, buildRefundEvent } from "./payload.ts";
import { fromSnapshot } from "./events.ts";
import { deliveryOutcome } from "./outcome.ts";
import { msUntilNextDue } from "./statements/next-due.ts";
import { claimDeliveries, type ClaimedDelivery } from "./statements/claim-deliveries.ts";
import { recordOutcomes, type OutcomeRow } from "./statements/record-outcomes.ts";
import { disableGoneEndpoints } from "./statements/disable-gone-endpoints.ts";
import { releaseNextHeads } from "./statements/release-next-heads.ts";
import { sendWebhook, type SendResult } from "./sender.ts";
import { insertAttempts, type NewAttempt } from "./attempts.ts";
import { signingSecrets } from "./endpoints.ts";
import { secretKey, webhookHeaders } from "./signing.ts";
import type { Resolver } from "./target.ts";
import { isRetryableConflict, Outage } from "../db/outage.ts";
import { Pump } from "../pump.ts";
import { describeError } from "../../../shared/describe-error.ts";

const CLAIM_BATCH = 200;
const RECORD_BATCH = 1000;

export interface WorkerOptions {
  sql: Sql;
  encryptionKey: Buffer;
  settings: WebhookSettings;
  log?: (line: string) => void;
  resolver?: Resolver;
  tls?: { ca?: string };
  random?: () => number;
}

interface Job {
  deliveryId: number;
  claim: number;
  ordered: boolean;
  /** An account event (no session, never queued behind another). */
  account: boolean;
  endpointId: string;
  url: string;
  environment: Environment;
  merchantId: string;
  eventId: string;
  body: string;
  keys: Buffer[];
}

interface Outcome {
  job: Job;
  result: SendResult;
  atMs: number;
}

export interface WorkerStats {
  claimed: number;
  succeeded: number;
  failedAttempts: number;
  recorded: number;
}


export class WebhookWorker {
  readonly stats: WorkerStats = { claimed: 0, succeeded: 0, failedAttempts: 0, recorded: 0 };
  private readonly sql: Sql;
  private readonly s: WebhookSettings;
  private readonly log: (line: string) => void;
  private readonly random: () => number;
  private readonly abort = new AbortController();
  private stopping = false;
  private readonly pump: Pump;
  private unlisten: (() => Promise<void>) | undefined;
  /** endpoint → jobs in flight; endpoint → claimed jobs waiting for a slot. */
  private readonly active = new Map<string, number>();
  private readonly queued = new Map<string, Job[]>();
  private activeTotal = 0;
  private queuedTotal = 0;
  private readonly outcomes: Outcome[] = [];
  private recording: Promise<void> | undefined;
  private idle: (() => void) | undefined;
  private readonly keyCache = new Map<string, Buffer[]>();
  /** A database outage while recording results is logged once, and recording backs off meanwhile (claims: the pump does the same). */
  private readonly recordOutage: Outage;

  constructor(private readonly opts: WorkerOptions) {
    this.sql = opts.sql;
    this.s = opts.settings;
    this.log = opts.log ?? (() => {});
    this.pump = new Pump(() => this.pass(), { name: "webhook worker", pollMs: opts.settings.pollMs, retryMs: 250, log: this.log });
    this.recordOutage = new Outage("webhook worker (recording results)", this.log);
    this.random = opts.random ?? Math.random;
  }

  async start(): Promise<void> {
    const listener = await this.sql.listen(
      WEBHOOK_CHANNEL,
      () => this.wake(),
      () => this.wake(), // (re)connected: catch up on anything missed meanwhile
    );
    this.unlisten = () => listener.unlisten();
    this.wake();
  }

  /** Look at the table now. */
  wake(): void {
    this.pump.wake();
  }

  /**
   * Endpoints not to claim for now: those with their slots full and as many claimed jobs
   * again waiting here (so a freed slot finds the next job at hand, without a round trip).
   */
  private saturated(): string[] {
    const out: string[] = [];
    for (const [id, n] of this.active) if (n + (this.queued.get(id)?.length ?? 0) >= 2 * this.s.endpointConcurrency) out.push(id);
    return out;
  }

  /**
   * One pass: claim what is due (up to the free slots) and hand it out. Returns when to look
   * again: at once when something was claimed (endpoints now at their limit are excluded next
   * time, so one endpoint's backlog cannot hide others' due deliveries), else when the next
   * delivery falls due. A database outage ends the pass; the pump logs it once and backs off.
   */
  private async pass(): Promise<number | undefined> {
    if (this.stopping) return undefined;
    const room = Math.min(CLAIM_BATCH, this.s.concurrency - this.activeTotal - this.queuedTotal);
    if (room <= 0) return undefined; // a finishing send wakes us
    const excluded = this.saturated();
    const jobs = await this.claim(room, excluded);
    for (const job of jobs) this.dispatch(job);
    if (jobs.length > 0) return 0;
    const next = await msUntilNextDue(this.sql, excluded);
    const ms = next ?? this.s.pollMs;
    return ms <= 0 ? 0 : Math.max(5, ms);
  }

  private async claim(limit: number, excluded: string[]): Promise<Job[]> {
    const rows = await claimDeliveries(this.sql, { limit, excludedEndpoints: excluded, endpointConcurrency: this.s.endpointConcurrency, leaseMs: this.s.leaseMs });
    this.stats.claimed += rows.length;
    return rows.map((r) => {
      const common = {
        deliveryId: Number(r.delivery_id),
        claim: r.claim,
        ordered: r.ordered,
        endpointId: r.endpoint_id,
        url: r.url,
        environment: r.environment,
        merchantId: r.merchant_id,
        keys: this.keysOf(r),
      };
      if (r.account_event_id !== null) {
        const event = buildAccountEvent({ id: r.account_event_id, type: r.account_type, data: r.account_data, createdAt: r.account_created_at });
        return { ...common, account: true, eventId: event.id, body: JSON.stringify(event) };
      }
      if (r.refund_event_id !== null) {
        // Frozen at the refund's change; queued with its session's events (account: false).
        const event = buildRefundEvent({ id: r.refund_event_id, type: r.refund_type, data: r.refund_data, createdAt: r.refund_created_at });
        return { ...common, account: false, eventId: event.id, body: JSON.stringify(event) };
      }
      // As of the event (its snapshot): the same bytes on every attempt, whatever the session did since.
      const { session, deposits } = fromSnapshot({ session: r.session, deposits: r.deposits });
      const event = buildEvent(session, r.public_merchant_id, deposits, {
        id: r.event_id,
        sequence: r.sequence,
        status: r.status,
        previousStatus: r.previous_status,
        reason: r.reason,
        detail: r.detail,
        createdAt: r.event_created_at,
      });
      return { ...common, account: false, eventId: r.event_id, body: JSON.stringify(event) };
    });
  }

  private keysOf(r: ClaimedDelivery): Buffer[] {
    const id = r.endpoint_id;
    const cacheKey = `${id}|${r.secret_sealed}|${r.previous_valid ? r.previous_secret_sealed : ""}`;
    let keys = this.keyCache.get(cacheKey);
    if (!keys) {
      const secrets = signingSecrets(this.opts.encryptionKey, {
        id,
        secretSealed: r.secret_sealed,
        previousSecretSealed: r.previous_secret_sealed,
        previousValid: r.previous_valid,
      });
      keys = secrets.map(secretKey);
      if (this.keyCache.size > 10_000) this.keyCache.clear();
      this.keyCache.set(cacheKey, keys);
    }
    return keys;
  }

  private dispatch(job: Job): void {
    const n = this.active.get(job.endpointId) ?? 0;
    if (n < this.s.endpointConcurrency) {
      this.run(job);
    } else {
      const q = this.queued.get(job.endpointId) ?? [];
      q.push(job);
      this.queued.set(job.endpointId, q);
      this.queuedTotal++;
    }
  }

  private run(job: Job): void {
    this.active.set(job.endpointId, (this.active.get(job.endpointId) ?? 0) + 1);
    this.activeTotal++;
    const atMs = Date.now();
    const headers = webhookHeaders(job.keys, job.eventId, Math.floor(atMs / 1000), job.body);
    sendWebhook(job.url, job.environment, headers, job.body, {
      timeoutMs: this.s.timeoutMs,
      resolver: this.opts.resolver,
      allowPrivateTargets: this.s.allowPrivateTargets,
      tls: this.opts.tls,
      signal: this.abort.signal,
    })
      .then((result) => {
        if (result.succeeded) this.stats.succeeded++;
        else if (!result.aborted) this.stats.failedAttempts++;
        this.outcomes.push({ job, result, atMs });
      })
      .finally(() => {
        this.activeTotal--;
        const left = (this.active.get(job.endpointId) ?? 1) - 1;
        const next = this.queued.get(job.endpointId)?.shift();
        if (left === 0 && !next) this.active.delete(job.endpointId);
        else this.active.set(job.endpointId, left);
        if (next) {
          this.queuedTotal--;
          if (this.queued.get(job.endpointId)!.length === 0) this.queued.delete(job.endpointId);
          if (this.stopping) this.outcomes.push({ job: next, result: abortedResult(), atMs: Date.now() });
          else this.run(next);
        }
        this.record();
        if (this.activeTotal === 0) this.idle?.();
        this.wake();
      });
  }

  /** Writes the outcomes gathered so far; one writer at a time, batches form by themselves. */
  private record(): void {
    if (this.recording) return;
    this.recording = (async () => {
      while (this.outcomes.length > 0) {
        const batch = this.outcomes.splice(0, RECORD_BATCH);
        try {
          const wakeNow = await this.write(batch);
          this.recordOutage.ok();
          this.stats.recorded += batch.length;
          if (wakeNow) this.wake();
        } catch (e) {
          this.outcomes.unshift(...batch);
          // A deadlock or serialization failure is retried at once; anything else after a pause.
          if (!isRetryableConflict(e)) {
            const wait = this.recordOutage.failed(e);
            if (wait === undefined) this.log(`webhook worker: recording results failed: ${describeError(e)}`);
            if (this.stopping) return;
            await Bun.sleep(wait ?? 500);
          }
        }
      }
    })().finally(() => {
      this.recording = undefined;
      if (this.outcomes.length > 0 && !this.stopping) this.record();
    });
  }

  /** One transaction for a batch of outcomes. Returns whether deliveries became due at once. */
  private async write(batch: Outcome[]): Promise<boolean> {
    const attempts: NewAttempt[] = [];
    const updates: OutcomeRow[] = [];
    const gone = new Set<string>();
    let soon = false;
    for (const { job, result, atMs } of batch) {
      const outcome = deliveryOutcome(result, job.claim, this.s.retrySchedule, this.random());
      if (outcome.state === "handed-back") {
        updates.push({ id: job.deliveryId, claim: job.claim, state: "pending", delayMs: 0, atMs, statusCode: null, error: null, undo: 1 });
        continue;
      }
      attempts.push({
        id: newId("webhookAttempt"),
        endpointId: job.endpointId,
        merchantId: job.merchantId,
        environment: job.environment,
        eventId: job.eventId,
        kind: !job.ordered ? "redelivery" : job.account ? "account" : "event",
        attemptNumber: job.claim,
        url: job.url,
        succeeded: result.succeeded,
        statusCode: result.statusCode,
        latencyMs: result.latencyMs,
        responseExcerpt: result.responseExcerpt,
        error: result.error,
        atMs,
      });
      if (outcome.state === "failed" && outcome.disableEndpoint) gone.add(job.endpointId);
      const delayMs = outcome.state === "pending" ? outcome.delayMs : 0;
      if (outcome.state === "pending" && delayMs < this.s.pollMs) soon = true;
      updates.push({ id: job.deliveryId, claim: job.claim, state: outcome.state, delayMs, atMs, statusCode: result.statusCode, error: result.error, undo: 0 });
    }
    let released = 0;
    await this.sql.begin(async (tx) => {
      await insertAttempts(tx, attempts);
      const finished = await recordOutcomes(tx, updates);
      await disableGoneEndpoints(tx, [...gone]);
      // Each finished head lets the next event of its (endpoint, session) queue go.
      released = await releaseNextHeads(
        tx,
        finished.filter((f) => f.ordered && f.sessionId !== null && (f.state === "succeeded" || f.state === "failed") && !gone.has(f.endpointId)).map((f) => ({ endpointId: f.endpointId, sessionId: f.sessionId! })),
      );
    });
    return released > 0 || soon || updates.some((u) => u.undo === 1);
  }

  /**
   * Stops claiming, aborts the sends in flight (their deliveries are handed back, due at
   * once, without counting an attempt), writes what is pending, stops listening.
   */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    await this.unlisten?.().catch(() => {});
    await this.pump.stop();
    for (const [, jobs] of this.queued) for (const job of jobs) this.outcomes.push({ job, result: abortedResult(), atMs: Date.now() });
    this.queued.clear();
    this.queuedTotal = 0;
    this.abort.abort();
    if (this.activeTotal > 0) await new Promise<void>((resolve) => (this.idle = resolve));
    await this.recording;
    if (this.outcomes.length > 0) {
      this.record();
      await this.recording;
    }
  }
}

function abortedResult(): SendResult {
  return { succeeded: false, statusCode: null, latencyMs: 0, responseExcerpt: null, error: "aborted: worker stopping", gone: false, aborted: true };
}
