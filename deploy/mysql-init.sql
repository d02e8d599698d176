-- Tables hbserver reads from MySQL / MariaDB (stored_requests.database.connection.driver: mysql), the
-- same as deploy/postgres-init.sql's: one JSON document per id, updated_at for change polling (set by
-- the database on every insert and update). Ids are compared byte for byte (utf8mb4_bin), as PBS does.
-- profiles (PBS-Java's) is optional: a database without it serves the other kinds.
CREATE TABLE IF NOT EXISTS stored_responses (
  id VARCHAR(512) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin PRIMARY KEY,
  data JSON NOT NULL,
  updated_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),
  INDEX (updated_at)
);
CREATE TABLE IF NOT EXISTS accounts LIKE stored_responses;
CREATE TABLE IF NOT EXISTS profiles LIKE stored_responses;
-- Stored requests and imps also have an account (PBS-Java's per-account stored ids): '' for the item
-- of no account; the same id may be stored once per account. The column is optional: a table made
-- without it (before) serves ids of no account. hbserver looks for it once, at start; to add it:
--   ALTER TABLE stored_requests ADD COLUMN account VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin
--     NOT NULL DEFAULT '' AFTER id, DROP PRIMARY KEY, ADD PRIMARY KEY (id, account);
-- (the same for stored_imps), then restart the servers.
CREATE TABLE IF NOT EXISTS stored_requests (
  id VARCHAR(512) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  account VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT '',
  data JSON NOT NULL,
  updated_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),
  PRIMARY KEY (id, account),
  INDEX (updated_at)
);
CREATE TABLE IF NOT EXISTS stored_imps LIKE stored_requests;
