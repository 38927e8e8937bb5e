/**
 * Who may do what in the dashboard, pure: the roles, what each permission allows per environment,
 * and which permission every dashboard route takes. context.ts enforces it for every page and
 * action (one place); docs/team-and-security.md shows the same matrix; permissions.test.ts walks
 * the live route table for every role against it.
 *
 * The production settlement address, production API keys and roles are Owner and Administrator
 * only; Developers work the sandbox and the webhooks; Finance refunds, exports and reconciles;
 * Support reads, looks payments up and cancels unpaid ones; Viewers read.
 */
import type { Environment } from "../../../shared/environment.ts";

export const ROLES = ["owner", "admin", "developer", "finance", "support", "viewer"] as const;
export type Role = (typeof ROLES)[number];

export const ROLE_NAMES: Record<Role, string> = { owner: "Owner", admin: "Administrator", developer: "Developer", finance: "Finance", support: "Support", viewer: "Viewer" };

export const PERMISSIONS = [
  "view",
  "export",
  "refund",
  "refund_settings",
  "fund_refund_balance",
  "cancel",
  "payment_links",
  "sandbox_tools",
  "redeliver",
  "keys",
  "webhooks",
  "settlement_change",
  "security_history",
  "outbox",
  "members",
  "own_account",
] as const;
export type Permission = (typeof PERMISSIONS)[number];

const ALL: readonly Role[] = ROLES;
const ADMINS: readonly Role[] = ["owner", "admin"];

/** Roles allowed per permission: [in the sandbox, in production]. */
export const MATRIX: Record<Permission, { what: string; sandbox: readonly Role[]; production: readonly Role[] }> = {
  view: { what: "see payments, events, refunds, balances and settings", sandbox: ALL, production: ALL },
  export: { what: "download the CSV export", sandbox: ["owner", "admin", "finance"], production: ["owner", "admin", "finance"] },
  refund: { what: "create, pay, approve and cancel refunds; keep automatic returns", sandbox: ["owner", "admin", "finance"], production: ["owner", "admin", "finance"] },
  refund_settings: { what: "change the refund settings (automatic returns)", sandbox: ["owner", "admin", "finance"], production: ["owner", "admin", "finance"] },
  fund_refund_balance: { what: "mint test tokens to the refund balance (sandbox tool)", sandbox: ["owner", "admin", "developer", "finance"], production: [] },
  cancel: { what: "cancel a payment that is not paid", sandbox: ["owner", "admin", "finance", "support"], production: ["owner", "admin", "finance", "support"] },
  payment_links: { what: "create and deactivate payment links", sandbox: ["owner", "admin", "developer", "finance"], production: ["owner", "admin", "finance"] },
  sandbox_tools: { what: "pay or expire a sandbox session with the sandbox tools", sandbox: ["owner", "admin", "developer"], production: [] },
  redeliver: { what: "send a webhook event again", sandbox: ["owner", "admin", "developer"], production: ["owner", "admin", "developer"] },
  keys: { what: "see, create and revoke API keys", sandbox: ["owner", "admin", "developer"], production: ADMINS },
  webhooks: { what: "add, change and delete webhook endpoints; reveal and rotate their secrets", sandbox: ["owner", "admin", "developer"], production: ["owner", "admin", "developer"] },
  settlement_change: { what: "change a settlement address", sandbox: ["owner", "admin", "developer"], production: ADMINS },
  security_history: { what: "read the security history", sandbox: ADMINS, production: ADMINS },
  outbox: { what: "read the Outbox (the account's mail)", sandbox: ADMINS, production: ADMINS },
  members: { what: "invite, remove and change the role of members", sandbox: ADMINS, production: ADMINS },
  own_account: { what: "change one's own password, sign out one's devices", sandbox: ALL, production: ALL },
};

export function allows(role: Role, permission: Permission, env: Environment): boolean {
  return MATRIX[permission][env].includes(role);
}

