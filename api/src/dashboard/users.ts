/**
 * Dashboard users: people of a merchant who sign in with an email and a password. The
 * password is kept only as an argon2id hash (Bun.password); the email is stored lowercase.
 */
import { eq } from "drizzle-orm";
import type { TransactionSql } from "postgres";
import type { Db } from "../db/client.ts";
import { dashboardUsers } from "../db/schema.ts";
import { newId } from "../../../shared/ids.ts";
import { BaseError } from "../../../shared/base-error.ts";

export type UserRow = typeof dashboardUsers.$inferSelect;

export const MIN_PASSWORD_LENGTH = 12;
export const MAX_PASSWORD_LENGTH = 256;

/** argon2id with Bun's defaults (64 MiB, t=2): ~50 ms here, slow enough for a stolen table. */
const HASH = { algorithm: "argon2id" } as const;

/** An email as we store and compare it; undefined when it is not one. */
export function normalizeEmail(raw: string): string | undefined {
  const email = raw.trim().toLowerCase();
  return email.length <= 254 && /^[^\s@<>"]+@[^\s@<>"]+\.[^\s@<>"]+$/.test(email) ? email : undefined;
}

/** Why a new password is refused, or undefined when it is acceptable. */
export function passwordProblem(password: string): string | undefined {
  if (password.length < MIN_PASSWORD_LENGTH) return `The password must have at least ${MIN_PASSWORD_LENGTH} characters.`;
  if (password.length > MAX_PASSWORD_LENGTH) return `The password must have at most ${MAX_PASSWORD_LENGTH} characters.`;
  return undefined;
}

export class UserInputError extends BaseError {
  override name = "UserInputError";
}

/** A new user as checked: the stored email and the password's hash. */
export interface NewUser {
  email: string;
  passwordHash: string;
}

/**
 * Checks a new user's email and password and hashes the password: done before the user's
 * transaction opens, so the ~50 ms of hashing holds no connection. Throws UserInputError.
 */
export async function prepareUser(rawEmail: string, password: string): Promise<NewUser> {
  const email = normalizeEmail(rawEmail);
  if (!email) throw new UserInputError("That is not an email address.");
  const problem = passwordProblem(password);
  if (problem) throw new UserInputError(problem);
  return { email, passwordHash: await Bun.password.hash(password, HASH) };
}

/** Writes a prepared user (on `q`: a transaction when the user is part of a larger change, such as a sign-up). */
export async function insertUser(q: Pick<Db, "select" | "insert">, merchantId: string, user: NewUser): Promise<UserRow> {
  const [taken] = await q.select({ id: dashboardUsers.id }).from(dashboardUsers).where(eq(dashboardUsers.email, user.email));
  if (taken) throw new UserInputError(`A user with the email ${user.email} exists already.`);
  const [row] = await q
    .insert(dashboardUsers)
    .values({ id: newId("dashboardUser"), merchantId, email: user.email, passwordHash: user.passwordHash })
    .returning();
  return row!;
}

export async function createUser(db: Db, merchantId: string, rawEmail: string, password: string): Promise<UserRow> {
  return insertUser(db, merchantId, await prepareUser(rawEmail, password));
}

export async function findUserByEmail(db: Db, rawEmail: string): Promise<UserRow | undefined> {
  const email = normalizeEmail(rawEmail);
  if (!email) return undefined;
  const [row] = await db.select().from(dashboardUsers).where(eq(dashboardUsers.email, email));
  return row;
}

export async function findUser(db: Db, id: string): Promise<UserRow | undefined> {
  const [row] = await db.select().from(dashboardUsers).where(eq(dashboardUsers.id, id));
  return row;
}

/** A hash of nothing anyone knows: an unknown email costs the same time as a wrong password. */
let decoy: Promise<string> | undefined;

/** The user when the password is theirs; an unknown email takes as long as a wrong password. */
export async function checkPassword(user: UserRow | undefined, password: string): Promise<UserRow | undefined> {
  if (password.length > MAX_PASSWORD_LENGTH) return undefined;
  if (!user) {
    await Bun.password.verify(password, await (decoy ??= Bun.password.hash(crypto.randomUUID(), HASH)));
    return undefined;
  }
  return (await Bun.password.verify(password, user.passwordHash)) ? user : undefined;
}

/** Checks and hashes a new password (before any transaction: the ~50 ms of hashing holds no connection). Throws UserInputError. */
export async function hashNewPassword(password: string): Promise<string> {
  const problem = passwordProblem(password);
  if (problem) throw new UserInputError(problem);
  return Bun.password.hash(password, HASH);
}

/** In `tx`: the user's new password hash, and every signed-in session of theirs ended (the caller may start one for this browser). */
export async function replacePassword(tx: TransactionSql, userId: string, passwordHash: string): Promise<void> {
  await tx`update app.dashboard_users set password_hash = ${passwordHash}, password_changed_at = now() where id = ${userId}`;
  await tx`delete from app.dashboard_logins where user_id = ${userId}`;
}

/** A new password ends every signed-in session of the user (the operator's `admin user:password`, the demo user). */
export async function changePassword(db: Db, userId: string, password: string): Promise<void> {
  const hash = await hashNewPassword(password);
  await db.$client.begin((tx) => replacePassword(tx, userId, hash));
}
