/**
 * The mail worker: sends what the outbox holds (mail/outbox.ts). Any number may run (one per API
 * process); the table is the only shared state.
 *
 *   claim  — due rows (`pending` whose time has come, or `sending` whose lease ran out because a
 *            process died mid-send) with FOR UPDATE SKIP LOCKED; each becomes `sending`,
 *            attempts + 1 (the claim's fencing token), next_attempt_at = now + lease.
 *   send   — nodemailer, one connection pool per worker, with the Message-ID fixed by the mail's
 *            id: a mail sent again after a crash (at least once) is the same message to the
 *            receiving server, which may drop the duplicate.
 *   record — sent, retried later, or failed (mail/outcome.ts), fenced by the claim's attempts so
 *            a late worker never overwrites a newer claim's result.
 *   purge  — mail sent more than a week ago is deleted (its body may hold a link that was a
 *            credential); failed mail stays a month for the Outbox to show.
 *
 * Woken by LISTEN on MAIL_CHANNEL and by a timer at the next due time (capped at POLL_MS).
 */
import type { Sql } from "postgres";
import nodemailer, { type Transporter } from "nodemailer";
import { MAIL_CHANNEL, openBody } from "./outbox.ts";
import { sendFailureOutcome } from "./outcome.ts";
import { writeNotice, type WrittenMail } from "./notices.ts";
import { Pump } from "../pump.ts";
import { describeError } from "../../../shared/describe-error.ts";

const CLAIM_BATCH = 20;
const LEASE_SECONDS = 120;
const POLL_MS = 30_000;
const PURGE_EVERY_MS = 60 * 60 * 1000;

export interface MailWorkerOptions {
  sql: Sql;
  encryptionKey: Buffer;
  /** smtp:// or smtps:// URL of the server to send through (the operator's, or the catcher's). */
  smtpUrl: string;
  from: string;
  /** The dashboard's public URL (…/dashboard), for the links a notice names. */
  dashboardUrl: string;
  log?: (line: string) => void;
}

interface Claimed {
  id: string;
  to_address: string;
  subject: string | null;
  body_sealed: string | null;
  attempts: number;
  /** A security notice: its line, joined at the claim. */
  action: string | null;
  environment: string | null;
  email: string | null;
  ip: string | null;
  detail: Record<string, unknown> | null;
  line_at: Date | null;
  merchant_name: string | null;
}

export class MailWorker {
  private readonly pump: Pump;
  private readonly transport: Transporter;
  private unlisten: (() => Promise<void>) | undefined;
  private lastPurge = 0;

  constructor(private readonly opts: MailWorkerOptions) {
    this.transport = nodemailer.createTransport(opts.smtpUrl, {
      // Bounded: a server that hangs holds one pass, not the worker.
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 30_000,
    } as Parameters<typeof nodemailer.createTransport>[1]);
    this.pump = new Pump(() => this.pass(), { name: "mail worker", pollMs: POLL_MS, retryMs: 1000, log: opts.log });
  }

  async start(): Promise<void> {
    const listener = await this.opts.sql.listen(MAIL_CHANNEL, () => this.pump.wake(), () => this.pump.wake());
    this.unlisten = () => listener.unlisten();
    this.pump.wake();
  }

  /** Runs one pass now (tests); resolves when it is done. */
  async drain(): Promise<void> {
    await this.pass();
  }

  async stop(): Promise<void> {
    await this.pump.stop();
    await this.unlisten?.().catch(() => {});
    this.transport.close();
  }

  private async pass(): Promise<number> {
    const sql = this.opts.sql;
    if (Date.now() - this.lastPurge > PURGE_EVERY_MS) {
      await sql`delete from app.mail_outbox where (state = 'sent' and sent_at < now() - interval '7 days') or (state = 'failed' and created_at < now() - interval '30 days')`;
      this.lastPurge = Date.now();
    }
    const claimed = (await sql`
      update app.mail_outbox m set state = 'sending', attempts = m.attempts + 1, next_attempt_at = now() + ${LEASE_SECONDS} * interval '1 second'
       where m.id in (select id from app.mail_outbox
                       where state in ('pending', 'sending') and next_attempt_at <= now()
                       order by next_attempt_at limit ${CLAIM_BATCH} for update skip locked)
      returning m.id, m.to_address, m.subject, m.body_sealed, m.attempts,
        (select row_to_json(l) from (select e.action, e.environment, e.email, e.ip, e.detail, e.created_at as line_at,
                 (select name from app.merchants where id = e.merchant_id) as merchant_name
            from app.security_events e where e.id = m.security_event_id) l) as line`) as unknown as (Claimed & { line: Record<string, unknown> | null })[];
    for (const { line, ...mail } of claimed) await this.send({ ...mail, ...(line ?? {}) } as Claimed);
    if (claimed.length === CLAIM_BATCH) return 0;
    const [next] = await sql`select extract(epoch from (min(next_attempt_at) - now())) * 1000 as ms from app.mail_outbox where state in ('pending', 'sending')`;
    const ms = next?.ms === null || next?.ms === undefined ? POLL_MS : Math.max(0, Math.ceil(Number(next.ms)));
    return Math.min(ms, POLL_MS);
  }

  /** The mail as sent: a written one opened, a notice written from its line. Throws when a body does not open. */
  private write(mail: Claimed): WrittenMail & { html?: string } {
    if (mail.body_sealed !== null && mail.subject !== null) return { subject: mail.subject, ...openBody(this.opts.encryptionKey, mail.id, mail.body_sealed) };
    return writeNotice(
      { action: mail.action ?? "", environment: mail.environment, email: mail.email, ip: mail.ip, detail: mail.detail ?? {}, createdAt: new Date(String(mail.line_at)), merchantName: mail.merchant_name ?? "Your account" },
      this.opts.dashboardUrl,
    );
  }

  private async send(mail: Claimed): Promise<void> {
    const sql = this.opts.sql;
    let written: WrittenMail & { html?: string };
    try {
      written = this.write(mail);
    } catch {
      // Sealed under another key (SERVICE_ENCRYPTION_KEY changed): it can never be sent.
      await sql`update app.mail_outbox set state = 'failed', last_error = 'its body does not open with this service''s encryption key' where id = ${mail.id} and attempts = ${mail.attempts}`;
      return;
    }
    const messageId = `<${mail.id}@paysession.mail>`;
    try {
      await this.transport.sendMail({ from: this.opts.from, to: mail.to_address, subject: written.subject, text: written.text, html: written.html, messageId });
      await sql`update app.mail_outbox set state = 'sent', sent_at = now(), message_id = ${messageId}, last_error = null where id = ${mail.id} and attempts = ${mail.attempts}`;
    } catch (e) {
      const outcome = sendFailureOutcome(e, mail.attempts);
      if (outcome.state === "failed") {
        this.opts.log?.(`mail ${mail.id}: failed (${outcome.error})`);
        await sql`update app.mail_outbox set state = 'failed', last_error = ${outcome.error} where id = ${mail.id} and attempts = ${mail.attempts}`;
      } else {
        this.opts.log?.(`mail ${mail.id}: attempt ${mail.attempts} failed, retried in ${Math.round(outcome.delayMs / 1000)} s (${describeError(e, { firstLines: true, maxLength: 200 })})`);
        await sql`update app.mail_outbox set state = 'pending', last_error = ${outcome.error}, next_attempt_at = now() + ${outcome.delayMs} * interval '1 millisecond' where id = ${mail.id} and attempts = ${mail.attempts}`;
      }
    }
  }
}
