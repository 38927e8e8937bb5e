/**
 * TEST helper: every event a merchant environment has, as the API serves it, checked against the
 * OpenAPI document (GET /docs/json) — each page of GET /events (session and refund events) and each session's history
 * (GET /payment-sessions/{id}), so every event's `detail` is checked against the schema of its
 * `reason` (sessions/event-detail.ts). The lifecycle suites call it last, after producing events
 * of every reason on the real stack.
 */
import { documentedAnswers } from "./documented-answers.ts";
import type { TestService } from "./service.ts";

export interface DocumentedEvents {
  /** Every reason seen, in session events and histories. */
  reasons: Set<string>;
  /** Every event type seen in GET /events (the sessions' and their refunds'). */
  types: Set<string>;
  /** How many events were checked. */
  events: number;
  /** What does not match the document (none when all do). */
  problems: string[];
}

export async function checkEventsAgainstDocument(svc: TestService, key: string): Promise<DocumentedEvents> {
  const answers = documentedAnswers((await svc.call("GET", "/docs/json")).body);
  const out: DocumentedEvents = { reasons: new Set(), types: new Set(), events: 0, problems: [] };
  const sessions = new Set<string>();
  const check = (op: string, status: number, body: unknown) => {
    const problem = answers.problem(op, status, body);
    if (problem) out.problems.push(problem);
  };
  for (let after: string | null = ""; after !== null; ) {
    const page = await svc.call("GET", `/events?limit=100${after ? `&startingAfter=${after}` : ""}`, { auth: key });
    check("GET /events", page.status, page.body);
    for (const e of page.body.data as { type: string; data: { paymentSessionId: string; reason: string } }[]) {
      out.events += 1;
      out.types.add(e.type);
      // A refund event's `reason` is the refund's (requested_by_customer, …), not a session event's.
      if (!e.type.startsWith("refund.")) out.reasons.add(e.data.reason);
      sessions.add(e.data.paymentSessionId);
    }
    after = page.body.hasMore ? (page.body.nextCursor as string) : null;
  }
  for (const id of sessions) {
    const s = await svc.call("GET", `/payment-sessions/${id}`, { auth: key });
    check("GET /payment-sessions/{id}", s.status, s.body);
    for (const h of s.body.history as { reason: string }[]) out.reasons.add(h.reason);
  }
  return out;
}
