/**
 * A merchant's team (docs/team-and-security.md): its members with their roles, invitations by
 * email, role changes, removal and the transfer of ownership. Each change and its security-history
 * line commit together. The rules of who may give which role are permissions.ts (pure); here they
 * are applied under row locks, so two owners demoting each other at once cannot leave no owner.
 *
 * An invitation's link carries a 238-bit secret (the table keeps its SHA-256): it works once, for
 * 7 days, for its email only, and a newer invitation of the same email ends the older one.
 * A person belongs to one merchant (emails are unique across the service).
 */
import type { Sql, TransactionSql } from "postgres";
import { newId, newSecret } from "../../../shared/ids.ts";
import { BaseError } from "../../../shared/base-error.ts";
import { hashSecret } from "../credentials/format.ts";
import { securityEventStatement, type Actor } from "../credentials/security-history.ts";
import { enqueueMail } from "../mail/outbox.ts";
import { invitableRoles, mayChangeRole, ROLE_NAMES, type Role } from "./permissions.ts";
import { startLoginIn } from "./logins.ts";

export const INVITATION_DAYS = 7;
const TOKEN = /^inv_[0-9A-Za-z]{40}$/;

/** A change the rules refuse: its message is what the page shows; `status` its answer. */
export class MemberError extends BaseError {
  override name = "MemberError";
  constructor(
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

export interface Member {
  id: string;
  email: string;
  role: Role;
  createdAt: Date;
}

export interface PendingInvitation {
  id: string;
  email: string;
  role: Role;
  createdAt: Date;
  expiresAt: Date;
}

/** Who acts: the signed-in person, their role, and the history's actor. */
export interface MemberActor {
  userId: string;
  merchantId: string;
  role: Role;
  actor: Actor;
}

export async function listMembers(sql: Sql, merchantId: string): Promise<{ members: Member[]; invitations: PendingInvitation[] }> {
  const members = await sql`select id, email, role, created_at from app.dashboard_users where merchant_id = ${merchantId} order by created_at, id`;
  const invitations = await sql`
    select id, email, role, created_at, expires_at from app.invitations
     where merchant_id = ${merchantId} and accepted_at is null and revoked_at is null and expires_at > now()
     order by created_at desc`;
  return {
    members: members.map((m) => ({ id: m.id, email: m.email, role: m.role, createdAt: new Date(m.created_at) })),
    invitations: invitations.map((i) => ({ id: i.id, email: i.email, role: i.role, createdAt: new Date(i.created_at), expiresAt: new Date(i.expires_at) })),
  };
}

/** Invites `email` as `role`, mailing the link; a pending invitation of the same email is replaced. */
export async function invite(sql: Sql, by: MemberActor, args: { email: string; role: Role; merchantName: string; encryptionKey: Buffer; dashboardUrl: string }): Promise<void> {
  if (!invitableRoles(by.role).includes(args.role)) throw new MemberError(`As ${ROLE_NAMES[by.role]} you cannot invite someone as ${ROLE_NAMES[args.role] ?? args.role}.`, 403);
  await sql.begin(async (tx) => {
    const [taken] = await tx`select merchant_id from app.dashboard_users where email = ${args.email}`;
    if (taken) {
      throw new MemberError(taken.merchant_id === by.merchantId ? `${args.email} is a member already.` : `${args.email} already has a Paysession account with another business: a person belongs to one account. Ask them for another email.`, 409);
    }
    const replaced = await tx`
      update app.invitations set revoked_at = now()
       where merchant_id = ${by.merchantId} and email = ${args.email} and accepted_at is null and revoked_at is null returning id`;
    const token = `inv_${newSecret()}`;
    const id = newId("invitation");
    await tx`
      insert into app.invitations (id, merchant_id, email, role, token_hash, invited_by, expires_at)
      values (${id}, ${by.merchantId}, ${args.email}, ${args.role}, ${hashSecret(token)}, ${by.userId}, now() + ${INVITATION_DAYS} * interval '1 day')`;
    await enqueueMail(tx, args.encryptionKey, {
      to: args.email,
      kind: "invitation",
      merchantId: by.merchantId,
      subject: `${by.actor.email ?? "Someone"} invited you to ${args.merchantName} on Paysession`,
      text: [
        `${by.actor.email ?? "Someone"} invited you to join ${args.merchantName} on Paysession as ${ROLE_NAMES[args.role]}.`,
        ``,
        `Accept within ${INVITATION_DAYS} days; the link works once, and only for ${args.email}:`,
        `${args.dashboardUrl}/invitations/${token}`,
        ``,
        `If you did not expect this, ignore it: nothing happens unless you accept.`,
      ].join("\n"),
    });
    await securityEventStatement(tx, by.actor, "member_invited", { invitationId: id, invited: args.email, role: args.role, replaced: replaced.length });
  });
}

export async function revokeInvitation(sql: Sql, by: MemberActor, invitationId: string): Promise<void> {
  await sql.begin(async (tx) => {
    const [row] = await tx`
      update app.invitations set revoked_at = now()
       where id = ${invitationId} and merchant_id = ${by.merchantId} and accepted_at is null and revoked_at is null returning email`;
    if (!row) throw new MemberError("That invitation is no longer pending.", 404);
    await securityEventStatement(tx, by.actor, "invitation_revoked", { invitationId, invited: row.email });
  });
}

export interface OpenInvitation {
  id: string;
  email: string;
  role: Role;
  merchantId: string;
  merchantName: string;
  expiresAt: Date;
}

/** The invitation a link still opens (pending, unexpired), or undefined. */
export async function openInvitation(sql: Sql, token: string): Promise<OpenInvitation | undefined> {
  if (!TOKEN.test(token)) return undefined;
  const [r] = await sql`
    select i.id, i.email, i.role, i.merchant_id, m.name as merchant_name, i.expires_at
      from app.invitations i join app.merchants m on m.id = i.merchant_id
     where i.token_hash = ${hashSecret(token)} and i.accepted_at is null and i.revoked_at is null and i.expires_at > now()`;
  return r ? { id: r.id, email: r.email, role: r.role, merchantId: r.merchant_id, merchantName: r.merchant_name, expiresAt: new Date(r.expires_at) } : undefined;
}

/**
 * Accepts: the person (the invitation's email, the password hashed by the caller), the
 * invitation used, their first login and the "member_joined" line, in one transaction; or
 * MemberError when the link stopped working meanwhile or the email got an account.
 */
export async function acceptInvitation(sql: Sql, token: string, args: { passwordHash: string; ip: string | null; userAgent: string | null }): Promise<{ token: string }> {
  if (!TOKEN.test(token)) throw new MemberError("This invitation no longer works.", 410);
  return sql.begin(async (tx) => {
    const [inv] = await tx`
      update app.invitations set accepted_at = now()
       where token_hash = ${hashSecret(token)} and accepted_at is null and revoked_at is null and expires_at > now()
      returning id, merchant_id, email, role`;
    if (!inv) throw new MemberError("This invitation no longer works: it was used, revoked or has expired.", 410);
    const [taken] = await tx`select 1 from app.dashboard_users where email = ${inv.email}`;
    if (taken) throw new MemberError(`${inv.email} has a Paysession account already. Sign in with it.`, 409);
    const userId = newId("dashboardUser");
    // Two accounts' invitations of one email accepted at once: the second meets the email's unique index.
    const inserted = await tx`
      insert into app.dashboard_users (id, merchant_id, email, password_hash, role) values (${userId}, ${inv.merchant_id}, ${inv.email}, ${args.passwordHash}, ${inv.role})
      on conflict (email) do nothing returning id`;
    if (!inserted.length) throw new MemberError(`${inv.email} has a Paysession account already. Sign in with it.`, 409);
    const login = await startLoginIn(tx, userId, args.ip, args.userAgent);
    await securityEventStatement(tx, { merchantId: inv.merchant_id, userId, email: inv.email, ip: args.ip }, "member_joined", { invitationId: inv.id, role: inv.role });
    return { token: login.token };
  });
}

/**
 * The target member and the actor, locked, with the account's owners (locked too: the last-owner
 * rule holds under concurrency). The actor's role is read again here: one demoted meanwhile acts
 * with the role they have now.
 */
async function lockTeam(tx: TransactionSql, by: MemberActor, targetId: string) {
  const rows = await tx`select id, email, role from app.dashboard_users where merchant_id = ${by.merchantId} and (id = ${targetId} or id = ${by.userId} or role = 'owner') order by id for update`;
  const target = rows.find((r) => r.id === targetId);
  if (!target) throw new MemberError("No such member of your account.", 404);
  const me = rows.find((r) => r.id === by.userId);
  if (!me) throw new MemberError("You are no longer a member of this account.", 403);
  return { target: { id: target.id as string, email: target.email as string, role: target.role as Role }, actorRole: me.role as Role, owners: rows.filter((r) => r.role === "owner").length };
}

/** Pending invitations someone sent end when they leave or lose the right to invite: none outlives its sender's standing. */
async function revokeInvitationsBy(tx: TransactionSql, userId: string): Promise<void> {
  await tx`update app.invitations set revoked_at = now() where invited_by = ${userId} and accepted_at is null and revoked_at is null`;
}

export async function changeRole(sql: Sql, by: MemberActor, targetId: string, to: Role): Promise<void> {
  await sql.begin(async (tx) => {
    const { target, owners, actorRole } = await lockTeam(tx, by, targetId);
    if (!mayChangeRole(actorRole, target.role, to)) {
      throw new MemberError(target.role === to ? `${target.email} is ${ROLE_NAMES[to]} already.` : `As ${ROLE_NAMES[actorRole]} you cannot make ${target.email} (${ROLE_NAMES[target.role]}) ${ROLE_NAMES[to] ?? to}.`, target.role === to ? 409 : 403);
    }
    if (target.role === "owner" && owners <= 1) throw new MemberError("The account's last owner keeps the role: make another member owner first.", 409);
    await tx`update app.dashboard_users set role = ${to} where id = ${targetId}`;
    if (invitableRoles(to).length === 0) await revokeInvitationsBy(tx, targetId);
    await securityEventStatement(tx, by.actor, "member_role_changed", { member: target.email, from: target.role, to });
  });
}

export async function removeMember(sql: Sql, by: MemberActor, targetId: string): Promise<void> {
  await sql.begin(async (tx) => {
    const { target, owners, actorRole } = await lockTeam(tx, by, targetId);
    if (target.role === "owner" && actorRole !== "owner") throw new MemberError("Only an owner can remove an owner.", 403);
    if (target.role === "owner" && owners <= 1) throw new MemberError("The account's last owner cannot leave: make another member owner first.", 409);
    if (target.role === "admin" && actorRole !== "owner" && target.id !== by.userId) throw new MemberError("Only an owner can remove an administrator.", 403);
    await revokeInvitationsBy(tx, targetId);
    // Their logins and reset links go with them: an open session is refused at its next request.
    await tx`delete from app.dashboard_users where id = ${targetId}`;
    await securityEventStatement(tx, by.actor, "member_removed", { member: target.email, role: target.role });
  });
}

/** The owner hands ownership to another member and becomes an administrator. */
export async function transferOwnership(sql: Sql, by: MemberActor, targetId: string): Promise<void> {
  if (by.role !== "owner") throw new MemberError("Only an owner can transfer ownership.", 403);
  if (targetId === by.userId) throw new MemberError("You own the account already.", 409);
  await sql.begin(async (tx) => {
    const { target, actorRole } = await lockTeam(tx, by, targetId);
    if (actorRole !== "owner") throw new MemberError("Only an owner can transfer ownership.", 403);
    await tx`update app.dashboard_users set role = 'owner' where id = ${targetId}`;
    await tx`update app.dashboard_users set role = 'admin' where id = ${by.userId}`;
    await securityEventStatement(tx, by.actor, "ownership_transferred", { to: target.email, from: by.actor.email });
  });
}
