#include "Syntax/NameBindings.h"

#include "Syntax/TreeSitter.h"

#include <string_view>

namespace accelopt::syntax {
namespace {

class BindingCollector {
public:
  BindingCollector(llvm::StringRef source, FileBindings &out) : Source(source), Out(out) {}

  void visit(TSNode node) {
    std::string_view type = ts_node_type(node);
    if (type == "assignment" || type == "augmented_assignment" || type == "for_statement" || type == "for_in_clause")
      collectTargets(ts_node_child_by_field_name(node, "left", 4));
    else if (type == "function_definition" || type == "class_definition" || type == "named_expression")
      collectTargets(ts_node_child_by_field_name(node, "name", 4));
    else if (type == "parameters" || type == "lambda_parameters" || type == "global_statement" ||
             type == "nonlocal_statement" || type == "case_pattern")
      collectTargets(node);
    else if (type == "as_pattern" || type == "aliased_import" || type == "except_clause")
      collectTargets(ts_node_child_by_field_name(node, "alias", 5));
    else if (type == "wildcard_import")
      Out.starImport = true;
    else if (type == "import_statement" || type == "import_from_statement")
      collectImported(node);
    for (uint32_t i = 0, n = ts_node_named_child_count(node); i < n; ++i) visit(ts_node_named_child(node, i));
  }

private:
  std::string text(TSNode node) const { return Source.slice(ts_node_start_byte(node), ts_node_end_byte(node)).str(); }

  /// Identifiers a target binds; `a[i] = v` and `a.b = v` bind nothing (their names are reads).
  void collectTargets(TSNode node) {
    if (ts_node_is_null(node)) return;
    std::string_view type = ts_node_type(node);
    if (type == "subscript" || type == "attribute") return;
    if (type == "identifier") {
      Out.names.insert(text(node));
      return;
    }
    for (uint32_t i = 0, n = ts_node_named_child_count(node); i < n; ++i) collectTargets(ts_node_named_child(node, i));
  }

  /// `import a.b` binds `a`; `from m import x` binds `x` (aliases are collected as as-targets).
  void collectImported(TSNode node) {
    std::string_view type = ts_node_type(node);
    for (uint32_t i = 0, n = ts_node_named_child_count(node); i < n; ++i) {
      TSNode child = ts_node_named_child(node, i);
      const char *field = ts_node_field_name_for_child(node, i);
      bool isName = type == "import_statement" || (field && std::string_view(field) == "name");
      if (!isName || std::string_view(ts_node_type(child)) != "dotted_name") continue;
      if (ts_node_named_child_count(child) > 0) Out.names.insert(text(ts_node_named_child(child, 0)));
    }
  }

  llvm::StringRef Source;
  FileBindings &Out;
};

} // namespace

FileBindings namesBoundInFile(llvm::StringRef source) {
  FileBindings out;
  auto parser = makePythonParser();
  if (!parser) {
    llvm::consumeError(parser.takeError());
    out.starImport = true; // cannot tell: treat every name as possibly bound
    return out;
  }
  TreePtr tree(ts_parser_parse_string(parser->get(), nullptr, source.data(), uint32_t(source.size())));
  if (!tree) {
    out.starImport = true;
    return out;
  }
  BindingCollector(source, out).visit(ts_tree_root_node(tree.get()));
  return out;
}

bool isPythonBuiltinName(llvm::StringRef name) {
  // The names of CPython 3's builtins module that kernel code can meet.
  static constexpr std::string_view kNames[] = {"__build_class__",
                                                "__debug__",
                                                "__doc__",
                                                "__file__",
                                                "__import__",
                                                "__name__",
                                                "__spec__",
                                                "__builtins__",
                                                "__loader__",
                                                "__package__",
                                                "abs",
                                                "aiter",
                                                "all",
                                                "anext",
                                                "any",
                                                "ascii",
                                                "bin",
                                                "bool",
                                                "breakpoint",
                                                "bytearray",
                                                "bytes",
                                                "callable",
                                                "chr",
                                                "classmethod",
                                                "compile",
                                                "complex",
                                                "copyright",
                                                "credits",
                                                "delattr",
                                                "dict",
                                                "dir",
                                                "divmod",
                                                "enumerate",
                                                "eval",
                                                "exec",
                                                "exit",
                                                "filter",
                                                "float",
                                                "format",
                                                "frozenset",
                                                "getattr",
                                                "globals",
                                                "hasattr",
                                                "hash",
                                                "help",
                                                "hex",
                                                "id",
                                                "input",
                                                "int",
                                                "isinstance",
                                                "issubclass",
                                                "iter",
                                                "len",
                                                "license",
                                                "list",
                                                "locals",
                                                "map",
                                                "max",
                                                "memoryview",
                                                "min",
                                                "next",
                                                "object",
                                                "oct",
                                                "open",
                                                "ord",
                                                "pow",
                                                "print",
                                                "property",
                                                "quit",
                                                "range",
                                                "repr",
                                                "reversed",
                                                "round",
                                                "set",
                                                "setattr",
                                                "slice",
                                                "sorted",
                                                "staticmethod",
                                                "str",
                                                "sum",
                                                "super",
                                                "tuple",
                                                "type",
                                                "vars",
                                                "zip",
                                                "Ellipsis",
                                                "NotImplemented",
                                                "ArithmeticError",
                                                "AssertionError",
                                                "AttributeError",
                                                "BaseException",
                                                "DeprecationWarning",
                                                "Exception",
                                                "FileNotFoundError",
                                                "FloatingPointError",
                                                "ImportError",
                                                "IndexError",
                                                "KeyError",
                                                "KeyboardInterrupt",
                                                "LookupError",
                                                "MemoryError",
                                                "ModuleNotFoundError",
                                                "NameError",
                                                "NotImplementedError",
                                                "OSError",
                                                "OverflowError",
                                                "RecursionError",
                                                "RuntimeError",
                                                "RuntimeWarning",
                                                "StopIteration",
                                                "SyntaxError",
                                                "SystemExit",
                                                "TypeError",
                                                "UserWarning",
                                                "ValueError",
                                                "Warning",
                                                "ZeroDivisionError"};
  for (std::string_view n : kNames)
    if (name == llvm::StringRef(n.data(), n.size())) return true;
  return false;
}

} // namespace accelopt::syntax
