// The current `nki` dialect in the front end: a destination-passing ISA call
// `nisa.op(dst=t[...], ...)` builds the same IR as the 0.1 spelling `t[...] = nisa.op(...)` (or
// `t[...] += ...` for an accumulating nc_matmul), bound through the one dialect table (NKI/Dialect).
#include "NKI/Dialect.h"
#include "NKI/FrontEnd/KernelBuilder.h"

#include <algorithm>

namespace accelopt::nki::frontend {

namespace {
bool sameShape(const std::vector<int64_t> &a, const std::vector<int64_t> &b) {
  // Unknown extents (0) match anything; leading 1s do not change the element layout.
  auto strip = [](const std::vector<int64_t> &s) {
    std::vector<int64_t> out;
    for (int64_t d : s)
      if (d != 1) out.push_back(d);
    return out;
  };
  std::vector<int64_t> x = strip(a), y = strip(b);
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i)
    if (x[i] > 0 && y[i] > 0 && x[i] != y[i]) return false;
  return true;
}

std::string shapeText(const std::vector<int64_t> &s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + (s[i] > 0 ? std::to_string(s[i]) : std::string("?"));
  return out + "]";
}

std::string withoutSpaces(std::string_view s) {
  std::string out;
  for (char c : s)
    if (c != ' ' && c != '\n' && c != '\t') out += c;
  return out;
}
} // namespace

void KernelBuilder::reportRemovedKeywords(const Expr *e) {
  if (KernelDialect != Dialect::Nki) return;
  for (const auto &kw : e->keywords)
    if (const RemovedApi *r = removedInCurrentDialect(kw.name, /*isKeyword=*/true))
      diag(Diagnostic::Error, kw.range,
           "'" + kw.name + "=' was removed in the nki dialect; " + std::string(r->replacement), Rule::DialectRemoved);
}

void KernelBuilder::reportRemovedApi(const std::string &canonicalName, const Expr *e) {
  if (KernelDialect != Dialect::Nki) return;
  if (const RemovedApi *r = removedInCurrentDialect(canonicalName, /*isKeyword=*/false))
    diag(Diagnostic::Error, e->range, canonicalName + " was removed in the nki dialect; " + std::string(r->replacement),
         Rule::DialectRemoved);
}