/** The permission each signed-in dashboard route takes ("METHOD path" as the router names it). */
export const ROUTE_PERMISSIONS: Record<string, Permission> = {
  "POST /dashboard/sign-out": "own_account",
  "GET /dashboard/:env": "view",
  "GET /dashboard/:env/transactions": "view",
  "GET /dashboard/:env/transactions/rows": "view",
  "GET /dashboard/:env/transactions.csv": "export",
  "GET /dashboard/:env/transactions/:id": "view",
  "POST /dashboard/:env/transactions/:id/sandbox/:tool": "sandbox_tools",
  "POST /dashboard/:env/transactions/:id/events/:eventId/redeliver": "redeliver",
  "GET /dashboard/:env/transactions/:id/cancel": "cancel",
  "POST /dashboard/:env/transactions/:id/cancel": "cancel",
  "GET /dashboard/:env/transactions/:id/refund": "refund",
  "GET /dashboard/:env/transactions/:id/refund/review": "refund",
  "POST /dashboard/:env/transactions/:id/refunds": "refund",
  "GET /dashboard/:env/transactions/:id/refunds/:refundId/wallet": "refund",
  "POST /dashboard/:env/transactions/:id/refunds/:refundId/wallet": "refund",
  "POST /dashboard/:env/transactions/:id/refunds/:refundId/cancel": "refund",
  "POST /dashboard/:env/transactions/:id/automatic-returns/keep": "refund",
  "GET /dashboard/:env/payment-links": "view",
  "POST /dashboard/:env/payment-links": "payment_links",
  "GET /dashboard/:env/payment-links/:id": "view",
  "POST /dashboard/:env/payment-links/:id/deactivate": "payment_links",
  "GET /dashboard/:env/refund-balance": "view",
  "POST /dashboard/:env/refund-balance/fund": "fund_refund_balance",
  "GET /dashboard/:env/refund-approvals": "view",
  "POST /dashboard/:env/refunds/:refundId/approve": "refund",
  "GET /dashboard/:env/events": "view",
  "POST /dashboard/:env/events/:eventId/redeliver": "redeliver",
  "GET /dashboard/:env/settings/api-keys": "keys",
  "POST /dashboard/:env/settings/api-keys": "keys",
  "POST /dashboard/:env/settings/api-keys/:keyId/revoke": "keys",
  "GET /dashboard/:env/settings/webhooks": "webhooks",
  "POST /dashboard/:env/settings/webhooks": "webhooks",
  "GET /dashboard/:env/settings/webhooks/:id": "webhooks",
  "POST /dashboard/:env/settings/webhooks/:id": "webhooks",
  "POST /dashboard/:env/settings/webhooks/:id/:op": "webhooks",
  "GET /dashboard/:env/settings/settlement": "view",
  "POST /dashboard/:env/settings/settlement/:chainId": "settlement_change",
  "GET /dashboard/:env/settings/refunds": "view",
  "POST /dashboard/:env/settings/refunds": "refund_settings",
  "GET /dashboard/:env/settings/security": "security_history",
  "GET /dashboard/:env/settings/outbox": "outbox",
  "GET /dashboard/:env/settings/account": "own_account",
  "POST /dashboard/:env/settings/account/password": "own_account",
  "POST /dashboard/:env/settings/account/sign-out-others": "own_account",
  "GET /dashboard/:env/settings/account/two-factor": "own_account",
  "POST /dashboard/:env/settings/account/two-factor": "own_account",
  "POST /dashboard/:env/settings/account/two-factor/disable": "own_account",
  "POST /dashboard/:env/settings/account/passkeys/options": "own_account",
  "POST /dashboard/:env/settings/account/passkeys": "own_account",
  "POST /dashboard/:env/settings/account/passkeys/:passkeyId/remove": "own_account",
  "POST /dashboard/:env/settings/members/require-two-factor": "members",
  "GET /dashboard/:env/settings/members": "members",
  "POST /dashboard/:env/settings/members/invite": "members",
  "POST /dashboard/:env/settings/members/invitations/:invitationId/revoke": "members",
  "POST /dashboard/:env/settings/members/:userId/role": "members",
  "POST /dashboard/:env/settings/members/:userId/remove": "members",
  "POST /dashboard/:env/settings/members/:userId/transfer-ownership": "members",
};

/** The permission a route takes; undefined for a route the table lacks (context.ts refuses it: fail closed). */
export function permissionOfRoute(method: string, route: string): Permission | undefined {
  return ROUTE_PERMISSIONS[`${method} ${route}`];
}

const RANK: Record<Role, number> = { owner: 3, admin: 2, developer: 1, finance: 1, support: 1, viewer: 1 };

/**
 * Whether `actor` may give `target` (now `from`) the role `to`: never above their own rank; an
 * owner's or an administrator's role is changed by an owner only; owner is given by transfer of
 * ownership (or by an owner making a second owner).
 */
export function mayChangeRole(actor: Role, from: Role, to: Role): boolean {
  if (!allows(actor, "members", "production")) return false;
  if (RANK[to] > RANK[actor] || RANK[from] > RANK[actor]) return false;
  // An administrator's role is changed by an owner only: else one admin could demote, then remove, another.
  if (from === "admin" && actor !== "owner") return false;
  return from !== to;
}

/** The roles an invitation from `actor` may carry (never owner: ownership is given to a member). */
export function invitableRoles(actor: Role): Role[] {
  return ROLES.filter((r) => r !== "owner" && RANK[r] <= RANK[actor] && allows(actor, "members", "production"));
}

/** The permission a section of the navigation opens with: a role sees only the links it may follow. */
export const SECTION_PERMISSIONS: Record<string, Permission> = {
  home: "view",
  transactions: "view",
  "payment-links": "view",
  events: "view",
  "refund-balance": "view",
  "refund-approvals": "view",
  "api-keys": "keys",
  webhooks: "webhooks",
  settlement: "view",
  refunds: "view",
  members: "members",
  security: "security_history",
  outbox: "outbox",
  account: "own_account",
};
