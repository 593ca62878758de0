// The optimization memory's schema: a schema_version table and an ordered list
// of migrations; migration i takes the database from version i to i+1.
#pragma once

#include "Memory/Database.h"

#include <vector>

namespace accelopt::memory {

/// The schema version this build writes.
constexpr int CurrentSchemaVersion = 2;

struct Migration {
  int toVersion;
  const char *description;
  const char *sql;
};

/// Migrations in order: [0] creates version 1, [1] upgrades 1 -> 2, ...
const std::vector<Migration> &migrations();

/// The version recorded in schema_version (0 for an empty database).
llvm::Expected<int> schemaVersion(Database &db);

/// Brings the database to `target` (all pending migrations in one transaction).
/// Fails with MemoryError::NewerSchema if the file is already newer than
/// CurrentSchemaVersion.
llvm::Error migrate(Database &db, int target = CurrentSchemaVersion);

} // namespace accelopt::memory