Value KernelBuilder::dialectCall(const DialectApi &api, const Expr *e) {
  std::vector<std::string_view> keywords;
  for (const auto &kw : e->keywords) keywords.push_back(kw.name);
  DialectBinding b = bindCurrentDialectCall(api, e->elts.size(), keywords);
  auto exprAt = [&](int at) -> const Expr * {
    if (at < 0) return nullptr;
    return size_t(at) < e->elts.size() ? e->elts[size_t(at)] : e->keywords[size_t(at) - e->elts.size()].value;
  };
  for (size_t i : b.extraPositional)
    diag(Diagnostic::Warning, e->elts[i]->range, "too many arguments to " + std::string(api.name), Rule::CallArgs);
  for (size_t k : b.unknownKeywords) {
    const auto &kw = e->keywords[k];
    if (!removedInCurrentDialect(kw.name, true))
      diag(Diagnostic::Warning, kw.range, "unknown keyword '" + kw.name + "' for " + std::string(api.name),
           Rule::CallArgs);
  }
  reportRemovedKeywords(e);
  for (std::string_view m : b.missing)
    diag(Diagnostic::Error, e->range,
         std::string(api.name) + " is missing its required argument '" + std::string(m) + "'", Rule::CallArgs);
  for (std::string_view r : b.repeated)
    diag(Diagnostic::Error, e->range,
         std::string(api.name) + "() got multiple values for argument '" + std::string(r) + "'", Rule::CallArgs);

  const Expr *dstE = exprAt(b.arg("dst"));
  const OpInfo *op = api.op();
  if (!op) {
    // nisa.dma_compute(dst, srcs=[...], reduce_op): a DMA that reads every source and writes dst.
    const OpInfo *dma = lookupOp("nisa.dma_copy");
    if (Cur && !Cur->op) {
      Cur->op = dma;
      Cur->callee = std::string(api.name);
      Cur->kind = StmtKind::Op;
    }
    if (const Expr *srcs = exprAt(b.arg("srcs"))) {
      Value list = eval(srcs);
      if (list.kind == Value::Seq)
        for (size_t i = 0; i < list.elts.size(); ++i)
          readOperand(list.elts[i], srcs->kind == ExprKind::List && i < srcs->elts.size() ? srcs->elts[i] : srcs,
                      "src");
    }
    if (const Expr *r = exprAt(b.arg("reduce_op"))) eval(r);
    if (dstE) {
      Value dst = eval(dstE);
      if (dst.kind == Value::Tensor && Cur) {
        Access a = wholeAccess(dst, dstE);
        a.isWrite = true;
        a.param = "dst";
        Cur->writes.push_back(a);
      }
    }
    return Value::none();
  }

  std::vector<const Expr *> bound(op->params.size(), nullptr);
  for (size_t i = 0; i < bound.size(); ++i) bound[i] = exprAt(b.argOf[i]);
  for (const DialectParam &p : api.params)
    if (op->paramIndex(p.name) < 0 && p.name != "dst")
      if (const Expr *x = exprAt(b.arg(p.name))) {
        Value v = eval(x); // accumulate, pattern, ...: reads names only
        if (p.name == "pattern") checkPattern(api, x, v);
      }
  Value result = opCall(op, e, std::nullopt, nullptr, &bound);
  if (Cur && op->kind != OpKind::Store) Cur->kind = StmtKind::Op;
  if (op->kind == OpKind::DmaCopy && Cur)
    for (const Access &r : Cur->reads)
      if (r.param == "src" && K.tensors[r.tensor].buffer == Buffer::PSUM)
        diag(Diagnostic::Error, r.range,
             "nisa.dma_copy cannot read PSUM from NKI 0.3; copy '" + K.tensors[r.tensor].name +
                 "' to SBUF with nisa.tensor_copy first",
             Rule::OperandBuffer);
  if (op->kind == OpKind::DmaCopy || !dstE || !Cur) return Value::none();

  Value dst = eval(dstE);
  if (dst.kind != Value::Tensor) {
    diag(Diagnostic::Warning, dstE->range, "destination '" + text(dstE) + "' is not a known tensor", Rule::TraceTime);
    return Value::none();
  }
  // The 0.1 spelling `dst[...] = op(...)`: the result tile is the destination itself.
  if (result.kind == Value::Tensor && Cur->definesTensor == result.tensor) {
    const Tensor &tile = K.tensors[result.tensor];
    std::vector<int64_t> produced;
    for (const SymInt &d : tile.shape) produced.push_back(d.value.value_or(0));
    bool shapeFromDst = op->shape == ShapeRule::FromShapeArg || op->kind == OpKind::Iota;
    std::vector<int64_t> written = tileShapeOf(dst);
    if (!shapeFromDst && !produced.empty() && !written.empty() && !sameShape(produced, written))
      diag(Diagnostic::Error, dstE->range,
           std::string(api.name) + " produces a " + shapeText(produced) + " tile but its dst '" + text(dstE) + "' is " +
               shapeText(written),
           Rule::DstShape);
    const Tensor &target = K.tensors[dst.tensor];
    // A dst outside PSUM is matmul-operands' finding (the verifier reads the write's buffer).
    if (op->kind == OpKind::Matmul && target.dtypeKnown && target.dtype != DType::Float32)
      diag(Diagnostic::Error, dstE->range,
           std::string(api.name) + " accumulates in fp32: its dst '" + text(dstE) + "' must be float32 (on trn1/trn2)",
           Rule::DstShape);
    discardTile(result.tensor);
    Cur->definesTensor = -1;
  }
  Access w = wholeAccess(dst, dstE);
  w.isWrite = true;
  w.param = "dst";
  // tensor_tensor(dst=x, data1=x, data2=y, op=nl.add): x accumulates like `x += y` (any order, one result).
  if (op->kind == OpKind::TensorTensor) {
    const Expr *opE = exprAt(b.arg("op"));
    Value fn = opE ? eval(opE) : Value::none();
    auto alu = fn.kind == Value::Path ? aluOfFunctionValue(fn.s) : std::nullopt;
    auto sameAsDst = [&](std::string_view param) {
      const Expr *x = exprAt(b.arg(param));
      return x && withoutSpaces(text(x)) == withoutSpaces(text(dstE));
    };
    if (alu && accumulatesInAnyOrder(*alu) && (sameAsDst("data1") || sameAsDst("data2"))) w.isAccumulate = true;
  }
  if (op->kind == OpKind::Matmul) {
    // accumulate=False overwrites; True and None (the default: later writes add) accumulate like `+=`.
    const Expr *accE = exprAt(b.arg("accumulate"));
    Value acc = accE ? eval(accE) : Value::none();
    bool overwrites = acc.kind != Value::None && acc.number() && *acc.number() == 0;
    bool alwaysAdds = acc.kind != Value::None && acc.number() && *acc.number() != 0;
    if (alwaysAdds && !writtenBefore(dst.tensor))
      diag(Diagnostic::Warning, accE->range,
           "accumulate=True adds into '" + text(dstE) +
               "', which no earlier call wrote (uninitialised PSUM); use accumulate=None or False for the first write",
           Rule::Accumulate);
    if (!overwrites) {
      w.isAccumulate = true;
      Access r = w;
      r.isWrite = false;
      r.isAccumulate = false;
      Cur->reads.push_back(r);
      Cur->kind = StmtKind::Accumulate;
    }
  }
  Cur->writes.push_back(w);
  return Value::none();
}

