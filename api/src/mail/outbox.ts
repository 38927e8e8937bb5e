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

/** NOTIFY channel the worker listens on (sent at commit, so it never sees an uncommitted mail). */
export const MAIL_CHANNEL = "paysession_mail";

/**
 * What a mail is for (shown in the Outbox). Written mails name theirs; a security notice's kind is
 * its security-history action (settlement_address_changed, api_key_created, password_changed,
 * password_reset: the trigger of drizzle/0030_mail_outbox.sql).
 */
export const MAIL_KINDS = ["password_reset_link", "test"] as const;
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
