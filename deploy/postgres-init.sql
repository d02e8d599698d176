-- Tables hbserver reads (CONTRACT §3): one JSON document per id, updated_at for change polling.
-- Stored requests and imps also have an account (PBS-Java's per-account stored ids): '' for the item
-- of no account; the same id may be stored once per account. The column is optional: a table made
-- without it (before) serves ids of no account. hbserver looks for it once, at start; to add it:
--   ALTER TABLE stored_requests ADD COLUMN account text NOT NULL DEFAULT '',
--     DROP CONSTRAINT stored_requests_pkey, ADD PRIMARY KEY (id, account);
-- (the same for stored_imps), then restart the servers.
CREATE TABLE IF NOT EXISTS stored_requests  (id text NOT NULL, account text NOT NULL DEFAULT '', data jsonb NOT NULL, updated_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (id, account));
CREATE TABLE IF NOT EXISTS stored_imps      (id text NOT NULL, account text NOT NULL DEFAULT '', data jsonb NOT NULL, updated_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (id, account));
CREATE TABLE IF NOT EXISTS stored_responses (id text PRIMARY KEY, data jsonb NOT NULL, updated_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE IF NOT EXISTS accounts         (id text PRIMARY KEY, data jsonb NOT NULL, updated_at timestamptz NOT NULL DEFAULT now());