/// iota's and affine_select's pattern: a list of up to 4 [step, num] pairs (the GpSimd engine's 4D pattern).
void KernelBuilder::checkPattern(const DialectApi &api, const Expr *e, const Value &v) {
  if (v.kind != Value::Seq) return; // not known at trace time
  std::string what = std::string(api.name) + "'s pattern is a list of up to 4 [step, num] pairs";
  if (v.elts.size() > 4)
    return diag(Diagnostic::Error, e->range, what + ", not " + std::to_string(v.elts.size()), Rule::CallArgs);
  for (size_t i = 0; i < v.elts.size(); ++i)
    if (v.elts[i].kind != Value::Seq || v.elts[i].elts.size() != 2) {
      const Expr *at = e->kind == ExprKind::List && i < e->elts.size() ? e->elts[i] : e;
      return diag(Diagnostic::Error, at->range,
                  what + "; pair " + std::to_string(i) + " has " +
                      (v.elts[i].kind == Value::Seq ? std::to_string(v.elts[i].elts.size()) + " values" : "no list"),
                  Rule::CallArgs);
    }
}

Value KernelBuilder::accessPattern(const Value &m, const Expr *e) {
  const Expr *patE = e->keyword("pattern");
  if (!patE && !e->elts.empty()) patE = e->elts[0];
  for (const Expr *a : e->elts) eval(a);
  for (const auto &kw : e->keywords) eval(kw.value);
  Value t = m;
  t.kind = Value::Tensor;
  if (m.view) t.view.reset(); // .ap() addresses the whole tensor's memory
  Access a = wholeAccess(t, e);
  a.exact = false; // any element of the flattened tensor may be read
  a.tileShape.clear();
  if (patE) {
    Value pat = eval(patE);
    if (pat.kind == Value::Seq)
      for (const Value &pair : pat.elts) {
        int64_t num = 0;
        if (pair.kind == Value::Seq && pair.elts.size() == 2 && pair.elts[1].isKnownInt()) {
          num = *pair.elts[1].i.value;
        } else if (std::optional<IndexVal> n =
                       pair.kind == Value::Seq && pair.elts.size() == 2 ? pair.elts[1].asIndex() : std::nullopt;
                   n && n->minOf) {
          // A count `min(E, n - lo)` (a partial tile): E steps of which each instance keeps the first
          // `n - lo`, the MaskBound a slice `lo:lo + min(E, n - lo)` gets.
          std::optional<int64_t> extent;
          for (const Affine &c : *n->minOf)
            if (c.isConstant()) extent = std::min(extent.value_or(c.constant), c.constant);
          if (extent && *extent > 0) {
            num = *extent;
            for (const Affine &c : *n->minOf)
              if (!c.isConstant()) {
                MaskBound m;
                m.axis = int(a.tileShape.size());
                m.extent = *extent;
                m.base = c;
                m.base.scale(-1);
                addSliceBound(m);
              }
          }
        }
        a.tileShape.push_back(num);
      }
  }
  t.view = std::make_shared<Access>(std::move(a));
  return t;
}

bool KernelBuilder::writtenBefore(int tensor) const {
  for (const Statement &st : K.stmts)
    if (&st != Cur)
      for (const Access &w : st.writes)
        if (w.tensor == tensor) return true;
  return false;
}

void KernelBuilder::checkPsumBanks() {
  // Each PSUM tensor of the nki dialect starts on its own 2 KiB bank. A tensor allocated in a loop is
  // live with the tensors of that loop and of every enclosing scope; the deepest nest decides.
  constexpr int64_t bankBytes = 2048, banks = 8;
  auto banksOf = [](const Tensor &t) -> int64_t {
    auto bytes = t.totalBytesPerPartition();
    return bytes ? std::max<int64_t>(1, (*bytes + bankBytes - 1) / bankBytes) : 1;
  };
  std::vector<int> scopes = {-1};
  for (const Loop &l : K.loops) scopes.push_back(l.id);
  for (int scope : scopes) {
    std::vector<int> nest = scope >= 0 ? K.loopNest(scope) : std::vector<int>{};
    auto inNest = [&](int s) { return s == -1 || std::find(nest.begin(), nest.end(), s) != nest.end(); };
    int64_t used = 0;
    const Tensor *last = nullptr;
    for (const Tensor &t : K.tensors)
      if (t.buffer == Buffer::PSUM && !t.isTile && t.aliasOf < 0 && inNest(t.scope)) {
        used += banksOf(t);
        last = &t;
      }
    if (used > banks && last) {
      diag(Diagnostic::Error, last->range,
           llvm::formatv("the PSUM tensors live here need {0} banks of 2 KiB per partition (each starts on its own "
                         "bank); a NeuronCore has {1}",
                         used, banks)
               .str(),
           Rule::PsumBanks);
      return;
    }
  }
}

} // namespace accelopt::nki::frontend
