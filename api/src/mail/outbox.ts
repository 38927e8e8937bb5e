/**
 * The mail outbox (app.mail_outbox): a mail is a row written in the transaction of what it tells
 * about (an invitation with its invitation, a reset link with its token, a notice with the change),
 * so it goes out exactly when that commits and is never lost to a crash or an SMTP outage; the
 * worker (mail/worker.ts) sends it, retrying. Its body is sealed (credentials/seal.ts): a reset
 * link in it is a credential until used, and a database dump must not hand it out.
 */
import type { Sql, TransactionSql } from "postgres";
import { newId } from "../../../shared/ids.ts";
import { seal, unseal } from "../credentials/seal.ts";
import { writeNotice } from "./notices.ts";

/** NOTIFY channel the worker listens on (sent at commit, so it never sees an uncommitted mail). */
export const MAIL_CHANNEL = "paysession_mail";

/**
 * What a mail is for (shown in the Outbox). Written mails name theirs; a security notice's kind is
 * its security-history action (settlement_address_changed, api_key_created, password_changed,
 * password_reset: the trigger of drizzle/0030_mail_outbox.sql).
 */
export const MAIL_KINDS = ["password_reset_link", "invitation", "test"] as const;
export type MailKind = (typeof MAIL_KINDS)[number];

export interface NewMail {
  to: string;
  kind: MailKind;
  subject: string;
  text: string;
  html?: string;
  /** The merchant it concerns (its Outbox lists it), or none for an operator's mail. */
  merchantId?: string;
}

export interface MailBody {
  text: string;
  html?: string;
}

const FORMAT = (id: string) => ({ label: "v1", aad: `mail:${id}` }) as const;

/** The sealed body of mail `id`: opens only as that row's (associated data: the id). */
export function sealBody(key: Buffer, id: string, body: MailBody): string {
  return seal(key, JSON.stringify(body), FORMAT(id));
}

export function openBody(key: Buffer, id: string, sealed: string): MailBody {
  return JSON.parse(unseal(key, sealed, FORMAT(id))) as MailBody;
}

/** Queues `mail` in `tx`; sent once the transaction commits. Returns its id. */
export async function enqueueMail(tx: TransactionSql | Sql, key: Buffer, mail: NewMail): Promise<string> {
  const id = newId("mail");
  const body = sealBody(key, id, { text: mail.text, ...(mail.html ? { html: mail.html } : {}) });
  await tx`
    insert into app.mail_outbox (id, merchant_id, to_address, kind, subject, body_sealed)
    values (${id}, ${mail.merchantId ?? null}, ${mail.to}, ${mail.kind}, ${mail.subject}, ${body})`;
  await tx`select pg_notify(${MAIL_CHANNEL}, '')`;
  return id;
}

/**
 * Mails whose text is a credential (a reset link, an invitation): the Outbox shows their text to
 * their recipient only — else an administrator could ask a reset of the owner's email and read
 * its link there.
 */
const CREDENTIAL_KINDS = new Set<string>(["password_reset_link", "invitation"]);

/** A mail as the Outbox shows it. */
export interface OutboxMail {
  id: string;
  to: string;
  kind: string;
  subject: string;
  state: "pending" | "sending" | "sent" | "failed";
  attempts: number;
  lastError: string | null;
  createdAt: Date;
  sentAt: Date | null;
  /** The text, only where the service keeps its own mail (the catcher): elsewhere it went to a real inbox. */
  text?: string;
  /** Kept its own mail, but the text is a credential for someone else: only its recipient reads it. */
  withheld?: boolean;
}

/**
 * The merchant's latest mails, newest first. A notice's subject (and text) is written from its
 * history line as the worker writes it; a written mail's body is opened only when `withBodies`,
 * and a credential's only for its recipient (`viewer`).
 */
export async function listOutbox(sql: Sql, args: { merchantId: string; encryptionKey: Buffer; dashboardUrl: string; withBodies: boolean; viewer: string; limit?: number }): Promise<OutboxMail[]> {
  const rows = await sql`
    select m.id, m.to_address, m.kind, m.subject, m.body_sealed, m.state, m.attempts, m.last_error, m.created_at, m.sent_at,
           e.action, e.environment, e.email, e.ip, e.detail, e.created_at as line_at, a.name as merchant_name
      from app.mail_outbox m
      left join app.security_events e on e.id = m.security_event_id
      left join app.merchants a on a.id = m.merchant_id
     where m.merchant_id = ${args.merchantId}
     order by m.created_at desc, m.id desc limit ${args.limit ?? 100}`;
  return rows.map((r) => {
    let subject = (r.subject as string | null) ?? "";
    let text: string | undefined;
    if (r.body_sealed === null) {
      const w = writeNotice(
        { action: r.action, environment: r.environment, email: r.email, ip: r.ip, detail: r.detail ?? {}, createdAt: new Date(r.line_at), merchantName: r.merchant_name ?? "Your account" },
        args.dashboardUrl,
      );
      subject = w.subject;
      text = w.text;
    } else if (args.withBodies && (!CREDENTIAL_KINDS.has(r.kind) || r.to_address === args.viewer)) {
      try {
        text = openBody(args.encryptionKey, r.id, r.body_sealed).text;
      } catch {
        text = "(sealed under another encryption key)";
      }
    }
    return {
      id: r.id,
      to: r.to_address,
      kind: r.kind,
      subject,
      state: r.state,
      attempts: r.attempts,
      lastError: r.last_error,
      createdAt: new Date(r.created_at),
      sentAt: r.sent_at ? new Date(r.sent_at) : null,
      ...(args.withBodies && text !== undefined ? { text } : {}),
      ...(args.withBodies && text === undefined && r.body_sealed !== null ? { withheld: true } : {}),
    };
  });
}

/**
 * Housekeeping (server.ts, hourly, whatever the mail mode): mail older than 30 days goes, sent,
 * failed or never sent (a service without mail queues notices it cannot send; they are stale by then).
 */
export async function purgeOldMail(sql: Sql): Promise<void> {
  await sql`delete from app.mail_outbox where created_at < now() - interval '30 days' and state <> 'sending'`;
}
