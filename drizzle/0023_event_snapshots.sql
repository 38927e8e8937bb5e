-- What an event's webhook body is built from, taken when the event is written: the session as of
-- the event (without its token hash) and its deposits. Rows written before (or by an older build
-- during a rolling upgrade) have none; the worker's first claim of such an event takes it then.
ALTER TABLE "app"."session_events" ADD COLUMN "snapshot" jsonb;--> statement-breakpoint
-- The snapshot of a session as it stands (hand-written; drizzle-kit does not model functions), its
-- amounts as text (a numeric in json is a JSON number, which loses digits past 2^53). The
-- one definition for the writers that see the session row in the table: an event written after
-- its session's update (sessions/repository.ts) and the claim's fallback for rows without one.
-- The create statement, which writes the session in the same statement, builds the same object
-- from its own rows (sessions/create/statement.ts); webhooks/snapshot.test.ts holds them equal.
CREATE FUNCTION "app"."session_event_snapshot"(session_id text) RETURNS jsonb LANGUAGE sql STABLE AS $$
  select jsonb_build_object(
           'session', (to_jsonb(s) - 'token_hash') || jsonb_build_object('amount_minor', s.amount_minor::text, 'funding_amount', s.funding_amount::text),
           'deposits', (select coalesce(jsonb_agg(to_jsonb(sd) || jsonb_build_object('required_base_units', sd.required_base_units::text) order by sd.chain_id), '[]'::jsonb)
                          from app.session_deposits sd where sd.session_id = s.id))
    from app.payment_sessions s where s.id = session_event_snapshot.session_id
$$;
