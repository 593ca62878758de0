// Small RAII wrappers over the SQLite C API: a connection (Database), a
// prepared statement (Statement) and a write transaction (Transaction).
// Every failure becomes an llvm::Error of class MemoryError whose kind lets
// callers tell a corrupted file, a locked database and a too-new schema apart.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace accelopt::memory {

/// The error type of the Memory layer.
class MemoryError : public llvm::ErrorInfo<MemoryError> {
public:
  enum Kind {
    NotADatabase, // the file is not an SQLite database ("file is not a database")
    Corrupt,      // SQLite reports a malformed database image
    Locked,       // another connection held a lock past the busy timeout
    NewerSchema,  // written by a newer accelopt
    CannotOpen,   // missing directory, permissions, ...
    NotFound,     // an id that does not exist
    BadInput,     // malformed JSON, unknown status, ...
    Sqlite,       // any other SQLite failure
    IO,           // file writes (export)
  };
  static char ID;
  MemoryError(Kind kind, std::string message) : ErrorKind(kind), Message(std::move(message)) {}
  Kind kind() const { return ErrorKind; }
  const std::string &text() const { return Message; }
  void log(llvm::raw_ostream &os) const override;
  std::error_code convertToErrorCode() const override;

private:
  Kind ErrorKind;
  std::string Message;
};

llvm::Error makeError(MemoryError::Kind kind, std::string message);
/// The kind of a MemoryError (nullopt for other errors); `err` stays unchecked-equivalent
/// (it still holds the same payload and must be handled by the caller).
std::optional<MemoryError::Kind> errorKind(llvm::Error &err);

class Database;

/// A prepared statement. Parameters are 1-based as in SQLite; columns 0-based.
class Statement {
public:
  Statement(Statement &&other) noexcept;
  Statement &operator=(Statement &&other) noexcept;
  Statement(const Statement &) = delete;
  Statement &operator=(const Statement &) = delete;
  ~Statement();

  Statement &bind(int index, int64_t value);
  Statement &bind(int index, int value) { return bind(index, int64_t(value)); }
  Statement &bind(int index, double value);
  Statement &bind(int index, llvm::StringRef text);
  Statement &bind(int index, const char *text) { return bind(index, llvm::StringRef(text)); }
  Statement &bind(int index, const std::string &text) { return bind(index, llvm::StringRef(text)); }
  Statement &bind(int index, std::optional<int64_t> value);
  Statement &bind(int index, std::optional<double> value);
  Statement &bindNull(int index);
  /// Binds the arguments to parameters 1..N.
  template <typename... Args> Statement &bindAll(const Args &...args) {
    int i = 1;
    (bind(i++, args), ...);
    return *this;
  }

  /// One step: true when a row is available, false when done.
  llvm::Expected<bool> step();
  /// Steps to completion (for statements without rows).
  llvm::Error run();
  /// Ready to run again (keeps bindings).
  void reset();

  /// Steps through the remaining rows and calls `onRow()` on each (this statement is positioned on
  /// the row); `onRow` may return an llvm::Error, which stops the walk.
  template <typename OnRow> llvm::Error forEachRow(OnRow onRow) {
    while (true) {
      auto row = step();
      if (!row) return row.takeError();
      if (!*row) return llvm::Error::success();
      if constexpr (std::is_same_v<std::invoke_result_t<OnRow>, llvm::Error>) {
        if (llvm::Error err = onRow()) return err;
      } else {
        onRow();
      }
    }
  }
  /// Every remaining row, each read by `read(*this)`.
  template <typename Read>
  auto readAll(Read read) -> llvm::Expected<std::vector<std::invoke_result_t<Read, Statement &>>> {
    std::vector<std::invoke_result_t<Read, Statement &>> rows;
    if (llvm::Error err = forEachRow([&] { rows.push_back(read(*this)); })) return err;
    return rows;
  }
  /// The next row read by `read(*this)`, or nullopt when there is none.
  template <typename Read>
  auto readFirst(Read read) -> llvm::Expected<std::optional<std::invoke_result_t<Read, Statement &>>> {
    auto row = step();
    if (!row) return row.takeError();
    if (!*row) return std::nullopt;
    return std::optional(read(*this));
  }

  int64_t getInt(int col) const;
  double getDouble(int col) const;
  std::string getText(int col) const;
  bool isNull(int col) const;
  enum class Type { Integer, Float, Text, Blob, Null };
  Type type(int col) const;
  int columnCount() const;
  std::string columnName(int col) const;
  std::optional<int64_t> getOptInt(int col) const;
  std::optional<double> getOptDouble(int col) const;

private:
  friend class Database;
  Statement(Database *db, sqlite3_stmt *stmt) : Db(db), Stmt(stmt) {}
  Database *Db = nullptr;
  sqlite3_stmt *Stmt = nullptr;
};

struct OpenOptions {
  int busyTimeoutMs = 5000; // how long to wait for another writer
  bool create = true;       // create the file (and its directory) if missing
  bool readOnly = false;
};

/// One SQLite connection (use one per thread, or guard it with a mutex).
class Database {
public:
  /// Opens `path` (":memory:" for a private in-memory database), enables WAL,
  /// foreign keys and the busy timeout, and checks that the file is a database.
  static llvm::Expected<std::unique_ptr<Database>> open(llvm::StringRef path, const OpenOptions &options = {});
  ~Database();
  Database(const Database &) = delete;
  Database &operator=(const Database &) = delete;

  /// Runs one or more SQL statements without results; `what` names the step
  /// in error messages (default: the start of the SQL).
  llvm::Error exec(llvm::StringRef sql, llvm::StringRef what = "");
  llvm::Expected<Statement> prepare(llvm::StringRef sql);
  /// `prepare(sql)` with the arguments bound to parameters 1..N.
  template <typename... Args> llvm::Expected<Statement> query(llvm::StringRef sql, const Args &...args) {
    auto st = prepare(sql);
    if (st) st->bindAll(args...);
    return st;
  }
  /// The single integer result of `sql` (e.g. "SELECT count(*) FROM t").
  llvm::Expected<int64_t> queryInt(llvm::StringRef sql);

  int64_t lastInsertId() const;
  int changes() const;
  bool inTransaction() const;
  const std::string &path() const { return Path; }
  int busyTimeoutMs() const { return BusyTimeoutMs; }
  sqlite3 *handle() { return Db; }

  /// Converts an SQLite result code (with the connection's message) into a MemoryError.
  llvm::Error error(int rc, llvm::StringRef what) const;

private:
  Database() = default;
  sqlite3 *Db = nullptr;
  std::string Path;
  int BusyTimeoutMs = 0;
};

/// A write transaction: BEGIN IMMEDIATE (waits up to the busy timeout for the
/// write lock), rolled back on destruction unless committed.
class Transaction {
public:
  static llvm::Expected<Transaction> begin(Database &db);
  Transaction(Transaction &&other) noexcept : Db(other.Db), Nested(other.Nested) { other.Db = nullptr; }
  Transaction &operator=(Transaction &&) = delete;
  ~Transaction();
  llvm::Error commit();

private:
  explicit Transaction(Database *db) : Db(db) {}
  Database *Db = nullptr;
  bool Nested = false; // a SAVEPOINT inside an enclosing transaction
};

} // namespace accelopt::memory
