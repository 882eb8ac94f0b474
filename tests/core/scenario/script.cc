#include "script.h"

#include <sstream>

namespace baton::scenario {

bool parse(const std::string& text, Script& out, std::string& error) {
  std::istringstream in(text);
  std::string line, pending;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty() || line[0] == '#') {
      pending += line + "\n";
      continue;
    }
    Step step;
    step.preamble = pending;
    pending.clear();
    step.command = line;
    step.line = number;
    if (!std::getline(in, line) || line != "----") {
      error = "line " + std::to_string(number + 1) + ": expected ---- after the command";
      return false;
    }
    ++number;
    std::string expected;
    while (std::getline(in, line)) {
      ++number;
      if (line.empty()) break;
      expected += (expected.empty() ? "" : "\n") + line;
    }
    step.expected = expected;
    out.steps.push_back(step);
  }
  out.trailer = pending;
  return true;
}

std::string render(const Script& script, const std::vector<std::string>& outputs) {
  std::string text;
  for (size_t i = 0; i < script.steps.size(); ++i) {
    const Step& s = script.steps[i];
    if (i > 0) text += "\n";  // the blank line that ended the previous output
    text += s.preamble + s.command + "\n----\n" + outputs[i] + "\n";
  }
  if (!script.trailer.empty()) text += (script.steps.empty() ? "" : "\n") + script.trailer;
  return text;
}

bool Command::has(const std::string& key) const {
  for (const auto& [k, v] : options) {
    if (k == key) return true;
  }
  return false;
}

std::string Command::get(const std::string& key, const std::string& fallback) const {
  for (const auto& [k, v] : options) {
    if (k == key) return v;
  }
  return fallback;
}

bool Command::flag(const std::string& flag) {
  for (auto it = args.begin(); it != args.end(); ++it) {
    if (*it == flag) {
      args.erase(it);
      return true;
    }
  }
  return false;
}

Command split(const std::string& line) {
  Command c;
  std::istringstream in(line);
  std::string word;
  in >> c.name;
  while (in >> word) {
    auto eq = word.find('=');
    if (eq == std::string::npos) c.args.push_back(word);
    else c.options.emplace_back(word.substr(0, eq), word.substr(eq + 1));
  }
  return c;
}

}  // namespace baton::scenario
