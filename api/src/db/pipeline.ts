/**
 * Statements of one transaction sent together, answered together: one round trip for all of
 * them instead of one each. postgres.js sends a query only when it is first awaited (or
 * `.execute()`d); `send` sends it at once and keeps its answer, `flush` waits for them all.
 *
 * Postgres runs them in the order sent, each seeing what the ones before it wrote — so a
 * statement may read what an earlier one of the pipeline changed, but the code that queues it
 * cannot use an earlier one's answer (count it on the client instead, e.g. a sequence read
 * under the row lock). Should one fail, the transaction is aborted and the ones after it fail
 * too; `flush` throws the first failure in the order sent, the one that says why.
 */
import type { PendingQuery, Row } from "postgres";

export class Pipeline {
  private readonly sent: Promise<unknown>[] = [];

  /** Sends the statement now; its answer, should the caller want it (awaiting it is optional). */
  send<T extends readonly (object | undefined)[] = Row[]>(query: PendingQuery<T>): Promise<T> {
    const answer = query.execute() as unknown as Promise<T>;
    answer.catch(() => {}); // reported by flush, in order; a caller awaiting it sees it too
    this.sent.push(answer);
    return answer;
  }

  /** Waits for every statement sent so far; throws the first failure in the order sent. */
  async flush(): Promise<void> {
    const answers = await Promise.allSettled(this.sent.splice(0));
    const failed = answers.find((a) => a.status === "rejected");
    if (failed) throw (failed as PromiseRejectedResult).reason;
  }
}
