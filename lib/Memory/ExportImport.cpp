// Store::exportJson / importJson: the whole memory as one JSON document.
#include "Memory/Store.h"
#include "Syntax/JsonNesting.h"
#include "Syntax/SourceBuffer.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

namespace accelopt::memory {

using nlohmann::json;
using Lock = std::lock_guard<std::recursive_mutex>;

namespace {

struct TableSpec {
  const char *name;
  std::vector<const char *> columns;                       // besides id (beams has no id)
  std::vector<std::pair<const char *, const char *>> refs; // column -> table whose ids it holds
  std::vector<const char *> jsonColumns;                   // stored as JSON text, exported as JSON
  bool hasId = true;
};

const std::vector<TableSpec> &tables() {
  static const std::vector<TableSpec> specs = {
      {"kernels", {"name", "path", "source_hash", "signature", "created"}, {}, {}},
      {"runs", {"kernel", "started", "config", "status"}, {{"kernel", "kernels"}}, {"config"}},
      {"candidates",
       {"run", "kernel", "parent", "ops", "ops_hash", "source_hash", "status", "error", "iteration", "created"},
       {{"run", "runs"}, {"kernel", "kernels"}, {"parent", "candidates"}},
       {"ops"}},
      {"profiles",
       {"candidate", "backend", "latency_ms", "profile", "created"},
       {{"candidate", "candidates"}},
       {"profile"}},
      {"experiences",
       {"kernel", "from_candidate", "to_candidate", "ops", "speedup", "summary", "iteration", "created"},
       {{"kernel", "kernels"}, {"from_candidate", "candidates"}, {"to_candidate", "candidates"}},
       {"ops"}},
      {"patterns",
       {"signature", "ops", "roles", "description", "source_kernel", "source_experience", "wins", "tries", "created",
        "updated"},
       {{"source_kernel", "kernels"}, {"source_experience", "experiences"}},
       {"ops", "roles"}},
      {"beams", {"run", "iteration", "rank", "candidate"}, {{"run", "runs"}, {"candidate", "candidates"}}, {}, false},
  };
  return specs;
}

bool contains(const std::vector<const char *> &list, llvm::StringRef name) {
  for (const char *c : list)
    if (name == c) return true;
  return false;
}

json columnValue(const Statement &st, int col, bool isJson) {
  switch (st.type(col)) {
  case Statement::Type::Integer: return st.getInt(col);
  case Statement::Type::Float: return st.getDouble(col);
  case Statement::Type::Null: return nullptr;
  default: {
    std::string text = st.getText(col);
    if (isJson) {
      json j = json::parse(text, nullptr, false);
      if (!j.is_discarded()) return j;
    }
    return text;
  }
  }
}

void bindValue(Statement &st, int index, const json &v, bool isJson) {
  if (v.is_null())
    st.bindNull(index);
  else if (isJson)
    st.bind(index, v.is_string() ? v.get<std::string>() : v.dump());
  else if (v.is_number_integer())
    st.bind(index, v.get<int64_t>());
  else if (v.is_number())
    st.bind(index, v.get<double>());
  else if (v.is_boolean())
    st.bind(index, int64_t(v.get<bool>()));
  else if (v.is_string())
    st.bind(index, v.get<std::string>());
  else
    st.bind(index, v.dump());
}

} // namespace

llvm::Expected<json> Store::exportJson() {
  Lock lock(Mutex);
  json doc;
  doc["format"] = "accelopt-memory";
  auto version = memory::schemaVersion(*Db);
  if (!version) return version.takeError();
  doc["schema_version"] = *version;
  for (const TableSpec &t : tables()) {
    std::string cols;
    for (const char *c : t.columns) cols += std::string(cols.empty() ? "" : ", ") + c;
    std::string sql = std::string("SELECT ") + (t.hasId ? "id, " : "") + cols + " FROM " + t.name +
                      (t.hasId ? " ORDER BY id" : " ORDER BY run, iteration, rank");
    auto st = Db->prepare(sql);
    if (!st) return st.takeError();
    auto rows = st->readAll([&](const Statement &row) {
      json r = json::object();
      int col = 0;
      if (t.hasId) r["id"] = row.getInt(col++);
      for (const char *c : t.columns) r[c] = columnValue(row, col++, contains(t.jsonColumns, c));
      return r;
    });
    if (!rows) return rows.takeError();
    doc[t.name] = json(std::move(*rows));
  }
  return doc;
}

llvm::Error Store::exportToFile(llvm::StringRef path) {
  auto doc = exportJson();
  if (!doc) return doc.takeError();
  if (auto err = syntax::writeFileAtomically(path, doc->dump(2) + "\n"))
    return makeError(MemoryError::IO, llvm::toString(std::move(err)));
  return llvm::Error::success();
}

llvm::Expected<ImportStats> Store::importFromFile(llvm::StringRef path) {
  auto buf = llvm::MemoryBuffer::getFile(path);
  if (!buf) return makeError(MemoryError::IO, path.str() + ": error: cannot read: " + buf.getError().message());
  if (llvm::Error err = syntax::checkJsonNesting((*buf)->getBuffer(), path))
    return makeError(MemoryError::BadInput, llvm::toString(std::move(err)));
  json doc = json::parse((*buf)->getBuffer().begin(), (*buf)->getBuffer().end(), nullptr, false);
  if (doc.is_discarded()) return makeError(MemoryError::BadInput, path.str() + ": error: not valid JSON");
  auto stats = importJson(doc);
  if (!stats) {
    return llvm::handleErrors(stats.takeError(), [&](const MemoryError &e) -> llvm::Error {
      std::string msg = e.text();
      if (llvm::StringRef(msg).startswith("error:")) msg = path.str() + ": " + msg;
      return makeError(e.kind(), msg);
    });
  }
  return stats;
}

llvm::Expected<ImportStats> Store::importJson(const json &doc) {
  Lock lock(Mutex);
  // The header is read before the guarded body: a key of the wrong type must not throw.
  auto format = doc.is_object() ? doc.find("format") : doc.end();
  if (format == doc.end() || !format->is_string() || *format != "accelopt-memory")
    return makeError(MemoryError::BadInput,
                     "error: not an accelopt memory export (missing \"format\": \"accelopt-memory\")");
  auto versionField = doc.find("schema_version");
  if (versionField != doc.end() && !versionField->is_number_integer())
    return makeError(MemoryError::BadInput, "error: malformed memory export: \"schema_version\" is not an integer");
  int version = versionField == doc.end() ? 0 : versionField->get<int>();
  if (version > CurrentSchemaVersion)
    return makeError(MemoryError::NewerSchema, "error: export has schema version " + std::to_string(version) +
                                                   ", newer than this accelopt supports (" +
                                                   std::to_string(CurrentSchemaVersion) + ")");
  ImportStats stats;
  std::map<std::string, std::map<int64_t, int64_t>> idMap; // table -> old id -> new id
  std::map<std::string, int64_t *> counters = {{"kernels", &stats.kernels},         {"runs", &stats.runs},
                                               {"candidates", &stats.candidates},   {"profiles", &stats.profiles},
                                               {"experiences", &stats.experiences}, {"patterns", &stats.patterns}};
  std::set<int64_t> newCandidates;                  // old ids of candidates inserted now (their profiles follow)
  std::vector<std::pair<int64_t, int64_t>> parents; // new candidate id, old parent id

  auto tx = Transaction::begin(*Db);
  if (!tx) return tx.takeError();
  try {
    for (const TableSpec &t : tables()) {
      std::string table = t.name;
      if (!doc.contains(table)) continue;
      if (!doc[table].is_array()) return makeError(MemoryError::BadInput, "error: \"" + table + "\" must be an array");
      for (const json &row : doc[table]) {
        if (!row.is_object())
          return makeError(MemoryError::BadInput, "error: a row of \"" + table + "\" is not an object");
        // Columns read as integers must be integers: a float such as 6.7e68 converted to int64_t is
        // undefined behaviour, not a json exception (found by the memory-import fuzzer).
        auto notInteger = [&](const std::string &col) {
          auto it = row.find(col);
          return it != row.end() && !it->is_null() && !it->is_number_integer();
        };
        for (const char *col : {"id", "candidate", "wins", "tries"})
          if (notInteger(col))
            return makeError(MemoryError::BadInput,
                             "error: \"" + std::string(col) + "\" of a row of \"" + table + "\" is not an integer");
        for (auto &[col, target] : t.refs)
          if (notInteger(col))
            return makeError(MemoryError::BadInput,
                             "error: \"" + std::string(col) + "\" of a row of \"" + table + "\" is not an integer");
        // Remap references; a reference to a row missing from the export becomes NULL.
        json r = row;
        for (auto &[col, target] : t.refs) {
          if (!r.contains(col) || r[col].is_null()) continue;
          if (std::string(col) == "parent") continue; // fixed up after all candidates exist
          auto &m = idMap[target];
          auto it = m.find(r[col].get<int64_t>());
          r[col] = it == m.end() ? json(nullptr) : json(it->second);
        }
        int64_t oldId = t.hasId ? row.value("id", int64_t(0)) : 0;
        // Existing row with the same natural key?
        std::optional<int64_t> existing;
        auto lookup = [&](const std::string &sql, std::vector<json> args) -> llvm::Error {
          auto st = Db->prepare(sql);
          if (!st) return st.takeError();
          for (size_t i = 0; i < args.size(); ++i) bindValue(*st, int(i) + 1, args[i], false);
          auto found = st->step();
          if (!found) return found.takeError();
          if (*found) existing = st->getInt(0);
          return llvm::Error::success();
        };
        auto text = [&](const char *col) { return r.value(col, json("")); };
        auto jsonText = [&](const char *col) {
          json v = r.value(col, json(nullptr));
          return v.is_string() ? v : json(v.dump());
        };
        llvm::Error err = llvm::Error::success();
        if (table == "kernels") {
          err = lookup("SELECT id FROM kernels WHERE name = ? AND path = ? AND source_hash = ?",
                       {text("name"), text("path"), text("source_hash")});
        } else if (table == "runs") {
          err = lookup("SELECT id FROM runs WHERE kernel = ? AND started = ? AND config = ?",
                       {r["kernel"], text("started"), jsonText("config")});
        } else if (table == "candidates") {
          if (r.value("source_hash", json(nullptr)).is_string())
            err = lookup("SELECT id FROM candidates WHERE kernel = ? AND source_hash = ?",
                         {r["kernel"], r["source_hash"]});
          else
            err = lookup("SELECT id FROM candidates WHERE kernel = ? AND run IS ? AND ops_hash = ? AND "
                         "iteration = ? AND source_hash IS NULL",
                         {r["kernel"], r.value("run", json(nullptr)), text("ops_hash"), r.value("iteration", json(0))});
        } else if (table == "profiles") {
          if (!newCandidates.count(row.value("candidate", int64_t(0)))) existing = 0;
        } else if (table == "experiences") {
          err = lookup("SELECT id FROM experiences WHERE kernel = ? AND from_candidate IS ? AND to_candidate IS ? AND "
                       "ops = ?",
                       {r["kernel"], r.value("from_candidate", json(nullptr)), r.value("to_candidate", json(nullptr)),
                        jsonText("ops")});
        } else if (table == "patterns") {
          err = lookup("SELECT id FROM patterns WHERE signature = ? AND ops = ?", {text("signature"), jsonText("ops")});
          if (!err && existing) {
            // Merged statistics: the larger counts (importing twice changes nothing).
            auto st = Db->prepare("UPDATE patterns SET wins = max(wins, ?), tries = max(tries, ?) WHERE id = ?");
            if (!st) return st.takeError();
            st->bind(1, r.value("wins", int64_t(0))).bind(2, r.value("tries", int64_t(0))).bind(3, *existing);
            if (auto e = st->run()) return e;
          }
        }
        if (err) return err;
        bool refsMissing = false;
        for (const char *col : {"kernel", "candidate"})
          if (contains(t.columns, col) && r.value(col, json(nullptr)).is_null() && table != "patterns")
            refsMissing = true;
        if (table == "beams" && r.value("run", json(nullptr)).is_null()) refsMissing = true;
        if (existing || refsMissing) {
          if (existing && *existing && t.hasId) idMap[table][oldId] = *existing;
          ++stats.skipped;
          continue;
        }
        // Insert, keeping the old id when it is free.
        bool keepId = false;
        if (t.hasId && oldId > 0) {
          auto taken = Db->queryInt("SELECT count(*) FROM " + table + " WHERE id = " + std::to_string(oldId));
          if (!taken) return taken.takeError();
          keepId = *taken == 0;
        }
        std::string cols, marks;
        if (keepId) cols = "id", marks = "?";
        for (const char *c : t.columns) {
          cols += std::string(cols.empty() ? "" : ", ") + c;
          marks += std::string(marks.empty() ? "" : ", ") + "?";
        }
        std::string verb = table == "beams" ? "INSERT OR IGNORE" : "INSERT";
        auto ins = Db->prepare(verb + " INTO " + table + "(" + cols + ") VALUES (" + marks + ")");
        if (!ins) return ins.takeError();
        int index = 1;
        if (keepId) ins->bind(index++, oldId);
        for (const char *c : t.columns) {
          json v = r.contains(c) ? r[c] : json(nullptr);
          if (std::string(c) == "parent") v = nullptr;
          if (v.is_null() &&
              (std::string(c) == "created" || std::string(c) == "started" || std::string(c) == "updated")) {
            v = json(""); // NOT NULL columns: keep the row importable
          }
          bindValue(*ins, index++, v, contains(t.jsonColumns, c));
        }
        if (auto e = ins->run()) return e;
        if (t.hasId) {
          int64_t newId = Db->lastInsertId();
          idMap[table][oldId] = newId;
          if (table == "candidates") {
            newCandidates.insert(oldId);
            if (row.contains("parent") && row["parent"].is_number_integer())
              parents.push_back({newId, row["parent"].get<int64_t>()});
          }
        }
        if (counters.count(table)) ++*counters[table];
      }
    }
  } catch (const json::exception &e) {
    return makeError(MemoryError::BadInput, std::string("error: malformed memory export: ") + e.what());
  }
  // Lineage: parents by their new ids.
  auto up = Db->prepare("UPDATE candidates SET parent = ? WHERE id = ?");
  if (!up) return up.takeError();
  for (auto &[id, oldParent] : parents) {
    auto it = idMap["candidates"].find(oldParent);
    if (it == idMap["candidates"].end()) continue;
    up->reset();
    up->bind(1, it->second).bind(2, id);
    if (auto e = up->run()) return e;
  }
  if (auto err = tx->commit()) return err;
  return stats;
}

} // namespace accelopt::memory
