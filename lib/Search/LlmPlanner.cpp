// The LLM planner: AccelOpt's planner and executor agents behind the search
// loop's Planner interface. The executor's answers are validated by applying
// them with the rewrite engine; refusals go back to it (the fixer loop).
#include "Search/Search.h"

#include "Agent/Roles.h"
#include "Rewrite/Rewrite.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

namespace accelopt::search {

namespace {

class LlmPlanner : public Planner {
public:
  LlmPlanner(agent::AgentSession &session, const nki::InputSpecs *inputs, std::string problem,
             std::function<std::vector<agent::Experience>(const nki::Kernel &)> experiences, size_t maxMenu)
      : Session(session), Inputs(inputs), Problem(std::move(problem)), Experiences(std::move(experiences)),
        MaxMenu(maxMenu) {}

  std::vector<Plan> propose(const Candidate &parent, const nki::KernelFile &file, int plans, int samples,
                            uint64_t) override {
    std::vector<Plan> out;
    if (file.kernels.empty()) return out;
    const nki::Kernel &k = file.kernels.front();
    agent::KernelContext ctx = context(parent, file, k);
    auto proposed = Session.planner().propose(ctx, unsigned(plans));
    if (!proposed) {
      // The iteration goes on without new plans; the user should know why.
      std::string why = llvm::toString(proposed.takeError());
      llvm::errs() << "accelopt-rewrite: warning: the LLM planner gave no plans: " << why << "\n";
      // Retried until exhausted (5xx, timeouts) may pass; not retried (401, 403, 404) is the configuration.
      if (why.find("(retries exhausted)") != std::string::npos)
        ++TransientFailures;
      else
        ++FailedCalls;
      LastFailure = std::move(why);
      return out;
    }
    ++AnsweredCalls;
    rewrite::CandidateOptions opts;
    opts.inputs = Inputs;
    opts.kernelName = k.name;
    auto prepared = rewrite::PreparedKernel::prepare(file.source(), opts);
    if (!prepared) {
      llvm::errs() << "accelopt-rewrite: warning: " << llvm::toString(prepared.takeError()) << "\n";
      return out;
    }
    // The executor's ops must apply to this very candidate: that is the check.
    agent::OpsValidator validate = [&](const nlohmann::json &ops) -> llvm::Error {
      std::vector<nlohmann::json> list =
          ops.is_array() ? ops.get<std::vector<nlohmann::json>>() : std::vector<nlohmann::json>{ops};
      auto res = rewrite::applyCandidate(*prepared, list);
      if (res.status == rewrite::Status::Applied) return llvm::Error::success();
      return llvm::createStringError(llvm::inconvertibleErrorCode(), res.message);
    };
    for (const std::string &planText : *proposed) {
      auto realised = Session.executor().realise(ctx, planText, unsigned(samples), validate);
      if (!realised) {
        llvm::errs() << "accelopt-rewrite: warning: the LLM executor failed on a plan: "
                     << llvm::toString(realised.takeError()) << "\n";
        continue;
      }
      Plan p;
      p.description = planText;
      for (const auto &c : realised->candidates)
        p.realisations.push_back(c.ops.is_array() ? c.ops.get<std::vector<nlohmann::json>>()
                                                  : std::vector<nlohmann::json>{c.ops});
      if (!p.realisations.empty()) out.push_back(std::move(p));
    }
    return out;
  }

  std::string failure() const override {
    if (AnsweredCalls > 0 || TransientFailures > 0 || FailedCalls == 0) return "";
    // A wrong key or URL fails every call without retries; a search without any plan is no result.
    return "every call to the LLM planner failed (" + std::to_string(FailedCalls) +
           (FailedCalls == 1 ? " call" : " calls") + "); the last: " + LastFailure;
  }

private:
  size_t AnsweredCalls = 0, FailedCalls = 0, TransientFailures = 0;
  std::string LastFailure;
  agent::AgentSession &Session;
  const nki::InputSpecs *Inputs;
  std::string Problem;
  std::function<std::vector<agent::Experience>(const nki::Kernel &)> Experiences;
  size_t MaxMenu;

  agent::KernelContext context(const Candidate &parent, const nki::KernelFile &file, const nki::Kernel &k) {
    agent::KernelContext ctx;
    ctx.listing = agent::listingText(k);
    ctx.profile = parent.profile ? nlohmann::json(parent.profile->toJSON()) : nlohmann::json::object();
    ctx.problem = Problem;
    rewrite::CandidateOptions opts;
    opts.inputs = Inputs;
    opts.kernelName = k.name;
    if (auto menu = rewrite::legalOps(file.source(), opts)) {
      for (auto &m : *menu) {
        if (ctx.menu.size() >= MaxMenu) break; // keep prompts within the context window
        ctx.menu.push_back({m.op, m.description});
      }
    } else {
      llvm::consumeError(menu.takeError());
    }
    if (Experiences) ctx.experiences = Experiences(k);
    return ctx;
  }
};

} // namespace

std::unique_ptr<Planner> makeLlmPlanner(agent::AgentSession &session, const nki::InputSpecs *inputs,
                                        llvm::StringRef referencePath,
                                        std::function<std::vector<agent::Experience>(const nki::Kernel &)> experiences,
                                        size_t maxMenu) {
  std::string problem;
  if (!referencePath.empty())
    if (auto buf = llvm::MemoryBuffer::getFile(referencePath)) problem = (*buf)->getBuffer().str();
  return std::make_unique<LlmPlanner>(session, inputs, std::move(problem), std::move(experiences), maxMenu);
}

} // namespace accelopt::search
