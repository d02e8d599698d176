-- Tables hbserver reads from MySQL / MariaDB (stored_requests.database.connection.driver: mysql), the
-- same as deploy/postgres-init.sql's: one JSON document per id, updated_at for change polling (set by
-- the database on every insert and update). Ids are compared byte for byte (utf8mb4_bin), as PBS does.
-- profiles (PBS-Java's) is optional: a database without it serves the other kinds.
CREATE TABLE IF NOT EXISTS stored_requests (
  id VARCHAR(512) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin PRIMARY KEY,
  data JSON NOT NULL,
  updated_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),
  INDEX (updated_at)
);
CREATE TABLE IF NOT EXISTS stored_imps LIKE stored_requests;
CREATE TABLE IF NOT EXISTS stored_responses LIKE stored_requests;
CREATE TABLE IF NOT EXISTS accounts LIKE stored_requests;
CREATE TABLE IF NOT EXISTS profiles LIKE stored_requests;
