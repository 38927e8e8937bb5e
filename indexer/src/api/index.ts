/**
 * The analysts' read-only endpoint: SQL over HTTP (/sql/*, Ponder's `client` middleware, the
 * protocol of @ponder/client; queries run in a read-only transaction and only SELECTs pass its
 * validator) and GraphQL (/graphql). Ponder itself adds /health, /ready, /status, /metrics.
 */
import { db } from "ponder:api";
import schema from "ponder:schema";
import { Hono } from "hono";
import { client, graphql } from "ponder";

const app = new Hono();
app.use("/sql/*", client({ db, schema }));
app.use("/graphql", graphql({ db, schema }));
export default app;
