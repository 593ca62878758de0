#include "Memory/Database.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <sqlite3.h>

namespace accelopt::memory {

char MemoryError::ID = 0;

void MemoryError::log(llvm::raw_ostream &os) const { os << Message; }

std::error_code MemoryError::convertToErrorCode() const { return llvm::inconvertibleErrorCode(); }

llvm::Error makeError(MemoryError::Kind kind, std::string message) {
  return llvm::make_error<MemoryError>(kind, std::move(message));
}

std::optional<MemoryError::Kind> errorKind(llvm::Error &err) {
  std::optional<MemoryError::Kind> kind;
  if (!err) return kind;
  err = llvm::handleErrors(std::move(err), [&](std::unique_ptr<MemoryError> e) -> llvm::Error {
    kind = e->kind();
    return llvm::Error(std::move(e));
  });
  return kind;
}

// ---------------------------------------------------------------- Statement

Statement::Statement(Statement &&other) noexcept : Db(other.Db), Stmt(other.Stmt) {
  other.Stmt = nullptr;
  other.Db = nullptr;
}

Statement &Statement::operator=(Statement &&other) noexcept {
  if (this != &other) {
    if (Stmt) sqlite3_finalize(Stmt);
    Db = other.Db;
    Stmt = other.Stmt;
    other.Stmt = nullptr;
    other.Db = nullptr;
  }
  return *this;
}

Statement::~Statement() {
  if (Stmt) sqlite3_finalize(Stmt);
}

Statement &Statement::bind(int index, int64_t value) {
  sqlite3_bind_int64(Stmt, index, value);
  return *this;
}
Statement &Statement::bind(int index, double value) {
  sqlite3_bind_double(Stmt, index, value);
  return *this;
}
Statement &Statement::bind(int index, llvm::StringRef text) {
  sqlite3_bind_text(Stmt, index, text.data(), int(text.size()), SQLITE_TRANSIENT);
  return *this;
}
Statement &Statement::bind(int index, std::optional<int64_t> value) {
  return value ? bind(index, *value) : bindNull(index);
}
Statement &Statement::bind(int index, std::optional<double> value) {
  return value ? bind(index, *value) : bindNull(index);
}
Statement &Statement::bindNull(int index) {
  sqlite3_bind_null(Stmt, index);
  return *this;
}

llvm::Expected<bool> Statement::step() {
  int rc = sqlite3_step(Stmt);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return Db->error(rc, "running a query");
}

llvm::Error Statement::run() {
  while (true) {
    auto row = step();
    if (!row) return row.takeError();
    if (!*row) return llvm::Error::success();
  }
}

void Statement::reset() { sqlite3_reset(Stmt); }

int64_t Statement::getInt(int col) const { return sqlite3_column_int64(Stmt, col); }
double Statement::getDouble(int col) const { return sqlite3_column_double(Stmt, col); }
std::string Statement::getText(int col) const {
  auto *p = reinterpret_cast<const char *>(sqlite3_column_text(Stmt, col));
  if (!p) return {};
  return std::string(p, size_t(sqlite3_column_bytes(Stmt, col)));
}
bool Statement::isNull(int col) const { return sqlite3_column_type(Stmt, col) == SQLITE_NULL; }
Statement::Type Statement::type(int col) const {
  switch (sqlite3_column_type(Stmt, col)) {
  case SQLITE_INTEGER: return Type::Integer;
  case SQLITE_FLOAT: return Type::Float;
  case SQLITE_TEXT: return Type::Text;
  case SQLITE_BLOB: return Type::Blob;
  default: return Type::Null;
  }
}
int Statement::columnCount() const { return sqlite3_column_count(Stmt); }
std::string Statement::columnName(int col) const {
  const char *n = sqlite3_column_name(Stmt, col);
  return n ? n : "";
}
std::optional<int64_t> Statement::getOptInt(int col) const {
  if (isNull(col)) return std::nullopt;
  return getInt(col);
}
std::optional<double> Statement::getOptDouble(int col) const {
  if (isNull(col)) return std::nullopt;
  return getDouble(col);
}

// ----------------------------------------------------------------- Database

llvm::Error Database::error(int rc, llvm::StringRef what) const {
  int primary = rc & 0xff;
  std::string detail = Db ? sqlite3_errmsg(Db) : sqlite3_errstr(rc);
  std::string where = Path.empty() ? std::string("memory") : Path;
  switch (primary) {
  case SQLITE_NOTADB:
    return makeError(MemoryError::NotADatabase,
                     where + ": error: file is not a database (corrupted, or not an accelopt memory)");
  case SQLITE_CORRUPT:
    return makeError(MemoryError::Corrupt, where + ": error: database disk image is malformed (" + detail +
                                               "); restore a backup or start a new memory");
  case SQLITE_BUSY:
  case SQLITE_LOCKED:
    return makeError(MemoryError::Locked,
                     where + ": error: database is locked: another connection holds a write lock (waited " +
                         std::to_string(BusyTimeoutMs) + " ms, the busy timeout) while " + what.str());
  case SQLITE_CANTOPEN: return makeError(MemoryError::CannotOpen, where + ": error: cannot open database: " + detail);
  default: return makeError(MemoryError::Sqlite, where + ": error: " + what.str() + ": " + detail);
  }
}

llvm::Expected<std::unique_ptr<Database>> Database::open(llvm::StringRef path, const OpenOptions &options) {
  std::unique_ptr<Database> db(new Database());
  db->Path = path.str();
  db->BusyTimeoutMs = options.busyTimeoutMs;
  bool memory = path == ":memory:" || path.empty();
  if (!memory && options.create && !options.readOnly) {
    llvm::StringRef dir = llvm::sys::path::parent_path(path);
    if (!dir.empty() && !llvm::sys::fs::exists(dir))
      if (auto ec = llvm::sys::fs::create_directories(dir))
        return makeError(MemoryError::CannotOpen,
                         db->Path + ": error: cannot create directory '" + dir.str() + "': " + ec.message());
  }
  int flags = SQLITE_OPEN_NOMUTEX;
  flags |= options.readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
  if (options.create && !options.readOnly) flags |= SQLITE_OPEN_CREATE;
  int rc = sqlite3_open_v2(memory ? ":memory:" : db->Path.c_str(), &db->Db, flags, nullptr);
  if (rc != SQLITE_OK) {
    auto err = db->error(rc, "opening");
    return err;
  }
  sqlite3_extended_result_codes(db->Db, 1);
  sqlite3_busy_timeout(db->Db, options.busyTimeoutMs);
  // The first statement reads the header: a non-database file fails here.
  if (auto err = db->exec("PRAGMA foreign_keys = ON")) return err;
  if (auto n = db->queryInt("SELECT count(*) FROM sqlite_master"); !n) return n.takeError();
  if (!memory && !options.readOnly) {
    auto st = db->prepare("PRAGMA journal_mode = WAL");
    if (!st) return st.takeError();
    if (auto row = st->step(); !row) return row.takeError();
  }
  if (auto err = db->exec("PRAGMA synchronous = NORMAL")) return err;
  return db;
}

Database::~Database() {
  if (Db) sqlite3_close_v2(Db);
}

llvm::Error Database::exec(llvm::StringRef sql, llvm::StringRef what) {
  char *msg = nullptr;
  std::string text = sql.str();
  int rc = sqlite3_exec(Db, text.c_str(), nullptr, nullptr, &msg);
  if (msg) sqlite3_free(msg);
  if (rc != SQLITE_OK) return error(rc, what.empty() ? "'" + text.substr(0, 40) + "'" : what.str());
  return llvm::Error::success();
}

llvm::Expected<Statement> Database::prepare(llvm::StringRef sql) {
  sqlite3_stmt *stmt = nullptr;
  int rc = sqlite3_prepare_v2(Db, sql.data(), int(sql.size()), &stmt, nullptr);
  if (rc != SQLITE_OK) {
    if (stmt) sqlite3_finalize(stmt);
    return error(rc, "preparing '" + sql.take_front(60).str() + "'");
  }
  return Statement(this, stmt);
}

llvm::Expected<int64_t> Database::queryInt(llvm::StringRef sql) {
  auto st = prepare(sql);
  if (!st) return st.takeError();
  auto row = st->step();
  if (!row) return row.takeError();
  if (!*row) return int64_t(0);
  return st->getInt(0);
}

int64_t Database::lastInsertId() const { return sqlite3_last_insert_rowid(Db); }
int Database::changes() const { return sqlite3_changes(Db); }
bool Database::inTransaction() const { return !sqlite3_get_autocommit(Db); }

// -------------------------------------------------------------- Transaction

llvm::Expected<Transaction> Transaction::begin(Database &db) {
  if (db.inTransaction()) {
    // Nested: a savepoint inside the caller's transaction.
    if (auto err = db.exec("SAVEPOINT accelopt_nested", "starting a write transaction")) return err;
    Transaction t(&db);
    t.Nested = true;
    return t;
  }
  if (auto err = db.exec("BEGIN IMMEDIATE", "starting a write transaction")) return err;
  return Transaction(&db);
}

llvm::Error Transaction::commit() {
  Database *db = Db;
  Db = nullptr;
  if (!db) return llvm::Error::success();
  if (Nested) return db->exec("RELEASE accelopt_nested");
  if (auto err = db->exec("COMMIT")) {
    if (db->inTransaction()) llvm::consumeError(db->exec("ROLLBACK"));
    return err;
  }
  return llvm::Error::success();
}

Transaction::~Transaction() {
  if (!Db) return;
  if (Nested) {
    llvm::consumeError(Db->exec("ROLLBACK TO accelopt_nested"));
    llvm::consumeError(Db->exec("RELEASE accelopt_nested"));
  } else if (Db->inTransaction()) {
    llvm::consumeError(Db->exec("ROLLBACK"));
  }
}

} // namespace accelopt::memory
