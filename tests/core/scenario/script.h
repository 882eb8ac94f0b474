// Scenario files in the data-driven style of etcd-raft's testdata: each command is
// followed by `----` and the output it must print, up to a blank line. Comments (#) and
// blank lines between commands are kept when a file is rewritten.
//
//   # a leader that closes hands over at once
//   close a
//   ----
//     2000.00 a <- lifecycle closing
//     ...
#pragma once
#include <string>
#include <vector>

namespace baton::scenario {

struct Step {
  std::string preamble;  // comment and blank lines before the command, verbatim
  std::string command;
  int line = 0;          // of the command, for messages
  std::string expected;  // without the trailing newline
};

struct Script {
  std::vector<Step> steps;
  std::string trailer;  // comments after the last command
};

// Parses `text`; on a malformed file returns false and says why in `error`.
bool parse(const std::string& text, Script& out, std::string& error);

// The file with each step's expected output replaced by `outputs` (one per step).
std::string render(const Script& script, const std::vector<std::string>& outputs);

// A command line split into words: `add a b caps=ws.owner.v1` -> add, a, b, caps=...
struct Command {
  std::string name;
  std::vector<std::string> args;                             // words without `=`
  std::vector<std::pair<std::string, std::string>> options;  // key=value
  bool has(const std::string& key) const;
  // Removes the word `flag` from args; true if it was there.
  bool flag(const std::string& flag);
  // The option's value, or `fallback` when absent.
  std::string get(const std::string& key, const std::string& fallback = "") const;
};
Command split(const std::string& line);

}  // namespace baton::scenario
