// Runs scenario files and compares each command's output with the one written below it.
//
//   baton_scenarios FILE...             fails on the first difference, printing both
//   baton_scenarios --rewrite FILE...   writes the actual outputs into the files
//   BATON_REWRITE=1 ctest -R scenario   the same through ctest
//   baton_scenarios --mutation NAME --expect TEXT FILE
//                                       runs FILE with a deliberate bug in the core (a flag
//                                       of baton::Mutations) and passes only when the world
//                                       reports a violation containing TEXT
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "interpreter.h"
#include "script.h"

using baton::scenario::Interpreter;
using baton::scenario::Script;

namespace {

bool read(const std::string& path, std::string& text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::stringstream buf;
  buf << in.rdbuf();
  text = buf.str();
  return true;
}

bool set_mutation(const std::string& name, baton::Mutations& m) {
  if (name == "claimant-waits-suspect") m.claimant_waits_suspect = true;
  else if (name == "answer-shows-tick") m.answer_shows_tick = true;
  else return false;
  return true;
}

// Runs the file's commands with a deliberate bug, without comparing their outputs: true if
// the world reported a violation containing `expect`.
bool catches(const std::string& path, const Script& script, const baton::Mutations& m, const std::string& expect) {
  Interpreter interpreter;
  interpreter.set_mutations(m);
  for (const auto& step : script.steps) {
    interpreter.run(step.command);
    if (interpreter.violated()) break;
  }
  bool caught = interpreter.violated() && interpreter.violations().front().find(expect) != std::string::npos;
  std::fprintf(caught ? stdout : stderr, "%s: %s\n", path.c_str(),
               caught ? ("the deliberate bug was caught: " + interpreter.violations().front()).c_str()
                      : "the deliberate bug went UNNOTICED");
  return caught;
}

// Returns true if the file passed (or was rewritten).
bool run_file(const std::string& path, bool rewrite, const baton::Mutations* mutation, const std::string& expect) {
  std::string text, error;
  Script script;
  if (!read(path, text)) {
    std::fprintf(stderr, "%s: cannot read\n", path.c_str());
    return false;
  }
  if (!baton::scenario::parse(text, script, error)) {
    std::fprintf(stderr, "%s: %s\n", path.c_str(), error.c_str());
    return false;
  }
  if (mutation) return catches(path, script, *mutation, expect);
  Interpreter interpreter;
  std::vector<std::string> outputs;
  bool ok = true;
  for (const auto& step : script.steps) {
    outputs.push_back(interpreter.run(step.command));
    if (!rewrite && outputs.back() != step.expected) {
      std::fprintf(stderr, "%s:%d: %s\n--- expected\n%s\n--- actual\n%s\n", path.c_str(), step.line,
                   step.command.c_str(), step.expected.c_str(), outputs.back().c_str());
      ok = false;
      break;
    }
  }
  if (interpreter.error()) {
    std::fprintf(stderr, "%s: a command failed to run (see its output)\n", path.c_str());
    ok = false;
  }
  if (interpreter.violated() && !interpreter.deliberate_bug()) {
    std::fprintf(stderr, "%s: an invariant was violated (see VIOLATION in the trace)\n", path.c_str());
    ok = false;
  }
  if (rewrite) {
    std::string updated = baton::scenario::render(script, outputs);
    if (updated != text) {
      std::ofstream(path, std::ios::binary) << updated;
      std::printf("rewrote %s\n", path.c_str());
    }
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  const char* env = std::getenv("BATON_REWRITE");
  bool rewrite = env && *env && std::strcmp(env, "0") != 0;
  std::vector<std::string> files;
  baton::Mutations mutations;
  bool mutated = false;
  std::string expect;
  bool usage = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--rewrite")) rewrite = true;
    else if (!std::strcmp(argv[i], "--mutation") && i + 1 < argc) {
      mutated = true;
      if (!set_mutation(argv[++i], mutations)) usage = true;
    } else if (!std::strcmp(argv[i], "--expect") && i + 1 < argc) {
      expect = argv[++i];
    } else {
      files.push_back(argv[i]);
    }
  }
  // --mutation and --expect go together, and a mutated run rewrites nothing.
  if (mutated ? expect.empty() || rewrite : !expect.empty()) usage = true;
  if (files.empty() || usage) {
    std::fprintf(stderr, "usage: baton_scenarios [--rewrite] FILE...\n"
                         "       baton_scenarios --mutation claimant-waits-suspect|answer-shows-tick --expect TEXT FILE...\n");
    return 2;
  }
  int failed = 0;
  for (const auto& f : files) failed += run_file(f, rewrite, mutated ? &mutations : nullptr, expect) ? 0 : 1;
  std::printf("%zu passed, %d failed\n", files.size() - failed, failed);
  return failed ? 1 : 0;
}
