#include "Memory/Schema.h"

namespace accelopt::memory {

#define NOW "(strftime('%Y-%m-%dT%H:%M:%fZ','now'))"

const std::vector<Migration> &migrations() {
  static const std::vector<Migration> list = {
      {1, "kernels, runs, candidates, profiles, experiences",
       R"sql(
CREATE TABLE IF NOT EXISTS schema_version(
  version INTEGER PRIMARY KEY,
  applied TEXT NOT NULL DEFAULT )sql" NOW R"sql(
);
CREATE TABLE kernels(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  path TEXT NOT NULL DEFAULT '',
  source_hash TEXT NOT NULL,
  signature TEXT NOT NULL DEFAULT '',
  created TEXT NOT NULL DEFAULT )sql" NOW R"sql(,
  UNIQUE(name, path, source_hash)
);
CREATE INDEX kernels_signature ON kernels(signature);
CREATE TABLE runs(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  kernel INTEGER NOT NULL REFERENCES kernels(id) ON DELETE CASCADE,
  started TEXT NOT NULL DEFAULT )sql" NOW R"sql(,
  config TEXT NOT NULL DEFAULT '{}',
  status TEXT NOT NULL DEFAULT 'running'
    CHECK(status IN ('running', 'finished', 'failed', 'interrupted'))
);
CREATE INDEX runs_kernel ON runs(kernel);
CREATE TABLE candidates(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  run INTEGER REFERENCES runs(id) ON DELETE SET NULL,
  kernel INTEGER NOT NULL REFERENCES kernels(id) ON DELETE CASCADE,
  parent INTEGER REFERENCES candidates(id) ON DELETE SET NULL,
  ops TEXT NOT NULL DEFAULT '[]',
  ops_hash TEXT NOT NULL DEFAULT '',
  source_hash TEXT,
  status TEXT NOT NULL CHECK(status IN ('applied', 'refused', 'incorrect', 'correct')),
  error TEXT NOT NULL DEFAULT '',
  iteration INTEGER NOT NULL DEFAULT 0,
  created TEXT NOT NULL DEFAULT )sql" NOW R"sql(,
  UNIQUE(kernel, source_hash)
);
CREATE INDEX candidates_run ON candidates(run, iteration);
CREATE INDEX candidates_parent ON candidates(parent);
CREATE INDEX candidates_ops_hash ON candidates(kernel, ops_hash);
CREATE TABLE profiles(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  candidate INTEGER NOT NULL REFERENCES candidates(id) ON DELETE CASCADE,
  backend TEXT NOT NULL,
  latency_ms REAL,
  profile TEXT NOT NULL DEFAULT '{}',
  created TEXT NOT NULL DEFAULT )sql" NOW R"sql(
);
CREATE INDEX profiles_candidate ON profiles(candidate);
CREATE TABLE experiences(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  kernel INTEGER NOT NULL REFERENCES kernels(id) ON DELETE CASCADE,
  from_candidate INTEGER REFERENCES candidates(id) ON DELETE SET NULL,
  to_candidate INTEGER REFERENCES candidates(id) ON DELETE SET NULL,
  ops TEXT NOT NULL DEFAULT '[]',
  speedup REAL NOT NULL,
  summary TEXT NOT NULL DEFAULT '',
  created TEXT NOT NULL DEFAULT )sql" NOW R"sql(
);
CREATE INDEX experiences_kernel ON experiences(kernel);
)sql"},
      {2, "patterns, beams, experience iteration",
       R"sql(
CREATE TABLE patterns(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  signature TEXT NOT NULL,
  ops TEXT NOT NULL,
  roles TEXT NOT NULL DEFAULT '{}',
  description TEXT NOT NULL DEFAULT '',
  source_kernel INTEGER REFERENCES kernels(id) ON DELETE SET NULL,
  source_experience INTEGER REFERENCES experiences(id) ON DELETE SET NULL,
  wins INTEGER NOT NULL DEFAULT 0,
  tries INTEGER NOT NULL DEFAULT 0,
  created TEXT NOT NULL DEFAULT )sql" NOW R"sql(,
  updated TEXT NOT NULL DEFAULT )sql" NOW R"sql(,
  UNIQUE(signature, ops)
);
CREATE INDEX patterns_signature ON patterns(signature);
CREATE TABLE beams(
  run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  iteration INTEGER NOT NULL,
  rank INTEGER NOT NULL,
  candidate INTEGER NOT NULL REFERENCES candidates(id) ON DELETE CASCADE,
  PRIMARY KEY(run, iteration, rank)
);
ALTER TABLE experiences ADD COLUMN iteration INTEGER NOT NULL DEFAULT 0;
CREATE INDEX experiences_from ON experiences(from_candidate);
CREATE INDEX experiences_to ON experiences(to_candidate);
)sql"},
  };
  return list;
}

llvm::Expected<int> schemaVersion(Database &db) {
  auto exists = db.queryInt("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'");
  if (!exists) return exists.takeError();
  if (*exists == 0) return 0;
  auto v = db.queryInt("SELECT coalesce(max(version), 0) FROM schema_version");
  if (!v) return v.takeError();
  return int(*v);
}

llvm::Error migrate(Database &db, int target) {
  auto newer = [&](int version) {
    return makeError(MemoryError::NewerSchema, db.path() + ": error: memory schema version " + std::to_string(version) +
                                                   " is newer than this accelopt supports (" +
                                                   std::to_string(CurrentSchemaVersion) +
                                                   "); upgrade accelopt or use another --db");
  };
  // Fast path without a write lock: an up-to-date database opens even while
  // another process is writing.
  auto current = schemaVersion(db);
  if (!current) return current.takeError();
  if (*current > CurrentSchemaVersion) return newer(*current);
  if (*current >= target) return llvm::Error::success();

  auto tx = Transaction::begin(db);
  if (!tx) return tx.takeError();
  auto version = schemaVersion(db); // again, under the write lock
  if (!version) return version.takeError();
  if (*version > CurrentSchemaVersion) return newer(*version);
  if (*version == 0) {
    // A database with foreign tables but no schema_version is not ours.
    auto tables = db.queryInt("SELECT count(*) FROM sqlite_master WHERE type = 'table'");
    if (!tables) return tables.takeError();
    if (*tables > 0)
      return makeError(MemoryError::BadInput,
                       db.path() + ": error: database has tables but no schema_version: not an accelopt memory");
  }
  for (const Migration &m : migrations()) {
    if (m.toVersion <= *version || m.toVersion > target) continue;
    if (auto err = db.exec(m.sql)) return err;
    auto st = db.prepare("INSERT INTO schema_version(version) VALUES (?)");
    if (!st) return st.takeError();
    st->bind(1, int64_t(m.toVersion));
    if (auto err = st->run()) return err;
  }
  return tx->commit();
}

} // namespace accelopt::memory
